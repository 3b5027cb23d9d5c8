// Package boolean holds bellpepper's boolean gadgets: allocated bits,
// constant-folding Boolean values and the bit operations SHA-256 needs, with
// the same variables, constraints and names as bellpepper-core.
//
// Gadgets work in the caller's current namespace; callers push a namespace
// around each call where bellpepper's callers pass cs.namespace(...).
package boolean

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

var (
	one      = fr.One()
	minusOne = func() fr.Element { var e fr.Element; e.Neg(&one); return e }()
)

func elem(b bool) fr.Element {
	if b {
		return one
	}
	return fr.Element{}
}

// AllocatedBit is a variable constrained to 0 or 1. Value is meaningful only
// in witness mode.
type AllocatedBit struct {
	Var   cs.Variable
	Value bool
}

var zeroElem fr.Element

// allocBit allocates a 0/1 variable; the shared constants avoid a heap copy
// per bit (systems copy the value they are given).
func allocBit(sys cs.ConstraintSystem, name string, v bool) (cs.Variable, error) {
	if v {
		return sys.AllocValue(name, &one)
	}
	return sys.AllocValue(name, &zeroElem)
}

// lcs returns three empty combinations with the given capacities sharing
// one allocation; one that outgrows its capacity reallocates safely.
func lcs(ca, cb, cc int) (cs.LinearCombination, cs.LinearCombination, cs.LinearCombination) {
	buf := make(cs.LinearCombination, ca+cb+cc)
	return buf[0:0:ca], buf[ca : ca : ca+cb], buf[ca+cb : ca+cb : ca+cb+cc]
}

// Alloc allocates "boolean" and enforces "boolean constraint": (1 − a)·a = 0.
func Alloc(sys cs.ConstraintSystem, value bool) (AllocatedBit, error) {
	v, err := allocBit(sys, "boolean", value)
	if err != nil {
		return AllocatedBit{}, err
	}
	if cs.WitnessOnly(sys) {
		sys.Enforce("boolean constraint", nil, nil, nil)
		return AllocatedBit{Var: v, Value: value}, nil
	}
	la, lb, _ := lcs(2, 1, 0)
	sys.Enforce("boolean constraint", la.Add(cs.One).Sub(v), lb.Add(v), nil)
	return AllocatedBit{Var: v, Value: value}, nil
}

// AllocConditionally allocates a bit forced to 0 when mustBeFalse is 1:
// (1 − mustBeFalse − a)·a = 0.
func AllocConditionally(sys cs.ConstraintSystem, value bool, mustBeFalse AllocatedBit) (AllocatedBit, error) {
	v, err := allocBit(sys, "boolean", value)
	if err != nil {
		return AllocatedBit{}, err
	}
	if cs.WitnessOnly(sys) {
		sys.Enforce("boolean constraint", nil, nil, nil)
		return AllocatedBit{Var: v, Value: value}, nil
	}
	la, lb, _ := lcs(3, 1, 0)
	sys.Enforce("boolean constraint", la.Add(cs.One).Sub(mustBeFalse.Var).Sub(v), lb.Add(v), nil)
	return AllocatedBit{Var: v, Value: value}, nil
}

// Xor allocates "xor result" c with (a + a)·b = a + b − c.
func Xor(sys cs.ConstraintSystem, a, b AllocatedBit) (AllocatedBit, error) {
	val := a.Value != b.Value
	v, err := allocBit(sys, "xor result", val)
	if err != nil {
		return AllocatedBit{}, err
	}
	if cs.WitnessOnly(sys) {
		sys.Enforce("xor constraint", nil, nil, nil)
		return AllocatedBit{Var: v, Value: val}, nil
	}
	la, lb, lc := lcs(1, 1, 3)
	sys.Enforce("xor constraint", la.Add(a.Var).Add(a.Var), lb.Add(b.Var), lc.Add(a.Var).Add(b.Var).Sub(v))
	return AllocatedBit{Var: v, Value: val}, nil
}

// And allocates "and result" c with a·b = c.
func And(sys cs.ConstraintSystem, a, b AllocatedBit) (AllocatedBit, error) {
	val := a.Value && b.Value
	v, err := allocBit(sys, "and result", val)
	if err != nil {
		return AllocatedBit{}, err
	}
	if cs.WitnessOnly(sys) {
		sys.Enforce("and constraint", nil, nil, nil)
		return AllocatedBit{Var: v, Value: val}, nil
	}
	la, lb, lc := lcs(1, 1, 1)
	sys.Enforce("and constraint", la.Add(a.Var), lb.Add(b.Var), lc.Add(v))
	return AllocatedBit{Var: v, Value: val}, nil
}

// AndNot allocates "and not result" c with a·(1 − b) = c.
func AndNot(sys cs.ConstraintSystem, a, b AllocatedBit) (AllocatedBit, error) {
	val := a.Value && !b.Value
	v, err := allocBit(sys, "and not result", val)
	if err != nil {
		return AllocatedBit{}, err
	}
	if cs.WitnessOnly(sys) {
		sys.Enforce("and not constraint", nil, nil, nil)
		return AllocatedBit{Var: v, Value: val}, nil
	}
	la, lb, lc := lcs(1, 2, 1)
	sys.Enforce("and not constraint", la.Add(a.Var), lb.Add(cs.One).Sub(b.Var), lc.Add(v))
	return AllocatedBit{Var: v, Value: val}, nil
}

// Nor allocates "nor result" c with (1 − a)·(1 − b) = c.
func Nor(sys cs.ConstraintSystem, a, b AllocatedBit) (AllocatedBit, error) {
	val := !a.Value && !b.Value
	v, err := allocBit(sys, "nor result", val)
	if err != nil {
		return AllocatedBit{}, err
	}
	if cs.WitnessOnly(sys) {
		sys.Enforce("nor constraint", nil, nil, nil)
		return AllocatedBit{Var: v, Value: val}, nil
	}
	la, lb, lc := lcs(2, 2, 1)
	sys.Enforce("nor constraint", la.Add(cs.One).Sub(a.Var), lb.Add(cs.One).Sub(b.Var), lc.Add(v))
	return AllocatedBit{Var: v, Value: val}, nil
}

// Kind tells how a Boolean is represented.
type Kind uint8

const (
	// KindConstant is a known bit with no variable.
	KindConstant Kind = iota
	// KindIs is an allocated bit.
	KindIs
	// KindNot is the negation of an allocated bit.
	KindNot
)

// Boolean is a constant, an allocated bit, or the negation of one.
type Boolean struct {
	Kind  Kind
	Bit   AllocatedBit // for KindIs and KindNot
	Const bool         // for KindConstant
}

// Constant returns the constant bit b.
func Constant(b bool) Boolean { return Boolean{Kind: KindConstant, Const: b} }

// Is wraps an allocated bit.
func Is(b AllocatedBit) Boolean { return Boolean{Kind: KindIs, Bit: b} }

// IsConstant reports whether b carries no variable.
func (b Boolean) IsConstant() bool { return b.Kind == KindConstant }

// Value returns the bit's value (witness mode, or constants).
func (b Boolean) Value() bool {
	switch b.Kind {
	case KindConstant:
		return b.Const
	case KindIs:
		return b.Bit.Value
	default:
		return !b.Bit.Value
	}
}

// Not returns the negation without constraints.
func (b Boolean) Not() Boolean {
	switch b.Kind {
	case KindConstant:
		return Constant(!b.Const)
	case KindIs:
		return Boolean{Kind: KindNot, Bit: b.Bit}
	default:
		return Boolean{Kind: KindIs, Bit: b.Bit}
	}
}

// AddToLC returns lc + coeff·b, where a constant folds into ONE and Not(x)
// contributes coeff·ONE − coeff·x.
func (b Boolean) AddToLC(lc cs.LinearCombination, coeff *fr.Element) cs.LinearCombination {
	switch b.Kind {
	case KindConstant:
		if b.Const {
			lc = lc.AddTerm(coeff, cs.One)
		}
		return lc
	case KindIs:
		return lc.AddTerm(coeff, b.Bit.Var)
	default:
		var neg fr.Element
		neg.Neg(coeff)
		return lc.AddTerm(coeff, cs.One).AddTerm(&neg, b.Bit.Var)
	}
}

// LC returns the combination 1·b.
func (b Boolean) LC() cs.LinearCombination { return b.AddToLC(cs.NewLC(2), &one) }

// SubFromLC returns lc − b.
func (b Boolean) SubFromLC(lc cs.LinearCombination) cs.LinearCombination {
	return b.AddToLC(lc, &minusOne)
}

// ErrUnsatisfiable is returned when two different constants are enforced equal.
var ErrUnsatisfiable = cs.ErrUnsatisfiable

// EnforceEqual constrains a = b, as bellpepper does for each operand kind.
func EnforceEqual(sys cs.ConstraintSystem, a, b Boolean) error {
	switch {
	case a.IsConstant() && b.IsConstant():
		if a.Const != b.Const {
			return ErrUnsatisfiable
		}
		return nil
	case a.IsConstant() && a.Const, b.IsConstant() && b.Const:
		x := b
		if b.IsConstant() {
			x = a
		}
		sys.Enforce("enforce equal to one", nil, nil, x.SubFromLC(cs.LCOf(cs.One)))
	case a.IsConstant(), b.IsConstant():
		x := b
		if b.IsConstant() {
			x = a
		}
		sys.Enforce("enforce equal to zero", nil, nil, x.LC())
	default:
		sys.Enforce("enforce equal", nil, nil, b.SubFromLC(a.LC()))
	}
	return nil
}

// BoolXor returns a ⊕ b, folding constants and negations as bellpepper does.
func BoolXor(sys cs.ConstraintSystem, a, b Boolean) (Boolean, error) {
	switch {
	case a.IsConstant() && !a.Const:
		return b, nil
	case b.IsConstant() && !b.Const:
		return a, nil
	case a.IsConstant():
		return b.Not(), nil
	case b.IsConstant():
		return a.Not(), nil
	case a.Kind != b.Kind:
		// a ⊕ ¬b = ¬(a ⊕ b), with the Is operand first.
		is, not := a, b
		if a.Kind == KindNot {
			is, not = b, a
		}
		r, err := BoolXor(sys, is, not.Not())
		return r.Not(), err
	default:
		r, err := Xor(sys, a.Bit, b.Bit)
		return Is(r), err
	}
}

// BoolAnd returns a ∧ b, folding constants and negations as bellpepper does.
func BoolAnd(sys cs.ConstraintSystem, a, b Boolean) (Boolean, error) {
	switch {
	case (a.IsConstant() && !a.Const) || (b.IsConstant() && !b.Const):
		return Constant(false), nil
	case a.IsConstant():
		return b, nil
	case b.IsConstant():
		return a, nil
	case a.Kind == KindIs && b.Kind == KindNot:
		r, err := AndNot(sys, a.Bit, b.Bit)
		return Is(r), err
	case a.Kind == KindNot && b.Kind == KindIs:
		r, err := AndNot(sys, b.Bit, a.Bit)
		return Is(r), err
	case a.Kind == KindNot:
		r, err := Nor(sys, a.Bit, b.Bit)
		return Is(r), err
	default:
		r, err := And(sys, a.Bit, b.Bit)
		return Is(r), err
	}
}

// BoolOr returns a ∨ b = ¬(¬a ∧ ¬b) inside namespace "not and (not a) (not b)".
func BoolOr(sys cs.ConstraintSystem, a, b Boolean) (Boolean, error) {
	sys.Push("not and (not a) (not b)")
	r, err := BoolAnd(sys, a.Not(), b.Not())
	sys.Pop()
	return r.Not(), err
}

// Sha256Ch returns (a ∧ b) ⊕ (¬a ∧ c): "ch" with "ch computation" a·(b − c) = ch − c,
// after bellpepper's constant-folding shortcuts.
func Sha256Ch(sys cs.ConstraintSystem, a, b, c Boolean) (Boolean, error) {
	av, bv, cv := a.Value(), b.Value(), c.Value()
	val := (av && bv) != (!av && cv)
	switch {
	case a.IsConstant() && b.IsConstant() && c.IsConstant():
		return Constant(val), nil
	case a.IsConstant() && !a.Const:
		return c, nil
	case b.IsConstant() && !b.Const:
		return BoolAnd(sys, a.Not(), c)
	case c.IsConstant() && !c.Const:
		return BoolAnd(sys, a, b)
	case c.IsConstant():
		r, err := BoolAnd(sys, a, b.Not())
		return r.Not(), err
	case b.IsConstant():
		r, err := BoolAnd(sys, a.Not(), c.Not())
		return r.Not(), err
	}
	ch, err := allocBit(sys, "ch", val)
	if err != nil {
		return Boolean{}, err
	}
	if cs.WitnessOnly(sys) {
		sys.Enforce("ch computation", nil, nil, nil)
		return Is(AllocatedBit{Var: ch, Value: val}), nil
	}
	la, lb, lc := lcs(3, 2, 3)
	sys.Enforce("ch computation",
		c.SubFromLC(b.AddToLC(la, &one)),
		a.AddToLC(lb, &one),
		c.SubFromLC(lc.Add(ch)))
	return Is(AllocatedBit{Var: ch, Value: val}), nil
}

// Sha256Maj returns the majority of a, b, c: "maj", then "b and c", then
// "maj computation" (2bc − b − c)·a = bc − maj, after constant folding.
func Sha256Maj(sys cs.ConstraintSystem, a, b, c Boolean) (Boolean, error) {
	av, bv, cv := a.Value(), b.Value(), c.Value()
	val := (av && bv) != (av && cv) != (bv && cv)
	switch {
	case a.IsConstant() && b.IsConstant() && c.IsConstant():
		return Constant(val), nil
	case a.IsConstant() && !a.Const:
		return BoolAnd(sys, b, c)
	case b.IsConstant() && !b.Const:
		return BoolAnd(sys, a, c)
	case c.IsConstant() && !c.Const:
		return BoolAnd(sys, a, b)
	case c.IsConstant():
		r, err := BoolAnd(sys, a.Not(), b.Not())
		return r.Not(), err
	case b.IsConstant():
		r, err := BoolAnd(sys, a.Not(), c.Not())
		return r.Not(), err
	case a.IsConstant():
		r, err := BoolAnd(sys, b.Not(), c.Not())
		return r.Not(), err
	}
	maj, err := allocBit(sys, "maj", val)
	if err != nil {
		return Boolean{}, err
	}
	sys.Push("b and c")
	bc, err := BoolAnd(sys, b, c)
	sys.Pop()
	if err != nil {
		return Boolean{}, err
	}
	if cs.WitnessOnly(sys) {
		sys.Enforce("maj computation", nil, nil, nil)
		return Is(AllocatedBit{Var: maj, Value: val}), nil
	}
	two := fr.NewElement(2)
	la, lb, lc := lcs(4, 2, 3)
	lhs := bc.AddToLC(la, &two)
	lhs = b.SubFromLC(lhs)
	lhs = c.SubFromLC(lhs)
	sys.Enforce("maj computation", lhs, a.AddToLC(lb, &one), bc.AddToLC(lc, &one).Sub(maj))
	return Is(AllocatedBit{Var: maj, Value: val}), nil
}

// U64IntoBooleanVecLE allocates 64 bits of value, least significant first,
// each in namespace "bit i".
func U64IntoBooleanVecLE(sys cs.ConstraintSystem, value uint64) ([]Boolean, error) {
	bits := make([]Boolean, 64)
	for i := range bits {
		sys.PushIndexed("bit ", i)
		b, err := Alloc(sys, value>>uint(i)&1 == 1)
		sys.Pop()
		if err != nil {
			return nil, err
		}
		bits[i] = Is(b)
	}
	return bits, nil
}

// NumBits is the bit length of the BLS12-381 scalar field modulus.
const NumBits = 255

// FieldIntoAllocatedBitsLE allocates the 255 bits of value, least
// significant first, each in namespace "bit i".
func FieldIntoAllocatedBitsLE(sys cs.ConstraintSystem, value *fr.Element) ([]AllocatedBit, error) {
	var le [NumBits]bool
	if sys.WitnessMode() && value != nil {
		b := value.Bits() // canonical, little-endian limbs
		for i := 0; i < NumBits; i++ {
			le[i] = b[i/64]>>(uint(i)%64)&1 == 1
		}
	}
	bits := make([]AllocatedBit, NumBits)
	for i := range bits {
		sys.PushIndexed("bit ", i)
		b, err := Alloc(sys, le[i])
		sys.Pop()
		if err != nil {
			return nil, err
		}
		bits[i] = b
	}
	return bits, nil
}

// FieldIntoBooleanVecLE is FieldIntoAllocatedBitsLE wrapped as Booleans.
func FieldIntoBooleanVecLE(sys cs.ConstraintSystem, value *fr.Element) ([]Boolean, error) {
	bits, err := FieldIntoAllocatedBitsLE(sys, value)
	if err != nil {
		return nil, err
	}
	out := make([]Boolean, len(bits))
	for i, b := range bits {
		out[i] = Is(b)
	}
	return out, nil
}
