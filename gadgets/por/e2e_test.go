package por_test

import (
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
	"github.com/snarkd/snarkd/gadgets/merkle"
	"github.com/snarkd/snarkd/gadgets/por"
	"github.com/snarkd/snarkd/groth16"
)

// A Poseidon PoR (base 8, 64 leaves, public root: 1,063 constraints) proves
// and verifies with the Groth16 engine; a wrong challenge input is rejected.
func TestPoRGroth16(t *testing.T) {
	if gadgettest.Light() {
		t.Skip("Groth16 setup in -short / -race")
	}
	ctx := context.Background()
	rng := xorshift.New(xorshift.TestSeed)
	leaves := make([]fr.Element, 64)
	for i := range leaves {
		leaves[i] = rng.Fr()
	}
	shape := merkle.Shape{Base: 8}
	tr, err := merkle.Build(merkle.Poseidon{}, shape, leaves)
	if err != nil {
		t.Fatal(err)
	}
	levels, _ := por.BaseLevels(shape, 64)
	circuitFor := func(challenge int) *por.Circuit {
		p, err := tr.Proof(challenge)
		if err != nil {
			t.Fatal(err)
		}
		return &por.Circuit{Hasher: por.PoseidonHasher{}, Shape: shape, BaseLevels: levels,
			Leaf: por.Value{Val: p.Leaf}, Path: p.Path, Root: por.Value{Val: p.Root}}
	}
	pk, err := groth16.SetupFromSeed(ctx, circuitFor(0), []byte("por base 8"))
	if err != nil {
		t.Fatal(err)
	}
	const challenge = 37
	proof, err := groth16.Prove(ctx, pk, circuitFor(challenge))
	if err != nil {
		t.Fatal(err)
	}
	root := tr.Root()
	inputs := []fr.Element{fr.NewElement(challenge), root}
	if err := groth16.Verify(&pk.VK, proof, inputs); err != nil {
		t.Fatalf("verify: %v", err)
	}
	inputs[0] = fr.NewElement(challenge + 1)
	if err := groth16.Verify(&pk.VK, proof, inputs); err == nil {
		t.Fatal("proof verified for another challenge")
	}
}
