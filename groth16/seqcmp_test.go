package groth16_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/testcircuit"
)

// BenchmarkProveOverlap compares the h path running alongside the witness MSMs ("overlap") with
// the two run one after the other ("sequential"), interleaved so both see the same machine load.
func BenchmarkProveOverlap(b *testing.B) {
	ctx := context.Background()
	c := testcircuit.New(1<<18, 1)
	pk, err := groth16.DummyParameters(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	r, s, _ := groth16.RandomRS(nil)
	for _, seq := range []bool{false, true, false, true} {
		b.Run(fmt.Sprintf("sequential=%v", seq), func(b *testing.B) {
			groth16.SetSequentialProve(seq)
			defer groth16.SetSequentialProve(false)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				pa, _ := cs.SynthesizeProving(ctx, c, groth16.CapacityFor(pk))
				b.StartTimer()
				if _, err := groth16.ProveAssignment(ctx, pk, pa, &r, &s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
