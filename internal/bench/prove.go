package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/internal/cores"
)

// ProveConfig is one `snarkd bench prove` run.
type ProveConfig struct {
	// Backend is one of ProveBackends; Circuit "test" (the synthetic circuit of Constraints:
	// N or 2^k rows) or a PoSt proof type.
	Backend, Circuit, Constraints string
	Runs                          int
	Seed                          uint64
	// Setup is "dummy" (keys of the right shape, proofs do not verify) or "seeded" (insecure
	// real keys; proofs are verified).
	Setup string
	// JSON prints one ProveResult per run instead of lines for people.
	JSON bool
}

// benchProver proves one synthesized assignment and reports its step timings. Backends other
// than the CPU register themselves in proveBackends from their own files.
type proveFunc func(ctx context.Context, pk *groth16.Parameters, pa *cs.ProvingAssignment, r, s *fr.Element) (*groth16.Proof, []groth16.StageTiming, error)

var proveBackends = map[string]proveFunc{
	"cpu": groth16.ProveAssignmentTimed,
}

// ProveResult is one run of `snarkd bench prove` (--json: one object per run).
type ProveResult struct {
	Backend     string             `json:"backend"`
	Constraints int                `json:"constraints"`
	Run         int                `json:"run"`
	SynthSec    float64            `json:"synth_s"`
	ProveSec    float64            `json:"prove_s"`
	Steps       map[string]float64 `json:"steps_s"`
	Verified    *bool              `json:"verified,omitempty"`
	VerifySec   float64            `json:"verify_s,omitempty"`
	// PeakHeapGiB is the largest live Go heap seen during synthesis and proving (keys included).
	PeakHeapGiB float64 `json:"peak_heap_gib"`
	KeysGiB     float64 `json:"keys_heap_gib"`
}

// Prove times cfg.Runs proofs of one synthetic circuit, each step, and writes the results to out.
func Prove(ctx context.Context, cfg ProveConfig, out io.Writer) error {
	prove, ok := proveBackends[cfg.Backend]
	if !ok {
		return fmt.Errorf("backend %q is not available in this build (have: %s)", cfg.Backend, strings.Join(ProveBackends(), ", "))
	}
	runs := cfg.Runs
	if runs < 1 {
		return fmt.Errorf("--runs must be at least 1")
	}
	t0 := time.Now()
	bc, err := benchCircuitFor(ctx, cfg.Circuit, cfg.Constraints, cfg.Seed)
	if err != nil {
		return err
	}
	planTime := time.Since(t0)
	t0 = time.Now()
	var pk *groth16.Parameters
	switch cfg.Setup {
	case "dummy":
		pk, err = groth16.DummyParameters(ctx, bc.blank)
	case "seeded":
		pk, err = groth16.SetupFromSeed(ctx, bc.blank, []byte("snarkd bench prove"))
	default:
		return fmt.Errorf("--setup must be dummy or seeded, not %q", cfg.Setup)
	}
	if err != nil {
		return fmt.Errorf("generating keys: %w", err)
	}
	n := len(pk.H) + 1
	var pvk *groth16.PreparedVerifyingKey
	if cfg.Setup == "seeded" {
		if pvk, err = groth16.Prepare(&pk.VK); err != nil {
			return err
		}
	}
	if !cfg.JSON {
		fmt.Fprintf(out, "circuit: %s, domain 2^%d, %d aux, %d inputs (witness inputs prepared in %.2fs); %s keys in %.1fs; GOMAXPROCS %d\n",
			bc.name, log2(n), len(pk.L), len(pk.VK.IC), planTime.Seconds(), cfg.Setup,
			time.Since(t0).Seconds(), cores.N())
	}
	var proveTimes []float64
	for run := 1; run <= runs; run++ {
		res, err := proveOnce(ctx, prove, pk, pvk, bc)
		if err != nil {
			return fmt.Errorf("run %d: %w", run, err)
		}
		res.Backend, res.Constraints, res.Run = cfg.Backend, n, run
		proveTimes = append(proveTimes, res.ProveSec)
		if cfg.JSON {
			if err := json.NewEncoder(out).Encode(res); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(out, "run %d: synth %.3fs prove %.3fs [%s]%s; peak heap %.2f GiB (keys %.2f GiB)\n", run, res.SynthSec, res.ProveSec,
			formatSteps(res.Steps), verifiedNote(res.Verified), res.PeakHeapGiB, res.KeysGiB)
	}
	if !cfg.JSON {
		sort.Float64s(proveTimes)
		fmt.Fprintf(out, "prove: median %.3fs, min %.3fs over %d runs; peak RSS %.2f GiB\n",
			proveTimes[len(proveTimes)/2], proveTimes[0], runs, peakRSSGiB())
	}
	return nil
}

func proveOnce(ctx context.Context, prove proveFunc, pk *groth16.Parameters, pvk *groth16.PreparedVerifyingKey, bc *benchCircuit) (*ProveResult, error) {
	r, s, err := groth16.RandomRS(nil)
	if err != nil {
		return nil, err
	}
	runtime.GC()
	keys := heapBytes()
	stopSampler := startPeakHeapSampler()
	defer stopSampler()
	t0 := time.Now()
	pa, err := bc.synthesize(ctx, groth16.CapacityFor(pk))
	if err != nil {
		return nil, err
	}
	synth := time.Since(t0)
	t0 = time.Now()
	proof, steps, err := prove(ctx, pk, pa, &r, &s)
	if err != nil {
		return nil, err
	}
	res := &ProveResult{SynthSec: synth.Seconds(), ProveSec: time.Since(t0).Seconds(), Steps: map[string]float64{}}
	res.PeakHeapGiB = float64(stopSampler()) / (1 << 30)
	res.KeysGiB = float64(keys) / (1 << 30)
	for _, st := range steps {
		res.Steps[st.Name] = st.Duration.Seconds()
	}
	if pvk != nil {
		t1 := time.Now()
		ok := pvk.Verify(proof, bc.inputs) == nil
		res.VerifySec = time.Since(t1).Seconds()
		res.Verified = &ok
		if !ok {
			return res, fmt.Errorf("proof does not verify")
		}
	}
	return res, nil
}

// ProveBackends names the backends `snarkd bench prove` can use in this build.
func ProveBackends() []string {
	var names []string
	for k := range proveBackends {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// parseConstraints accepts "1048576" or "2^20".
func parseConstraints(s string) (int, error) {
	if base, exp, ok := strings.Cut(s, "^"); ok {
		e, err := strconv.Atoi(exp)
		if base != "2" || err != nil || e < 0 || e > 31 {
			return 0, fmt.Errorf("--constraints %q: want N or 2^k with k ≤ 31", s)
		}
		return 1 << e, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("--constraints %q: want a positive integer or 2^k", s)
	}
	return n, nil
}

func log2(m int) int {
	k := 0
	for 1<<k < m {
		k++
	}
	return k
}

func formatSteps(steps map[string]float64) string {
	names := make([]string, 0, len(steps))
	for k := range steps {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %.3fs", k, steps[k])
	}
	return strings.Join(parts, ", ")
}

func verifiedNote(v *bool) string {
	if v == nil {
		return ""
	}
	return " verified"
}

// heapBytes is the live heap (objects) right now.
func heapBytes() uint64 { return readMetric("/memory/classes/heap/objects:bytes") }

// startPeakHeapSampler polls the live heap every 10 ms; the returned function stops the sampler
// (once; later calls return the same value) and returns the peak it saw.
func startPeakHeapSampler() func() uint64 {
	stop := make(chan struct{})
	done := make(chan uint64, 1)
	go func() {
		var peak uint64
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			if h := heapBytes(); h > peak {
				peak = h
			}
			select {
			case <-stop:
				done <- peak
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	var peak uint64
	return func() uint64 {
		once.Do(func() {
			close(stop)
			peak = <-done
		})
		return peak
	}
}
