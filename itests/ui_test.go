package itests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snarkd/snarkd/rpcapi"
)

// chromium returns the headless browser the page tests drive: $SNARKD_CHROMIUM, or chromium
// (Debian's package, which CI installs) or Google Chrome on PATH. Without one the test skips,
// except under CI, where a missing browser is a broken setup, not a reason to pass.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SNARKD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH (apt-get install chromium); the status page test needs a real browser")
	}
	t.Skip("no chromium on PATH: set SNARKD_CHROMIUM or apt-get install chromium")
	return ""
}

// uiDOM is what the status page rendered, read back from the browser's DOM.
type uiDOM struct {
	Meta    string
	Error   string
	Devices []struct {
		Ordinal  string
		Title    string
		Segments []struct {
			Name  string
			Bytes float64
			Width float64 // rendered width in CSS pixels
		}
		BarWidth float64
		Workers  []string
	}
	Queues []string
	Jobs   []struct {
		ID, State, Kind string
		Spans           int
	}
}

// readDOM is evaluated in the page: the devices' memory bars, workers, queue rows and jobs.
const readDOM = `(() => {
  const txt = e => e ? e.textContent.trim() : "";
  const err = document.getElementById("error");
  return {
    Meta: txt(document.getElementById("meta")),
    Error: err.style.display === "none" ? "" : txt(err),
    Devices: [...document.querySelectorAll(".device")].map(d => ({
      Ordinal: d.dataset.ordinal,
      Title: txt(d.querySelector(".title")),
      BarWidth: d.querySelector(".bar") ? d.querySelector(".bar").getBoundingClientRect().width : 0,
      Segments: [...d.querySelectorAll(".bar .seg")].map(s => ({
        Name: s.dataset.seg, Bytes: Number(s.dataset.bytes), Width: s.getBoundingClientRect().width})),
      Workers: [...d.querySelectorAll(".worker")].map(txt),
    })),
    Queues: [...document.querySelectorAll("#queues tbody tr")].map(r => r.dataset.kind),
    Jobs: [...document.querySelectorAll("#jobs tr.job")].map(r => ({
      ID: r.dataset.job, State: r.dataset.state, Kind: txt(r.children[1]), Spans: r.querySelectorAll(".track .span").length})),
  };
})()`

// TestStatusPage: headless Chromium loads /ui from a daemon proving test jobs on two simulated
// GPUs. The page draws a memory bar per device whose segments (others, headroom, plans, SRS,
// tables, free) add up to the device's memory, a worker list, the queues, and the jobs with a
// timeline; it refreshes by itself (a job submitted after the first draw shows up without a
// reload). With SNARKD_UI_SCREENSHOT set, a screenshot of the page goes to that path (the one
// in docs/ is made so).
func TestStatusPage(t *testing.T) {
	browser := chromium(t)
	bin := buildDaemon(t)
	d := startDaemon(t, bin, t.TempDir(), nil, "--simulate-gpus", "2x16GiB", "--gpu-workers", "2")
	api := d.client(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// One job done before the page loads; the page must show it with its timeline.
	first, err := api.Prove(ctx, rpcapi.ProofRequest{RequestID: "ui-first", Kind: rpcapi.KindTest,
		Test: &rpcapi.TestCircuit{Constraints: 4096, Partitions: 2, Seed: 3}})
	if err != nil || first.Job.State != rpcapi.JobDone {
		t.Fatalf("first job: %+v, %v", first.Job, err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1400, 1000))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	defer bcancel()

	// A read token in the URL, as an operator would bookmark the page on a daemon that requires one.
	url := d.base + "/ui?token=" + d.token
	if err := chromedp.Do(bctx, chromedp.Navigate(url), chromedp.WaitVisible(`body[data-loaded="1"]`)); err != nil {
		t.Fatalf("loading %s in chromium: %v", d.base+"/ui", err)
	}
	dom, err := chromedp.Run(bctx, chromedp.Evaluate[uiDOM](readDOM))
	if err != nil {
		t.Fatalf("reading the page's DOM: %v", err)
	}
	checkDevices(t, dom)
	if !hasJob(dom, string(first.Job.ID), "done") {
		t.Errorf("the page does not list the done job %s: %+v", first.Job.ID, dom.Jobs)
	}
	for _, j := range dom.Jobs {
		if j.ID == string(first.Job.ID) && (j.Kind != "test" || j.Spans != 2) {
			t.Errorf("job row %+v: want kind test with a queue and a run span", j)
		}
	}
	if len(dom.Queues) == 0 {
		t.Error("the page lists no queues")
	}

	// Jobs submitted now appear on the next refresh, without a reload.
	var ids []string
	for i := 0; i < 3; i++ {
		sub, err := api.Submit(ctx, rpcapi.ProofRequest{RequestID: fmt.Sprintf("ui-more-%d", i), Kind: rpcapi.KindTest,
			Test: &rpcapi.TestCircuit{Constraints: 1 << 14, Partitions: 4, Seed: uint64(10 + i)}})
		if err != nil {
			t.Fatalf("Submit: %v", err)
		}
		ids = append(ids, string(sub.JobID))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if dom, err = chromedp.Run(bctx, chromedp.Evaluate[uiDOM](readDOM)); err != nil {
			t.Fatal(err)
		}
		listed := 0
		for _, id := range ids {
			if hasJob(dom, id, "") {
				listed++
			}
		}
		if listed == len(ids) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the page lists %d of the 3 new jobs: %+v", listed, dom.Jobs)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if dom.Error != "" {
		t.Errorf("the page shows an error: %s", dom.Error)
	}
	checkDevices(t, dom)

	if path := os.Getenv("SNARKD_UI_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot of the status page: %s", path)
	}
	for _, id := range ids {
		if res, err := api.Await(ctx, rpcapi.JobID(id)); err != nil || res.Job.State != rpcapi.JobDone {
			t.Errorf("job %s: %+v, %v", id, res.Job, err)
		}
	}

	// Only the page and its data live under /ui.
	resp, err := http.Get(d.base + "/ui/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /ui/nope: %s, want 404", resp.Status)
	}
	raw, _ := json.Marshal(dom)
	t.Logf("rendered: %s", raw)
}

// checkDevices asserts a bar per simulated GPU whose segments add up to its 16 GiB, drawn at
// widths in proportion to their bytes, and a line per worker.
func checkDevices(t *testing.T, dom uiDOM) {
	t.Helper()
	if len(dom.Devices) != 2 {
		t.Fatalf("the page shows %d devices, want 2: %+v", len(dom.Devices), dom.Devices)
	}
	want := []string{"others", "headroom", "plans", "srs", "tables", "free"}
	for i, dev := range dom.Devices {
		if dev.Ordinal != fmt.Sprint(i) || len(dev.Workers) != 2 {
			t.Errorf("device card %d: ordinal %q, workers %q", i, dev.Ordinal, dev.Workers)
		}
		if len(dev.Segments) != len(want) {
			t.Errorf("device %d: segments %+v, want %v", i, dev.Segments, want)
			continue
		}
		var sum, width float64
		for j, s := range dev.Segments {
			if s.Name != want[j] {
				t.Errorf("device %d segment %d is %q, want %q", i, j, s.Name, want[j])
			}
			sum += s.Bytes
			width += s.Width
		}
		if sum != 16<<30 {
			t.Errorf("device %d: segments add up to %v bytes, want 16 GiB", i, sum)
		}
		if dev.Segments[1].Bytes != 512<<20 {
			t.Errorf("device %d: headroom %v bytes, want the default 512 MiB", i, dev.Segments[1].Bytes)
		}
		if dev.BarWidth <= 0 || width < dev.BarWidth*0.98 || width > dev.BarWidth*1.02 {
			t.Errorf("device %d: segments drawn %.1f px wide in a %.1f px bar", i, width, dev.BarWidth)
		}
	}
}

func hasJob(dom uiDOM, id, state string) bool {
	for _, j := range dom.Jobs {
		if j.ID == id && (state == "" || j.State == state) {
			return true
		}
	}
	return false
}
