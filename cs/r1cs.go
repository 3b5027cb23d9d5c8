package cs

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Matrix is one of A, B, C in compressed sparse rows: row k's terms are
// Terms[RowStart[k]:RowStart[k+1]], in the order the linear combination held them.
type Matrix struct {
	RowStart []int
	Terms    []Term
}

// Row returns the terms of row k.
func (m *Matrix) Row(k int) []Term { return m.Terms[m.RowStart[k]:m.RowStart[k+1]] }

func (m *Matrix) appendRow(lc LinearCombination) {
	if len(m.RowStart) == 0 {
		m.RowStart = append(m.RowStart, 0)
	}
	m.Terms = append(m.Terms, lc...)
	m.RowStart = append(m.RowStart, len(m.Terms))
}

// R1CS records the constraint matrices of a circuit (blank mode: no witness values). It is used
// for key generation and to hand the same constraints to other provers in tests and benchmarks.
type R1CS struct {
	NumInputs, NumAux int
	A, B, C           Matrix
	// InputNames and AuxNames are the full namespace paths, kept only when names are recorded.
	InputNames, AuxNames []string

	names  *nameStack
	ctx    context.Context
	allocs int
}

// NumConstraints returns the number of rows.
func (r *R1CS) NumConstraints() int {
	if len(r.A.RowStart) == 0 {
		return 0
	}
	return len(r.A.RowStart) - 1
}

// Shape returns the counts.
func (r *R1CS) Shape() Shape {
	return Shape{NumInputs: r.NumInputs, NumAux: r.NumAux, NumConstraints: r.NumConstraints()}
}

// Alloc implements ConstraintSystem; value is never called.
func (r *R1CS) Alloc(name string, _ ValueFunc) (Variable, error) { return r.AllocValue(name, nil) }

// AllocValue implements ConstraintSystem; value is ignored.
func (r *R1CS) AllocValue(name string, _ *fr.Element) (Variable, error) {
	r.allocs++
	if r.allocs&ctxCheckMask == 0 && r.ctx != nil {
		if err := r.ctx.Err(); err != nil {
			return 0, fmt.Errorf("synthesis interrupted: %w", err)
		}
	}
	if err := checkCount("aux", r.NumAux); err != nil {
		return 0, err
	}
	if r.names != nil {
		r.AuxNames = append(r.AuxNames, r.names.path(name))
	}
	r.NumAux++
	return AuxVariable(r.NumAux - 1), nil
}

// AllocInput implements ConstraintSystem; value is never called.
func (r *R1CS) AllocInput(name string, _ ValueFunc) (Variable, error) {
	return r.AllocInputValue(name, nil)
}

// AllocInputValue implements ConstraintSystem; value is ignored.
func (r *R1CS) AllocInputValue(name string, _ *fr.Element) (Variable, error) {
	if err := checkCount("input", r.NumInputs); err != nil {
		return 0, err
	}
	if r.names != nil {
		r.InputNames = append(r.InputNames, r.names.path(name))
	}
	r.NumInputs++
	return InputVariable(r.NumInputs - 1), nil
}

// Enforce implements ConstraintSystem.
func (r *R1CS) Enforce(_ string, a, b, c LinearCombination) {
	r.A.appendRow(a)
	r.B.appendRow(b)
	r.C.appendRow(c)
}

// Push implements ConstraintSystem.
func (r *R1CS) Push(name string) {
	if r.names != nil {
		r.names.push(name)
	}
}

// PushIndexed implements ConstraintSystem.
func (r *R1CS) PushIndexed(prefix string, i int) {
	if r.names != nil {
		r.names.pushIndexed(prefix, i)
	}
}

// Pop implements ConstraintSystem.
func (r *R1CS) Pop() {
	if r.names != nil {
		r.names.pop()
	}
}

// WitnessMode implements ConstraintSystem: false.
func (r *R1CS) WitnessMode() bool { return false }

// Densities computes the A-aux, B-input and B-aux densities of the recorded matrices with
// bellperson's rules (the same bits a ProvingAssignment or ShapeSystem of this circuit sets).
func (r *R1CS) Densities() (aAux, bInput, bAux *Density) {
	aAux, bInput, bAux = NewDensity(r.NumAux), NewDensity(r.NumInputs), NewDensity(r.NumAux)
	for i := 0; i < r.NumAux; i++ {
		aAux.AddBit()
		bAux.AddBit()
	}
	for i := 0; i < r.NumInputs; i++ {
		bInput.AddBit()
	}
	for _, t := range r.A.Terms {
		if !t.Coeff.IsZero() && !t.Var.IsInput() {
			aAux.Inc(t.Var.Index())
		}
	}
	for _, t := range r.B.Terms {
		if t.Coeff.IsZero() {
			continue
		}
		if t.Var.IsInput() {
			bInput.Inc(t.Var.Index())
		} else {
			bAux.Inc(t.Var.Index())
		}
	}
	return aAux, bInput, bAux
}

// CheckSatisfied evaluates every row on the assignment and returns an error naming the first
// row k with ⟨A_k,z⟩·⟨B_k,z⟩ ≠ ⟨C_k,z⟩.
func (r *R1CS) CheckSatisfied(inputs, aux []fr.Element) error {
	if len(inputs) != r.NumInputs || len(aux) != r.NumAux {
		return fmt.Errorf("assignment has %d inputs and %d aux, system has %d and %d",
			len(inputs), len(aux), r.NumInputs, r.NumAux)
	}
	for k := 0; k < r.NumConstraints(); k++ {
		a := LinearCombination(r.A.Row(k)).Eval(inputs, aux)
		b := LinearCombination(r.B.Row(k)).Eval(inputs, aux)
		c := LinearCombination(r.C.Row(k)).Eval(inputs, aux)
		a.Mul(&a, &b)
		if !a.Equal(&c) {
			return fmt.Errorf("constraint %d is not satisfied", k)
		}
	}
	return nil
}

// RecordOption configures RecordR1CS.
type RecordOption func(*R1CS)

// WithNames keeps the full namespace path of every variable (InputNames, AuxNames).
func WithNames() RecordOption { return func(r *R1CS) { r.names = &nameStack{} } }

// RecordR1CS runs circuit in blank mode and records its matrices, with the ONE input first and
// bellperson's input rows last (so the row count equals the prover's n).
func RecordR1CS(ctx context.Context, circuit Circuit, opts ...RecordOption) (*R1CS, error) {
	r := &R1CS{ctx: ctx}
	for _, o := range opts {
		o(r)
	}
	if _, err := r.AllocInputValue("ONE", nil); err != nil {
		return nil, err
	}
	if err := circuit.Synthesize(r); err != nil {
		return nil, fmt.Errorf("recording circuit: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("synthesis interrupted: %w", err)
	}
	enforceInputRows(r, r.NumInputs)
	r.ctx, r.names = nil, nil
	return r, nil
}
