package itests

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// genBody streams prefix, then n filler bytes, then suffix, without holding them, and counts
// what the client took from it.
type genBody struct {
	prefix, suffix []byte
	fill           byte
	n              int64
	off            int64
	taken          *atomic.Int64
}

func newGenBody(prefix string, fill byte, n int64, suffix string, taken *atomic.Int64) *genBody {
	return &genBody{prefix: []byte(prefix), suffix: []byte(suffix), fill: fill, n: n, taken: taken}
}

func (g *genBody) size() int64 { return int64(len(g.prefix)) + g.n + int64(len(g.suffix)) }

func (g *genBody) Read(p []byte) (int, error) {
	total := g.size()
	if g.off >= total {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && g.off < total {
		switch {
		case g.off < int64(len(g.prefix)):
			c := copy(p[k:], g.prefix[g.off:])
			k += c
			g.off += int64(c)
		case g.off < int64(len(g.prefix))+g.n:
			m := min(int64(len(p)-k), int64(len(g.prefix))+g.n-g.off)
			for i := range p[k : k+int(m)] {
				p[k+i] = g.fill
			}
			k += int(m)
			g.off += m
		default:
			c := copy(p[k:], g.suffix[g.off-int64(len(g.prefix))-g.n:])
			k += c
			g.off += int64(c)
		}
	}
	g.taken.Add(int64(k))
	return k, nil
}

// chunked hides a reader's length so the request goes out with chunked transfer encoding.
type chunked struct{ io.Reader }

// procStatus reads a "VmRSS"-style field of /proc/<pid>/status, in bytes.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the daemon's status: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s %q: %v", field, v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// peakRSS measures the daemon's peak RSS growth over fn: the high-water mark is reset first
// where the kernel allows (clear_refs 5), else growth is counted from the mark so far.
func peakRSS(t *testing.T, pid int, fn func()) int64 {
	t.Helper()
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
	before := procStatus(t, pid, "VmHWM")
	fn()
	return procStatus(t, pid, "VmHWM") - before
}

// TestRequestLimits: bodies without a token granting write are refused before they are read
// (a declared 100 MB one at once, a chunked one at API.MaxReadRequestBytes) and form bodies
// are never parsed (no temporary file), each with under 64 MiB of RSS growth; many large
// authorized bodies at once stay within API.MaxConcurrentRequests (the rest get 503 with
// Retry-After), and the daemon's peak RSS with them.
func TestRequestLimits(t *testing.T) {
	bin := buildDaemon(t)
	tmp := t.TempDir()
	const (
		concurrent = 2
		bodySize   = 64_000_000
	)
	d := startDaemon(t, bin, t.TempDir(), []string{"TMPDIR=" + tmp, "SNARKD_API_MAX_REQUEST_BYTES=128MiB",
		fmt.Sprintf("SNARKD_API_MAX_CONCURRENT_REQUESTS=%d", concurrent)})
	pid := d.cmd.Process.Pid
	url := d.base + "/rpc/v0"
	client := &http.Client{Timeout: 2 * time.Minute}
	for range 3 { // warm up
		resp, err := client.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	t.Logf("daemon RSS after start: %d MiB", procStatus(t, pid, "VmRSS")>>20)

	const rpcPrefix = `{"jsonrpc":"2.0","id":1,"method":"Prover.Submit","params":[{"Kind":"porep-c2","RegisteredProof":8,"Phase1Out":"`
	const rpcSuffix = `"}]}`
	for _, tc := range []struct {
		name, method, contentType string
		size                      int64
		chunked                   bool
		status                    int
		want                      string
	}{
		{"unauthenticated 100 MB", "POST", "application/json", 100_000_000, false, http.StatusRequestEntityTooLarge, "(API.MaxReadRequestBytes)"},
		{"unauthenticated 100 MB chunked", "POST", "application/json", 100_000_000, true, http.StatusRequestEntityTooLarge, "(API.MaxReadRequestBytes)"},
		{"multipart 1 GiB", "POST", "multipart/form-data; boundary=x", 1 << 30, false, http.StatusUnsupportedMediaType, "Content-Type multipart/form-data"},
		{"multipart 1 GiB chunked", "POST", "multipart/form-data; boundary=x", 1 << 30, true, http.StatusUnsupportedMediaType, "Content-Type multipart/form-data"},
		{"multipart 1 GiB PUT", "PUT", "multipart/form-data; boundary=x", 1 << 30, false, http.StatusMethodNotAllowed, "method PUT"},
		{"form 1 GiB", "POST", "application/x-www-form-urlencoded", 1 << 30, false, http.StatusUnsupportedMediaType, "Content-Type application/x-www-form-urlencoded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var taken atomic.Int64
			var status int
			var answer []byte
			var sendErr error
			prefix, suffix := rpcPrefix, rpcSuffix
			if strings.HasPrefix(tc.contentType, "multipart/") {
				prefix = "--x\r\nContent-Disposition: form-data; name=\"token\"; filename=\"t\"\r\n\r\n"
				suffix = "\r\n--x--\r\n"
			} else if strings.HasPrefix(tc.contentType, "application/x-www") {
				prefix, suffix = "token=", ""
			}
			growth := peakRSS(t, pid, func() {
				gen := newGenBody(prefix, 'A', tc.size, suffix, &taken)
				var body io.Reader = gen
				if tc.chunked {
					body = chunked{gen}
				}
				req, err := http.NewRequest(tc.method, url, body)
				if err != nil {
					t.Fatal(err)
				}
				if !tc.chunked {
					req.ContentLength = gen.size()
				}
				req.Header.Set("Content-Type", tc.contentType)
				resp, err := client.Do(req)
				if err != nil {
					sendErr = err
					return
				}
				status = resp.StatusCode
				answer, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			})
			t.Logf("RSS growth %.1f MiB, %.1f MiB of the body sent", float64(growth)/(1<<20), float64(taken.Load())/(1<<20))
			if sendErr != nil {
				t.Fatalf("no answer: %v", sendErr)
			}
			if status != tc.status || !strings.Contains(string(answer), tc.want) {
				t.Fatalf("%d %s, want %d with %q", status, answer, tc.status, tc.want)
			}
			if growth >= 64<<20 {
				t.Errorf("the daemon's RSS grew by %d MiB, want under 64", growth>>20)
			}
			if taken.Load() >= 32<<20 {
				t.Errorf("%d MiB of the body were sent before the answer: it was read", taken.Load()>>20)
			}
			entries, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 0 {
				t.Errorf("the daemon wrote %d files under its TMPDIR (%s, ...)", len(entries), entries[0].Name())
			}
		})
	}

	// Eight large authorized bodies at once: at most `concurrent` are read and decoded together.
	t.Run("authorized concurrent bodies", func(t *testing.T) {
		const clients = 8
		var (
			mu      sync.Mutex
			answers = map[string]int{}
			sent    atomic.Int64
		)
		growth := peakRSS(t, pid, func() {
			var wg sync.WaitGroup
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					gen := newGenBody(rpcPrefix, 'A', bodySize, rpcSuffix, &sent)
					req, _ := http.NewRequest("POST", url, gen)
					req.ContentLength = gen.size()
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+d.token)
					what := ""
					resp, err := client.Do(req)
					if err != nil {
						what = "error: " + err.Error()
					} else {
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						switch {
						case resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"code":1002`)) && bytes.Contains(b, []byte("Phase1Out")):
							what = "decoded, refused as a bad request"
						case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" &&
							bytes.Contains(b, []byte("API.MaxConcurrentRequests")):
							what = "503 busy"
						default:
							what = fmt.Sprintf("%d %.200s", resp.StatusCode, b)
						}
					}
					mu.Lock()
					answers[what]++
					mu.Unlock()
				}()
			}
			wg.Wait()
		})
		t.Logf("answers %v; %d MB sent; peak RSS growth %d MiB", answers, sent.Load()/1_000_000, growth>>20)
		if answers["decoded, refused as a bad request"]+answers["503 busy"] != clients || answers["decoded, refused as a bad request"] < concurrent {
			t.Fatalf("answers %v", answers)
		}
		// Each body in flight costs about 5 times its size while it is read and decoded (the
		// read buffer, the request's params, the decoder's copy, the decoded bytes), and the
		// collector lets garbage grow to the live heap's size before it runs: twice that bounds
		// the peak while bodies follow each other through the slots (8 unbounded: 2.1 GiB).
		if bound := int64(concurrent) * 12 * bodySize; growth > bound {
			t.Errorf("peak RSS growth %d MiB with %d bodies of %d MB in flight, want at most %d MiB", growth>>20, concurrent, bodySize/1_000_000, bound>>20)
		}
	})
}
