// Package num holds bellpepper's field-element gadgets: AllocatedNum (a
// variable with its value) and Num (a linear combination with its value),
// with the same variables, constraints and names as bellpepper-core.
package num

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
)

var one = fr.One()

// AllocatedNum is a variable and its value (meaningful in witness mode only).
type AllocatedNum struct {
	Var   cs.Variable
	Value fr.Element
}

// Alloc allocates "num" with the given value.
func Alloc(sys cs.ConstraintSystem, value fr.Element) (AllocatedNum, error) {
	v, err := sys.AllocValue("num", &value)
	return AllocatedNum{Var: v, Value: value}, err
}

// AllocFunc allocates "num" with a lazily computed value (not called in blank mode).
func AllocFunc(sys cs.ConstraintSystem, f cs.ValueFunc) (AllocatedNum, error) {
	var val fr.Element
	v, err := sys.Alloc("num", func() (fr.Element, error) {
		x, err := f()
		val = x
		return x, err
	})
	return AllocatedNum{Var: v, Value: val}, err
}

// AllocInput allocates the public input "input num".
func AllocInput(sys cs.ConstraintSystem, value fr.Element) (AllocatedNum, error) {
	v, err := sys.AllocInputValue("input num", &value)
	return AllocatedNum{Var: v, Value: value}, err
}

// AllocMaybeInput allocates an input or an aux variable.
func AllocMaybeInput(sys cs.ConstraintSystem, isInput bool, value fr.Element) (AllocatedNum, error) {
	if isInput {
		return AllocInput(sys, value)
	}
	return Alloc(sys, value)
}

// LC returns 1·a.
func (a AllocatedNum) LC() cs.LinearCombination { return cs.LCOf(a.Var) }

// Inputize exposes a as the public input "input variable" with
// "enforce input is correct": input·1 = a.
func (a AllocatedNum) Inputize(sys cs.ConstraintSystem) error {
	in, err := sys.AllocInputValue("input variable", &a.Value)
	if err != nil {
		return err
	}
	sys.Enforce("enforce input is correct", cs.LCOf(in), cs.LCOf(cs.One), cs.LCOf(a.Var))
	return nil
}

// Add allocates "sum num" with (a + b)·1 = sum.
func (a AllocatedNum) Add(sys cs.ConstraintSystem, b AllocatedNum) (AllocatedNum, error) {
	var val fr.Element
	val.Add(&a.Value, &b.Value)
	v, err := sys.AllocValue("sum num", &val)
	if err != nil {
		return AllocatedNum{}, err
	}
	sys.Enforce("addition constraint", cs.LCOf(a.Var).Add(b.Var), cs.LCOf(cs.One), cs.LCOf(v))
	return AllocatedNum{Var: v, Value: val}, nil
}

// Mul allocates "product num" with a·b = product.
func (a AllocatedNum) Mul(sys cs.ConstraintSystem, b AllocatedNum) (AllocatedNum, error) {
	var val fr.Element
	val.Mul(&a.Value, &b.Value)
	v, err := sys.AllocValue("product num", &val)
	if err != nil {
		return AllocatedNum{}, err
	}
	sys.Enforce("multiplication constraint", cs.LCOf(a.Var), cs.LCOf(b.Var), cs.LCOf(v))
	return AllocatedNum{Var: v, Value: val}, nil
}

// Square allocates "squared num" with a·a = square.
func (a AllocatedNum) Square(sys cs.ConstraintSystem) (AllocatedNum, error) {
	var val fr.Element
	val.Square(&a.Value)
	v, err := sys.AllocValue("squared num", &val)
	if err != nil {
		return AllocatedNum{}, err
	}
	sys.Enforce("squaring constraint", cs.LCOf(a.Var), cs.LCOf(a.Var), cs.LCOf(v))
	return AllocatedNum{Var: v, Value: val}, nil
}

// AssertNonzero allocates "ephemeral inverse" and enforces a·inv = 1.
func (a AllocatedNum) AssertNonzero(sys cs.ConstraintSystem) error {
	inv, err := sys.Alloc("ephemeral inverse", func() (fr.Element, error) {
		if a.Value.IsZero() {
			return fr.Element{}, cs.ErrDivisionByZero
		}
		var r fr.Element
		r.Inverse(&a.Value)
		return r, nil
	})
	if err != nil {
		return err
	}
	sys.Enforce("nonzero assertion constraint", cs.LCOf(a.Var), cs.LCOf(inv), cs.LCOf(cs.One))
	return nil
}

// ToBitsLE allocates the 255 bits of a (namespaces "bit i") and enforces the
// "unpacking constraint" 0·0 = Σ 2^i·b_i − a.
func (a AllocatedNum) ToBitsLE(sys cs.ConstraintSystem) ([]boolean.Boolean, error) {
	bits, err := boolean.FieldIntoAllocatedBitsLE(sys, &a.Value)
	if err != nil {
		return nil, err
	}
	sys.Enforce("unpacking constraint", nil, nil, packLC(bits, a.Var))
	out := make([]boolean.Boolean, len(bits))
	for i, b := range bits {
		out[i] = boolean.Is(b)
	}
	return out, nil
}

func packLC(bits []boolean.AllocatedBit, v cs.Variable) cs.LinearCombination {
	lc := cs.NewLC(len(bits) + 1)
	coeff := one
	for _, b := range bits {
		lc = lc.AddTerm(&coeff, b.Var)
		coeff.Double(&coeff)
	}
	return lc.Sub(v)
}

// ToBitsLEStrict decomposes a into 255 bits constrained to encode a value
// below the modulus, with bellpepper's run-of-ones construction.
func (a AllocatedNum) ToBitsLEStrict(sys cs.ConstraintSystem) ([]boolean.Boolean, error) {
	var minusOne fr.Element
	minusOne.Neg(&one)
	charBits := minusOne.Bits()
	aBits := a.Value.Bits()
	bit := func(l [4]uint64, i int) bool { return l[i/64]>>(uint(i)%64)&1 == 1 }

	var result []boolean.AllocatedBit // big-endian
	var lastRun *boolean.AllocatedBit
	var currentRun []boolean.AllocatedBit
	foundOne := false
	i := 0
	for pos := 255; pos >= 0; pos-- {
		b := bit(charBits, pos)
		av := bit(aBits, pos) && sys.WitnessMode()
		foundOne = foundOne || b
		if !foundOne {
			continue
		}
		if b {
			sys.PushIndexed("bit ", i)
			x, err := boolean.Alloc(sys, av)
			sys.Pop()
			if err != nil {
				return nil, err
			}
			currentRun = append(currentRun, x)
			result = append(result, x)
		} else {
			if len(currentRun) > 0 {
				if lastRun != nil {
					currentRun = append(currentRun, *lastRun)
				}
				sys.PushIndexed("run ending at ", i)
				r, err := karyAnd(sys, currentRun)
				sys.Pop()
				if err != nil {
					return nil, err
				}
				lastRun = &r
				currentRun = currentRun[:0]
			}
			sys.PushIndexed("bit ", i)
			x, err := boolean.AllocConditionally(sys, av, *lastRun)
			sys.Pop()
			if err != nil {
				return nil, err
			}
			result = append(result, x)
		}
		i++
	}
	le := make([]boolean.AllocatedBit, len(result))
	for k := range result {
		le[k] = result[len(result)-1-k]
	}
	sys.Enforce("unpacking constraint", nil, nil, packLC(le, a.Var))
	out := make([]boolean.Boolean, len(le))
	for k, b := range le {
		out[k] = boolean.Is(b)
	}
	return out, nil
}

func karyAnd(sys cs.ConstraintSystem, v []boolean.AllocatedBit) (boolean.AllocatedBit, error) {
	cur := v[0]
	for i := 1; i < len(v); i++ {
		sys.PushIndexed("and ", i)
		r, err := boolean.And(sys, cur, v[i])
		sys.Pop()
		if err != nil {
			return boolean.AllocatedBit{}, err
		}
		cur = r
	}
	return cur, nil
}

// ConditionallyReverse returns (a, b), or (b, a) when condition is set:
// "conditional reversal result 1/2" with two constraints.
func ConditionallyReverse(sys cs.ConstraintSystem, a, b AllocatedNum, condition boolean.Boolean) (AllocatedNum, AllocatedNum, error) {
	cv, dv := a.Value, b.Value
	if condition.Value() {
		cv, dv = b.Value, a.Value
	}
	sys.Push("conditional reversal result 1")
	c, err := Alloc(sys, cv)
	sys.Pop()
	if err != nil {
		return AllocatedNum{}, AllocatedNum{}, err
	}
	sys.Enforce("first conditional reversal", cs.LCOf(a.Var).Sub(b.Var), condition.LC(), cs.LCOf(a.Var).Sub(c.Var))
	sys.Push("conditional reversal result 2")
	d, err := Alloc(sys, dv)
	sys.Pop()
	if err != nil {
		return AllocatedNum{}, AllocatedNum{}, err
	}
	sys.Enforce("second conditional reversal", cs.LCOf(b.Var).Sub(a.Var), condition.LC(), cs.LCOf(b.Var).Sub(d.Var))
	return c, d, nil
}

// Num is a linear combination together with its value.
type Num struct {
	Value fr.Element
	LC    cs.LinearCombination
}

// FromAllocated returns the Num 1·a.
func FromAllocated(a AllocatedNum) Num { return Num{Value: a.Value, LC: cs.LCOf(a.Var)} }

// Constant returns the Num c·ONE.
func Constant(c fr.Element) Num {
	return Num{Value: c, LC: cs.NewLC(1).AddTerm(&c, cs.One)}
}

// AddBoolWithCoeff returns n + coeff·bit (a fresh Num; n is unchanged).
func (n Num) AddBoolWithCoeff(bit boolean.Boolean, coeff *fr.Element) Num {
	r := Num{Value: n.Value, LC: bit.AddToLC(n.LC.Clone(), coeff)}
	if bit.Value() {
		r.Value.Add(&r.Value, coeff)
	}
	return r
}

// Add returns n + o (a fresh Num).
func (n Num) Add(o Num) Num {
	r := Num{LC: n.LC.Clone().AddLC(o.LC)}
	r.Value.Add(&n.Value, &o.Value)
	return r
}

// Scale returns s·n (a fresh Num).
func (n Num) Scale(s *fr.Element) Num {
	r := Num{LC: n.LC.Scaled(s)}
	r.Value.Mul(&n.Value, s)
	return r
}
