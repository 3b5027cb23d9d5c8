package cs

import (
	"fmt"
	"math"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Variable names an input or an aux (private) variable. The zero value is input 0, the constant ONE.
//
// Inputs encode as their index and aux variables as index|auxFlag, so sorting Variables orders
// inputs first, then aux, each by index (bellpepper's order).
type Variable uint32

const auxFlag = 1 << 31

// MaxVariables is the largest number of inputs or of aux variables a system may hold.
const MaxVariables = auxFlag - 1

// One is input 0, the constant 1.
const One Variable = 0

// InputVariable returns the variable of input i.
func InputVariable(i int) Variable {
	if i < 0 || i >= MaxVariables {
		panic(fmt.Sprintf("cs: input index %d out of range", i))
	}
	return Variable(i)
}

// AuxVariable returns the variable of aux i.
func AuxVariable(i int) Variable {
	if i < 0 || i >= MaxVariables {
		panic(fmt.Sprintf("cs: aux index %d out of range", i))
	}
	return Variable(i) | auxFlag
}

// IsInput reports whether v is an input (public) variable.
func (v Variable) IsInput() bool { return v&auxFlag == 0 }

// Index returns the position of v among the inputs or among the aux variables.
func (v Variable) Index() int { return int(v &^ auxFlag) }

// String formats v as "input i" or "aux i".
func (v Variable) String() string {
	if v.IsInput() {
		return fmt.Sprintf("input %d", v.Index())
	}
	return fmt.Sprintf("aux %d", v.Index())
}

// Term is one coefficient·variable product of a linear combination.
type Term struct {
	Coeff fr.Element
	Var   Variable
}

// LinearCombination is a sum of terms, kept sorted by variable (inputs first) with at most one
// term per variable, as bellpepper's LinearCombination: adding a variable that is already present
// adds to its coefficient. A coefficient that sums to zero stays as a zero term, which evaluates to
// nothing and sets no density.
//
// Builders append in place like Go's append: lc = lc.Add(x). A combination that has been extended
// must not be used again (as in bellpepper, where + consumes it); use Clone to branch.
type LinearCombination []Term

var (
	oneElement      = fr.One()
	minusOneElement = func() fr.Element { var e fr.Element; e.Neg(&oneElement); return e }()
)

// NewLC returns an empty combination with room for n terms.
func NewLC(n int) LinearCombination { return make(LinearCombination, 0, n) }

// LCOf returns the combination 1·v.
func LCOf(v Variable) LinearCombination { return LinearCombination{{Coeff: oneElement, Var: v}} }

// Clone returns an independent copy of lc.
func (lc LinearCombination) Clone() LinearCombination {
	if lc == nil {
		return nil
	}
	out := make(LinearCombination, len(lc), len(lc)+1)
	copy(out, lc)
	return out
}

// AddTerm returns lc + coeff·v.
func (lc LinearCombination) AddTerm(coeff *fr.Element, v Variable) LinearCombination {
	n := len(lc)
	// Fast path: circuits mostly add variables in increasing order.
	if n == 0 || lc[n-1].Var < v {
		return append(lc, Term{Coeff: *coeff, Var: v})
	}
	if lc[n-1].Var == v {
		lc[n-1].Coeff.Add(&lc[n-1].Coeff, coeff)
		return lc
	}
	lo, hi := 0, n-1
	for lo < hi {
		mid := (lo + hi) / 2
		if lc[mid].Var < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lc[lo].Var == v {
		lc[lo].Coeff.Add(&lc[lo].Coeff, coeff)
		return lc
	}
	lc = append(lc, Term{})
	copy(lc[lo+1:], lc[lo:n])
	lc[lo] = Term{Coeff: *coeff, Var: v}
	return lc
}

// Add returns lc + v.
func (lc LinearCombination) Add(v Variable) LinearCombination { return lc.AddTerm(&oneElement, v) }

// Sub returns lc − v.
func (lc LinearCombination) Sub(v Variable) LinearCombination {
	return lc.AddTerm(&minusOneElement, v)
}

// AddCoeff returns lc + c·v for a small integer coefficient c (negative values allowed).
func (lc LinearCombination) AddCoeff(c int64, v Variable) LinearCombination {
	var e fr.Element
	e.SetInt64(c)
	return lc.AddTerm(&e, v)
}

// AddLC returns lc + o.
func (lc LinearCombination) AddLC(o LinearCombination) LinearCombination {
	for i := range o {
		lc = lc.AddTerm(&o[i].Coeff, o[i].Var)
	}
	return lc
}

// SubLC returns lc − o.
func (lc LinearCombination) SubLC(o LinearCombination) LinearCombination {
	var neg fr.Element
	for i := range o {
		neg.Neg(&o[i].Coeff)
		lc = lc.AddTerm(&neg, o[i].Var)
	}
	return lc
}

// AddScaledLC returns lc + coeff·o.
func (lc LinearCombination) AddScaledLC(coeff *fr.Element, o LinearCombination) LinearCombination {
	var t fr.Element
	for i := range o {
		t.Mul(&o[i].Coeff, coeff)
		lc = lc.AddTerm(&t, o[i].Var)
	}
	return lc
}

// Scaled returns a new combination coeff·lc; lc is left unchanged.
func (lc LinearCombination) Scaled(coeff *fr.Element) LinearCombination {
	out := make(LinearCombination, len(lc))
	for i := range lc {
		out[i].Var = lc[i].Var
		out[i].Coeff.Mul(&lc[i].Coeff, coeff)
	}
	return out
}

// Eval returns Σ coeff·value for the given input and aux assignments.
func (lc LinearCombination) Eval(inputs, aux []fr.Element) fr.Element {
	var acc, t fr.Element
	for i := range lc {
		term := &lc[i]
		if term.Coeff.IsZero() {
			continue
		}
		var val *fr.Element
		if term.Var.IsInput() {
			val = &inputs[term.Var.Index()]
		} else {
			val = &aux[term.Var.Index()]
		}
		if term.Coeff.IsOne() {
			acc.Add(&acc, val)
		} else if term.Coeff == minusOneElement {
			acc.Sub(&acc, val)
		} else {
			t.Mul(&term.Coeff, val)
			acc.Add(&acc, &t)
		}
	}
	return acc
}

// checkIndex guards against more variables than Variable can encode.
func checkCount(kind string, n int) error {
	if n >= math.MaxInt32 {
		return fmt.Errorf("cs: too many %s variables (%d)", kind, n)
	}
	return nil
}
