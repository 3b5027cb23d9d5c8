package post

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
)

// WinningPoSt at 32GiB and 64GiB from synthetic vanilla proofs: the production circuits,
// satisfied, with the public inputs a verifier computes.
func TestWinningPoStSyntheticProductionShapes(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("production-shape synthesis in -short / -race")
	}
	rnd := testRandomness(21)
	var prover [32]byte
	prover[0] = 0xe8
	prover[1] = 0x03
	for _, pt := range []abi.RegisteredPoStProof{abi.RegisteredPoStProof_StackedDrgWinning32GiBV1, abi.RegisteredPoStProof_StackedDrgWinning64GiBV1} {
		p, _ := Lookup(pt)
		v, err := SyntheticSectorVanilla(p, 1234, rnd, 0, rand.NewChaCha8([32]byte{7}))
		if err != nil {
			t.Fatal(err)
		}
		part, err := WinningPartition(p, rnd, prover, [][]byte{v})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		pa, err := SynthesizeParallel(context.Background(), part.Circuit, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pa.A {
			var ab = pa.A[i]
			ab.Mul(&ab, &pa.B[i])
			if !ab.Equal(&pa.C[i]) {
				t.Fatalf("%s: row %d not satisfied", p.Name, i)
			}
		}
		for i := range part.Inputs {
			if !pa.Input[i+1].Equal(&part.Inputs[i]) {
				t.Fatalf("%s: input %d differs", p.Name, i+1)
			}
		}
		blank, err := cs.SynthesizeShape(context.Background(), Blank(p.Config()))
		if err != nil {
			t.Fatal(err)
		}
		if blank.Shape() != pa.Shape() {
			t.Fatalf("%s: blank %+v, witness %+v", p.Name, blank.Shape(), pa.Shape())
		}
		t.Logf("%s: %d constraints, %d inputs, domain %d", p.Name, pa.Shape().NumConstraints-pa.Shape().NumInputs, pa.Shape().NumInputs, pa.Shape().DomainSize())
	}
}

// A WindowPoSt vanilla proof of 32GiB shape decodes and verifies (the partition circuit itself,
// 2349 sectors, is far beyond a unit test).
func TestWindowPoStSyntheticVanilla32GiB(t *testing.T) {
	p, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow32GiBV1_1)
	rnd := testRandomness(5)
	v, err := SyntheticSectorVanilla(p, 77, rnd, 3, rand.NewChaCha8([32]byte{1}))
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeSectorVanilla(p, v)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.VerifySector(d, rnd, 3); err != nil {
		t.Fatal(err)
	}
	if d.Sectors[0].InclusionProofs[0].Kind.String() != "Sub" {
		t.Errorf("32GiB inclusion proofs are %s", d.Sectors[0].InclusionProofs[0].Kind)
	}
}

// The 32GiB and 64GiB WindowPoSt sector block: a partition of the production tree shapes cut
// to two sectors (one real, one padding), from a synthetic vanilla proof of the sector at
// position 2 (first of the second partition), satisfied.
func TestWindowPoStSyntheticSectorBlock(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("production-shape synthesis in -short / -race")
	}
	rnd := testRandomness(9)
	var prover [32]byte
	for _, pt := range []abi.RegisteredPoStProof{abi.RegisteredPoStProof_StackedDrgWindow32GiBV1, abi.RegisteredPoStProof_StackedDrgWindow64GiBV1_1} {
		full, _ := Lookup(pt)
		cut := *full
		cut.SectorCount = 2
		v, err := SyntheticSectorVanilla(&cut, 99, rnd, 2, rand.NewChaCha8([32]byte{2}))
		if err != nil {
			t.Fatal(err)
		}
		part, err := WindowPartition(&cut, rnd, prover, [][]byte{v}, 1)
		if err != nil {
			t.Fatalf("%s: %v", full.Name, err)
		}
		pa, err := SynthesizeParallel(context.Background(), part.Circuit, 2)
		if err != nil {
			t.Fatal(err)
		}
		for i := range pa.A {
			ab := pa.A[i]
			ab.Mul(&ab, &pa.B[i])
			if !ab.Equal(&pa.C[i]) {
				t.Fatalf("%s: row %d not satisfied", full.Name, i)
			}
		}
		for i := range part.Inputs {
			if !pa.Input[i+1].Equal(&part.Inputs[i]) {
				t.Fatalf("%s: input %d differs", full.Name, i+1)
			}
		}
	}
}
