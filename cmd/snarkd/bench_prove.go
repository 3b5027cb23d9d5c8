package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/internal/cores"
)

// benchProver proves one synthesized assignment and reports its step timings. Backends other
// than the CPU register themselves in benchProveBackends from their own files.
type benchProver func(ctx context.Context, pk *groth16.Parameters, pa *cs.ProvingAssignment, r, s *fr.Element) (*groth16.Proof, []groth16.StageTiming, error)

var benchProveBackends = map[string]benchProver{
	"cpu": groth16.ProveAssignmentTimed,
}

// benchProveResult is one run of `snarkd bench prove`.
type benchProveResult struct {
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

func benchProveCommand() *cli.Command {
	return &cli.Command{
		Name:  "prove",
		Usage: "prove a synthetic circuit (about 7/8 boolean wires, like Filecoin witnesses) and time each step",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "backend", Value: "cpu", Usage: "prover backend: " + strings.Join(backendNames(), ", ")},
			&cli.StringFlag{Name: "constraints", Value: "2^20", Usage: "R1CS rows including the input rows: N or 2^k"},
			&cli.StringFlag{Name: "circuit", Value: "test", Usage: "test (the synthetic circuit of --constraints) or a PoSt proof type (StackedDrgWinning32GiBV1, StackedDrgWindow32GiBV1_1) proved from synthetic vanilla proofs"},
			&cli.IntFlag{Name: "runs", Value: 3, Usage: "number of timed proofs"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "circuit seed"},
			&cli.StringFlag{Name: "setup", Value: "dummy", Usage: "keys: dummy (right shape, proofs do not verify; fast) or seeded (insecure real keys; proofs are verified)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per run"},
		},
		Action: func(cctx *cli.Context) error {
			ctx := cctx.Context
			prove, ok := benchProveBackends[cctx.String("backend")]
			if !ok {
				return fmt.Errorf("backend %q is not available in this build (have: %s)", cctx.String("backend"), strings.Join(backendNames(), ", "))
			}
			runs := cctx.Int("runs")
			if runs < 1 {
				return fmt.Errorf("--runs must be at least 1")
			}
			t0 := time.Now()
			bc, err := benchCircuitFor(ctx, cctx.String("circuit"), cctx.String("constraints"), cctx.Uint64("seed"))
			if err != nil {
				return err
			}
			planTime := time.Since(t0)
			t0 = time.Now()
			var pk *groth16.Parameters
			switch cctx.String("setup") {
			case "dummy":
				pk, err = groth16.DummyParameters(ctx, bc.blank)
			case "seeded":
				pk, err = groth16.SetupFromSeed(ctx, bc.blank, []byte("snarkd bench prove"))
			default:
				return fmt.Errorf("--setup must be dummy or seeded, not %q", cctx.String("setup"))
			}
			if err != nil {
				return fmt.Errorf("generating keys: %w", err)
			}
			n := len(pk.H) + 1
			var pvk *groth16.PreparedVerifyingKey
			if cctx.String("setup") == "seeded" {
				if pvk, err = groth16.Prepare(&pk.VK); err != nil {
					return err
				}
			}
			out := cctx.App.Writer
			if !cctx.Bool("json") {
				fmt.Fprintf(out, "circuit: %s, domain 2^%d, %d aux, %d inputs (witness inputs prepared in %.2fs); %s keys in %.1fs; GOMAXPROCS %d\n",
					bc.name, log2(n), len(pk.L), len(pk.VK.IC), planTime.Seconds(), cctx.String("setup"),
					time.Since(t0).Seconds(), cores.N())
			}
			var proveTimes []float64
			for run := 1; run <= runs; run++ {
				res, err := benchProveOnce(ctx, prove, pk, pvk, bc)
				if err != nil {
					return fmt.Errorf("run %d: %w", run, err)
				}
				res.Backend, res.Constraints, res.Run = cctx.String("backend"), n, run
				proveTimes = append(proveTimes, res.ProveSec)
				if cctx.Bool("json") {
					if err := json.NewEncoder(out).Encode(res); err != nil {
						return err
					}
					continue
				}
				fmt.Fprintf(out, "run %d: synth %.3fs prove %.3fs [%s]%s; peak heap %.2f GiB (keys %.2f GiB)\n", run, res.SynthSec, res.ProveSec,
					formatSteps(res.Steps), verifiedNote(res.Verified), res.PeakHeapGiB, res.KeysGiB)
			}
			if !cctx.Bool("json") {
				sort.Float64s(proveTimes)
				fmt.Fprintf(out, "prove: median %.3fs, min %.3fs over %d runs; peak RSS %s\n",
					proveTimes[len(proveTimes)/2], proveTimes[0], runs, peakRSS())
			}
			return nil
		},
	}
}

func benchProveOnce(ctx context.Context, prove benchProver, pk *groth16.Parameters, pvk *groth16.PreparedVerifyingKey, bc *benchCircuit) (*benchProveResult, error) {
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
	res := &benchProveResult{SynthSec: synth.Seconds(), ProveSec: time.Since(t0).Seconds(), Steps: map[string]float64{}}
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

func backendNames() []string {
	var names []string
	for k := range benchProveBackends {
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
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

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

// peakRSS is the process's peak resident set size.
func peakRSS() string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.2f GiB", float64(ru.Maxrss)*1024/(1<<30)) // Linux reports KiB
}
