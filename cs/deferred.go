package cs

import (
	"context"
	"errors"
	"fmt"
)

// ErrUnsatisfied is wrapped by UnsatisfiedRowError.
var ErrUnsatisfied = errors.New("cs: assignment does not satisfy the constraints")

// UnsatisfiedRowError reports the first row of an assignment with a·b ≠ c, found while its
// products were computed (on the host or on a device).
type UnsatisfiedRowError struct{ Row int }

func (e *UnsatisfiedRowError) Error() string {
	return fmt.Sprintf("partition not satisfied: row %d", e.Row)
}

// Unwrap makes errors.Is(err, ErrUnsatisfied) hold.
func (e *UnsatisfiedRowError) Unwrap() error { return ErrUnsatisfied }

// Defer completes a witness-only assignment of this circuit except for a, b and c: the
// densities are set and the products are left to whoever proves it (a device that computes
// them from the witness, Deferred), or to FinishDeferred. Rows() reports the circuit's rows.
func (c *Compiled) Defer(pa *ProvingAssignment) error {
	if !pa.witnessOnly {
		return errors.New("cs: Defer needs a witness-only assignment")
	}
	if got, want := pa.Shape(), c.Shape(); got != want {
		return fmt.Errorf("cs: witness has shape %+v, the compiled circuit %+v", got, want)
	}
	aAux, bIn, bAux := c.Densities()
	pa.AAuxDensity, pa.BInputDensity, pa.BAuxDensity = aAux.clone(), bIn.clone(), bAux.clone()
	pa.deferred = c
	return nil
}

// Deferred is the compiled circuit whose products pa still lacks (Defer), or nil.
func (p *ProvingAssignment) Deferred() *Compiled { return p.deferred }

// Rows is the assignment's number of rows: len(A), or the rows counted while a and b and c are
// not computed yet (a witness-only or deferred assignment).
func (p *ProvingAssignment) Rows() int { return p.Shape().NumConstraints }

// FinishDeferred computes a, b and c of a deferred assignment on the host (Compiled's
// products, every row checked): the fallback when no device computes them. A row with
// a·b ≠ c is an *UnsatisfiedRowError (pa then holds the products all the same).
func (p *ProvingAssignment) FinishDeferred(ctx context.Context, workers int) error {
	c := p.deferred
	if c == nil {
		return nil
	}
	dens := [3]*Density{p.AAuxDensity, p.BInputDensity, p.BAuxDensity}
	row, err := c.complete(ctx, p, workers, true)
	if err != nil {
		return err
	}
	p.deferred = nil
	// complete set the same densities again; the clones made by Defer may be referenced.
	p.AAuxDensity, p.BInputDensity, p.BAuxDensity = dens[0], dens[1], dens[2]
	if row >= 0 {
		return &UnsatisfiedRowError{Row: row}
	}
	return nil
}
