package por

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/core"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
	"github.com/snarkd/snarkd/gadgets/num"
	"github.com/snarkd/snarkd/gadgets/sha254"
)

// storage-proofs-core util.rs hash_leaf_bits_circuit: 45,387 constraints.
func TestHashLeafBitsCircuit(t *testing.T) {
	if gadgettest.Light() {
		t.Skip("SHA-256 circuit in -short / -race")
	}
	rng := xorshift.New(xorshift.TestSeed)
	l, r := rng.Fr(), rng.Fr()
	lb, rb := sha254.FromFr(&l), sha254.FromFr(&r)
	var out num.AllocatedNum
	sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
		sys.Push("left")
		left, err := core.BytesIntoBooleanVec(sys, lb[:], 256)
		sys.Pop()
		if err != nil {
			return err
		}
		sys.Push("right")
		right, err := core.BytesIntoBooleanVec(sys, rb[:], 256)
		sys.Pop()
		if err != nil {
			return err
		}
		sys.Push("hash_leaf_circuit")
		defer sys.Pop()
		o, err := HashLeafBitsCircuit(sys, left, right)
		if sys.WitnessMode() {
			out = o
		}
		return err
	})
	if sys.NumConstraints() != 45387 {
		t.Fatalf("%d constraints, want 45,387", sys.NumConstraints())
	}
	if err := sys.Check(); err != nil {
		t.Fatal(err)
	}
	want := sha254.HashFr([]fr.Element{l, r})
	if !out.Value.Equal(&want) {
		t.Fatal("circuit and native sha254 node differ")
	}
	const digest = "42ff364259acdda790e86a380689f71d04741cc09f2f4a7192e1c1c3f36dd176"
	t.Logf("digest %s", sys.Hash())
	if digest != "" && sys.Hash() != digest {
		t.Fatalf("structure digest %s", sys.Hash())
	}
}

// Sha256Hasher over two allocated elements costs 45,379 (circuit-fingerprints.md §4, derived from the PoR counts).
func TestSha256TreeHashCost(t *testing.T) {
	if gadgettest.Light() {
		t.Skip("SHA-256 circuit in -short / -race")
	}
	rng := xorshift.New(xorshift.TestSeed)
	a, b := rng.Fr(), rng.Fr()
	var out num.AllocatedNum
	sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
		sys.Push("a")
		x, _ := num.Alloc(sys, a)
		sys.Pop()
		sys.Push("b")
		y, _ := num.Alloc(sys, b)
		sys.Pop()
		o, err := Sha256Hasher{}.HashMultiLeafCircuit(sys, []num.AllocatedNum{x, y}, 0)
		if sys.WitnessMode() {
			out = o
		}
		return err
	})
	if sys.NumConstraints() != 45379 {
		t.Fatalf("%d constraints, want 45,379", sys.NumConstraints())
	}
	want := sha254.HashFr([]fr.Element{a, b})
	if err := sys.Check(); err != nil || !out.Value.Equal(&want) {
		t.Fatalf("check %v, value match %v", err, out.Value.Equal(&want))
	}
}
