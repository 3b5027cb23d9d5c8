package plugin

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// Histogram buckets, in seconds. Jobs run from milliseconds (a 2 KiB WinningPoSt on a warm
// daemon) to hours (a 64 GiB C2 on the CPU); partition phases and RPC calls from well under a
// millisecond to minutes.
var (
	jobBuckets   = prometheus.ExponentialBuckets(0.01, 2, 20)   // 10 ms … 87 min
	phaseBuckets = prometheus.ExponentialBuckets(0.0005, 2, 20) // 0.5 ms … 4.4 min
	rpcBuckets   = prometheus.ExponentialBuckets(0.0002, 2, 22) // 0.2 ms … 7 min (Prove blocks)
)

// daemonMetrics is the daemon's Prometheus registry: the Go runtime and process collectors,
// the histograms fed by the job manager, the pipeline and the RPC server, and the gauges and
// counters read from the daemon's state at each scrape (stateCollector).
type daemonMetrics struct {
	reg         *prometheus.Registry
	jobDuration *prometheus.HistogramVec
	queueWait   *prometheus.HistogramVec
	phase       *prometheus.HistogramVec
	rpc         *prometheus.HistogramVec
	// handler serves the registry (text format, or what the scraper negotiates).
	handler http.Handler
}

func newDaemonMetrics() *daemonMetrics {
	m := &daemonMetrics{
		reg: prometheus.NewRegistry(),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "snarkd_job_duration_seconds",
			Help:    "Jobs from submission to their final state, by proof kind and outcome (done, failed, cancelled).",
			Buckets: jobBuckets,
		}, []string{"kind", "outcome"}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "snarkd_job_queue_wait_seconds",
			Help:    "Time jobs waited in the queue for a worker, by proof kind.",
			Buckets: jobBuckets,
		}, []string{"kind"}),
		phase: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "snarkd_partition_phase_seconds",
			Help: "Partition phase durations by proof kind and phase: synthesis, upload, kernels, assembly, verify " +
				"(GPU), cpu_prove (the whole proof on the CPU engine); once per job that aggregates its proofs " +
				"(NI-PoRep C2), aggregate and aggregate_verify.",
			Buckets: phaseBuckets,
		}, []string{"kind", "phase"}),
		rpc: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "snarkd_rpc_request_duration_seconds",
			Help:    "JSON-RPC calls by method (namespace.Method), from the decoded request to the answer.",
			Buckets: rpcBuckets,
		}, []string{"method"}),
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.jobDuration, m.queueWait, m.phase, m.rpc)
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return m
}

// JobStarted implements jobs.Observer.
func (m *daemonMetrics) JobStarted(job rpcapi.Job) {
	m.queueWait.WithLabelValues(string(job.Kind)).Observe(job.Started.Sub(job.Submitted).Seconds())
}

// JobFinished implements jobs.Observer.
func (m *daemonMetrics) JobFinished(job rpcapi.Job) {
	m.jobDuration.WithLabelValues(string(job.Kind), string(job.State)).Observe(job.Finished.Sub(job.Submitted).Seconds())
}

var _ jobs.Observer = (*daemonMetrics)(nil)

func (m *daemonMetrics) observePhase(kind prover.Kind, phase string, d time.Duration) {
	m.phase.WithLabelValues(string(kind), phase).Observe(d.Seconds())
}

func (m *daemonMetrics) observeRPC(method string, d time.Duration) {
	m.rpc.WithLabelValues(method).Observe(d.Seconds())
}

// metrics serves /metrics: the Prometheus text format, or what the scraper negotiates.
func (d *Daemon) metrics(w http.ResponseWriter, r *http.Request) { d.prom.handler.ServeHTTP(w, r) }

// Metrics returns the /metrics text.
func (d *Daemon) Metrics(context.Context) (string, error) { return string(d.metricsText()), nil }

func (d *Daemon) metricsText() []byte {
	var b bytes.Buffer
	mfs, err := d.prom.reg.Gather()
	if err != nil {
		log.Warnw("gathering metrics", "err", err)
	}
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			log.Warnw("encoding metrics", "family", mf.GetName(), "err", err)
		}
	}
	return b.Bytes()
}

// stateCollector renders the daemon's counters and gauges at each scrape. It is an unchecked
// collector (it describes nothing up front): the GPU families' label sets depend on what ran.
type stateCollector struct{ d *Daemon }

func (stateCollector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.d
	snap := d.jobs.Snapshot()
	put := family(ch)
	put("snarkd_build_info", "Build version and proving backend.", prometheus.GaugeValue, []string{"version", "backend"},
		1, buildinfo.String(), d.backend)

	perKind := func(name string, typ prometheus.ValueType, help string, get func(k rpcapi.ProofKind) float64) {
		for _, k := range rpcapi.Kinds {
			put(name, help, typ, []string{"kind"}, get(k), string(k))
		}
	}
	perKind("snarkd_jobs_submitted_total", prometheus.CounterValue, "Jobs accepted, by proof kind.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Stats.Submitted[k]) })
	perKind("snarkd_jobs_completed_total", prometheus.CounterValue, "Jobs that produced a verified proof.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Stats.Completed[k]) })
	perKind("snarkd_jobs_failed_total", prometheus.CounterValue, "Jobs that ended with an error.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Stats.Failed[k]) })
	perKind("snarkd_jobs_cancelled_total", prometheus.CounterValue, "Jobs cancelled before they finished.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Stats.Cancelled[k]) })
	perKind("snarkd_jobs_queued", prometheus.GaugeValue, "Jobs waiting for a worker.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Queued[k]) })
	perKind("snarkd_jobs_running", prometheus.GaugeValue, "Jobs being proved.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Running[k]) })
	perKind("snarkd_proving_seconds_total", prometheus.CounterValue, "Wall time spent on completed jobs, from start to verified proof.",
		func(k rpcapi.ProofKind) float64 { return float64(snap.Stats.ProofNs[k]) / 1e9 })
	put("snarkd_jobs_rejected_total", "Submissions refused (bad request, unsupported kind, conflict, queue full).",
		prometheus.CounterValue, nil, float64(snap.Stats.Rejected))
	put("snarkd_events_dropped_total", "Progress events a slow Events subscriber missed.",
		prometheus.CounterValue, nil, float64(snap.EventsDropped))
	put("snarkd_workers", "Job workers.", prometheus.GaugeValue, nil, float64(snap.Workers))

	attempts, delivered := d.deliverer.Counts()
	put("snarkd_lotus_return_attempts_total", "Return* calls made to the miner.", prometheus.CounterValue, nil, float64(attempts))
	put("snarkd_lotus_returns_delivered_total", "Lotus results the miner accepted.", prometheus.CounterValue, nil, float64(delivered))
	put("snarkd_lotus_returns_pending", "Lotus results waiting for delivery.", prometheus.GaugeValue, nil, float64(d.deliverer.Pending()))
	connected := 0.0
	if s := d.attacher.Status(); s != nil && s.Connected {
		connected = 1
	}
	put("snarkd_lotus_miner_connected", "1 while registered with a lotus-miner.", prometheus.GaugeValue, nil, connected)

	for _, p := range d.pipeline.Params().Loaded() {
		put("snarkd_params_bytes", "Size of loaded proving parameters.", prometheus.GaugeValue, []string{"circuit"},
			float64(p.Bytes), p.Circuit)
	}
	if d.gpuStatus != nil {
		collectGPU(put, d.gpuMetrics, d.gpuStatus())
	}
}

// putFunc emits one sample of family name (help, type and label names are the family's).
type putFunc func(name, help string, typ prometheus.ValueType, labels []string, v float64, values ...string)

// family returns a putFunc that sends const metrics to ch, one Desc per family and label set.
func family(ch chan<- prometheus.Metric) putFunc {
	descs := map[string]*prometheus.Desc{}
	return func(name, help string, typ prometheus.ValueType, labels []string, v float64, values ...string) {
		key := fmt.Sprint(name, labels)
		desc := descs[key]
		if desc == nil {
			desc = prometheus.NewDesc(name, help, labels, nil)
			descs[key] = desc
		}
		ch <- prometheus.MustNewConstMetric(desc, typ, v, values...)
	}
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
