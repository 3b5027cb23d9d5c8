package cs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/internal/cores"
)

// ErrBlockShape reports a block that does not have the size its BlockLayout gives (or, in
// callers, a prefix that does not have the size of the blank circuit's).
var ErrBlockShape = errors.New("challenge block does not have the blank circuit's shape")

// BlockLayout is the size of every block of a SynthesizeBlocks call: each enforces exactly Rows
// constraints and allocates exactly Aux variables.
type BlockLayout struct {
	Rows, Aux int
	// Inputs lets blocks allocate public inputs, appended after the prefix's in block order;
	// without it an input allocation fails with ErrBlockShape.
	Inputs bool
}

// BlockError is the failure of one block in SynthesizeBlocks: its synthesis error or its
// ErrBlockShape mismatch.
type BlockError struct {
	Index int // the block, 0-based
	Err   error
}

// Error implements error.
func (e *BlockError) Error() string { return fmt.Sprintf("block %d: %v", e.Index, e.Err) }

// Unwrap returns e.Err.
func (e *BlockError) Unwrap() error { return e.Err }

// blockCtxMask sets how often a block polls its context (every 2^14 allocations).
const blockCtxMask = 1<<14 - 1

// SynthesizeBlocks runs synth(sys, i) for the n blocks i that follow the prefix already in pa,
// at most workers at a time (≤ 0: twice the cores, so that every core stays busy while the last
// blocks finish, and a WindowPoSt partition's 2,349 blocks do not all run at once). Blocks read only prefix variables and
// have layout's size, so each writes its rows and aux values at their final offsets in pa; the
// result is that of synthesizing the blocks in order into pa (the input_i·0=0 rows are the
// caller's to add). The first block to fail cancels the others; the lowest-indexed failure other
// than context.Canceled is returned as a *BlockError, else a done ctx as an error wrapping its Err.
func SynthesizeBlocks(ctx context.Context, pa *ProvingAssignment, layout BlockLayout, n, workers int, synth func(sys ConstraintSystem, i int) error) error {
	prefix := pa.Shape()
	rows, aux := prefix.NumConstraints+n*layout.Rows, prefix.NumAux+n*layout.Aux
	if !pa.witnessOnly {
		pa.A, pa.B, pa.C = growTo(pa.A, rows), growTo(pa.B, rows), growTo(pa.C, rows)
	}
	pa.Aux = growTo(pa.Aux, aux)
	if workers <= 0 {
		workers = 2 * cores.N()
	}
	workers = min(workers, n)
	blocks := make([]*BlockSystem, n)
	errs := make([]error, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := range blocks {
		b := newBlockSystem(ctx, pa, prefix, layout, i)
		blocks[i] = b
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := synth(b, i)
			if err == nil {
				err = b.finish()
			}
			if err != nil {
				errs[i] = err
				cancel()
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return &BlockError{Index: i, Err: err}
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("synthesis interrupted: %w", err)
	}
	for i, b := range blocks {
		b.merge(pa)
		blocks[i] = nil
	}
	if pa.witnessOnly {
		pa.rows = rows
	}
	return nil
}

// growTo returns s with length n, reusing its capacity when it suffices.
func growTo(s []fr.Element, n int) []fr.Element {
	if n <= len(s) {
		return s[:n]
	}
	return slices.Grow(s, n-len(s))[:n]
}

// BlockSystem is the witness-mode ConstraintSystem one block of SynthesizeBlocks synthesizes
// into: it reads the prefix's variables, writes its rows and aux values in place into its own
// ranges of the shared assignment, and keeps its inputs and density bits until merge.
//
// Its aux variables carry their final indices. Over a witness-only assignment it is witness-only
// too: rows are counted, not evaluated, and no density is tracked. Its inputs are numbered from the prefix's input
// count in every block (only the block itself refers to them) and get their final places at merge.
type BlockSystem struct {
	ctx                 context.Context
	prefix              *ProvingAssignment
	prefixIn, prefixAux int // the prefix's input and aux counts
	baseAux             int // index of the block's first aux variable
	a, b, c, aux        []fr.Element
	input               []fr.Element
	rows, auxN          int // rows and aux written so far
	wantRows            int // the layout's rows
	inputs, witnessOnly bool
	aAux, bAux, bIn     *Density
	usedA, usedB        []bool // prefix aux variables used in A / B
	usedIn              []bool // prefix inputs used in B
	allocs              int
}

// newBlockSystem returns block i's system; pa's A, B, C and Aux must already reach past the
// block's ranges, which start after the prefix (of shape prefix) and i blocks of layout's size.
func newBlockSystem(ctx context.Context, pa *ProvingAssignment, prefix Shape, layout BlockLayout, i int) *BlockSystem {
	row, aux := prefix.NumConstraints+i*layout.Rows, prefix.NumAux+i*layout.Aux
	b := &BlockSystem{
		ctx: ctx, prefix: pa, prefixIn: prefix.NumInputs, prefixAux: prefix.NumAux, baseAux: aux,
		aux: pa.Aux[aux : aux+layout.Aux], inputs: layout.Inputs, wantRows: layout.Rows, witnessOnly: pa.witnessOnly,
	}
	if b.witnessOnly {
		return b
	}
	b.a, b.b, b.c = pa.A[row:row+layout.Rows], pa.B[row:row+layout.Rows], pa.C[row:row+layout.Rows]
	b.aAux, b.bAux, b.bIn = NewDensity(layout.Aux), NewDensity(layout.Aux), NewDensity(0)
	b.usedA, b.usedB, b.usedIn = make([]bool, prefix.NumAux), make([]bool, prefix.NumAux), make([]bool, prefix.NumInputs)
	return b
}

// WitnessOnly reports whether b drops its constraints (it synthesizes into a witness-only
// assignment).
func (b *BlockSystem) WitnessOnly() bool { return b.witnessOnly }

// finish checks that the block filled exactly its ranges.
func (b *BlockSystem) finish() error {
	if b.rows != b.wantRows || b.auxN != len(b.aux) {
		return fmt.Errorf("%w: %d rows and %d aux, expected %d and %d", ErrBlockShape, b.rows, b.auxN, b.wantRows, len(b.aux))
	}
	return nil
}

// Alloc implements ConstraintSystem.
func (b *BlockSystem) Alloc(name string, value ValueFunc) (Variable, error) {
	v, err := value()
	if err != nil {
		return 0, err
	}
	return b.AllocValue(name, &v)
}

// AllocValue implements ConstraintSystem; it fails once the block has all its aux variables.
func (b *BlockSystem) AllocValue(_ string, value *fr.Element) (Variable, error) {
	b.allocs++
	if b.allocs&blockCtxMask == 0 {
		if err := b.ctx.Err(); err != nil {
			return 0, err
		}
	}
	if b.auxN == len(b.aux) {
		return 0, fmt.Errorf("%w: more than %d aux variables", ErrBlockShape, len(b.aux))
	}
	b.aux[b.auxN] = *value
	b.auxN++
	if b.witnessOnly {
		return AuxVariable(b.baseAux + b.auxN - 1), nil
	}
	b.aAux.AddBit()
	b.bAux.AddBit()
	return AuxVariable(b.baseAux + b.auxN - 1), nil
}

// AllocInput implements ConstraintSystem.
func (b *BlockSystem) AllocInput(name string, value ValueFunc) (Variable, error) {
	if !b.inputs {
		return 0, errBlockInput
	}
	v, err := value()
	if err != nil {
		return 0, err
	}
	return b.AllocInputValue(name, &v)
}

// AllocInputValue implements ConstraintSystem; it fails unless the layout allows inputs.
func (b *BlockSystem) AllocInputValue(_ string, value *fr.Element) (Variable, error) {
	if !b.inputs {
		return 0, errBlockInput
	}
	b.input = append(b.input, *value)
	if !b.witnessOnly {
		b.bIn.AddBit()
	}
	return InputVariable(b.prefixIn + len(b.input) - 1), nil
}

var errBlockInput = fmt.Errorf("%w: a block allocates an input", ErrBlockShape)

// eval is evalTracked over prefix and block variables: zero coefficients are skipped and set no
// density; nil trackers track nothing. Block variables set bits in inDens / auxDens, prefix
// variables in usedIn / usedAux.
func (b *BlockSystem) eval(lc LinearCombination, inDens, auxDens *Density, usedIn, usedAux []bool) fr.Element {
	var acc, t fr.Element
	for i := range lc {
		term := &lc[i]
		if term.Coeff.IsZero() {
			continue
		}
		idx := term.Var.Index()
		var val *fr.Element
		switch {
		case term.Var.IsInput() && idx < b.prefixIn:
			val = &b.prefix.Input[idx]
			if usedIn != nil {
				usedIn[idx] = true
			}
		case term.Var.IsInput():
			val = &b.input[idx-b.prefixIn]
			if inDens != nil {
				inDens.Inc(idx - b.prefixIn)
			}
		case idx < b.prefixAux:
			val = &b.prefix.Aux[idx]
			if usedAux != nil {
				usedAux[idx] = true
			}
		default:
			val = &b.aux[idx-b.baseAux]
			if auxDens != nil {
				auxDens.Inc(idx - b.baseAux)
			}
		}
		switch {
		case term.Coeff.IsOne():
			acc.Add(&acc, val)
		case term.Coeff == minusOneElement:
			acc.Sub(&acc, val)
		default:
			t.Mul(&term.Coeff, val)
			acc.Add(&acc, &t)
		}
	}
	return acc
}

// Enforce implements ConstraintSystem. Rows beyond the block's range are counted, not kept;
// SynthesizeBlocks then reports ErrBlockShape.
func (b *BlockSystem) Enforce(_ string, x, y, z LinearCombination) {
	if b.witnessOnly {
		b.rows++
		return
	}
	va := b.eval(x, nil, b.aAux, nil, b.usedA)
	vb := b.eval(y, b.bIn, b.bAux, b.usedIn, b.usedB)
	vc := b.eval(z, nil, nil, nil, nil)
	if b.rows < len(b.a) {
		b.a[b.rows], b.b[b.rows], b.c[b.rows] = va, vb, vc
	}
	b.rows++
}

// Push implements ConstraintSystem (names are not kept).
func (b *BlockSystem) Push(string) {}

// PushIndexed implements ConstraintSystem (names are not kept).
func (b *BlockSystem) PushIndexed(string, int) {}

// Pop implements ConstraintSystem.
func (b *BlockSystem) Pop() {}

// WitnessMode implements ConstraintSystem: true.
func (b *BlockSystem) WitnessMode() bool { return true }

// merge appends the block's inputs and density bits to pa and sets the bits of the prefix
// variables it used; blocks merge in order.
func (b *BlockSystem) merge(pa *ProvingAssignment) {
	pa.Input = append(pa.Input, b.input...)
	if b.witnessOnly {
		return
	}
	pa.AAuxDensity.Extend(b.aAux, false)
	pa.BAuxDensity.Extend(b.bAux, false)
	pa.BInputDensity.Extend(b.bIn, false)
	for i := range b.usedA {
		if b.usedA[i] {
			pa.AAuxDensity.Inc(i)
		}
		if b.usedB[i] {
			pa.BAuxDensity.Inc(i)
		}
	}
	for i, used := range b.usedIn {
		if used {
			pa.BInputDensity.Inc(i)
		}
	}
}
