// Package bench drives snarkd's end-to-end benchmarks (`snarkd bench c2`): the proving loops,
// the sampling of memory and GPU use, and the reports. The CLI parses flags, builds the backend
// and prints what these return.
package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/gpuprove"
	"github.com/snarkd/snarkd/internal/cores"
	"github.com/snarkd/snarkd/prover"
)

// C2Config is one `snarkd bench c2` (or `bench post`) run.
type C2Config struct {
	// Workload is the proof type and its synthetic requests.
	Workload *Workload
	// Proofs are proved back to back, Jobs at once (as the daemon's Jobs.Workers).
	Proofs, Jobs int
	// Synthesis is config.SynthesisCompiled or config.SynthesisFull; Setup "dummy" (keys of
	// the real size whose proofs do not verify) or "params" (ParamDir's files).
	Synthesis, Setup string
	ParamDir         string
	// CircuitDir keeps compiled circuits ("": a temporary directory, so the first proof
	// compiles).
	CircuitDir string
	Seed       uint64
	// Backend proves the partitions (nil: the CPU); Sched is its GPU scheduler, if any, for
	// peak VRAM. A *prover.GPUBackend's kernel spans give the GPU busy fraction.
	Backend     prover.Backend
	BackendName string
	Sched       *gpu.Scheduler
	// GoMemoryLimit is reported with the peak resident set.
	GoMemoryLimit uint64
	// Log receives progress lines (nil: none).
	Log io.Writer
}

// C2Report is what `snarkd bench c2` prints (--json: this object).
type C2Report struct {
	Proof      string `json:"proof"`
	Partitions int    `json:"partitions"`
	Backend    string `json:"backend"`
	Synthesis  string `json:"synthesis"`
	Setup      string `json:"setup"`
	Verified   bool   `json:"proofs_verify"` // false with dummy keys: proofs are made, checked, and do not verify
	Proofs     int    `json:"proofs"`
	Jobs       int    `json:"jobs"`
	Cores      int    `json:"cores"`
	// SustainedSec is the wall time per proof between completions: from the end of the first
	// --jobs proofs (those pay parameter loads and circuit compilation) to the last's end, per
	// proof after them; with no more proofs than --jobs, from the start over all of them.
	SustainedSec float64   `json:"sustained_s_per_proof"`
	FirstSec     float64   `json:"first_proof_s"`
	LatencySec   []float64 `json:"latency_s"`
	// PhasesSec is each step's time per proof, summed over its partitions, averaged over the
	// steady-state proofs; PerPartitionSec divides it by the partitions.
	PhasesSec       map[string]float64 `json:"phases_s"`
	PerPartitionSec map[string]float64 `json:"per_partition_s"`
	// GPUBusy is the fraction of the sustained window in which some kernel ran (GPU backend).
	GPUBusy     *float64 `json:"gpu_busy,omitempty"`
	PeakRSSGiB  float64  `json:"peak_rss_gib"`
	PeakVRAMGiB *float64 `json:"peak_vram_gib,omitempty"`
	PrepareSec  float64  `json:"prepare_s"` // synthetic C1 outputs and keys, outside the timings
	// GoMemoryLimitGiB is the Go runtime's soft memory limit (the heap grows towards it).
	GoMemoryLimitGiB float64 `json:"go_memory_limit_gib"`
	// PeakLiveHeapGiB is the largest heap a collection found live during the proofs, and
	// GCCycles the collections they took: a live heap near the limit makes them back to back.
	PeakLiveHeapGiB float64 `json:"peak_live_heap_gib"`
	GCCycles        uint64  `json:"gc_cycles"`
	// SteadyProofs is how many proofs SustainedSec averages over.
	SteadyProofs int `json:"steady_proofs"`
	// SteadyLatencySec is the median latency of those proofs: with --jobs 1, a lone request's
	// on a warm daemon (parameters and compiled circuit in memory).
	SteadyLatencySec float64 `json:"steady_latency_s"`
	// GPU is the device side of the partitions that finished in the sustained window (GPU
	// backend).
	GPU *C2GPU `json:"gpu,omitempty"`
}

// C2GPU is the average partition on the GPU in the sustained window, in seconds.
type C2GPU struct {
	Partitions int `json:"partitions"`
	// KernelSec is the device time of a partition's kernel steps (CUDA events on hardware),
	// a, b, c included where the device computes them; StagesSec every step's, uploads too.
	KernelSec float64            `json:"kernel_s"`
	StagesSec map[string]float64 `json:"stages_s"`
	// Where the partitions waited (gpu.PartitionTimes): the GPU queue, device memory, other
	// partitions' kernels; LockSec is the time holding the kernel lock, RunSec admission to done.
	QueuedSec     float64 `json:"queued_s"`
	MemorySec     float64 `json:"memory_s"`
	KernelWaitSec float64 `json:"kernel_wait_s"`
	LockSec       float64 `json:"kernel_lock_s"`
	RunSec        float64 `json:"run_s"`
	// Plans counts the memory plans granted.
	Plans map[string]int `json:"plans"`
}

// C2 proves cfg.Proofs synthetic requests of the workload's production shape through the
// daemon's pipeline and measures them.
func C2(ctx context.Context, cfg C2Config) (*C2Report, error) {
	out := cfg.Log
	if out == nil {
		out = io.Discard
	}
	w, n, jobs, synthesis, setup := cfg.Workload, cfg.Proofs, cfg.Jobs, cfg.Synthesis, cfg.Setup
	t0 := time.Now()

	// The requests: synthetic inputs of the production shape.
	reqs, err := w.requests(ctx, n, rand.NewChaCha8([32]byte{byte(cfg.Seed), 0xc2}))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "%d synthetic %s requests in %.1fs\n", n, w.Name, time.Since(t0).Seconds())

	circuitDir := cfg.CircuitDir
	if circuitDir == "" {
		var err error
		if circuitDir, err = os.MkdirTemp("", "snarkd-bench-circuits-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(circuitDir)
	}
	params := prover.NewParamCache("").WithCircuitDir(circuitDir).WithFilecoinDir(cfg.ParamDir)

	backend, sched := cfg.Backend, cfg.Sched
	if backend == nil {
		backend = prover.CPUBackend{}
	}
	var kernels gpuLog
	if gb, ok := backend.(*prover.GPUBackend); ok {
		gb.Observe(kernels.add)
	}
	// The first proof waits for the circuit's compiled form (the daemon would synthesize its
	// partitions in full meanwhile), so that the later proofs measure the steady state.
	pipe := prover.New(backend, params).WithFullSynthesis(synthesis == config.SynthesisFull).WithCompiledWait(true)
	if setup == "dummy" {
		t1 := time.Now()
		pk, err := w.dummyKeys(ctx, params, circuitDir)
		if err != nil {
			return nil, fmt.Errorf("dummy keys of %s: %w", w.Name, err)
		}
		pipe.WithUnverifiedProofs()
		fmt.Fprintf(out, "dummy keys of %s (%.1f GiB) in %.1fs: proofs are made and checked, and do not verify\n",
			w.Name, float64(pk.ParametersSize())/(1<<30), time.Since(t1).Seconds())
	}
	prepare := time.Since(t0)

	// Sampled every 50 ms: VRAM allocated on every device, and the Go heap that the last
	// collection found live (what the resident set cannot go below).
	var peakVRAM, peakLive atomic.Uint64
	stopSampling := make(chan struct{})
	var sampling sync.WaitGroup
	gcStart := gcCycles()
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if sched != nil {
				for _, d := range sched.Status().Devices {
					if a := d.Memory.Allocated; a > peakVRAM.Load() {
						peakVRAM.Store(a)
					}
				}
			}
			if l := liveHeap(); l > peakLive.Load() {
				peakLive.Store(l)
			}
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
		}
	}()

	type outcome struct {
		start, end time.Time
		res        prover.Result
		err        error
	}
	outcomes := make([]outcome, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	fmt.Fprintf(out, "proving %d × %s (%d partitions) on %s, %s synthesis, %d at a time, GOMAXPROCS %d\n",
		n, w.Name, w.Partitions, cfg.BackendName, synthesis, jobs, cores.N())
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				o := &outcomes[i]
				o.start = time.Now()
				req := reqs[i]
				req.Job = prover.Job{ID: fmt.Sprintf("bench-%d", i)}
				o.res, o.err = pipe.Prove(ctx, req, nil)
				o.end = time.Now()
				if o.err == nil {
					fmt.Fprintf(out, "proof %d: %.2fs (%s)\n", i, o.end.Sub(o.start).Seconds(), formatPhases(o.res.Phases, 1))
				}
			}
		}()
	}
	wg.Wait()
	close(stopSampling)
	sampling.Wait()
	for i, o := range outcomes {
		if o.err != nil {
			return nil, fmt.Errorf("proof %d: %w", i, o.err)
		}
	}

	rep := &C2Report{Proof: w.Name, Partitions: w.Partitions, Backend: cfg.BackendName, Synthesis: synthesis, Setup: setup,
		Verified: outcomes[0].res.Unverified == 0, Proofs: n, Jobs: jobs, Cores: cores.N(),
		FirstSec: outcomes[0].end.Sub(outcomes[0].start).Seconds(), PrepareSec: prepare.Seconds(),
		PhasesSec: map[string]float64{}, PerPartitionSec: map[string]float64{}}
	// The steady state: the proofs after the first jobs, which ran alongside the loads. With
	// several in flight a proof's latency includes waiting for the one before, so the rate is
	// taken between completions: from the end of the jobs-th to the end of the last.
	steady := outcomes
	ends := make([]time.Time, n)
	for i, o := range outcomes {
		ends[i] = o.end
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	from, to := outcomes[0].start, ends[n-1]
	if n > jobs {
		steady = outcomes[jobs:]
		from = ends[jobs-1]
	}
	for _, o := range steady {
		for k, d := range o.res.Phases {
			rep.PhasesSec[k] += d.Seconds() / float64(len(steady))
		}
	}
	for k, v := range rep.PhasesSec {
		rep.PerPartitionSec[k] = v / float64(w.Partitions)
	}
	rep.SustainedSec = to.Sub(from).Seconds() / float64(len(steady))
	for _, o := range outcomes {
		rep.LatencySec = append(rep.LatencySec, o.end.Sub(o.start).Seconds())
	}
	var steadyLat []float64
	for _, o := range steady {
		steadyLat = append(steadyLat, o.end.Sub(o.start).Seconds())
	}
	rep.SteadyLatencySec = median(steadyLat)
	if sched != nil {
		busy := kernels.busyWithin(from, to).Seconds() / to.Sub(from).Seconds()
		vram := float64(peakVRAM.Load()) / (1 << 30)
		rep.GPUBusy, rep.PeakVRAMGiB = &busy, &vram
		rep.GPU = kernels.summary(from, to)
	}
	rep.PeakRSSGiB = peakRSSGiB()
	rep.PeakLiveHeapGiB = float64(peakLive.Load()) / (1 << 30)
	rep.GCCycles = gcCycles() - gcStart
	rep.GoMemoryLimitGiB = float64(cfg.GoMemoryLimit) / (1 << 30)
	rep.SteadyProofs = len(steady)

	return rep, nil
}

// Format prints the report as `snarkd bench c2` does without --json.
func (rep *C2Report) Format(w io.Writer) {
	keys := "keys from the parameter directory, proofs verify"
	if !rep.Verified {
		keys = "dummy keys of the real size, proofs do not verify"
	}
	fmt.Fprintf(w, "%s (%d partitions), %s backend, %s synthesis, %s\n", rep.Proof, rep.Partitions, rep.Backend, rep.Synthesis, keys)
	fmt.Fprintf(w, "sustained      %.2f s/proof over %d proofs, %d at a time (their median latency %.2f s)\n",
		rep.SustainedSec, rep.SteadyProofs, rep.Jobs, rep.SteadyLatencySec)
	fmt.Fprintf(w, "first proof    %.2f s (loads and compiles)\n", rep.FirstSec)
	fmt.Fprintf(w, "per partition  %s\n", formatSeconds(rep.PerPartitionSec))
	if rep.GPUBusy != nil {
		fmt.Fprintf(w, "GPU busy       %.0f %%, peak VRAM %.1f GiB\n", *rep.GPUBusy*100, *rep.PeakVRAMGiB)
	}
	if g := rep.GPU; g != nil && g.Partitions > 0 {
		fmt.Fprintf(w, "GPU/partition  kernels %.3f s over %d partitions (plans: %s); kernel lock held %.3f s, admission to done %.3f s\n",
			g.KernelSec, g.Partitions, formatCounts(g.Plans), g.LockSec, g.RunSec)
		fmt.Fprintf(w, "  waited       GPU queue %.3f s, memory %.3f s, other partitions' kernels %.3f s\n",
			g.QueuedSec, g.MemorySec, g.KernelWaitSec)
		fmt.Fprintf(w, "  steps        %s\n", formatByTime(g.StagesSec))
	}
	fmt.Fprintf(w, "peak RSS       %.1f GiB (Go memory limit %.1f GiB; live heap at most %.1f GiB, %d collections)\n",
		rep.PeakRSSGiB, rep.GoMemoryLimitGiB, rep.PeakLiveHeapGiB, rep.GCCycles)
}

// gpuLog collects what the GPU backend says of every partition it proved: the kernel spans
// (not CPU preparation, admission wait, uploads or assembly) and each partition's steps.
type gpuLog struct {
	mu    sync.Mutex
	spans []gpuprove.StageSpan
	parts []partitionRecord
}

type partitionRecord struct {
	end    time.Time
	stages []groth16.StageTiming
	times  gpu.PartitionTimes
	plan   string
}

func (s *gpuLog) add(res gpuprove.ProveResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range res.Timeline {
		if !gpuprove.IsKernelSpan(sp.Name) {
			continue
		}
		s.spans = append(s.spans, sp)
	}
	s.parts = append(s.parts, partitionRecord{end: time.Now(), stages: res.Stages, times: res.Run.Times, plan: res.Run.Plan.String()})
}

// summary averages the partitions that finished in (from, to].
func (s *gpuLog) summary(from, to time.Time) *C2GPU {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &C2GPU{StagesSec: map[string]float64{}, Plans: map[string]int{}}
	for _, r := range s.parts {
		if !r.end.After(from) || r.end.After(to) {
			continue
		}
		g.Partitions++
		g.Plans[r.plan]++
		for _, st := range r.stages {
			g.StagesSec[st.Name] += st.Duration.Seconds()
			if gpuprove.IsKernelSpan(st.Name) {
				g.KernelSec += st.Duration.Seconds()
			}
		}
		t := r.times
		g.QueuedSec += t.Queued.Seconds()
		g.MemorySec += t.Memory.Seconds()
		g.KernelWaitSec += t.KernelWait.Seconds()
		g.LockSec += t.Kernels.Seconds()
		g.RunSec += t.Run.Seconds()
	}
	if g.Partitions == 0 {
		return g
	}
	d := float64(g.Partitions)
	for k := range g.StagesSec {
		g.StagesSec[k] /= d
	}
	g.KernelSec /= d
	g.QueuedSec /= d
	g.MemorySec /= d
	g.KernelWaitSec /= d
	g.LockSec /= d
	g.RunSec /= d
	return g
}

// busyWithin is the union of the spans' time inside [from, to].
func (s *gpuLog) busyWithin(from, to time.Time) time.Duration {
	s.mu.Lock()
	spans := append([]gpuprove.StageSpan(nil), s.spans...)
	s.mu.Unlock()
	sort.Slice(spans, func(i, j int) bool { return spans[i].Start.Before(spans[j].Start) })
	var busy time.Duration
	var end time.Time
	for _, sp := range spans {
		st, en := sp.Start, sp.End
		if st.Before(from) {
			st = from
		}
		if en.After(to) {
			en = to
		}
		if st.Before(end) {
			st = end
		}
		if en.After(st) {
			busy += en.Sub(st)
			end = en
		}
	}
	return busy
}

func formatPhases(ph map[string]time.Duration, div int) string {
	s := make(map[string]float64, len(ph))
	for k, v := range ph {
		s[k] = v.Seconds() / float64(div)
	}
	return formatSeconds(s)
}

// formatSeconds lists phases in pipeline order, then any others by name.
func formatSeconds(s map[string]float64) string {
	order := []string{prover.PhaseSlot, prover.PhasePlan, prover.PhaseCompile, prover.PhaseWitness, prover.PhaseProducts, prover.PhaseCheck,
		prover.PhaseFullSynthesis, prover.PhaseProve, prover.PhaseInputs, prover.PhaseVerify}
	seen := map[string]bool{}
	var parts []string
	for _, k := range order {
		if v, ok := s[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.3fs", k, v))
			seen[k] = true
		}
	}
	var rest []string
	for k := range s {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		parts = append(parts, fmt.Sprintf("%s %.3fs", k, s[k]))
	}
	return strings.Join(parts, ", ")
}

// formatByTime lists steps longest first.
func formatByTime(s map[string]float64) string {
	return joinByValue(s, func(k string, v float64) string { return fmt.Sprintf("%s %.3fs", k, v) })
}

// formatCounts lists counts most frequent first, as "name ×n".
func formatCounts(c map[string]int) string {
	return joinByValue(c, func(k string, v int) string { return fmt.Sprintf("%s ×%d", k, v) })
}

// joinByValue formats m's entries, the largest value first (ties by name).
func joinByValue[V int | float64](m map[string]V, format func(string, V) string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = format(k, m[k])
	}
	return strings.Join(parts, ", ")
}

// median of v (0 when empty).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// liveHeap is the heap the last collection marked live, in bytes.
func liveHeap() uint64 { return readMetric("/gc/heap/live:bytes") }

// gcCycles is the number of collections so far.
func gcCycles() uint64 { return readMetric("/gc/cycles/total:gc-cycles") }

func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// peakRSSGiB is the process's peak resident set in GiB (0 when unknown).
func peakRSSGiB() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) * 1024 / (1 << 30) // Linux reports KiB
}
