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
// proof: decoding and checks, sequential synthesis, and benchPartitionSynthesis.
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
	benchPartitionSynthesis(b, part.Circuit)
}

// window32GiB returns a full WindowPoSt 32GiB partition (2,349 sectors) from synthetic
// vanilla proofs.
func window32GiB(tb testing.TB) *Partition {
	tb.Helper()
	p, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow32GiBV1_1)
	return windowPartition(tb, p)
}

// windowPartition returns a partition of p, SectorCount sectors, from synthetic vanilla proofs.
func windowPartition(tb testing.TB, p *Proof) *Partition {
	tb.Helper()
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

// Synthesis of a full WindowPoSt 32GiB partition (2,349 sectors, 10 challenges each)
// (benchPartitionSynthesis).
func BenchmarkWindowPoSt32GiBSynthesis(b *testing.B) {
	benchPartitionSynthesis(b, window32GiB(b).Circuit)
}

// BenchmarkWindowPoSt32GiBWitnessSectors is the witness-only synthesis of 256 sectors of the
// 32 GiB WindowPoSt circuit (its trees and challenges, a ninth of its sectors), vectors recycled:
// with -cpu 1,4,16 it shows how the witness scales with cores, without the full partition's
// minute of setup.
func BenchmarkWindowPoSt32GiBWitnessSectors(b *testing.B) {
	p, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow32GiBV1_1)
	short := *p
	short.SectorCount = 256
	c := windowPartition(b, &short).Circuit
	ctx := context.Background()
	comp, err := Compile(ctx, c.Config)
	if err != nil {
		b.Fatal(err)
	}
	witnessRecycled(b, c, comp) // the first partition's page faults are not the steady state's
	for b.Loop() {
		witnessRecycled(b, c, comp)
	}
}

// witnessRecycled synthesizes c's witness for comp and hands its vectors back for the next.
func witnessRecycled(b *testing.B, c *Circuit, comp *cs.Compiled) {
	pa, err := WitnessOnly(context.Background(), c, comp, 0)
	if err != nil {
		b.Fatal(err)
	}
	pa.Recycle()
}

// benchPartitionSynthesis runs a partition's sub-benchmarks: full synthesis by sector on
// GOMAXPROCS goroutines ("parallel"), and the compiled path in the steady state, vectors
// recycled between partitions ("compiled": witness-only synthesis and a, b, c from the
// matrices; "witness": the first step alone).
func benchPartitionSynthesis(b *testing.B, c *Circuit) {
	ctx := context.Background()
	b.Run("parallel", func(b *testing.B) {
		for b.Loop() {
			if _, err := SynthesizeParallel(ctx, c, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	comp, err := Compile(ctx, c.Config)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("compiled: %d rows, %.1f MiB", comp.NumConstraints(), float64(comp.Bytes())/(1<<20))
	partition := func(b *testing.B) {
		pa, err := WitnessOnly(ctx, c, comp, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := comp.Complete(ctx, pa, 0); err != nil {
			b.Fatal(err)
		}
		pa.Recycle()
	}
	// One partition first, so that the steady state does not time the first one's page faults.
	partition(b)
	b.Run("compiled", func(b *testing.B) {
		for b.Loop() {
			partition(b)
		}
	})
	b.Run("witness", func(b *testing.B) {
		for b.Loop() {
			witnessRecycled(b, c, comp)
		}
	})
}
