package update

import (
	"context"
	"testing"

	"github.com/snarkd/snarkd/cs"
)

// Synthesis of the 2KiB SnapDeals partition (1,705,039 constraints) from a Go-sealed sector key.
func BenchmarkSnapDeals2KiBSynthesis(b *testing.B) {
	e := encoded(b, false)
	pb, err := e.PartitionProof(0)
	if err != nil {
		b.Fatal(err)
	}
	c, _, err := e.Params.Partition(pb, e.Inputs(0))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("sequential", func(b *testing.B) {
		for b.Loop() {
			if _, err := cs.SynthesizeProving(ctx, c, cs.Shape{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		for b.Loop() {
			if _, err := SynthesizeParallel(ctx, c, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
