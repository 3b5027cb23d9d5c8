package post

import (
	"context"
	"math/rand/v2"
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
