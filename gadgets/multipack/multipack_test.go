package multipack

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
)

// bellperson test_multipacking: for each length, random bits (mixed
// constants and allocated bits), packed inputs verify against
// ComputeMultipacking.
func TestMultipacking(t *testing.T) {
	rng := xorshift.New(xorshift.BellpepperSeed)
	step := 7
	if gadgettest.Light() {
		step = 61
	}
	for n := 0; n < 1500; n += step {
		vals := make([]bool, n)
		kinds := make([]uint32, n)
		for i := range vals {
			vals[i] = rng.NextU32()%2 == 1
			kinds[i] = rng.NextU32() % 3
		}
		sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
			bits := make([]boolean.Boolean, n)
			for i := range bits {
				switch kinds[i] {
				case 0:
					bits[i] = boolean.Constant(vals[i])
				case 1:
					sys.PushIndexed("bit ", i)
					b, err := boolean.Alloc(sys, vals[i])
					sys.Pop()
					if err != nil {
						return err
					}
					bits[i] = boolean.Is(b)
				default:
					// Store the negation so Not() yields vals[i].
					sys.PushIndexed("neg ", i)
					nb, err := boolean.Alloc(sys, !vals[i])
					sys.Pop()
					if err != nil {
						return err
					}
					bits[i] = boolean.Is(nb).Not()
				}
			}
			return PackIntoInputs(sys, bits)
		})
		if err := sys.Check(); err != nil {
			t.Fatal(err)
		}
		want := ComputeMultipacking(vals)
		if !sys.VerifyInputs(want) {
			t.Fatalf("n=%d: inputs differ from compute_multipacking", n)
		}
		if sys.NumInputs() != 1+(n+Capacity-1)/Capacity {
			t.Fatalf("n=%d: %d inputs", n, sys.NumInputs())
		}
		if sys.NumAux() > 0 {
			if p := gadgettest.FlipAux(t, sys, firstAllocated(sys)); p == "" {
				t.Fatalf("n=%d: flip not caught", n)
			}
		}
	}
}

func firstAllocated(sys *cs.TestConstraintSystem) string { return sys.AuxName(0) }

func TestPackBits(t *testing.T) {
	sys := cs.NewTestConstraintSystem()
	var bits []boolean.Boolean
	for i := 0; i < 300; i++ {
		sys.PushIndexed("b ", i)
		b, _ := boolean.Alloc(sys, i%3 == 0)
		sys.Pop()
		bits = append(bits, boolean.Is(b))
	}
	a, err := PackBits(sys, bits)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]bool, 254)
	for i := range vals {
		vals[i] = i%3 == 0
	}
	want := ComputeMultipacking(vals)[0]
	got, _ := sys.Get("input/num")
	if !got.Equal(&want) || !a.Value.Equal(&want) || sys.Check() != nil {
		t.Fatal("pack_bits mismatch")
	}
	_ = sys.Set("input/num", fr.NewElement(5))
	if p, _ := sys.WhichIsUnsatisfied(); p != "packing constraint" {
		t.Fatalf("caught at %q", p)
	}
}

func TestBytesToBits(t *testing.T) {
	be, le := BytesToBits([]byte{0x81, 0x02}), BytesToBitsLE([]byte{0x81, 0x02})
	wantBE := []bool{true, false, false, false, false, false, false, true, false, false, false, false, false, false, true, false}
	wantLE := []bool{true, false, false, false, false, false, false, true, false, true, false, false, false, false, false, false}
	for i := range wantBE {
		if be[i] != wantBE[i] || le[i] != wantLE[i] {
			t.Fatalf("bit %d", i)
		}
	}
}
