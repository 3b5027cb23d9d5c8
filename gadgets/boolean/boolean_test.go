package boolean

import (
	"fmt"
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

func get(t *testing.T, sys *cs.TestConstraintSystem, path string) fr.Element {
	t.Helper()
	v, err := sys.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func isOne(e fr.Element) bool { return e.IsOne() }

func TestAllocatedBit(t *testing.T) {
	sys := cs.NewTestConstraintSystem()
	if _, err := Alloc(sys, true); err != nil {
		t.Fatal(err)
	}
	if !isOne(get(t, sys, "boolean")) || !sys.IsSatisfied() {
		t.Fatal("boolean not 1 or unsatisfied")
	}
	// §13: one AllocatedBit::alloc.
	if h := sys.Hash(); h != "98d0daed948fd105b316b92d3bf903dd814f4f6d765d62d1e26c596ebd48e141" {
		t.Errorf("hash %s", h)
	}
	if err := sys.Set("boolean", fr.NewElement(2)); err != nil {
		t.Fatal(err)
	}
	if p, bad := sys.WhichIsUnsatisfied(); !bad || p != "boolean constraint" {
		t.Fatalf("unsatisfied at %q", p)
	}
}

func TestEmptyHash(t *testing.T) {
	if h := cs.NewTestConstraintSystem().Hash(); h != "958191931feaed50efb8195a7e9084aba2c230e2886c2f11a2cff90a9117095e" {
		t.Errorf("empty hash %s", h)
	}
}

type binop struct {
	name, result, cname string
	f                   func(cs.ConstraintSystem, AllocatedBit, AllocatedBit) (AllocatedBit, error)
	truth               func(a, b bool) bool
}

var binops = []binop{
	{"xor", "xor result", "xor constraint", Xor, func(a, b bool) bool { return a != b }},
	{"and", "and result", "and constraint", And, func(a, b bool) bool { return a && b }},
	{"and_not", "and not result", "and not constraint", AndNot, func(a, b bool) bool { return a && !b }},
	{"nor", "nor result", "nor constraint", Nor, func(a, b bool) bool { return !a && !b }},
}

func TestBinaryOps(t *testing.T) {
	for _, op := range binops {
		for _, av := range []bool{false, true} {
			for _, bv := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%v/%v", op.name, av, bv), func(t *testing.T) {
					sys := cs.NewTestConstraintSystem()
					sys.Push("a")
					a, _ := Alloc(sys, av)
					sys.Pop()
					sys.Push("b")
					b, _ := Alloc(sys, bv)
					sys.Pop()
					c, err := op.f(sys, a, b)
					if err != nil {
						t.Fatal(err)
					}
					want := op.truth(av, bv)
					if c.Value != want || isOne(get(t, sys, op.result)) != want {
						t.Fatalf("value %v want %v", c.Value, want)
					}
					if isOne(get(t, sys, "a/boolean")) != av || isOne(get(t, sys, "b/boolean")) != bv {
						t.Fatal("operand values")
					}
					if err := sys.Check(); err != nil {
						t.Fatal(err)
					}
					if sys.NumConstraints() != 3 {
						t.Fatalf("%d constraints", sys.NumConstraints())
					}
					// Flipping the result must break the operation's constraint.
					_ = sys.Set(op.result, elem(!want))
					if p, bad := sys.WhichIsUnsatisfied(); !bad || p != op.cname {
						t.Fatalf("flip not caught (%q)", p)
					}
				})
			}
		}
	}
}

// operand kinds of bellpepper's ch/maj tests.
type opKind int

const (
	kConstTrue opKind = iota
	kConstFalse
	kAllocTrue
	kAllocFalse
	kNegTrue
	kNegFalse
)

func (k opKind) isConst() bool { return k == kConstTrue || k == kConstFalse }

func makeOperand(t *testing.T, sys cs.ConstraintSystem, name string, k opKind) Boolean {
	t.Helper()
	switch k {
	case kConstTrue:
		return Constant(true)
	case kConstFalse:
		return Constant(false)
	}
	sys.Push(name)
	defer sys.Pop()
	b, err := Alloc(sys, k == kAllocTrue || k == kNegFalse)
	if err != nil {
		t.Fatal(err)
	}
	if k == kNegTrue || k == kNegFalse {
		return Is(b).Not()
	}
	return Is(b)
}

func TestSha256ChMaj(t *testing.T) {
	for _, tc := range []struct {
		name   string
		f      func(cs.ConstraintSystem, Boolean, Boolean, Boolean) (Boolean, error)
		truth  func(a, b, c bool) bool
		result string
		cname  string
	}{
		{"ch", Sha256Ch, func(a, b, c bool) bool { return (a && b) != (!a && c) }, "ch", "ch computation"},
		{"maj", Sha256Maj, func(a, b, c bool) bool { return (a && b) != (a && c) != (b && c) }, "maj", "maj computation"},
	} {
		for ka := opKind(0); ka < 6; ka++ {
			for kb := opKind(0); kb < 6; kb++ {
				for kc := opKind(0); kc < 6; kc++ {
					sys := cs.NewTestConstraintSystem()
					a := makeOperand(t, sys, "a", ka)
					b := makeOperand(t, sys, "b", kb)
					c := makeOperand(t, sys, "c", kc)
					before := sys.NumConstraints()
					r, err := tc.f(sys, a, b, c)
					if err != nil {
						t.Fatal(err)
					}
					if err := sys.Check(); err != nil {
						t.Fatalf("%s %d%d%d: %v", tc.name, ka, kb, kc, err)
					}
					if want := tc.truth(a.Value(), b.Value(), c.Value()); r.Value() != want {
						t.Fatalf("%s %d%d%d: value %v want %v", tc.name, ka, kb, kc, r.Value(), want)
					}
					if ka.isConst() && kb.isConst() && kc.isConst() && sys.NumConstraints() != 0 {
						t.Fatalf("%s all-constant: %d constraints", tc.name, sys.NumConstraints())
					}
					if !ka.isConst() && !kb.isConst() && !kc.isConst() {
						got := get(t, sys, tc.result)
						if isOne(got) != r.Value() {
							t.Fatalf("%s value at path", tc.name)
						}
						_ = sys.Set(tc.result, elem(!r.Value()))
						if p, bad := sys.WhichIsUnsatisfied(); !bad || p != tc.cname {
							t.Fatalf("%s flip caught at %q", tc.name, p)
						}
						if tc.name == "ch" && sys.NumConstraints()-before != 1 {
							t.Fatalf("ch cost %d", sys.NumConstraints()-before)
						}
						if tc.name == "maj" && sys.NumConstraints()-before != 2 {
							t.Fatalf("maj cost %d", sys.NumConstraints()-before)
						}
					}
				}
			}
		}
	}
}

func TestBooleanFolding(t *testing.T) {
	for ka := opKind(0); ka < 6; ka++ {
		for kb := opKind(0); kb < 6; kb++ {
			sys := cs.NewTestConstraintSystem()
			a := makeOperand(t, sys, "a", ka)
			b := makeOperand(t, sys, "b", kb)
			x, err := BoolXor(sys, a, b)
			if err != nil {
				t.Fatal(err)
			}
			y, err := BoolAnd(sys, a, b)
			if err != nil {
				t.Fatal(err)
			}
			sys.Push("or")
			z, err := BoolOr(sys, a, b)
			sys.Pop()
			if err != nil {
				t.Fatal(err)
			}
			if x.Value() != (a.Value() != b.Value()) || y.Value() != (a.Value() && b.Value()) || z.Value() != (a.Value() || b.Value()) {
				t.Fatalf("kinds %d %d: wrong values", ka, kb)
			}
			if err := sys.Check(); err != nil {
				t.Fatal(err)
			}
			sys.Push("eq")
			if err := EnforceEqual(sys, x, x); err != nil {
				t.Fatal(err)
			}
			sys.Pop()
			if err := sys.Check(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := EnforceEqual(cs.NewTestConstraintSystem(), Constant(true), Constant(false)); err == nil {
		t.Fatal("true == false accepted")
	}
}

func TestEnforceEqualCatches(t *testing.T) {
	sys := cs.NewTestConstraintSystem()
	sys.Push("a")
	a, _ := Alloc(sys, true)
	sys.Pop()
	sys.Push("b")
	b, _ := Alloc(sys, false)
	sys.Pop()
	if err := EnforceEqual(sys, Is(a), Is(b)); err != nil {
		t.Fatal(err)
	}
	if p, bad := sys.WhichIsUnsatisfied(); !bad || p != "enforce equal" {
		t.Fatalf("got %q", p)
	}
}

func TestU64IntoBooleanVecLE(t *testing.T) {
	sys := cs.NewTestConstraintSystem()
	bits, err := U64IntoBooleanVecLE(sys, 17234652694787248421)
	if err != nil {
		t.Fatal(err)
	}
	if !sys.IsSatisfied() || len(bits) != 64 {
		t.Fatal("bad")
	}
	want := map[int]bool{0: true, 1: true, 2: true, 3: false, 4: true, 5: true, 20: true, 21: false, 22: false}
	for i, v := range want {
		if bits[63-i].Value() != v {
			t.Errorf("bits[63-%d] = %v", i, bits[63-i].Value())
		}
	}
}

func TestFieldIntoAllocatedBitsLE(t *testing.T) {
	v, _ := new(big.Int).SetString("9147677615426976802526883532204139322118074541891858454835346926874644257775", 10)
	var r fr.Element
	r.SetBigInt(v)
	sys := cs.NewTestConstraintSystem()
	bits, err := FieldIntoAllocatedBitsLE(sys, &r)
	if err != nil {
		t.Fatal(err)
	}
	if !sys.IsSatisfied() || len(bits) != 255 {
		t.Fatal("bad")
	}
	want := map[int]bool{0: false, 1: false, 2: true, 3: false, 4: true, 5: false, 20: true, 23: true}
	for i, w := range want {
		if bits[254-i].Value != w {
			t.Errorf("bits[254-%d] = %v", i, bits[254-i].Value)
		}
	}
	for i := range bits {
		if bits[i].Value != (v.Bit(i) == 1) {
			t.Fatalf("bit %d", i)
		}
	}
}
