package main

import (
	"encoding/json"
	"fmt"
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

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/internal/cores"
	"github.com/snarkd/snarkd/plugin"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// benchC2Report is what `snarkd bench c2` prints (--json: this object).
type benchC2Report struct {
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
}

func benchC2Command() *cli.Command {
	return &cli.Command{
		Name:  "c2",
		Usage: "prove synthetic PoRep C2 requests end to end through the daemon's pipeline and report throughput",
		Description: "Each proof goes from C1 output JSON through decoding, vanilla checks, synthesis, the prover backend\n" +
			"and verification, as the daemon runs it. --setup dummy uses keys of the real size whose proofs do not\n" +
			"verify (every proof is still checked; the report says so); --setup params reads the parameter directory.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "proof", Value: "32GiB", Usage: "seal proof type: a name (StackedDrg32GiBV1_1), its number, or a sector size (2KiB, 8MiB, 32GiB, 64GiB)"},
			&cli.IntFlag{Name: "proofs", Value: 4, Usage: "C2 requests proved back to back"},
			&cli.IntFlag{Name: "jobs", Value: config.DefaultJobsWorkers, Usage: "requests in flight at once, as the daemon's Jobs.Workers (at most --proofs)"},
			&cli.StringFlag{Name: "backend", Value: "auto", Usage: "auto, cpu or cuda"},
			&cli.StringFlag{Name: "synthesis", Value: config.SynthesisCompiled, Usage: "compiled or full"},
			&cli.StringFlag{Name: "setup", Value: "dummy", Usage: "dummy (keys of the real size, proofs do not verify) or params (the parameter directory's files)"},
			&cli.StringFlag{Name: "param-dir", Value: config.DefaultParameterCache, Usage: "parameter directory for --setup params", EnvVars: []string{"FIL_PROOFS_PARAMETER_CACHE"}},
			&cli.StringFlag{Name: "circuit-dir", Usage: "directory for compiled circuits (default: a temporary one, so the first proof compiles)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the synthetic C1 outputs"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
		},
		Action: runBenchC2,
	}
}

func runBenchC2(cctx *cli.Context) error {
	ctx := cctx.Context
	p, err := parseSealProof(cctx.String("proof"))
	if err != nil {
		return usagef("--proof: %w", err)
	}
	n, jobs := cctx.Int("proofs"), cctx.Int("jobs")
	if n < 1 {
		return usagef("--proofs %d: want at least 1", n)
	}
	if !cctx.IsSet("jobs") {
		jobs = min(jobs, n)
	}
	if jobs < 1 || jobs > n {
		return usagef("--jobs %d: want 1..%d (at most --proofs)", jobs, n)
	}
	synthesis, setup := cctx.String("synthesis"), cctx.String("setup")
	if synthesis != config.SynthesisCompiled && synthesis != config.SynthesisFull {
		return usagef("--synthesis %q: want compiled or full", synthesis)
	}
	if setup != "dummy" && setup != "params" {
		return usagef("--setup %q: want dummy or params", setup)
	}
	if p.Feature == prooftypes.NonInteractive {
		return usagef("--proof %s: NI-PoRep C2 is not supported yet", p.Name)
	}
	backendName, err := resolveBackend(cctx.String("backend"))
	if err != nil {
		return fmt.Errorf("--backend: %w", err)
	}
	out := cctx.App.ErrWriter
	t0 := time.Now()

	// The requests: synthetic C1 outputs of the production shape, one sector each.
	type request struct {
		sector uint64
		c1     []byte
	}
	reqs := make([]request, n)
	rng := rand.NewChaCha8([32]byte{byte(cctx.Uint64("seed")), 0xc2})
	for i := range reqs {
		var ticket, seed [32]byte
		rng.Read(ticket[:])
		rng.Read(seed[:])
		o, err := sealer.SyntheticC1(ctx, p, prooftypes.ProverID(1000), uint64(i+1), ticket, seed, rng)
		if err != nil {
			return fmt.Errorf("synthetic C1 output %d: %w", i, err)
		}
		js, err := o.Encode()
		if err != nil {
			return err
		}
		reqs[i] = request{sector: uint64(i + 1), c1: js}
	}
	fmt.Fprintf(out, "%d synthetic %s C1 outputs (%d bytes each) in %.1fs\n", n, p.Name, len(reqs[0].c1), time.Since(t0).Seconds())

	circuitDir := cctx.String("circuit-dir")
	if circuitDir == "" {
		if circuitDir, err = os.MkdirTemp("", "snarkd-bench-circuits-"); err != nil {
			return err
		}
		defer os.RemoveAll(circuitDir)
	}
	params := prover.NewParamCache("").WithCircuitDir(circuitDir).WithFilecoinDir(cctx.String("param-dir"))

	var backend prover.Backend = prover.CPUBackend{}
	var sched *gpu.Scheduler
	var kernels spanSet
	if backendName == "cuda" {
		var opts plugin.Options
		if sched, err = newGPUScheduler(config.Default().GPU, backendName, &opts); err != nil {
			return err
		}
		defer sched.Close()
		gb, ok := opts.Backend.(*prover.GPUBackend)
		if !ok {
			return fmt.Errorf("the cuda backend is %T", opts.Backend)
		}
		gb.Observe(kernels.add)
		backend = gb
	}
	// The first proof waits for the circuit's compiled form (the daemon would synthesize its
	// partitions in full meanwhile), so that the later proofs measure the steady state.
	pipe := prover.New(backend, params).WithFullSynthesis(synthesis == config.SynthesisFull).WithCompiledWait(true)
	if setup == "dummy" {
		t1 := time.Now()
		info, err := circuit.QuickCircuitInfo(ctx, p)
		if err != nil {
			return err
		}
		pk := groth16.DummyParametersOf(info.SynthesisShape, info.AAuxDensity, info.BInputDensity, info.BAuxDensity)
		if err := params.PutSeal(ctx, p, &prover.SealParams{PK: pk, VK: &pk.VK}); err != nil {
			return err
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
		n, p.Name, p.Partitions, backendName, synthesis, jobs, cores.N())
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
				o.res, o.err = pipe.Prove(ctx, prover.Request{Kind: rpcapi.KindPoRepC2, RegisteredProof: int64(p.Proof),
					MinerID: 1000, SectorNumber: reqs[i].sector, Phase1Out: reqs[i].c1, JobID: fmt.Sprintf("bench-c2-%d", i)}, nil)
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
			return fmt.Errorf("proof %d: %w", i, o.err)
		}
	}

	rep := benchC2Report{Proof: p.Name, Partitions: p.Partitions, Backend: backendName, Synthesis: synthesis, Setup: setup,
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
	rep.GoMemoryLimitGiB = float64(memLimit) / (1 << 30)

	if cctx.Bool("json") {
		enc := json.NewEncoder(cctx.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	w := cctx.App.Writer
	keys := "keys from the parameter directory, proofs verify"
	if !rep.Verified {
		keys = "dummy keys of the real size, proofs do not verify"
	}
	fmt.Fprintf(w, "%s C2 (%d partitions), %s backend, %s synthesis, %s\n", rep.Proof, rep.Partitions, rep.Backend, rep.Synthesis, keys)
	fmt.Fprintf(w, "sustained      %.2f s/proof over %d proofs, %d at a time\n", rep.SustainedSec, len(steady), jobs)
	fmt.Fprintf(w, "first proof    %.2f s (loads and compiles)\n", rep.FirstSec)
	fmt.Fprintf(w, "per partition  %s\n", formatSeconds(rep.PerPartitionSec))
	if rep.GPUBusy != nil {
		fmt.Fprintf(w, "GPU busy       %.0f %%, peak VRAM %.1f GiB\n", *rep.GPUBusy*100, *rep.PeakVRAMGiB)
	}
	fmt.Fprintf(w, "peak RSS       %.1f GiB (Go memory limit %.1f GiB; live heap at most %.1f GiB, %d collections)\n",
		rep.PeakRSSGiB, rep.GoMemoryLimitGiB, rep.PeakLiveHeapGiB, rep.GCCycles)
	return nil
}

// spanSet collects the kernel spans of every partition the GPU backend proved.
type spanSet struct {
	mu    sync.Mutex
	spans []gpu.StageSpan
}

// add keeps res's kernel spans (not its CPU preparation, admission wait, uploads or assembly).
func (s *spanSet) add(res gpu.ProveResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sp := range res.Timeline {
		if !gpu.IsKernelSpan(sp.Name) {
			continue
		}
		s.spans = append(s.spans, sp)
	}
}

// busyWithin is the union of the spans' time inside [from, to].
func (s *spanSet) busyWithin(from, to time.Time) time.Duration {
	s.mu.Lock()
	spans := append([]gpu.StageSpan(nil), s.spans...)
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
