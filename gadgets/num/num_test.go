package num

import (
	"strconv"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/internal/gadgettest"
	"github.com/snarkd/snarkd/gadgets/internal/xorshift"
)

func get(t *testing.T, sys *cs.TestConstraintSystem, p string) uint64 {
	t.Helper()
	v, err := sys.Get(p)
	if err != nil {
		t.Fatal(err)
	}
	return v.Uint64()
}

func TestAllocatedNumOps(t *testing.T) {
	sys := cs.NewTestConstraintSystem()
	if _, err := Alloc(sys, fr.One()); err != nil {
		t.Fatal(err)
	}
	if get(t, sys, "num") != 1 || !sys.IsSatisfied() {
		t.Fatal("alloc")
	}

	sys = cs.NewTestConstraintSystem()
	n, _ := Alloc(sys, fr.NewElement(3))
	sq, _ := n.Square(sys)
	if get(t, sys, "squared num") != 9 || sq.Value.Uint64() != 9 || !sys.IsSatisfied() {
		t.Fatal("square")
	}
	_ = sys.Set("squared num", fr.NewElement(10))
	if p, _ := sys.WhichIsUnsatisfied(); p != "squaring constraint" {
		t.Fatalf("square caught at %q", p)
	}

	sys = cs.NewTestConstraintSystem()
	sys.Push("a")
	a, _ := Alloc(sys, fr.NewElement(12))
	sys.Pop()
	sys.Push("b")
	b, _ := Alloc(sys, fr.NewElement(10))
	sys.Pop()
	if _, err := a.Mul(sys, b); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Add(sys, b); err != nil {
		t.Fatal(err)
	}
	if get(t, sys, "product num") != 120 || get(t, sys, "sum num") != 22 || !sys.IsSatisfied() {
		t.Fatal("mul/add")
	}
	_ = sys.Set("product num", fr.NewElement(121))
	if p, _ := sys.WhichIsUnsatisfied(); p != "multiplication constraint" {
		t.Fatalf("mul caught at %q", p)
	}

	sys = cs.NewTestConstraintSystem()
	n, _ = Alloc(sys, fr.NewElement(3))
	if err := n.AssertNonzero(sys); err != nil || !sys.IsSatisfied() {
		t.Fatal("nonzero")
	}
	_ = sys.Set("ephemeral inverse", fr.NewElement(3))
	if p, _ := sys.WhichIsUnsatisfied(); p != "nonzero assertion constraint" {
		t.Fatalf("nonzero caught at %q", p)
	}
	z, _ := Alloc(cs.NewTestConstraintSystem(), fr.Element{})
	sys = cs.NewTestConstraintSystem()
	if err := z.AssertNonzero(sys); err == nil {
		t.Fatal("zero passed nonzero assertion")
	}

	sys = cs.NewTestConstraintSystem()
	n, _ = Alloc(sys, fr.NewElement(5))
	sys.Push("x")
	if err := n.Inputize(sys); err != nil {
		t.Fatal(err)
	}
	sys.Pop()
	if sys.NumInputs() != 2 || sys.InputName(1) != "x/input variable" || sys.NumConstraints() != 1 || !sys.IsSatisfied() {
		t.Fatal("inputize")
	}
}

func TestToBitsStrict(t *testing.T) {
	var minusOne fr.Element
	minusOne.SetOne()
	minusOne.Neg(&minusOne)
	sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
		n, err := Alloc(sys, minusOne)
		if err != nil {
			return err
		}
		_, err = n.ToBitsLEStrict(sys)
		return err
	})
	if err := sys.Check(); err != nil {
		t.Fatal(err)
	}
	// Setting the top bit makes the decomposition exceed r − 1.
	_ = sys.Set("bit 254/boolean", fr.One())
	if p, _ := sys.WhichIsUnsatisfied(); p != "bit 254/boolean constraint" {
		t.Fatalf("caught at %q", p)
	}
}

// bellpepper test_into_bits: random values; every bit flip breaks the system.
func TestToBits(t *testing.T) {
	rng := xorshift.New(xorshift.BellpepperSeed)
	rounds := 20
	if testing.Short() {
		rounds = 3
	}
	for r := 0; r < rounds; r++ {
		v := rng.Fr()
		strict := r%2 == 0
		var bits []boolean.Boolean
		sys := gadgettest.Run(t, func(sys cs.ConstraintSystem) error {
			n, err := Alloc(sys, v)
			if err != nil {
				return err
			}
			var b []boolean.Boolean
			if strict {
				b, err = n.ToBitsLEStrict(sys)
			} else {
				b, err = n.ToBitsLE(sys)
			}
			if sys.WitnessMode() {
				bits = b
			}
			return err
		})
		if err := sys.Check(); err != nil {
			t.Fatal(err)
		}
		if !strict && sys.NumConstraints() != 256 {
			t.Fatalf("to_bits_le: %d constraints, want 255 + 1", sys.NumConstraints())
		}
		vb := v.Bits()
		for i, b := range bits {
			if b.Value() != (vb[i/64]>>(uint(i)%64)&1 == 1) {
				t.Fatalf("bit %d", i)
			}
		}
		for i := 0; i < 255; i += 17 {
			if p := gadgettest.FlipAux(t, sys, "bit "+strconv.Itoa(i)+"/boolean"); p == "" {
				t.Fatalf("flip of bit %d not caught", i)
			}
		}
	}
}

func TestConditionallyReverse(t *testing.T) {
	for _, cond := range []bool{false, true} {
		sys := cs.NewTestConstraintSystem()
		sys.Push("a")
		a, _ := Alloc(sys, fr.NewElement(1))
		sys.Pop()
		sys.Push("b")
		b, _ := Alloc(sys, fr.NewElement(2))
		sys.Pop()
		sys.Push("cond")
		c, _ := boolean.Alloc(sys, cond)
		sys.Pop()
		x, y, err := ConditionallyReverse(sys, a, b, boolean.Is(c))
		if err != nil || !sys.IsSatisfied() {
			t.Fatal(err)
		}
		if (x.Value.Uint64() == 2) != cond || (y.Value.Uint64() == 1) != cond {
			t.Fatal("wrong order")
		}
		_ = sys.Set("conditional reversal result 1/num", fr.NewElement(7))
		if p, _ := sys.WhichIsUnsatisfied(); p != "first conditional reversal" {
			t.Fatalf("caught at %q", p)
		}
	}
}

func TestNum(t *testing.T) {
	sys := cs.NewTestConstraintSystem()
	a, _ := Alloc(sys, fr.NewElement(4))
	n := FromAllocated(a).Scale(ptr(fr.NewElement(3))).Add(Constant(fr.NewElement(5)))
	sys.Push("bit")
	b, _ := boolean.Alloc(sys, true)
	sys.Pop()
	n = n.AddBoolWithCoeff(boolean.Is(b).Not(), ptr(fr.NewElement(100)))
	n = n.AddBoolWithCoeff(boolean.Is(b), ptr(fr.NewElement(1000)))
	if n.Value.Uint64() != 1017 {
		t.Fatalf("value %d", n.Value.Uint64())
	}
	if v := n.LC.Eval(sys.Inputs(), sys.AuxValues()); v.Uint64() != 1017 {
		t.Fatalf("lc evaluates to %d", v.Uint64())
	}
}

func ptr(e fr.Element) *fr.Element { return &e }

// bellpepper test_cs: a·b = product; §13 gives its TestConstraintSystem::hash().
func TestBellpepperTestCS(t *testing.T) {
	sys := cs.NewTestConstraintSystem()
	sys.Push("a")
	a, _ := Alloc(sys, fr.NewElement(10))
	sys.Pop()
	sys.Push("b")
	b, _ := Alloc(sys, fr.NewElement(4))
	sys.Pop()
	p, _ := sys.AllocValue("product", ptr(fr.NewElement(40)))
	sys.Enforce("mult", a.LC(), b.LC(), cs.LCOf(p))
	if !sys.IsSatisfied() || sys.NumConstraints() != 1 || get(t, sys, "product") != 40 {
		t.Fatal("test_cs circuit")
	}
	if h := sys.Hash(); h != "85b87cd6cd6b828612bccc9d4a2dad373914e8c9ed53925bcac9e7ad58701975" {
		t.Fatalf("hash %s", h)
	}
	_ = sys.Set("a/num", fr.NewElement(4))
	if p, _ := sys.WhichIsUnsatisfied(); p != "mult" {
		t.Fatalf("caught at %q", p)
	}
}
