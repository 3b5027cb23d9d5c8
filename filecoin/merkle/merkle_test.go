package merkle

import (
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

func hexDomain(t *testing.T, s string) c1.Domain {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		t.Fatalf("bad hex %q", s)
	}
	var d c1.Domain
	copy(d[:], b)
	return d
}

func TestSha254Vectors(t *testing.T) {
	var a, z c1.Domain
	a[0] = 1
	// curio TestHashChunk / TestHashChunk2L.
	ha, _ := Sha254([]c1.Domain{a, z})
	if want := hexDomain(t, "16abab341fb7f370e27e4dadcf81766dd0dfd0ae64469477bb2cf6614938b22f"); ha != want {
		t.Fatalf("sha254(1‖0) = %x", ha)
	}
	hz, _ := Sha254([]c1.Domain{z, z})
	if want := hexDomain(t, "f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb0b"); hz != want {
		t.Fatalf("sha254(0‖0) = %x", hz)
	}
	h2, _ := Sha254([]c1.Domain{ha, hz})
	if want := hexDomain(t, "0dd6dae41c2f75550129594fb644e4a842cfafb316a2d59321e388fe84a1ec2f"); h2 != want {
		t.Fatalf("level 2 = %x", h2)
	}
}

func TestTreeDVectors(t *testing.T) {
	ar, err := BinaryArities(64)
	if err != nil {
		t.Fatal(err)
	}
	leaves := make([]c1.Domain, 64)
	empty, err := NewDense(leaves, ar, Sha254)
	if err != nil {
		t.Fatal(err)
	}
	// filecoin-proofs test_compute_comm_d_empty (2KiB).
	if want := hexDomain(t, "fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833"); empty.Root() != want {
		t.Fatalf("empty 2KiB comm_d %x", empty.Root())
	}
	leaves[0][0] = 1
	one, _ := NewDense(leaves, ar, Sha254)
	// curio Test2K: data[0] = 1.
	if want := hexDomain(t, "ea995c54784720b449fc92b070adb6cf6635c2619a7a5e0054a24e88f252ec0d"); one.Root() != want {
		t.Fatalf("2KiB comm_d with data[0]=1: %x", one.Root())
	}
	// go-commp-utils zero piece commitments of 32GiB and 64GiB, from sparse trees.
	for _, tc := range []struct {
		leaves uint64
		want   string
	}{
		{1 << 30, "077e5fde35c50a9303a55009e3498a4ebedff39c42b710b730d8ec7ac7afa63e"},
		{1 << 31, "e64005a6bfe3777953b8ad6ef93f0fca1049b2041654f2a411f7702799cece02"},
	} {
		ar, _ := BinaryArities(tc.leaves)
		z, err := NewSparse(nil, c1.Domain{}, ar, Sha254)
		if err != nil {
			t.Fatal(err)
		}
		if z.Root() != hexDomain(t, tc.want) {
			t.Fatalf("zero tree of %d leaves: %x", tc.leaves, z.Root())
		}
	}
}

func randDomain(r *rand.Rand) c1.Domain {
	var d c1.Domain
	for i := range d {
		d[i] = byte(r.Uint32())
	}
	d[31] &= 0x3f
	return d
}

func TestSparseMatchesDenseAndProofs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := []prooftypes.TreeShape{{Base: 8}, {Base: 8, Sub: 8}, {Base: 8, Sub: 8, Top: 2}, {Base: 8, Sub: 2}}
	for _, shape := range shapes {
		leaves := uint64(64 * shape.BaseTreeCount())
		ar, err := Arities(shape, leaves)
		if err != nil {
			t.Fatal(err)
		}
		def := randDomain(r)
		all := make([]c1.Domain, leaves)
		set := map[uint64]c1.Domain{}
		for i := range all {
			all[i] = def
			if r.IntN(5) == 0 {
				all[i] = randDomain(r)
				set[uint64(i)] = all[i]
			}
		}
		dense, err := NewDense(all, ar, Poseidon)
		if err != nil {
			t.Fatal(err)
		}
		sparse, err := NewSparse(set, def, ar, Poseidon)
		if err != nil {
			t.Fatal(err)
		}
		if dense.Root() != sparse.Root() {
			t.Fatalf("%v: sparse root differs", shape)
		}
		for _, i := range []uint64{0, 1, leaves / 3, leaves - 1} {
			p, err := sparse.Proof(i, shape)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyProof(&p, Poseidon); err != nil {
				t.Fatalf("%v leaf %d: %v", shape, i, err)
			}
			pd, _ := dense.Proof(i, shape)
			if pd.Kind != p.Kind || len(pd.Base) != len(p.Base) || len(pd.SubPath) != len(p.SubPath) || len(pd.TopPath) != len(p.TopPath) {
				t.Fatalf("%v: proof shapes differ", shape)
			}
			p.Leaf[0] ^= 1
			if err := VerifyProof(&p, Poseidon); !errors.Is(err, ErrPathMismatch) {
				t.Fatalf("tampered leaf accepted: %v", err)
			}
		}
	}
}

func TestTreeErrors(t *testing.T) {
	if _, err := NewDense(make([]c1.Domain, 7), []int{8}, Poseidon); err == nil {
		t.Fatal("7 leaves accepted for arity 8")
	}
	if _, err := NewSparse(map[uint64]c1.Domain{9: {}}, c1.Domain{}, []int{8}, Poseidon); err == nil {
		t.Fatal("leaf 9 accepted in an 8-leaf tree")
	}
	tr, _ := NewDense(make([]c1.Domain, 8), []int{8}, Poseidon)
	if _, err := tr.Path(8); err == nil {
		t.Fatal("path of leaf 8 accepted")
	}
	bad := c1.Domain{31: 0xff}
	if _, err := Poseidon([]c1.Domain{bad, {}}); err == nil {
		t.Fatal("non-canonical child accepted")
	}
}
