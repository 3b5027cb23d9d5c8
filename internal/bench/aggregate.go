package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/internal/cores"
	"github.com/snarkd/snarkd/internal/groth16sim"
	"github.com/snarkd/snarkd/internal/randpoints"
)

// AggregateConfig is one `snarkd bench aggregate` run.
type AggregateConfig struct {
	// Proofs are the proof counts to aggregate, each padded to a power of two as
	// AggregateSealProofs pads (snarkpack.TargetLen), at most snarkpack.MaxProofs.
	Proofs  []int
	Version snarkpack.Version
	Runs    int
	// Verify aggregates valid proofs (a simulated Groth16 key of Inputs public inputs, ONE
	// excluded) with a devnet SRS and times the aggregate's verification too; without it the
	// proofs and the SRS are random points, quick to make, and the aggregates do not verify.
	Verify bool
	Inputs int
	// JSON prints one AggregateResult per run instead of lines for people.
	JSON bool
}

// AggregateResult is one aggregation of `snarkd bench aggregate` (--json: one object per run).
type AggregateResult struct {
	Proofs       int      `json:"proofs"`
	Padded       int      `json:"padded"`
	Version      string   `json:"version"`
	Run          int      `json:"run"`
	AggregateSec float64  `json:"aggregate_s"`
	VerifySec    *float64 `json:"verify_s,omitempty"`
	Bytes        int      `json:"bytes"`
	// PeakHeapMiB is the most Go heap in use while aggregating (sampled every 10 ms, the SRS,
	// the keys and the proofs included); AllocMiB what the aggregation allocated in all.
	PeakHeapMiB float64 `json:"peak_heap_mib"`
	AllocMiB    float64 `json:"alloc_mib"`
	Cores       int     `json:"cores"`
}

// Aggregate times SnarkPack aggregations of cfg.Proofs proofs and writes the results to out.
func Aggregate(ctx context.Context, cfg AggregateConfig, out io.Writer) error {
	if len(cfg.Proofs) == 0 {
		return fmt.Errorf("no proof counts to aggregate")
	}
	if cfg.Runs < 1 {
		return fmt.Errorf("runs %d: want at least 1", cfg.Runs)
	}
	if cfg.Verify && cfg.Inputs < 1 {
		return fmt.Errorf("inputs %d: want at least 1", cfg.Inputs)
	}
	most := 0
	for _, n := range cfg.Proofs {
		if n < 1 || snarkpack.TargetLen(n) > snarkpack.MaxProofs {
			return fmt.Errorf("%d proofs: want 1..%d", n, snarkpack.MaxProofs)
		}
		most = max(most, snarkpack.TargetLen(n))
	}
	t0 := time.Now()
	w, err := newAggregateWorkload(ctx, most, cfg.Verify, cfg.Inputs)
	if err != nil {
		return err
	}
	if !cfg.JSON {
		kind := "random points (the aggregates do not verify)"
		if cfg.Verify {
			kind = fmt.Sprintf("valid proofs of %d public inputs, devnet SRS", cfg.Inputs)
		}
		fmt.Fprintf(out, "%s, %s, made in %.1fs; GOMAXPROCS %d\n", cfg.Version, kind, time.Since(t0).Seconds(), cores.N())
		fmt.Fprintf(out, "%8s %8s %4s %12s %10s %10s %14s %10s\n", "proofs", "padded", "run", "aggregate", "verify", "bytes", "peak heap", "allocated")
	}
	include := []byte("snarkd bench aggregate include")
	enc := json.NewEncoder(out)
	for _, n := range cfg.Proofs {
		padded, err := snarkpack.PadProofs(w.proofs[:n])
		if err != nil {
			return err
		}
		pk, _, err := w.srs.Specialize(len(padded))
		if err != nil {
			return err
		}
		for run := 1; run <= cfg.Runs; run++ {
			res := AggregateResult{Proofs: n, Padded: len(padded), Version: cfg.Version.String(), Run: run, Cores: cores.N()}
			var agg *snarkpack.AggregateProof
			took, peak, alloc, err := measured(func() error {
				var err error
				agg, err = snarkpack.Aggregate(ctx, pk, include, padded, cfg.Version)
				return err
			})
			if err != nil {
				return fmt.Errorf("aggregating %d proofs: %w", n, err)
			}
			b, err := agg.MarshalBinary()
			if err != nil {
				return err
			}
			res.AggregateSec, res.Bytes = took.Seconds(), len(b)
			res.PeakHeapMiB, res.AllocMiB = float64(peak)/(1<<20), float64(alloc)/(1<<20)
			if cfg.Verify {
				inputs, err := snarkpack.PadInputs(w.inputs[:n])
				if err != nil {
					return err
				}
				t1 := time.Now()
				if err := snarkpack.Verify(ctx, pk.Verifier(), w.key.VK, inputs, agg, include, cfg.Version); err != nil {
					return fmt.Errorf("the aggregate of %d proofs does not verify: %w", n, err)
				}
				s := time.Since(t1).Seconds()
				res.VerifySec = &s
			}
			if cfg.JSON {
				if err := enc.Encode(res); err != nil {
					return err
				}
				continue
			}
			verify := "-"
			if res.VerifySec != nil {
				verify = fmt.Sprintf("%.3fs", *res.VerifySec)
			}
			fmt.Fprintf(out, "%8d %8d %4d %11.3fs %10s %10d %10.1f MiB %8.1f MiB\n", n, res.Padded, run, res.AggregateSec, verify, res.Bytes, res.PeakHeapMiB, res.AllocMiB)
		}
	}
	return nil
}

// aggregateWorkload is an SRS for up to n proofs and n proofs (with their public inputs when
// they are valid).
type aggregateWorkload struct {
	srs    *snarkpack.SRS
	proofs []*groth16.Proof
	key    *groth16sim.Key
	inputs [][]fr.Element
}

func newAggregateWorkload(ctx context.Context, n int, valid bool, inputs int) (*aggregateWorkload, error) {
	w := &aggregateWorkload{proofs: make([]*groth16.Proof, n)}
	if !valid {
		w.srs = &snarkpack.SRS{GAlpha: randpoints.G1(2*n, 1), GBeta: randpoints.G1(2*n, 2), HAlpha: randpoints.G2(2*n, 3), HBeta: randpoints.G2(2*n, 4)}
		a, b, c := randpoints.G1(n, 5), randpoints.G2(n, 6), randpoints.G1(n, 7)
		for i := range w.proofs {
			w.proofs[i] = &groth16.Proof{A: a[i], B: b[i], C: c[i]}
		}
		return w, nil
	}
	var err error
	if w.srs, err = snarkpack.DevnetSRS(ctx, n, 1); err != nil {
		return nil, err
	}
	if w.key, err = groth16sim.NewKey(inputs + 1); err != nil {
		return nil, err
	}
	w.inputs = make([][]fr.Element, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range w.inputs {
		in := make([]fr.Element, inputs)
		for j := range in {
			in[j].SetUint64(rng.Uint64())
		}
		w.inputs[i] = in
	}
	// Each simulated proof is three scalar multiplications: on every core.
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, cores.N())
	for g := range cores.N() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				pr, err := w.key.Prove(w.inputs[i])
				if err != nil {
					errs[g] = err
					return
				}
				w.proofs[i] = pr
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return w, ctx.Err()
}

// measured runs fn and returns its wall time, the most Go heap in use while it ran (sampled
// every 10 ms, after a collection before it started) and the bytes it allocated.
func measured(fn func() error) (took time.Duration, peak, alloc uint64, err error) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	read := func() (heap, allocs uint64) {
		metrics.Read(s)
		return s[0].Value.Uint64(), s[1].Value.Uint64()
	}
	heap0, alloc0 := read()
	var high atomic.Uint64
	high.Store(heap0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		local := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(local)
			if h := local[0].Value.Uint64(); h > high.Load() {
				high.Store(h)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	t0 := time.Now()
	err = fn()
	took = time.Since(t0)
	close(stop)
	wg.Wait()
	heap1, alloc1 := read()
	return took, max(high.Load(), heap1), alloc1 - alloc0, err
}
