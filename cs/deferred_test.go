package cs

import (
	"context"
	"errors"
	"testing"
)

// TestDeferFinish: a deferred assignment has the densities and the row count of a completed
// one and no a, b, c; finishing it on the host gives the completed assignment, and a witness
// the rows reject is an UnsatisfiedRowError naming the first such row, the assignment left
// deferred.
func TestDeferFinish(t *testing.T) {
	ctx := context.Background()
	c := mixBlocks{n: 9, inputs: true, seed: 12, moving: true}
	comp, err := Compile(ctx, "test/mix", c.prefix, c.n, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := c.witness(t, comp)
	pa, err := WitnessBlocks(ctx, comp, c.prefix, c.n, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.Defer(pa); err != nil {
		t.Fatal(err)
	}
	if pa.Deferred() != comp || pa.A != nil || pa.Rows() != comp.NumConstraints() ||
		pa.AAuxDensity.Count() != want.AAuxDensity.Count() || pa.BAuxDensity.Count() != want.BAuxDensity.Count() {
		t.Fatalf("deferred: circuit %v, %d a values, %d rows (want %d)", pa.Deferred() == comp, len(pa.A), pa.Rows(), comp.NumConstraints())
	}
	if err := comp.Defer(want); err == nil {
		t.Error("Defer accepted a completed assignment")
	}
	if err := pa.FinishDeferred(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if pa.Deferred() != nil {
		t.Error("still deferred after FinishDeferred")
	}
	equalAssignments(t, pa, want)

	bad, err := WitnessBlocks(ctx, comp, c.prefix, c.n, 2)
	if err != nil {
		t.Fatal(err)
	}
	bad.Aux[comp.PrefixAux+4*comp.BlockAux].SetUint64(2) // block 4's first bit
	if err := comp.Defer(bad); err != nil {
		t.Fatal(err)
	}
	err = bad.FinishDeferred(ctx, 2)
	var ue *UnsatisfiedRowError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnsatisfied) || ue.Row != comp.PrefixRows+4*comp.BlockRows {
		t.Fatalf("corrupted bit: %v, want row %d unsatisfied", err, comp.PrefixRows+4*comp.BlockRows)
	}
	if bad.Deferred() != nil || len(bad.A) != comp.NumConstraints() {
		t.Errorf("unsatisfied: deferred %v, %d a values", bad.Deferred() != nil, len(bad.A))
	}
}
