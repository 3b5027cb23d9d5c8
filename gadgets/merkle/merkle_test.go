package merkle

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

func limbs(l [4]uint64) fr.Element {
	v := new(big.Int)
	for i := 3; i >= 0; i-- {
		v.Lsh(v, 64)
		v.Or(v, new(big.Int).SetUint64(l[i]))
	}
	var e fr.Element
	e.SetBigInt(v)
	return e
}

// rust-fil-proofs test_poseidon_hasher: binary tree over [1, 0, 0, 1].
func TestPoseidonHasherTree(t *testing.T) {
	leaves := []fr.Element{fr.One(), {}, {}, fr.One()}
	tr, err := Build(Poseidon{}, Shape{Base: 2}, leaves)
	if err != nil {
		t.Fatal(err)
	}
	want := limbs([4]uint64{0xefbb8be3e291e671, 0x77cc72b8cb2b5ad2, 0x30eb6385ae6b74ae, 0x1effebb7b26ad9eb})
	if r := tr.Root(); !r.Equal(&want) {
		t.Fatalf("root %s", r.Text(16))
	}
	// test_path: U2 over four ones, proof of leaf 0 has path indices [0, 0].
	p, _ := tr.Proof(0)
	if len(p.Path) != 2 || p.Path[0].Index != 0 || p.Path[1].Index != 0 {
		t.Fatal("path of leaf 0")
	}
}

func TestProofsAllShapes(t *testing.T) {
	for _, sh := range []Shape{{2, 0, 0}, {4, 0, 0}, {8, 0, 0}, {8, 2, 0}, {8, 4, 2}, {8, 8, 0}, {8, 2, 4}} {
		n := 64 * sh.BaseTreeCount()
		leaves := make([]fr.Element, n)
		for i := range leaves {
			leaves[i].SetUint64(uint64(i*7 + 1))
		}
		tr, err := Build(Poseidon{}, sh, leaves)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, 1, n / 3, n - 1} {
			p, err := tr.Proof(i)
			if err != nil {
				t.Fatal(err)
			}
			ok, err := p.Verify(Poseidon{})
			if err != nil || !ok {
				t.Fatalf("%v leaf %d: proof does not verify", sh, i)
			}
			if p.ChallengeIndex() != uint64(i) {
				t.Fatalf("%v leaf %d: path encodes %d", sh, i, p.ChallengeIndex())
			}
			p.Leaf.SetUint64(12345)
			if ok, _ := p.Verify(Poseidon{}); ok {
				t.Fatal("tampered proof verifies")
			}
		}
	}
}

func TestBadShapes(t *testing.T) {
	for _, sh := range []Shape{{3, 0, 0}, {8, 0, 2}, {8, 3, 0}} {
		if _, err := Build(Poseidon{}, sh, make([]fr.Element, 64)); err == nil {
			t.Errorf("%v accepted", sh)
		}
	}
	if _, err := Build(Poseidon{}, Shape{Base: 8}, make([]fr.Element, 16)); err == nil {
		t.Error("16 leaves for arity 8 accepted")
	}
}
