package circuit

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/porep"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
)

func sealed(t *testing.T, pt abi.RegisteredSealProof) (*c1.Output, *prooftypes.SealProof) {
	t.Helper()
	p, _ := prooftypes.Lookup(pt)
	r := rand.NewChaCha8([32]byte{7})
	data, err := sealer.RandomData(r, p.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sealer.Seal(context.Background(), p, data, prooftypes.ProverID(1000), 4, [32]byte{4})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Commit1(context.Background(), [32]byte{8})
	if err != nil {
		t.Fatal(err)
	}
	return out, p
}

// A real 2KiB C1 output satisfies the circuit, and the circuit's public inputs are exactly the
// ones generate_public_inputs computes from the public values alone.
func TestWitness2KiB(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("2.7M-constraint witness synthesis skipped with -race or -short")
	}
	out, p := sealed(t, abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	c, err := FromC1(out, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	pa, err := Prove(context.Background(), c, cs.Shape{})
	if err != nil {
		t.Fatal(err)
	}
	pp, err := porep.FromOutput(out, p)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pp.PublicInputs(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pa.Input) != len(want)+1 || len(pa.Input) != p.PublicInputs() {
		t.Fatalf("%d inputs, want %d", len(pa.Input), len(want)+1)
	}
	for i := range want {
		if !pa.Input[i+1].Equal(&want[i]) {
			t.Fatalf("input %d: circuit %s, public inputs %s", i+1, pa.Input[i+1].String(), want[i].String())
		}
	}
	// Blank and witness synthesis agree on the shape and densities.
	s, err := cs.SynthesizeShape(context.Background(), Blank(ConfigOf(p)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Shape() != pa.Shape() {
		t.Fatalf("blank %+v, witness %+v", s.Shape(), pa.Shape())
	}
	if s.AAuxDensity.Count() != pa.AAuxDensity.Count() || s.BAuxDensity.Count() != pa.BAuxDensity.Count() || s.BInputDensity.Count() != pa.BInputDensity.Count() {
		t.Fatal("densities differ between blank and witness synthesis")
	}

	// A label that does not hash from its parents fails inside the labeling of that layer.
	c.Witness.Challenges[1].DRGParents[3].Rows[1].SetUint64(5)
	_, err = Prove(context.Background(), c, pa.Shape())
	var ue *UnsatisfiedError
	if !errors.As(err, &ue) {
		t.Fatalf("tampered witness: %v", err)
	}
	t.Logf("tampered parent column: %v", err)
}

func equalElems(a, b []fr.Element) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(&b[i]) {
			return false
		}
	}
	return true
}

// Parallel synthesis of the challenge blocks gives exactly the sequential assignment.
func TestSynthesizeParallelMatchesSequential(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("2.7M-constraint witness synthesis skipped with -race or -short")
	}
	out, p := sealed(t, abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	c, err := FromC1(out, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := cs.SynthesizeProving(context.Background(), c, cs.Shape{})
	if err != nil {
		t.Fatal(err)
	}
	par, err := SynthesizeParallel(context.Background(), c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if shape, err := BlankShape(context.Background(), c.Config); err != nil || shape != seq.Shape() {
		t.Fatalf("blank shape %+v (%v), witness %+v", shape, err, seq.Shape())
	}
	if !equalElems(seq.A, par.A) || !equalElems(seq.B, par.B) || !equalElems(seq.C, par.C) {
		t.Fatal("a, b or c differ")
	}
	if !equalElems(seq.Input, par.Input) || !equalElems(seq.Aux, par.Aux) {
		t.Fatal("assignments differ")
	}
	for name, d := range map[string][2]*cs.Density{
		"a_aux": {seq.AAuxDensity, par.AAuxDensity}, "b_aux": {seq.BAuxDensity, par.BAuxDensity}, "b_input": {seq.BInputDensity, par.BInputDensity},
	} {
		if d[0].Len() != d[1].Len() || d[0].Count() != d[1].Count() || !slices.Equal(d[0].Words(), d[1].Words()) {
			t.Fatalf("%s density differs", name)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SynthesizeParallel(ctx, c, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled synthesis: %v", err)
	}
}
