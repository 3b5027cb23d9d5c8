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
	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/gpuprove"
	"github.com/snarkd/snarkd/internal/cores"
	"github.com/snarkd/snarkd/prover"
)

// C2Config is one `snarkd bench c2` run.
type C2Config struct {
	Proof *prooftypes.SealProof
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
}

// C2 proves cfg.Proofs synthetic C1 outputs of the production shape through the daemon's
// pipeline and measures them.
func C2(ctx context.Context, cfg C2Config) (*C2Report, error) {
	out := cfg.Log
	if out == nil {
		out = io.Discard
	}
	p, n, jobs, synthesis, setup := cfg.Proof, cfg.Proofs, cfg.Jobs, cfg.Synthesis, cfg.Setup
	t0 := time.Now()

	// The requests: synthetic C1 outputs of the production shape, one sector each.
	type request struct {
		sector uint64
		c1     []byte
	}
	reqs := make([]request, n)
	rng := rand.NewChaCha8([32]byte{byte(cfg.Seed), 0xc2})
	for i := range reqs {
		var ticket, seed [32]byte
		rng.Read(ticket[:])
		rng.Read(seed[:])
		o, err := sealer.SyntheticC1(ctx, p, prooftypes.ProverID(1000), uint64(i+1), ticket, seed, rng)
		if err != nil {
			return nil, fmt.Errorf("synthetic C1 output %d: %w", i, err)
		}
		js, err := o.Encode()
		if err != nil {
			return nil, err
		}
		reqs[i] = request{sector: uint64(i + 1), c1: js}
	}
	fmt.Fprintf(out, "%d synthetic %s C1 outputs (%d bytes each) in %.1fs\n", n, p.Name, len(reqs[0].c1), time.Since(t0).Seconds())

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
	var kernels spanSet
	if gb, ok := backend.(*prover.GPUBackend); ok {
		gb.Observe(kernels.add)
	}
	// The first proof waits for the circuit's compiled form (the daemon would synthesize its
	// partitions in full meanwhile), so that the later proofs measure the steady state.
	pipe := prover.New(backend, params).WithFullSynthesis(synthesis == config.SynthesisFull).WithCompiledWait(true)
	if setup == "dummy" {
		t1 := time.Now()
		info, err := circuit.QuickCircuitInfo(ctx, p)
		if err != nil {
			return nil, err
		}
		pk := groth16.DummyParametersOf(info.SynthesisShape, info.AAuxDensity, info.BInputDensity, info.BAuxDensity)
		if err := params.PutSeal(ctx, p, &prover.SealParams{PK: pk, VK: &pk.VK}); err != nil {
			return nil, err
		}
		pipe.WithUnverifiedProofs()
		fmt.Fprintf(out, "dummy keys of %s (%.1f GiB) in %.1fs: proofs are made and checked, and do not verify\n",
			p.Name, float64(pk.ParametersSize())/(1<<30), time.Since(t1).Seconds())
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
		n, p.Name, p.Partitions, cfg.BackendName, synthesis, jobs, cores.N())
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
				o.res, o.err = pipe.Prove(ctx, prover.Request{Job: prover.Job{ID: fmt.Sprintf("bench-c2-%d", i)},
					PoRep: &prover.PoRepRequest{RegisteredProof: p.Proof, MinerID: 1000, SectorNumber: reqs[i].sector, Phase1Out: reqs[i].c1}}, nil)
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

	rep := &C2Report{Proof: p.Name, Partitions: p.Partitions, Backend: cfg.BackendName, Synthesis: synthesis, Setup: setup,
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
		rep.PerPartitionSec[k] = v / float64(p.Partitions)
	}
	rep.SustainedSec = to.Sub(from).Seconds() / float64(len(steady))
	for _, o := range outcomes {
		rep.LatencySec = append(rep.LatencySec, o.end.Sub(o.start).Seconds())
	}
	if sched != nil {
		busy := kernels.busyWithin(from, to).Seconds() / to.Sub(from).Seconds()
		vram := float64(peakVRAM.Load()) / (1 << 30)
		rep.GPUBusy, rep.PeakVRAMGiB = &busy, &vram
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
	fmt.Fprintf(w, "%s C2 (%d partitions), %s backend, %s synthesis, %s\n", rep.Proof, rep.Partitions, rep.Backend, rep.Synthesis, keys)
	fmt.Fprintf(w, "sustained      %.2f s/proof over %d proofs, %d at a time\n", rep.SustainedSec, rep.SteadyProofs, rep.Jobs)
	fmt.Fprintf(w, "first proof    %.2f s (loads and compiles)\n", rep.FirstSec)
	fmt.Fprintf(w, "per partition  %s\n", formatSeconds(rep.PerPartitionSec))
	if rep.GPUBusy != nil {
		fmt.Fprintf(w, "GPU busy       %.0f %%, peak VRAM %.1f GiB\n", *rep.GPUBusy*100, *rep.PeakVRAMGiB)
	}
	fmt.Fprintf(w, "peak RSS       %.1f GiB (Go memory limit %.1f GiB; live heap at most %.1f GiB, %d collections)\n",
		rep.PeakRSSGiB, rep.GoMemoryLimitGiB, rep.PeakLiveHeapGiB, rep.GCCycles)
}

// spanSet collects the kernel spans of every partition the GPU backend proved.
type spanSet struct {
	mu    sync.Mutex
	spans []gpuprove.StageSpan
}

// add keeps res's kernel spans (not its CPU preparation, admission wait, uploads or assembly).
func (s *spanSet) add(res gpuprove.ProveResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range res.Timeline {
		if !gpuprove.IsKernelSpan(sp.Name) {
			continue
		}
		s.spans = append(s.spans, sp)
	}
}

// busyWithin is the union of the spans' time inside [from, to].
func (s *spanSet) busyWithin(from, to time.Time) time.Duration {
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
	order := []string{prover.PhasePlan, prover.PhaseCompile, prover.PhaseWitness, prover.PhaseProducts, prover.PhaseCheck,
		prover.PhaseFullSynthesis, prover.PhaseProve, prover.PhaseVerify}
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
