package poseidon

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/num"
)

// elt is a state element: allocated, or a linear combination not yet
// committed to a variable (neptune's Elt).
type elt struct {
	allocated bool
	a         num.AllocatedNum
	n         num.Num
}

func (e elt) value() fr.Element {
	if e.allocated {
		return e.a.Value
	}
	return e.n.Value
}

func (e elt) toNum() num.Num {
	if e.allocated {
		return num.FromAllocated(e.a)
	}
	return e.n
}

// ensureAllocated commits a Num to a variable inside the current namespace:
// "allocate for Elt::Num" and "enforce num allocation preserves lc" (lc·1 = v).
func (e elt) ensureAllocated(sys cs.ConstraintSystem) (num.AllocatedNum, error) {
	if e.allocated {
		return e.a, nil
	}
	sys.Push("allocate for Elt::Num")
	v, err := num.Alloc(sys, e.n.Value)
	sys.Pop()
	if err != nil {
		return num.AllocatedNum{}, err
	}
	sys.Enforce("enforce num allocation preserves lc", e.n.LC, cs.LCOf(cs.One), cs.LCOf(v.Var))
	return v, nil
}

type circuit struct {
	c        *Constants
	elements []elt
	offset   int
	round    int
}

// HashCircuit synthesizes neptune's v1 Poseidon circuit (circuit::poseidon_hash)
// over preimage in the current namespace and returns the allocated hash.
// The preimage length must equal the arity; a ConstantLength type must have
// length equal to the arity, as neptune requires.
func HashCircuit(sys cs.ConstraintSystem, preimage []num.AllocatedNum, c *Constants) (num.AllocatedNum, error) {
	if len(preimage) != c.Arity {
		return num.AllocatedNum{}, fmt.Errorf("poseidon circuit: preimage of %d elements for arity %d", len(preimage), c.Arity)
	}
	if c.Type.Kind == ConstantLength && c.Type.Param != uint64(c.Arity) {
		return num.AllocatedNum{}, fmt.Errorf("poseidon circuit: constant length %d must equal arity %d", c.Type.Param, c.Arity)
	}
	t, err := templateFor(c)
	if err != nil {
		return hashCircuitDirect(sys, preimage, c)
	}
	if t.nativeErr == nil && cs.WitnessOnly(sys) {
		return t.nativeHash(sys, preimage, t.checked)
	}
	return t.replay(sys, preimage)
}

// hashCircuitDirect builds the circuit from the constants, as neptune does;
// HashCircuit replays a template recorded from it.
func hashCircuitDirect(sys cs.ConstraintSystem, preimage []num.AllocatedNum, c *Constants) (num.AllocatedNum, error) {
	p := &circuit{c: c, elements: make([]elt, 0, c.Width)}
	p.elements = append(p.elements, elt{n: num.Constant(c.DomainTag)})
	for _, x := range preimage {
		p.elements = append(p.elements, elt{allocated: true, a: x})
	}
	return p.hash(sys)
}

func (p *circuit) hash(sys cs.ConstraintSystem) (num.AllocatedNum, error) {
	if err := p.ns(sys, "first round", func() error { return p.fullRound(sys, true, false) }); err != nil {
		return num.AllocatedNum{}, err
	}
	for i := 1; i < p.c.HalfFullRounds; i++ {
		if err := p.nsi(sys, "initial full round ", i, func() error { return p.fullRound(sys, false, false) }); err != nil {
			return num.AllocatedNum{}, err
		}
	}
	for i := 0; i < p.c.PartialRounds; i++ {
		if err := p.nsi(sys, "partial round ", i, func() error { return p.partialRound(sys) }); err != nil {
			return num.AllocatedNum{}, err
		}
	}
	for i := 0; i < p.c.HalfFullRounds-1; i++ {
		if err := p.nsi(sys, "final full round ", i, func() error { return p.fullRound(sys, false, false) }); err != nil {
			return num.AllocatedNum{}, err
		}
	}
	if err := p.ns(sys, "terminal full round", func() error { return p.fullRound(sys, false, true) }); err != nil {
		return num.AllocatedNum{}, err
	}
	sys.Push("hash result")
	defer sys.Pop()
	return p.elements[1].ensureAllocated(sys)
}

func (p *circuit) ns(sys cs.ConstraintSystem, name string, f func() error) error {
	sys.Push(name)
	defer sys.Pop()
	return f()
}

func (p *circuit) nsi(sys cs.ConstraintSystem, prefix string, i int, f func() error) error {
	sys.PushIndexed(prefix, i)
	defer sys.Pop()
	return f()
}

func (p *circuit) fullRound(sys cs.ConstraintSystem, first, last bool) error {
	crc := p.c.CompressedRoundConstants
	w := p.c.Width
	off := p.offset
	var pre []fr.Element
	if first {
		pre = crc[off : off+w]
		off += w
	}
	var post []fr.Element
	if first || !last {
		post = crc[off : off+w]
		off += w
	}
	for i := range p.elements {
		var err error
		switch {
		case first && i == 0:
			// The tag's first S-box is a constant.
			v := p.elements[0].value()
			v.Add(&v, &pre[0])
			sbox(&v)
			v.Add(&v, &post[0])
			p.elements[0] = elt{n: num.Constant(v)}
		case first:
			sys.PushIndexed("quintic s-box ", i)
			p.elements[i], err = quinticSboxPreAdd(sys, p.elements[i], &pre[i], &post[i])
			sys.Pop()
		default:
			var rk *fr.Element
			if post != nil {
				rk = &post[i]
			}
			sys.PushIndexed("quintic s-box ", i)
			p.elements[i], err = quinticSbox(sys, p.elements[i], rk)
			sys.Pop()
		}
		if err != nil {
			return err
		}
	}
	p.offset = off
	p.productMDS()
	return nil
}

func (p *circuit) partialRound(sys cs.ConstraintSystem) error {
	rk := p.c.CompressedRoundConstants[p.offset]
	p.offset++
	sys.Push("solitary quintic s-box")
	e, err := quinticSbox(sys, p.elements[0], &rk)
	sys.Pop()
	if err != nil {
		return err
	}
	p.elements[0] = e
	p.productMDS()
	return nil
}

func (p *circuit) productMDS() {
	half := p.c.HalfFullRounds
	switch r := p.round; {
	case r == half-1:
		p.productMatrix(p.c.PreSparseMatrix)
	case r > half-1 && r < half+p.c.PartialRounds:
		p.productSparse(&p.c.SparseMatrices[r-half])
	default:
		p.productMatrix(p.c.MDS)
	}
	p.round++
}

// scalarProduct is Σ scalars[i]·elements[i] as a Num, folded left from zero.
func scalarProduct(elements []elt, scalar func(i int) *fr.Element) num.Num {
	acc := num.Num{LC: cs.NewLC(len(elements) * 2)}
	for i, e := range elements {
		s := scalar(i)
		n := e.toNum()
		acc.LC = acc.LC.AddScaledLC(s, n.LC)
		var t fr.Element
		t.Mul(&n.Value, s)
		acc.Value.Add(&acc.Value, &t)
	}
	return acc
}

func (p *circuit) productMatrix(m matrix) {
	res := make([]elt, len(p.elements))
	for j := range res {
		res[j] = elt{n: scalarProduct(p.elements, func(i int) *fr.Element { return &m[i][j] })}
	}
	p.elements = res
}

func (p *circuit) productSparse(sm *SparseMatrix) {
	res := make([]elt, len(p.elements))
	res[0] = elt{n: scalarProduct(p.elements, func(i int) *fr.Element { return &sm.WHat[i] })}
	first := p.elements[0].toNum()
	for j := 1; j < len(p.elements); j++ {
		res[j] = elt{n: p.elements[j].toNum().Add(first.Scale(&sm.VRest[j-1]))}
	}
	p.elements = res
}

// quinticSbox computes l^5 (+ rk): "S-box input", "l^2", "l^4", "(l4 * l) + rk)".
func quinticSbox(sys cs.ConstraintSystem, e elt, rk *fr.Element) (elt, error) {
	sys.Push("S-box input")
	l, err := e.ensureAllocated(sys)
	sys.Pop()
	if err != nil {
		return elt{}, err
	}
	sys.Push("l^2")
	l2, err := l.Square(sys)
	sys.Pop()
	if err != nil {
		return elt{}, err
	}
	sys.Push("l^4")
	l4, err := l2.Square(sys)
	sys.Pop()
	if err != nil {
		return elt{}, err
	}
	sys.Push("(l4 * l) + rk)")
	l5, err := mulSum(sys, l4, l, nil, rk)
	sys.Pop()
	return elt{allocated: true, a: l5}, err
}

// quinticSboxPreAdd computes (l + pre)^5 + post for the first round.
func quinticSboxPreAdd(sys cs.ConstraintSystem, e elt, pre, post *fr.Element) (elt, error) {
	sys.Push("S-box input")
	l, err := e.ensureAllocated(sys)
	sys.Pop()
	if err != nil {
		return elt{}, err
	}
	sys.Push("(l+rk)^2")
	l2, err := squareSum(sys, pre, l)
	sys.Pop()
	if err != nil {
		return elt{}, err
	}
	sys.Push("l^4")
	l4, err := l2.Square(sys)
	sys.Pop()
	if err != nil {
		return elt{}, err
	}
	sys.Push("l4 * (l + rk)")
	l5, err := mulSum(sys, l4, l, pre, post)
	sys.Pop()
	return elt{allocated: true, a: l5}, err
}

// squareSum allocates "squared sum" = (x + add)^2 with one constraint.
func squareSum(sys cs.ConstraintSystem, add *fr.Element, x num.AllocatedNum) (num.AllocatedNum, error) {
	var val fr.Element
	val.Add(&x.Value, add)
	val.Square(&val)
	v, err := sys.AllocValue("squared sum", &val)
	if err != nil {
		return num.AllocatedNum{}, err
	}
	lc := func() cs.LinearCombination { return cs.LCOf(x.Var).AddTerm(add, cs.One) }
	sys.Enforce("squared sum constraint", lc(), lc(), cs.LCOf(v))
	return num.AllocatedNum{Var: v, Value: val}, nil
}

// mulSum allocates "mul_sum" = a·(b + pre) + post with one constraint.
func mulSum(sys cs.ConstraintSystem, a, b num.AllocatedNum, pre, post *fr.Element) (num.AllocatedNum, error) {
	val := b.Value
	if pre != nil {
		val.Add(&val, pre)
	}
	val.Mul(&val, &a.Value)
	if post != nil {
		val.Add(&val, post)
	}
	v, err := sys.AllocValue("mul_sum", &val)
	if err != nil {
		return num.AllocatedNum{}, err
	}
	bl := cs.LCOf(b.Var)
	if pre != nil {
		bl = bl.AddTerm(pre, cs.One)
	}
	cl := cs.LCOf(v)
	name := "mul sum constraint"
	switch {
	case pre != nil && post != nil:
		name = "mul sum constraint pre-post-add"
	case post != nil:
		name = "mul sum constraint post-add"
	case pre != nil:
		name = "mul sum constraint pre-add"
	}
	if post != nil {
		var neg fr.Element
		neg.Neg(post)
		cl = cl.AddTerm(&neg, cs.One)
	}
	sys.Enforce(name, bl, cs.LCOf(a.Var), cl)
	return num.AllocatedNum{Var: v, Value: val}, nil
}
