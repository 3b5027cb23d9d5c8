package plugin

import (
	_ "embed"
	"net/http"
	"strings"
	"time"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/rpcapi"
)

// uiPage is the status page: one self-contained HTML file (styles and script inline, no
// external assets, so that it works on an offline host) that polls /ui/data.json.
//
//go:embed ui/index.html
var uiPage []byte

// uiRecentJobs is how many of the newest jobs the page lists.
const uiRecentJobs = 40

// uiData is what the status page draws; the page only lays it out.
type uiData struct {
	Version   string
	Backend   string
	StartedAt time.Time
	Now       time.Time
	Devices   []uiDevice
	Queues    []rpcapi.QueueStatus
	Jobs      []uiJob
	Miner     *rpcapi.MinerStatus `json:",omitempty"`
	// PinnedHostBytes is host memory pinned for GPU transfers.
	PinnedHostBytes uint64
	Completed       uint64
	Failed          uint64
	Cancelled       uint64
}

// uiDevice is one proving device. GPUs carry their memory books as Segments, which add up to
// Total: others, headroom, plans, srs, tables, free.
type uiDevice struct {
	Name     string
	Ordinal  int
	GPU      bool
	Total    uint64
	Segments []uiSegment
	Workers  []rpcapi.DeviceWorker
	// Busy is the fraction of the last minute the GPU's kernels ran.
	Busy    float64
	Waiting int
	Tiers   map[string]int
}

type uiSegment struct {
	Name  string
	Bytes uint64
}

// uiJob is one recent job with the times the page draws on its timeline.
type uiJob struct {
	rpcapi.Job
	// Phases are the job's step times in milliseconds (partitions overlap, so they can add up
	// to more than the run).
	Phases []uiSegment
}

// ui serves /ui (the page) and /ui/data.json (what it draws).
func (d *Daemon) ui(w http.ResponseWriter, r *http.Request) {
	switch strings.TrimPrefix(r.URL.Path, "/ui") {
	case "", "/", "/index.html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		// Everything the page needs is in it; it may only call back to this daemon.
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src data:")
		_, _ = w.Write(uiPage)
	case "/data.json":
		data := d.uiData()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = jsonEncoder(w).Encode(data)
	default:
		http.NotFound(w, r)
	}
}

func (d *Daemon) uiData() uiData {
	// One snapshot of the scheduler serves the books and the resident lists, so they agree.
	st, gs := d.prover.status()
	out := uiData{Version: st.Version, Backend: st.Backend, StartedAt: st.StartedAt, Now: time.Now(), Queues: st.Queues,
		Miner: st.Miner, PinnedHostBytes: st.PinnedHostBytes, Completed: st.Completed, Failed: st.Failed, Cancelled: st.Cancelled}
	resident := map[int][]gpu.ResidentStat{}
	for _, dev := range gs.Devices {
		resident[dev.Info.Ordinal] = dev.Memory.Resident
	}
	for _, dev := range st.Devices {
		ud := uiDevice{Name: dev.Name, Ordinal: dev.Ordinal, GPU: d.gpuStatus != nil, Total: dev.VRAMTotal,
			Workers: dev.WorkerStates, Waiting: dev.Waiting, Tiers: dev.Tiers}
		if dev.Busy != nil {
			ud.Busy = dev.Busy.Recent
		}
		if ud.GPU {
			ud.Segments = vramSegments(dev, resident[dev.Ordinal])
		} else {
			// The CPU backend's workers are the job manager's.
			for i := 0; i < dev.Workers; i++ {
				w := rpcapi.DeviceWorker{ID: i, Busy: i < dev.WorkersBusy}
				if w.Busy && i < len(dev.CurrentJobIDs) {
					w.JobID = dev.CurrentJobIDs[i]
				}
				ud.Workers = append(ud.Workers, w)
			}
		}
		out.Devices = append(out.Devices, ud)
	}
	for _, j := range d.jobs.Jobs(rpcapi.JobFilter{Limit: uiRecentJobs}) {
		t := j.Timings
		out.Jobs = append(out.Jobs, uiJob{Job: j, Phases: []uiSegment{
			{"srs", t.SRSLoadMs}, {"synthesis", t.SynthesisMs}, {"prove", t.ProveMs}, {"verify", t.VerifyMs}}})
	}
	return out
}

// vramSegments splits a GPU's memory into the books admission keeps: other processes, the
// headroom left for them, partition plans, resident SRS points, resident tables (NTT twiddles,
// circuit matrices) and what is free to grant. The segments add up to the device's total.
func vramSegments(dev rpcapi.DeviceStatus, resident []gpu.ResidentStat) []uiSegment {
	var srs, tables uint64
	for _, r := range resident {
		if strings.HasPrefix(r.Key, "srs/") {
			srs += r.Bytes
		} else {
			tables += r.Bytes
		}
	}
	if srs+tables > dev.ResidentBytes {
		// Resident vectors listed but not reserved any more (being released): count what the
		// books hold.
		tables = dev.ResidentBytes - min(srs, dev.ResidentBytes)
		srs = dev.ResidentBytes - tables
	}
	plans := dev.VRAMReserved - min(dev.ResidentBytes, dev.VRAMReserved)
	segs := []uiSegment{{"others", dev.VRAMOthers}, {"headroom", dev.VRAMHeadroom}, {"plans", plans}, {"srs", srs}, {"tables", tables}}
	var used uint64
	for i := range segs {
		// Never more than the device holds, whatever a stale sample says.
		segs[i].Bytes = min(segs[i].Bytes, dev.VRAMTotal-used)
		used += segs[i].Bytes
	}
	return append(segs, uiSegment{"free", dev.VRAMTotal - used})
}
