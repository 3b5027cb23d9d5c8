package update

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

// errBlockShape reports a challenge block whose size differs from the blank circuit's.
var errBlockShape = errors.New("challenge block does not have the blank circuit's shape")

// blockShape is the size of the prefix and of one challenge block of a blank circuit.
type blockShape struct{ prefixRows, prefixAux, blockRows, blockAux int }

var blockShapes sync.Map // Params → blockShape

func blockShapeOf(p *Params) (blockShape, error) {
	if v, ok := blockShapes.Load(*p); ok {
		return v.(blockShape), nil
	}
	blank := Blank(p)
	sys := cs.NewShapeSystem()
	if _, err := sys.AllocInputValue("ONE", nil); err != nil {
		return blockShape{}, err
	}
	s, err := blank.prefix(sys)
	if err != nil {
		return blockShape{}, err
	}
	before := sys.Shape()
	if err := blank.block(sys, s, 0); err != nil {
		return blockShape{}, err
	}
	after := sys.Shape()
	if after.NumInputs != before.NumInputs {
		return blockShape{}, fmt.Errorf("%w: a block allocates inputs", errBlockShape)
	}
	bs := blockShape{prefixRows: before.NumConstraints, prefixAux: before.NumAux,
		blockRows: after.NumConstraints - before.NumConstraints, blockAux: after.NumAux - before.NumAux}
	blockShapes.Store(*p, bs)
	return bs, nil
}

// SynthesizeParallel is cs.SynthesizeProving for a witness circuit with its challenge blocks
// synthesized concurrently (at most workers at a time; ≤ 0 means GOMAXPROCS-bounded by the Go
// scheduler, one goroutine per block). Blocks only read the prefix's variables and have the
// blank block's shape, so each writes its rows and aux values at their final offsets: a, b, c,
// inputs, aux and densities are exactly those of sequential synthesis.
func SynthesizeParallel(ctx context.Context, c *Circuit, workers int) (*cs.ProvingAssignment, error) {
	if c.Witness == nil {
		return nil, fmt.Errorf("update circuit: parallel synthesis needs a witness: %w", cs.ErrAssignmentMissing)
	}
	bs, err := blockShapeOf(c.Params)
	if err != nil {
		return nil, fmt.Errorf("update circuit: blank block shape: %w", err)
	}
	n := c.Params.ChallengeCount
	rows, aux := bs.prefixRows+n*bs.blockRows, bs.prefixAux+n*bs.blockAux
	pa := cs.NewProvingAssignment(cs.Shape{NumInputs: 5, NumAux: aux, NumConstraints: rows + 5})
	one := fr.One()
	if _, err := pa.AllocInputValue("ONE", &one); err != nil {
		return nil, err
	}
	s, err := c.prefix(pa)
	if err != nil {
		return nil, fmt.Errorf("synthesizing update circuit: %w", err)
	}
	if len(pa.A) != bs.prefixRows || len(pa.Aux) != bs.prefixAux {
		return nil, fmt.Errorf("update circuit: %w: prefix of %d rows and %d aux, blank %d and %d", errBlockShape, len(pa.A), len(pa.Aux), bs.prefixRows, bs.prefixAux)
	}
	pa.A = append(pa.A, make([]fr.Element, n*bs.blockRows)...)
	pa.B = append(pa.B, make([]fr.Element, n*bs.blockRows)...)
	pa.C = append(pa.C, make([]fr.Element, n*bs.blockRows)...)
	pa.Aux = append(pa.Aux, make([]fr.Element, n*bs.blockAux)...)
	if workers <= 0 || workers > n {
		workers = n
	}
	blocks := make([]*block, n)
	errs := make([]error, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := range blocks {
		row, a := bs.prefixRows+i*bs.blockRows, bs.prefixAux+i*bs.blockAux
		blocks[i] = newBlock(ctx, pa, bs.prefixAux, len(pa.Input), row, a, bs.blockRows, bs.blockAux)
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			err := c.block(blocks[i], s, i)
			if err == nil {
				err = blocks[i].finish()
			}
			if err != nil {
				errs[i] = err
				cancel()
			}
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("synthesizing update circuit: challenge %d: %w", i, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("synthesis interrupted: %w", err)
	}
	for _, b := range blocks {
		b.merge(pa)
	}
	for i := range pa.Input {
		pa.Enforce("", cs.LCOf(cs.InputVariable(i)), nil, nil)
	}
	return pa, nil
}

// block is the constraint system one challenge block synthesizes into: it reads prefix
// variables, writes its own rows and aux values into its disjoint ranges of the shared
// assignment, and keeps its density bits (its own, and which prefix variables it touched) until
// merge, which runs in block order.
type block struct {
	ctx                 context.Context
	prefix              *cs.ProvingAssignment
	prefixAux, prefixIn int
	baseAux             int
	a, b, c, aux        []fr.Element
	rows, auxN          int
	aAux, bAux          *cs.Density
	usedA, usedB        []bool // prefix aux variables used in A / B
	usedIn              []bool // prefix inputs used in B
	allocs              int
}

func newBlock(ctx context.Context, pa *cs.ProvingAssignment, prefixAux, prefixIn, row, aux, rows, auxN int) *block {
	return &block{ctx: ctx, prefix: pa, prefixAux: prefixAux, prefixIn: prefixIn, baseAux: aux,
		a: pa.A[row : row+rows], b: pa.B[row : row+rows], c: pa.C[row : row+rows], aux: pa.Aux[aux : aux+auxN],
		aAux: cs.NewDensity(auxN), bAux: cs.NewDensity(auxN),
		usedA: make([]bool, prefixAux), usedB: make([]bool, prefixAux), usedIn: make([]bool, prefixIn)}
}

func (b *block) finish() error {
	if b.rows != len(b.a) || b.auxN != len(b.aux) {
		return fmt.Errorf("%w: %d rows and %d aux, expected %d and %d", errBlockShape, b.rows, b.auxN, len(b.a), len(b.aux))
	}
	return nil
}

// Alloc implements cs.ConstraintSystem.
func (b *block) Alloc(name string, value cs.ValueFunc) (cs.Variable, error) {
	v, err := value()
	if err != nil {
		return 0, err
	}
	return b.AllocValue(name, &v)
}

// AllocValue implements cs.ConstraintSystem.
func (b *block) AllocValue(_ string, value *fr.Element) (cs.Variable, error) {
	b.allocs++
	if b.allocs&(1<<14-1) == 0 {
		if err := b.ctx.Err(); err != nil {
			return 0, err
		}
	}
	if b.auxN == len(b.aux) {
		return 0, fmt.Errorf("%w: more than %d aux variables", errBlockShape, len(b.aux))
	}
	b.aux[b.auxN] = *value
	b.auxN++
	b.aAux.AddBit()
	b.bAux.AddBit()
	return cs.AuxVariable(b.baseAux + b.auxN - 1), nil
}

// AllocInput implements cs.ConstraintSystem; challenge blocks have no public inputs.
func (b *block) AllocInput(string, cs.ValueFunc) (cs.Variable, error) {
	return 0, fmt.Errorf("%w: a block allocates an input", errBlockShape)
}

// AllocInputValue implements cs.ConstraintSystem.
func (b *block) AllocInputValue(string, *fr.Element) (cs.Variable, error) {
	return 0, fmt.Errorf("%w: a block allocates an input", errBlockShape)
}

var minusOne = func() (e fr.Element) { e.SetOne(); e.Neg(&e); return }()

// eval evaluates lc as the proving assignment does (zero coefficients are skipped and set no
// density bit); with dens set it records which variables the row uses.
func (b *block) eval(lc cs.LinearCombination, dens *cs.Density, usedAux, usedIn []bool) fr.Element {
	var acc, t fr.Element
	for i := range lc {
		term := &lc[i]
		if term.Coeff.IsZero() {
			continue
		}
		idx := term.Var.Index()
		var val *fr.Element
		switch {
		case term.Var.IsInput():
			val = &b.prefix.Input[idx]
			if usedIn != nil {
				usedIn[idx] = true
			}
		case idx < b.prefixAux:
			val = &b.prefix.Aux[idx]
			if usedAux != nil {
				usedAux[idx] = true
			}
		default:
			val = &b.aux[idx-b.baseAux]
			if dens != nil {
				dens.Inc(idx - b.baseAux)
			}
		}
		switch {
		case term.Coeff.IsOne():
			acc.Add(&acc, val)
		case term.Coeff.Equal(&minusOne):
			acc.Sub(&acc, val)
		default:
			t.Mul(&term.Coeff, val)
			acc.Add(&acc, &t)
		}
	}
	return acc
}

// Enforce implements cs.ConstraintSystem.
func (b *block) Enforce(_ string, x, y, z cs.LinearCombination) {
	va := b.eval(x, b.aAux, b.usedA, nil)
	vb := b.eval(y, b.bAux, b.usedB, b.usedIn)
	vc := b.eval(z, nil, nil, nil)
	if b.rows < len(b.a) {
		b.a[b.rows], b.b[b.rows], b.c[b.rows] = va, vb, vc
	}
	b.rows++ // finish reports rows beyond the blank shape
}

// Push implements cs.ConstraintSystem (names are not kept).
func (b *block) Push(string) {}

// PushIndexed implements cs.ConstraintSystem.
func (b *block) PushIndexed(string, int) {}

// Pop implements cs.ConstraintSystem.
func (b *block) Pop() {}

// WitnessMode implements cs.ConstraintSystem.
func (b *block) WitnessMode() bool { return true }

// merge appends the block's density bits and ORs in the prefix variables it used.
func (b *block) merge(pa *cs.ProvingAssignment) {
	pa.AAuxDensity.Extend(b.aAux, false)
	pa.BAuxDensity.Extend(b.bAux, false)
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
