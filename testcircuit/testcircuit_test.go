package testcircuit

import (
	"context"
	"testing"

	"github.com/snarkd/snarkd/cs"
)

func TestShapeAndSatisfaction(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{MinConstraints, 100, 1 << 12} {
		c := New(n, uint64(n))
		tcs := cs.NewTestConstraintSystem()
		if err := c.Synthesize(tcs); err != nil {
			t.Fatal(err)
		}
		if err := tcs.Check(); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if !tcs.VerifyInputs(c.PublicInputs()) {
			t.Errorf("n=%d: public inputs differ", n)
		}
		pa, err := cs.SynthesizeProving(ctx, c, cs.Shape{})
		if err != nil {
			t.Fatal(err)
		}
		if len(pa.A) != n || pa.Shape().NumInputs != NumPublicInputs+1 {
			t.Errorf("n=%d: prover sees %d rows and %d inputs", n, len(pa.A), pa.Shape().NumInputs)
		}
		// Same structure for another witness.
		other, _ := cs.SynthesizeShape(ctx, NewWithWitness(n, uint64(n), 99))
		same, _ := cs.SynthesizeShape(ctx, c)
		if other.Shape() != same.Shape() || other.AAuxDensity.Count() != same.AAuxDensity.Count() ||
			other.BAuxDensity.Count() != same.BAuxDensity.Count() {
			t.Errorf("n=%d: witness seed changed the structure", n)
		}
		if n >= 1<<12 {
			bits := 0
			for i := range pa.Aux {
				if pa.Aux[i].IsZero() || pa.Aux[i].IsOne() {
					bits++
				}
			}
			if share := float64(bits) / float64(len(pa.Aux)); share < 0.8 || share > 0.95 {
				t.Errorf("n=%d: %.2f of the witness is 0/1, want about 7/8", n, share)
			}
		}
	}
	if err := New(MinConstraints-1, 1).Synthesize(cs.NewShapeSystem()); err == nil {
		t.Error("too small a circuit should fail")
	}
}
