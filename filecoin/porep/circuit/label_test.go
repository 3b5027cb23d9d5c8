package circuit

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/porep"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/core"
	"github.com/snarkd/snarkd/gadgets/num"
)

func randLabel(r *rand.Rand) c1.Domain {
	var d c1.Domain
	for i := range d {
		d[i] = byte(r.Uint32())
	}
	d[31] &= 0x3f
	return d
}

// storage-proofs-porep create_label.rs test_create_label: 37 parents and the replica id as
// allocated big-endian bits (9,728 constraints), layer 3 and node 22 constant: 532,025 in all,
// and the label equals the native one.
func TestCreateLabelFingerprint(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	replicaID := randLabel(r)
	raw := make([]c1.Domain, 14)
	for i := range raw {
		raw[i] = randLabel(r)
	}
	parents := porep.RepeatParents(raw)
	var out num.AllocatedNum
	circuit := cs.CircuitFunc(func(sys cs.ConstraintSystem) error {
		bits := make([][]boolean.Boolean, len(parents))
		for i := range parents {
			sys.PushIndexed("parents ", i)
			b, err := core.BytesIntoBooleanVecBE(sys, parents[i][:], 256)
			sys.Pop()
			if err != nil {
				return err
			}
			bits[i] = b
		}
		sys.Push("id")
		idBits, err := core.BytesIntoBooleanVecBE(sys, replicaID[:], 256)
		sys.Pop()
		if err != nil {
			return err
		}
		sys.Push("create_label")
		defer sys.Pop()
		out, err = CreateLabel(sys, idBits, bits, 3, core.ConstantU64(22))
		return err
	})
	shape, err := cs.SynthesizeShape(context.Background(), circuit)
	if err != nil {
		t.Fatal(err)
	}
	if n := shape.Shape().NumConstraints - shape.Shape().NumInputs; n != 532_025 {
		t.Fatalf("%d constraints, want 532,025", n)
	}
	pa, err := cs.SynthesizeProving(context.Background(), circuit, shape.Shape())
	if err != nil {
		t.Fatal(err)
	}
	if row := FirstUnsatisfied(pa); row >= 0 {
		t.Fatalf("row %d unsatisfied", row)
	}
	want := porep.Label(replicaID, 3, 22, parents)
	if c1.DomainOf(&out.Value) != want {
		t.Fatalf("circuit label %x, native %x", c1.DomainOf(&out.Value), want)
	}
}
