package update

import (
	"context"
	"testing"

	"github.com/snarkd/snarkd/cs"
)

func TestSynthesizeParallelEqualsSequential(t *testing.T) {
	ctx := context.Background()
	for _, poseidon := range []bool{true, false} {
		if !poseidon && raceEnabled {
			continue // two 1.7M-row syntheses
		}
		e := encoded(t, poseidon)
		b, err := e.PartitionProof(0)
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := e.Params.Partition(b, e.Inputs(0))
		if err != nil {
			t.Fatal(err)
		}
		seq, err := cs.SynthesizeProving(ctx, c, cs.Shape{})
		if err != nil {
			t.Fatal(err)
		}
		par, err := SynthesizeParallel(ctx, c, 3)
		if err != nil {
			t.Fatal(err)
		}
		if seq.Shape() != par.Shape() {
			t.Fatalf("poseidon %v: shape %+v, sequential %+v", poseidon, par.Shape(), seq.Shape())
		}
		for i := range seq.A {
			if seq.A[i] != par.A[i] || seq.B[i] != par.B[i] || seq.C[i] != par.C[i] {
				t.Fatalf("poseidon %v: row %d differs", poseidon, i)
			}
		}
		for i := range seq.Aux {
			if seq.Aux[i] != par.Aux[i] {
				t.Fatalf("poseidon %v: aux %d differs", poseidon, i)
			}
		}
		for i := range seq.Input {
			if seq.Input[i] != par.Input[i] {
				t.Fatalf("poseidon %v: input %d differs", poseidon, i)
			}
		}
		for k, d := range [][2]*cs.Density{{seq.AAuxDensity, par.AAuxDensity}, {seq.BInputDensity, par.BInputDensity}, {seq.BAuxDensity, par.BAuxDensity}} {
			if d[0].Len() != d[1].Len() || d[0].Count() != d[1].Count() {
				t.Fatalf("poseidon %v: density %d: %d/%d bits vs %d/%d", poseidon, k, d[1].Len(), d[1].Count(), d[0].Len(), d[0].Count())
			}
			for j := 0; j < d[0].Len(); j++ {
				if d[0].IsSet(j) != d[1].IsSet(j) {
					t.Fatalf("poseidon %v: density %d bit %d differs", poseidon, k, j)
				}
			}
		}
	}
	if _, err := SynthesizeParallel(ctx, Blank(encoded(t, true).Params), 2); err == nil {
		t.Error("parallel synthesis of a blank circuit accepted")
	}
}
