package groth16sim

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/groth16"
)

// TestProofsVerify: proofs verify against their inputs and no others, alone and in a batch.
func TestProofsVerify(t *testing.T) {
	k, err := NewKey(5)
	if err != nil {
		t.Fatal(err)
	}
	var proofs []*groth16.Proof
	var inputs [][]fr.Element
	for i := range 3 {
		in := make([]fr.Element, 4)
		for j := range in {
			in[j].SetUint64(uint64(10*i + j))
		}
		p, err := k.Prove(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(k.VK, p, in); err != nil {
			t.Fatalf("proof %d: %v", i, err)
		}
		other := append([]fr.Element(nil), in...)
		other[3].SetUint64(99)
		if groth16.Verify(k.VK, p, other) == nil {
			t.Fatalf("proof %d verifies against other inputs", i)
		}
		proofs, inputs = append(proofs, p), append(inputs, in)
	}
	pvk, err := groth16.Prepare(k.VK)
	if err != nil {
		t.Fatal(err)
	}
	if err := pvk.VerifyBatch(proofs, inputs, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Prove(make([]fr.Element, 3)); err == nil {
		t.Fatal("a proof with too few inputs")
	}
	if _, err := NewKey(0); err == nil {
		t.Fatal("a key without ONE")
	}
}
