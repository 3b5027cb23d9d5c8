package post

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
)

// Synthesis of the WinningPoSt 32GiB partition (370,590 constraints) from a synthetic vanilla
// proof: sequential, and by sector on GOMAXPROCS goroutines.
func BenchmarkWinningPoSt32GiBSynthesis(b *testing.B) {
	p, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWinning32GiBV1)
	rnd := testRandomness(21)
	var prover [32]byte
	v, err := SyntheticSectorVanilla(p, 1234, rnd, 0, rand.NewChaCha8([32]byte{7}))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("decode+verify", func(b *testing.B) {
		for b.Loop() {
			if _, err := WinningPartition(p, rnd, prover, [][]byte{v}); err != nil {
				b.Fatal(err)
			}
		}
	})
	part, err := WinningPartition(p, rnd, prover, [][]byte{v})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sequential", func(b *testing.B) {
		for b.Loop() {
			if _, err := cs.SynthesizeProving(ctx, part.Circuit, cs.Shape{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		for b.Loop() {
			if _, err := SynthesizeParallel(ctx, part.Circuit, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	comp, err := Compile(ctx, part.Circuit.Config)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("compiled", func(b *testing.B) {
		for b.Loop() {
			pa, err := WitnessOnly(ctx, part.Circuit, comp, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := comp.Complete(ctx, pa, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// window32GiB returns a full WindowPoSt 32GiB partition (2,349 sectors) from synthetic
// vanilla proofs.
func window32GiB(tb testing.TB) *Partition {
	tb.Helper()
	p, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow32GiBV1_1)
	rnd := testRandomness(22)
	vanilla := make([][]byte, p.SectorCount)
	errs := make([]error, p.SectorCount)
	var wg sync.WaitGroup
	for i := range vanilla {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vanilla[i], errs[i] = SyntheticSectorVanilla(p, uint64(5000+i), rnd, i, rand.NewChaCha8([32]byte{byte(i), byte(i >> 8)}))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Fatal(err)
	}
	var prover [32]byte
	part, err := WindowPartition(p, rnd, prover, vanilla, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return part
}

// Synthesis of a full WindowPoSt 32GiB partition (2,349 sectors, 10 challenges each): full
// synthesis by sector on GOMAXPROCS goroutines, and the compiled path (witness-only
// synthesis, then a, b, c from the matrices) with its two steps apart, in the steady state
// (vectors recycled between partitions).
func BenchmarkWindowPoSt32GiBSynthesis(b *testing.B) {
	part := window32GiB(b)
	ctx := context.Background()
	b.Run("parallel", func(b *testing.B) {
		for b.Loop() {
			if _, err := SynthesizeParallel(ctx, part.Circuit, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	comp, err := Compile(ctx, part.Circuit.Config)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("compiled: %d rows, %.1f MiB", comp.NumConstraints(), float64(comp.Bytes())/(1<<20))
	b.Run("compiled", func(b *testing.B) {
		for b.Loop() {
			pa, err := WitnessOnly(ctx, part.Circuit, comp, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := comp.Complete(ctx, pa, 0); err != nil {
				b.Fatal(err)
			}
			pa.Recycle() // the steady state: the next partition reuses the vectors
		}
	})
	b.Run("witness", func(b *testing.B) {
		for b.Loop() {
			pa, err := WitnessOnly(ctx, part.Circuit, comp, 0)
			if err != nil {
				b.Fatal(err)
			}
			pa.Recycle()
		}
	})
}
