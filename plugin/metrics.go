package plugin

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/rpcapi"
)

// metrics renders the Prometheus text exposition format (version 0.0.4) from the daemon's
// counters; the set is small enough that a client library would add more than it saves.
func (d *Daemon) metrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(d.metricsText())
}

// Metrics returns the /metrics text.
func (d *Daemon) Metrics(context.Context) (string, error) { return string(d.metricsText()), nil }

func (d *Daemon) metricsText() []byte {
	var b bytes.Buffer
	family := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	snap := d.jobs.Snapshot()
	family("snarkd_build_info", "gauge", "Build version and proving backend.")
	fmt.Fprintf(&b, "snarkd_build_info{version=%q,backend=%q} 1\n", buildinfo.String(), d.backend)

	perKind := func(name, typ, help string, get func(k rpcapi.ProofKind) float64) {
		family(name, typ, help)
		for _, k := range rpcapi.Kinds {
			fmt.Fprintf(&b, "%s{kind=%q} %g\n", name, k, get(k))
		}
	}
	perKind("snarkd_jobs_submitted_total", "counter", "Jobs accepted, by proof kind.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Stats.Submitted[k]) })
	perKind("snarkd_jobs_completed_total", "counter", "Jobs that produced a verified proof.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Stats.Completed[k]) })
	perKind("snarkd_jobs_failed_total", "counter", "Jobs that ended with an error.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Stats.Failed[k]) })
	perKind("snarkd_jobs_cancelled_total", "counter", "Jobs cancelled before they finished.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Stats.Cancelled[k]) })
	perKind("snarkd_jobs_queued", "gauge", "Jobs waiting for a worker.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Queued[k]) })
	perKind("snarkd_jobs_running", "gauge", "Jobs being proved.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Running[k]) })
	perKind("snarkd_proving_seconds_total", "counter", "Wall time spent on completed jobs, from start to verified proof.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Stats.ProofNs[k]) / 1e9 })
	family("snarkd_jobs_rejected_total", "counter", "Submissions refused (bad request, unsupported kind, conflict, queue full).")
	fmt.Fprintf(&b, "snarkd_jobs_rejected_total %d\n", snap.Stats.Rejected)
	family("snarkd_events_dropped_total", "counter", "Progress events a slow Events subscriber missed.")
	fmt.Fprintf(&b, "snarkd_events_dropped_total %d\n", snap.EventsDropped)
	family("snarkd_workers", "gauge", "Job workers.")
	fmt.Fprintf(&b, "snarkd_workers %d\n", snap.Workers)

	attempts, delivered := d.deliverer.Counts()
	family("snarkd_lotus_return_attempts_total", "counter", "Return* calls made to the miner.")
	fmt.Fprintf(&b, "snarkd_lotus_return_attempts_total %d\n", attempts)
	family("snarkd_lotus_returns_delivered_total", "counter", "Lotus results the miner accepted.")
	fmt.Fprintf(&b, "snarkd_lotus_returns_delivered_total %d\n", delivered)
	family("snarkd_lotus_returns_pending", "gauge", "Lotus results waiting for delivery.")
	fmt.Fprintf(&b, "snarkd_lotus_returns_pending %d\n", d.deliverer.Pending())
	connected := 0
	if s := d.attacher.Status(); s != nil && s.Connected {
		connected = 1
	}
	family("snarkd_lotus_miner_connected", "gauge", "1 while registered with a lotus-miner.")
	fmt.Fprintf(&b, "snarkd_lotus_miner_connected %d\n", connected)

	family("snarkd_params_bytes", "gauge", "Size of loaded proving parameters.")
	for _, p := range d.pipeline.Params().Loaded() {
		fmt.Fprintf(&b, "snarkd_params_bytes{circuit=%q} %d\n", p.Circuit, p.Bytes)
	}
	if d.gpuStatus != nil {
		writeGPUMetrics(&b, d.gpuMetrics, d.gpuStatus())
	}
	return b.Bytes()
}

func (d *Daemon) status(w http.ResponseWriter, r *http.Request) {
	st, err := d.prover.Status(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := jsonEncoder(w)
	_ = enc.Encode(st)
}
