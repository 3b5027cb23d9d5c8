package sha256_test

import (
	gosha "crypto/sha256"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/core"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
	"github.com/snarkd/snarkd/gadgets/multipack"
	"github.com/snarkd/snarkd/gadgets/sha254"
	"github.com/snarkd/snarkd/gadgets/sha256"
	"github.com/snarkd/snarkd/gadgets/u32"
)

// storage-proofs-porep create_label.rs test_create_label: replica id and 37
// parents as allocated big-endian bits, layer 3 and node 22 as constants;
// 532,025 constraints (9,728 bit constraints + 522,297 for the label). It
// checks SHA-256 on blocks that mix constant and allocated bits.
func TestCreateLabelCount(t *testing.T) {
	if gadgettest.Light() {
		t.Skip("half-million-constraint circuit in -short / -race")
	}
	rng := xorshift.New(xorshift.TestSeed)
	id := rng.Fr()
	idBytes := sha254.FromFr(&id)
	parents := make([][]byte, 37)
	for i := range parents {
		p := rng.Fr()
		b := sha254.FromFr(&p)
		parents[i] = b[:]
	}
	const layer, node = 3, 22

	sys := cs.NewTestConstraintSystem()
	sys.Push("id")
	idBits, err := core.BytesIntoBooleanVecBE(sys, idBytes[:], 256)
	sys.Pop()
	if err != nil {
		t.Fatal(err)
	}
	var parentBits [][]boolean.Boolean
	for i, p := range parents {
		sys.PushIndexed("parents ", i)
		b, err := core.BytesIntoBooleanVecBE(sys, p, 256)
		sys.Pop()
		if err != nil {
			t.Fatal(err)
		}
		parentBits = append(parentBits, b)
	}

	sys.Push("create_label")
	msg := append([]boolean.Boolean(nil), idBits...)
	msg = append(msg, u32.Constant(layer).BitsBE()...)
	msg = append(msg, core.ConstantU64(node).BitsBE()...)
	for len(msg) < 512 {
		msg = append(msg, boolean.Constant(false))
	}
	for _, p := range parentBits {
		msg = append(msg, p...)
	}
	sys.Push("hash")
	digest, err := sha256.Hash(sys, msg)
	sys.Pop()
	if err != nil {
		t.Fatal(err)
	}
	sys.Push("result_num")
	label, err := multipack.PackBits(sys, core.ReverseBitNumbering(digest)[:multipack.Capacity])
	sys.Pop()
	sys.Pop()
	if err != nil {
		t.Fatal(err)
	}

	if n := sys.NumConstraints(); n != 532025 {
		t.Fatalf("%d constraints, want 532,025", n)
	}
	if err := sys.Check(); err != nil {
		t.Fatal(err)
	}
	// Native label: sha254 of id ‖ u32be(layer) ‖ u64be(node) ‖ 0-pad ‖ parents.
	buf := append([]byte(nil), idBytes[:]...)
	buf = append(buf, 0, 0, 0, layer, 0, 0, 0, 0, 0, 0, 0, node)
	buf = append(buf, make([]byte, 64-len(buf))...)
	for _, p := range parents {
		buf = append(buf, p...)
	}
	d := gosha.Sum256(buf)
	d[31] &= 0x3f
	want, err := sha254.ToFr(d)
	if err != nil {
		t.Fatal(err)
	}
	if !label.Value.Equal(&want) {
		t.Fatalf("label %s, native %s", label.Value.Text(16), want.Text(16))
	}
	const digestWant = "b15d79346695f71328be7ee3e5a524ab65f860829e301a65b931764372943d8c"
	t.Logf("digest %s", sys.Hash())
	if digestWant != "" && sys.Hash() != digestWant {
		t.Fatalf("structure digest %s", sys.Hash())
	}
}
