package poseidon

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/num"
)

// filecoin-hashers test_hash_md / test_hash_md_circuit: 71 ones, 2,770 constraints.
func TestHashMD(t *testing.T) {
	if gadgettest.Light() {
		t.Skip("arity-36 constants in -short / -race")
	}
	in := make([]fr.Element, 71)
	for i := range in {
		in[i].SetOne()
	}
	want := frLimbs([4]uint64{0x351c54133b332c90, 0xc26f6d625f4e8195, 0x5fd9623643ed9622, 0x59f42220e09ff6f7})
	got, err := HashMD(in)
	if err != nil || !got.Equal(&want) {
		t.Fatalf("hash_md %s (%v)", got.Text(16), err)
	}
	var out num.AllocatedNum
	sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
		els := make([]num.AllocatedNum, len(in))
		for i := range els {
			sys.PushIndexed("input ", i)
			a, err := num.Alloc(sys, in[i])
			sys.Pop()
			if err != nil {
				return err
			}
			els[i] = a
		}
		h, err := HashMDCircuit(sys, els)
		if sys.WitnessMode() {
			out = h
		}
		return err
	})
	if sys.NumConstraints() != 2770 || sys.Check() != nil || !out.Value.Equal(&want) {
		t.Fatalf("%d constraints (want 2,770), value match %v", sys.NumConstraints(), out.Value.Equal(&want))
	}
	// A short last chunk is zero-padded natively and with allocated zeros in circuit.
	short := in[:40]
	nat, _ := HashMD(short)
	sys2 := cs.NewTestConstraintSystem()
	els := make([]num.AllocatedNum, len(short))
	for i := range els {
		sys2.PushIndexed("input ", i)
		els[i], _ = num.Alloc(sys2, short[i])
		sys2.Pop()
	}
	h, err := HashMDCircuit(sys2, els)
	if err != nil || sys2.Check() != nil || !h.Value.Equal(&nat) {
		t.Fatal("padded hash_md differs")
	}
	if _, err := HashMD(in[:1]); err == nil {
		t.Fatal("single element accepted")
	}
}
