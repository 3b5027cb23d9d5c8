package cs

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// toyBlocks is a circuit of a prefix (one input, three aux) and n blocks that each allocate two
// aux (and, with inputs, one input) and enforce three rows over their own and prefix variables.
type toyBlocks struct {
	n      int
	inputs bool
	extra  int // block that enforces one row too many (-1: none)
}

func (c toyBlocks) prefix(s ConstraintSystem) ([]Variable, error) {
	x, err := s.AllocInputValue("x", ptr(elem(7)))
	if err != nil {
		return nil, err
	}
	vars := []Variable{x}
	for k := int64(0); k < 3; k++ {
		v, err := s.AllocValue("p", ptr(elem(10+k)))
		if err != nil {
			return nil, err
		}
		vars = append(vars, v)
	}
	s.Enforce("p", LCOf(vars[1]), LCOf(x), NewLC(0).AddCoeff(70, One))
	return vars, nil
}

func (c toyBlocks) block(s ConstraintSystem, pre []Variable, i int) error {
	v := int64(i + 2)
	a, err := s.AllocValue("a", ptr(elem(v)))
	if err != nil {
		return err
	}
	b, err := s.Alloc("b", func() (fr.Element, error) { return elem(v * v), nil })
	if err != nil {
		return err
	}
	in := One
	if c.inputs {
		if in, err = s.AllocInput("in", func() (fr.Element, error) { return elem(3 * v), nil }); err != nil {
			return err
		}
	}
	s.Enforce("sq", LCOf(a), LCOf(a), LCOf(b))
	// A: prefix aux 1+i%3; B: prefix input x, a zero term on prefix aux 1+(i+1)%3, prefix aux 3
	// in odd blocks only (a zero term in even ones) and the block's own input.
	s.Enforce("mix", NewLC(0).Add(pre[1+i%3]).Sub(a), NewLC(0).Add(pre[0]).AddCoeff(0, pre[1+(i+1)%3]).AddCoeff(int64(i%2), pre[3]).Add(in), LCOf(b))
	s.Enforce("c only", nil, nil, NewLC(0).Add(pre[3]).AddCoeff(5, b))
	if i == c.extra {
		s.Enforce("extra", LCOf(One), LCOf(One), LCOf(One))
	}
	return nil
}

func (c toyBlocks) Synthesize(s ConstraintSystem) error {
	pre, err := c.prefix(s)
	if err != nil {
		return err
	}
	for i := 0; i < c.n; i++ {
		if err := c.block(s, pre, i); err != nil {
			return err
		}
	}
	return nil
}

func (c toyBlocks) parallel(ctx context.Context, workers int) (*ProvingAssignment, error) {
	pa := NewProvingAssignment(Shape{})
	if _, err := pa.AllocInputValue("ONE", &oneElement); err != nil {
		return nil, err
	}
	pre, err := c.prefix(pa)
	if err != nil {
		return nil, err
	}
	layout := BlockLayout{Rows: 3, Aux: 2, Inputs: c.inputs}
	if err := SynthesizeBlocks(ctx, pa, layout, c.n, workers, func(sys ConstraintSystem, i int) error {
		return c.block(sys, pre, i)
	}); err != nil {
		return nil, err
	}
	enforceInputRows(pa, len(pa.Input))
	return pa, nil
}

func TestSynthesizeBlocksEqualsSequential(t *testing.T) {
	ctx := context.Background()
	for _, inputs := range []bool{false, true} {
		for _, workers := range []int{0, 1, 3} {
			c := toyBlocks{n: 70, inputs: inputs, extra: -1} // 140 block aux: densities span words
			seq, err := SynthesizeProving(ctx, c, Shape{})
			if err != nil {
				t.Fatal(err)
			}
			par, err := c.parallel(ctx, workers)
			if err != nil {
				t.Fatalf("inputs %v, workers %d: %v", inputs, workers, err)
			}
			if seq.Shape() != par.Shape() {
				t.Fatalf("inputs %v, workers %d: shape %+v, sequential %+v", inputs, workers, par.Shape(), seq.Shape())
			}
			if !slices.Equal(seq.A, par.A) || !slices.Equal(seq.B, par.B) || !slices.Equal(seq.C, par.C) ||
				!slices.Equal(seq.Input, par.Input) || !slices.Equal(seq.Aux, par.Aux) {
				t.Fatalf("inputs %v, workers %d: vectors differ", inputs, workers)
			}
			for k, d := range [][2]*Density{{seq.AAuxDensity, par.AAuxDensity}, {seq.BInputDensity, par.BInputDensity}, {seq.BAuxDensity, par.BAuxDensity}} {
				if d[0].Len() != d[1].Len() || d[0].Count() != d[1].Count() || !slices.Equal(d[0].Words(), d[1].Words()) {
					t.Fatalf("inputs %v, workers %d: density %d differs", inputs, workers, k)
				}
			}
		}
	}
}

func TestSynthesizeBlocksShapeErrors(t *testing.T) {
	ctx := context.Background()
	var be *BlockError
	_, err := toyBlocks{n: 8, extra: 5}.parallel(ctx, 2)
	if !errors.As(err, &be) || be.Index != 5 || !errors.Is(err, ErrBlockShape) {
		t.Errorf("extra row: %v", err)
	}
	// A layout without inputs rejects a block's input.
	pa := NewProvingAssignment(Shape{})
	pa.AllocInputValue("ONE", &oneElement)
	c := toyBlocks{n: 4, inputs: true, extra: -1}
	pre, _ := c.prefix(pa)
	err = SynthesizeBlocks(ctx, pa, BlockLayout{Rows: 3, Aux: 2}, c.n, 0, func(sys ConstraintSystem, i int) error { return c.block(sys, pre, i) })
	if !errors.As(err, &be) || !errors.Is(err, ErrBlockShape) {
		t.Errorf("input in a block: %v", err)
	}
	// Too few aux in the layout: the third allocation fails.
	err = SynthesizeBlocks(ctx, pa, BlockLayout{Rows: 3, Aux: 1}, 2, 0, func(sys ConstraintSystem, i int) error {
		for k := 0; k < 2; k++ {
			if _, err := sys.AllocValue("", ptr(elem(1))); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.As(err, &be) || !errors.Is(err, ErrBlockShape) {
		t.Errorf("aux beyond the layout: %v", err)
	}
}

func TestSynthesizeBlocksCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	const aux = 1 << 15
	pa := NewProvingAssignment(Shape{})
	pa.AllocInputValue("ONE", &oneElement)
	err := SynthesizeBlocks(ctx, pa, BlockLayout{Aux: aux}, 3, 0, func(sys ConstraintSystem, i int) error {
		for k := 0; k < aux; k++ {
			if _, err := sys.AllocValue("", ptr(elem(1))); err != nil {
				return err
			}
		}
		return nil
	})
	var be *BlockError
	if !errors.Is(err, context.Canceled) || errors.As(err, &be) {
		t.Errorf("cancelled: %v", err)
	}
}
