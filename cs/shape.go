package cs

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// ShapeSystem is the blank (shape-only) system: it counts inputs, aux and constraints and tracks
// the three densities with bellperson's rules, but never computes a witness value. Memory is
// three bitsets, about 2 bits per variable, so circuits of 10^8 constraints count in a few
// tens of MiB.
type ShapeSystem struct {
	numInputs, numAux, numConstraints int

	AAuxDensity   *Density
	BInputDensity *Density
	BAuxDensity   *Density

	ctx    context.Context
	allocs int
}

// NewShapeSystem returns an empty blank system.
func NewShapeSystem() *ShapeSystem {
	return &ShapeSystem{
		AAuxDensity:   NewDensity(0),
		BInputDensity: NewDensity(0),
		BAuxDensity:   NewDensity(0),
		ctx:           context.Background(),
	}
}

// Shape returns the counts so far.
func (s *ShapeSystem) Shape() Shape {
	return Shape{NumInputs: s.numInputs, NumAux: s.numAux, NumConstraints: s.numConstraints}
}

// Alloc implements ConstraintSystem; value is never called.
func (s *ShapeSystem) Alloc(name string, _ ValueFunc) (Variable, error) {
	return s.AllocValue(name, nil)
}

// AllocValue implements ConstraintSystem; value is ignored.
func (s *ShapeSystem) AllocValue(string, *fr.Element) (Variable, error) {
	s.allocs++
	if s.allocs&ctxCheckMask == 0 && s.ctx != nil {
		if err := s.ctx.Err(); err != nil {
			return 0, fmt.Errorf("synthesis interrupted: %w", err)
		}
	}
	if err := checkCount("aux", s.numAux); err != nil {
		return 0, err
	}
	s.numAux++
	s.AAuxDensity.AddBit()
	s.BAuxDensity.AddBit()
	return AuxVariable(s.numAux - 1), nil
}

// AllocInput implements ConstraintSystem; value is never called.
func (s *ShapeSystem) AllocInput(name string, _ ValueFunc) (Variable, error) {
	return s.AllocInputValue(name, nil)
}

// AllocInputValue implements ConstraintSystem; value is ignored.
func (s *ShapeSystem) AllocInputValue(string, *fr.Element) (Variable, error) {
	if err := checkCount("input", s.numInputs); err != nil {
		return 0, err
	}
	s.numInputs++
	s.BInputDensity.AddBit()
	return InputVariable(s.numInputs - 1), nil
}

// Enforce implements ConstraintSystem.
func (s *ShapeSystem) Enforce(_ string, a, b, _ LinearCombination) {
	s.numConstraints++
	for i := range a {
		if !a[i].Var.IsInput() && !a[i].Coeff.IsZero() {
			s.AAuxDensity.Inc(a[i].Var.Index())
		}
	}
	for i := range b {
		if b[i].Coeff.IsZero() {
			continue
		}
		if b[i].Var.IsInput() {
			s.BInputDensity.Inc(b[i].Var.Index())
		} else {
			s.BAuxDensity.Inc(b[i].Var.Index())
		}
	}
}

// Push implements ConstraintSystem.
func (s *ShapeSystem) Push(string) {}

// PushIndexed implements ConstraintSystem.
func (s *ShapeSystem) PushIndexed(string, int) {}

// Pop implements ConstraintSystem.
func (s *ShapeSystem) Pop() {}

// WitnessMode implements ConstraintSystem: false.
func (s *ShapeSystem) WitnessMode() bool { return false }

// SynthesizeShape runs circuit in blank mode with the ONE input and the input rows, returning
// the system with its final counts and densities.
func SynthesizeShape(ctx context.Context, circuit Circuit) (*ShapeSystem, error) {
	s := NewShapeSystem()
	s.ctx = ctx
	if _, err := s.AllocInputValue("ONE", nil); err != nil {
		return nil, err
	}
	if err := circuit.Synthesize(s); err != nil {
		return nil, fmt.Errorf("synthesizing circuit shape: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("synthesis interrupted: %w", err)
	}
	enforceInputRows(s, s.numInputs)
	s.ctx = nil
	return s, nil
}
