package poseidon

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/num"
)

// Witness-only synthesis (cs.WitnessOnly) keeps values and counts rows, nothing else. The
// template computes each local as A·B − C of its defining constraint, and those combinations
// are written over allocated variables: a partial round's S-box input spells out every term
// the un-allocated state elements have gathered since the full rounds, so one hash costs about
// 3,850 multiplications. Running the permutation on the state's values, as the direct circuit
// computes them, allocates the same locals with the same values for about 2,000. The path is
// checked against the template once per parameter set (nativeMatches) before it is used.

// nativeState is one native hash: the state, a dense matrix product's output, the value being
// allocated (a field of a pooled object, so that passing it to AllocValue allocates nothing)
// and the last variable allocated.
type nativeState struct {
	sys      cs.ConstraintSystem
	st, next []fr.Element
	val      fr.Element
	last     cs.Variable
}

// alloc allocates v and counts its defining row.
func (s *nativeState) alloc(v *fr.Element) error {
	s.val = *v
	x, err := s.sys.AllocValue("", &s.val)
	if err != nil {
		return err
	}
	s.sys.Enforce("", nil, nil, nil)
	s.last = x
	return nil
}

// box is the S-box of the circuit (quinticSbox): the state element, a Num, is allocated as the
// S-box input, then l², l⁴ and l⁴·l + rk. In the first round the preimage is allocated already
// and the tag's S-box is a constant (quinticSboxPreAdd), so only l², l⁴ and the result are.
func (s *nativeState) box(r, i int, x, rk *fr.Element) error {
	if r == 0 && i == 0 {
		return plainBox(r, i, x, rk)
	}
	l := *x
	if r > 0 {
		if err := s.alloc(&l); err != nil {
			return err
		}
	}
	var l2, l4 fr.Element
	l2.Square(&l)
	if err := s.alloc(&l2); err != nil {
		return err
	}
	l4.Square(&l2)
	if err := s.alloc(&l4); err != nil {
		return err
	}
	x.Mul(&l4, &l)
	if rk != nil {
		x.Add(x, rk)
	}
	return s.alloc(x)
}

// nativeHash allocates into sys, a witness-only system, the hash's locals in the template's
// order, one counted row after each, and returns the hash; c are the constants nativeMatches
// checked (the template's).
func (t *template) nativeHash(sys cs.ConstraintSystem, preimage []num.AllocatedNum, c *Constants) (num.AllocatedNum, error) {
	w := c.Width
	s, _ := t.native.Get().(*nativeState)
	if s == nil {
		s = &nativeState{st: make([]fr.Element, w), next: make([]fr.Element, w)}
	}
	s.sys = sys
	defer func() {
		s.sys = nil
		t.native.Put(s)
	}()
	s.st[0] = c.DomainTag
	for i := 1; i < w; i++ {
		s.st[i] = preimage[i-1].Value
	}
	if err := c.permute(s.st, s.next, s.box); err != nil {
		return num.AllocatedNum{}, err
	}
	out := s.st[1]
	if err := s.alloc(&out); err != nil { // "hash result"
		return num.AllocatedNum{}, err
	}
	return num.AllocatedNum{Var: s.last, Value: out}, nil
}

// nativeMatches returns nil when nativeHash, run with c, allocates exactly the template's
// locals and rows on a preimage of distinct values and returns its variable and value (the
// order of operations does not depend on the values, so one preimage checks the structure);
// an error would be a bug in nativeHash, and the template is used then.
func (t *template) nativeMatches(c *Constants) error {
	in := make([]fr.Element, c.Arity)
	for i := range in {
		in[i].SetUint64(uint64(0x9e3779b97f4a7c15) * uint64(i+1))
		in[i].Square(&in[i])
	}
	run := func(native bool) (*cs.ProvingAssignment, num.AllocatedNum, error) {
		pa := cs.NewWitnessAssignment(cs.Shape{NumAux: c.Arity + t.nLocals})
		pre := make([]num.AllocatedNum, c.Arity)
		for i := range pre {
			a, err := num.Alloc(pa, in[i])
			if err != nil {
				return nil, num.AllocatedNum{}, err
			}
			pre[i] = a
		}
		var h num.AllocatedNum
		var err error
		if native {
			h, err = t.nativeHash(pa, pre, c)
		} else {
			h, err = t.replay(pa, pre)
		}
		return pa, h, err
	}
	want, wh, err := run(false)
	if err != nil {
		return err
	}
	got, gh, err := run(true)
	if err != nil {
		return err
	}
	if got.Shape() != want.Shape() {
		return fmt.Errorf("poseidon: native witness of shape %+v, the template's %+v", got.Shape(), want.Shape())
	}
	for i := range want.Aux {
		if !got.Aux[i].Equal(&want.Aux[i]) {
			return fmt.Errorf("poseidon: native witness differs from the template's at aux %d", i)
		}
	}
	if gh.Var != wh.Var || !gh.Value.Equal(&wh.Value) {
		return fmt.Errorf("poseidon: native hash (variable %v) differs from the template's (%v)", gh.Var, wh.Var)
	}
	return nil
}
