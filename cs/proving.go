package cs

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// ProvingAssignment is the witness-mode system the Groth16 prover consumes (bellperson's
// ProvingAssignment): every Enforce appends ⟨A,z⟩, ⟨B,z⟩, ⟨C,z⟩ to A, B, C.
//
// Density rules: a term with a non-zero coefficient sets its variable's bit; A tracks aux only
// (inputs are always dense in A), B tracks inputs and aux, C tracks nothing.
type ProvingAssignment struct {
	A, B, C []fr.Element
	Input   []fr.Element // Input[0] is ONE
	Aux     []fr.Element

	AAuxDensity   *Density
	BInputDensity *Density
	BAuxDensity   *Density

	ctx    context.Context
	allocs int
	// witnessOnly assignments keep inputs and aux only: Enforce counts rows (rows) and nothing is
	// evaluated or tracked; Compiled.Complete fills in a, b, c and the densities.
	witnessOnly bool
	rows        int
	// pool, set for assignments of a compiled circuit, takes the vectors back (Recycle).
	pool *vectorPool
	// deferred is the compiled circuit whose products a, b, c are still to be computed (Defer).
	deferred *Compiled
}

// NewProvingAssignment returns an empty assignment with capacity for the given shape (pass the
// shape from a blank synthesis so that the vectors never regrow; the zero Shape is fine).
func NewProvingAssignment(capacity Shape) *ProvingAssignment {
	return &ProvingAssignment{
		A:             make([]fr.Element, 0, capacity.NumConstraints),
		B:             make([]fr.Element, 0, capacity.NumConstraints),
		C:             make([]fr.Element, 0, capacity.NumConstraints),
		Input:         make([]fr.Element, 0, capacity.NumInputs),
		Aux:           make([]fr.Element, 0, capacity.NumAux),
		AAuxDensity:   NewDensity(capacity.NumAux),
		BInputDensity: NewDensity(capacity.NumInputs),
		BAuxDensity:   NewDensity(capacity.NumAux),
		ctx:           context.Background(),
	}
}

// NewWitnessAssignment returns an empty witness-only assignment: it keeps the input and aux
// values in the circuit's exact variable order and drops every constraint, so gadgets may skip
// building linear combinations (WitnessOnly). Compiled.Complete turns it into a full one.
func NewWitnessAssignment(capacity Shape) *ProvingAssignment {
	return &ProvingAssignment{
		Input:       make([]fr.Element, 0, capacity.NumInputs),
		Aux:         make([]fr.Element, 0, capacity.NumAux),
		ctx:         context.Background(),
		witnessOnly: true,
	}
}

// Shape returns the current counts.
func (p *ProvingAssignment) Shape() Shape {
	rows := len(p.A)
	if p.witnessOnly {
		rows = p.rows
	}
	return Shape{NumInputs: len(p.Input), NumAux: len(p.Aux), NumConstraints: rows}
}

// WitnessOnly reports whether p drops its constraints (NewWitnessAssignment).
func (p *ProvingAssignment) WitnessOnly() bool { return p.witnessOnly }

// ctxCheckMask sets how often Alloc polls the context (every 2^16 allocations).
const ctxCheckMask = 1<<16 - 1

func (p *ProvingAssignment) poll() error {
	p.allocs++
	if p.allocs&ctxCheckMask == 0 && p.ctx != nil {
		if err := p.ctx.Err(); err != nil {
			return fmt.Errorf("synthesis interrupted: %w", err)
		}
	}
	return nil
}

// Alloc implements ConstraintSystem.
func (p *ProvingAssignment) Alloc(name string, value ValueFunc) (Variable, error) {
	v, err := value()
	if err != nil {
		return 0, err
	}
	return p.AllocValue(name, &v)
}

// AllocValue implements ConstraintSystem.
func (p *ProvingAssignment) AllocValue(_ string, value *fr.Element) (Variable, error) {
	if err := p.poll(); err != nil {
		return 0, err
	}
	if err := checkCount("aux", len(p.Aux)); err != nil {
		return 0, err
	}
	p.Aux = append(p.Aux, *value)
	if p.witnessOnly {
		return AuxVariable(len(p.Aux) - 1), nil
	}
	p.AAuxDensity.AddBit()
	p.BAuxDensity.AddBit()
	return AuxVariable(len(p.Aux) - 1), nil
}

// AllocInput implements ConstraintSystem.
func (p *ProvingAssignment) AllocInput(name string, value ValueFunc) (Variable, error) {
	v, err := value()
	if err != nil {
		return 0, err
	}
	return p.AllocInputValue(name, &v)
}

// AllocInputValue implements ConstraintSystem.
func (p *ProvingAssignment) AllocInputValue(_ string, value *fr.Element) (Variable, error) {
	if err := checkCount("input", len(p.Input)); err != nil {
		return 0, err
	}
	p.Input = append(p.Input, *value)
	if p.witnessOnly {
		return InputVariable(len(p.Input) - 1), nil
	}
	p.BInputDensity.AddBit()
	return InputVariable(len(p.Input) - 1), nil
}

// Enforce implements ConstraintSystem.
func (p *ProvingAssignment) Enforce(_ string, a, b, c LinearCombination) {
	if p.witnessOnly {
		p.rows++
		return
	}
	p.A = append(p.A, evalTracked(a, p.Input, p.Aux, nil, p.AAuxDensity))
	p.B = append(p.B, evalTracked(b, p.Input, p.Aux, p.BInputDensity, p.BAuxDensity))
	p.C = append(p.C, c.Eval(p.Input, p.Aux))
}

// Push implements ConstraintSystem (names are not kept).
func (p *ProvingAssignment) Push(string) {}

// PushIndexed implements ConstraintSystem (names are not kept).
func (p *ProvingAssignment) PushIndexed(string, int) {}

// Pop implements ConstraintSystem.
func (p *ProvingAssignment) Pop() {}

// WitnessMode implements ConstraintSystem: true.
func (p *ProvingAssignment) WitnessMode() bool { return true }

// evalTracked is bellperson's lc::eval_with_trackers: zero coefficients are skipped and set no
// density; a nil tracker tracks nothing.
func evalTracked(lc LinearCombination, inputs, aux []fr.Element, inDens, auxDens *Density) fr.Element {
	var acc, t fr.Element
	for i := range lc {
		term := &lc[i]
		if term.Coeff.IsZero() {
			continue
		}
		var val *fr.Element
		idx := term.Var.Index()
		if term.Var.IsInput() {
			val = &inputs[idx]
			if inDens != nil {
				inDens.Inc(idx)
			}
		} else {
			val = &aux[idx]
			if auxDens != nil {
				auxDens.Inc(idx)
			}
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

// Extend appends other, a system synthesized separately (with its own ONE at input 0), as
// bellperson's ProvingAssignment::extend: a, b, c and aux are concatenated, other's inputs after
// its ONE are appended, and its ONE density bit is OR-ed into input 0. Constraints of other must
// reference only its own variables.
//
// A witness-only p takes only other's values and row count (other must be witness-only too).
func (p *ProvingAssignment) Extend(other *ProvingAssignment) {
	if p.witnessOnly {
		p.rows += other.Shape().NumConstraints
		p.Aux = append(p.Aux, other.Aux...)
		if len(other.Input) > 0 {
			p.Input = append(p.Input, other.Input[1:]...)
		}
		return
	}
	p.A = append(p.A, other.A...)
	p.B = append(p.B, other.B...)
	p.C = append(p.C, other.C...)
	p.Aux = append(p.Aux, other.Aux...)
	p.AAuxDensity.Extend(other.AAuxDensity, false)
	p.BAuxDensity.Extend(other.BAuxDensity, false)
	if len(other.Input) > 0 {
		p.Input = append(p.Input, other.Input[1:]...)
	}
	p.BInputDensity.Extend(other.BInputDensity, true)
}

// enforceInputRows appends bellperson's input_i · 0 = 0 rows, which make A dense over inputs.
func enforceInputRows(sys ConstraintSystem, numInputs int) {
	for i := 0; i < numInputs; i++ {
		sys.Enforce("", LCOf(InputVariable(i)), nil, nil)
	}
}

// SynthesizeWitness is SynthesizeProving into a witness-only assignment (NewWitnessAssignment):
// the same inputs and aux in the same order, the rows only counted.
func SynthesizeWitness(ctx context.Context, circuit Circuit, capacity Shape) (*ProvingAssignment, error) {
	p := NewWitnessAssignment(capacity)
	if err := synthesizeInto(ctx, p, circuit); err != nil {
		return nil, err
	}
	return p, nil
}

// WitnessOnly reports whether sys drops the constraints it is given (witness-only synthesis,
// whose matrices come from a Compiled circuit): gadgets may then skip building the linear
// combinations that only feed Enforce. Values must still be computed exactly.
func WitnessOnly(sys ConstraintSystem) bool {
	w, ok := sys.(interface{ WitnessOnly() bool })
	return ok && w.WitnessOnly()
}

// SynthesizeProving runs circuit in witness mode as bellperson's prover does: ONE is allocated
// as input 0, the circuit synthesizes, then one input_i·0=0 constraint is added per input.
// capacity (may be zero) presizes the vectors; ctx cancels synthesis between allocations.
func SynthesizeProving(ctx context.Context, circuit Circuit, capacity Shape) (*ProvingAssignment, error) {
	p := NewProvingAssignment(capacity)
	if err := synthesizeInto(ctx, p, circuit); err != nil {
		return nil, err
	}
	return p, nil
}

func synthesizeInto(ctx context.Context, p *ProvingAssignment, circuit Circuit) error {
	p.ctx = ctx
	if _, err := p.AllocInputValue("ONE", &oneElement); err != nil {
		return err
	}
	if err := circuit.Synthesize(p); err != nil {
		return fmt.Errorf("synthesizing circuit: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("synthesis interrupted: %w", err)
	}
	enforceInputRows(p, len(p.Input))
	p.ctx = nil
	return nil
}

// Diff returns nil when p and o hold the same a, b, c, inputs, aux and densities, else an
// error naming the first difference (for tests and for checking one synthesis against another).
func (p *ProvingAssignment) Diff(o *ProvingAssignment) error {
	for _, v := range []struct {
		name string
		x, y []fr.Element
	}{{"a", p.A, o.A}, {"b", p.B, o.B}, {"c", p.C, o.C}, {"input", p.Input, o.Input}, {"aux", p.Aux, o.Aux}} {
		if len(v.x) != len(v.y) {
			return fmt.Errorf("%s: %d entries against %d", v.name, len(v.x), len(v.y))
		}
		for i := range v.x {
			if v.x[i] != v.y[i] {
				return fmt.Errorf("%s[%d] differs", v.name, i)
			}
		}
	}
	for _, d := range []struct {
		name string
		x, y *Density
	}{{"a aux", p.AAuxDensity, o.AAuxDensity}, {"b input", p.BInputDensity, o.BInputDensity}, {"b aux", p.BAuxDensity, o.BAuxDensity}} {
		if d.x.Len() != d.y.Len() || d.x.Count() != d.y.Count() {
			return fmt.Errorf("%s density: %d of %d bits set against %d of %d", d.name, d.x.Count(), d.x.Len(), d.y.Count(), d.y.Len())
		}
		for i, w := range d.x.Words() {
			if w != d.y.Words()[i] {
				return fmt.Errorf("%s density: word %d differs", d.name, i)
			}
		}
	}
	return nil
}
