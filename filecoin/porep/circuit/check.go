package circuit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

// ErrUnsatisfied marks a witness that does not satisfy the circuit.
var ErrUnsatisfied = errors.New("circuit not satisfied")

// UnsatisfiedError names the first failing constraint (its namespace path) and its row.
type UnsatisfiedError struct {
	Row        int
	Constraint string
}

func (e *UnsatisfiedError) Error() string {
	return fmt.Sprintf("circuit not satisfied: constraint %d %q", e.Row, e.Constraint)
}

// Unwrap makes errors.Is(err, ErrUnsatisfied) hold.
func (e *UnsatisfiedError) Unwrap() error { return ErrUnsatisfied }

// FirstUnsatisfied returns the index of the first row with a·b ≠ c, or -1 (cs.FirstUnsatisfied).
func FirstUnsatisfied(pa *cs.ProvingAssignment) int { return cs.FirstUnsatisfied(pa) }

// Prove synthesizes the witness circuit into a ProvingAssignment (what the Groth16 prover
// consumes) and checks every row; an unsatisfied row is reported with its constraint name,
// found by synthesizing once more with name recording (only on failure).
func Prove(ctx context.Context, c *Circuit, capacity cs.Shape) (*cs.ProvingAssignment, error) {
	pa, err := cs.SynthesizeProving(ctx, c, capacity)
	if err != nil {
		return nil, err
	}
	if row := FirstUnsatisfied(pa); row >= 0 {
		return nil, &UnsatisfiedError{Row: row, Constraint: constraintName(c, row)}
	}
	return pa, nil
}

// constraintName re-synthesizes c in blank mode (rows are numbered the same in both modes)
// tracking only namespaces, and returns the path of the constraint at row.
func constraintName(c *Circuit, row int) string {
	n := &rowNamer{target: row, inputs: 1}
	if err := c.Synthesize(n); err != nil {
		return fmt.Sprintf("row %d", row)
	}
	if n.name == "" {
		if k := row - n.rows; k >= 0 && k < n.inputs {
			return fmt.Sprintf("input constraint %d", k)
		}
		return fmt.Sprintf("row %d", row)
	}
	return n.name
}

// rowNamer is a blank constraint system that keeps the namespace stack and records the full
// name of one constraint.
type rowNamer struct {
	parts        []string
	target, rows int
	inputs, aux  int
	name         string
}

func (r *rowNamer) Alloc(string, cs.ValueFunc) (cs.Variable, error) { return r.AllocValue("", nil) }

func (r *rowNamer) AllocValue(string, *fr.Element) (cs.Variable, error) {
	r.aux++
	return cs.AuxVariable(r.aux - 1), nil
}

func (r *rowNamer) AllocInput(string, cs.ValueFunc) (cs.Variable, error) {
	return r.AllocInputValue("", nil)
}

func (r *rowNamer) AllocInputValue(string, *fr.Element) (cs.Variable, error) {
	r.inputs++
	return cs.InputVariable(r.inputs - 1), nil
}

func (r *rowNamer) Enforce(name string, _, _, _ cs.LinearCombination) {
	if r.rows == r.target {
		r.name = strings.Join(append(append([]string(nil), r.parts...), name), "/")
	}
	r.rows++
}

func (r *rowNamer) Push(name string) { r.parts = append(r.parts, name) }

func (r *rowNamer) PushIndexed(prefix string, i int) {
	r.parts = append(r.parts, prefix+strconv.Itoa(i))
}

func (r *rowNamer) Pop() { r.parts = r.parts[:len(r.parts)-1] }

func (r *rowNamer) WitnessMode() bool { return false }

// Unsatisfied returns the UnsatisfiedError of row, naming its constraint.
func Unsatisfied(c *Circuit, row int) error {
	return &UnsatisfiedError{Row: row, Constraint: constraintName(c, row)}
}
