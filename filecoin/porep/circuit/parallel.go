package circuit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

// SynthesizeParallel is cs.SynthesizeProving for a witness circuit with its challenge blocks
// synthesized concurrently (at most workers at a time; 0 means GOMAXPROCS). The blocks only read
// the prefix's variables, so each is synthesized into its own segment and the segments are
// appended in challenge order: the result (a, b, c, inputs, aux, densities) is identical to
// sequential synthesis.
func SynthesizeParallel(ctx context.Context, c *Circuit, capacity cs.Shape, workers int) (*cs.ProvingAssignment, error) {
	if c.Witness == nil {
		return nil, fmt.Errorf("circuit: parallel synthesis needs a witness: %w", cs.ErrAssignmentMissing)
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	pa := cs.NewProvingAssignment(capacity)
	one := fr.One()
	if _, err := pa.AllocInputValue("ONE", &one); err != nil {
		return nil, err
	}
	s, err := c.prefix(pa)
	if err != nil {
		return nil, fmt.Errorf("synthesizing circuit: %w", err)
	}
	n := c.Config.Challenges
	segs := make([]*segment, n)
	errs := make([]error, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		seg := newSegment(ctx, pa)
		segs[i] = seg
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := c.block(s, seg, i); err != nil {
				errs[i] = err
				cancel()
			}
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("synthesizing circuit: challenge block %d: %w", i, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("synthesis interrupted: %w", err)
	}
	for i, seg := range segs {
		seg.appendTo(pa)
		segs[i] = nil
	}
	// bellperson's input rows x_i · 0 = 0, after the circuit.
	for i := range pa.Input {
		pa.Enforce("", cs.LCOf(cs.InputVariable(i)), nil, nil)
	}
	return pa, nil
}

// segment is a constraint system for one challenge block. Variables below the prefix counts
// belong to the prefix (read-only); the block's own variables are numbered after them as if they
// came first, which is consistent within the block and renumbered by position when appended.
type segment struct {
	ctx                    context.Context
	prefix                 *cs.ProvingAssignment
	baseAux, baseIn        int
	a, b, c                []fr.Element
	aux, input             []fr.Element
	aAux, bAux, bIn        *cs.Density
	prefixAAux, prefixBAux map[int]struct{}
	prefixBIn              map[int]struct{}
	allocs                 int
}

func newSegment(ctx context.Context, prefix *cs.ProvingAssignment) *segment {
	return &segment{
		ctx: ctx, prefix: prefix, baseAux: len(prefix.Aux), baseIn: len(prefix.Input),
		aAux: cs.NewDensity(0), bAux: cs.NewDensity(0), bIn: cs.NewDensity(0),
		prefixAAux: map[int]struct{}{}, prefixBAux: map[int]struct{}{}, prefixBIn: map[int]struct{}{},
	}
}

func (g *segment) Alloc(name string, value cs.ValueFunc) (cs.Variable, error) {
	v, err := value()
	if err != nil {
		return 0, err
	}
	return g.AllocValue(name, &v)
}

func (g *segment) AllocValue(_ string, value *fr.Element) (cs.Variable, error) {
	g.allocs++
	if g.allocs&(1<<14-1) == 0 {
		if err := g.ctx.Err(); err != nil {
			return 0, err
		}
	}
	g.aux = append(g.aux, *value)
	g.aAux.AddBit()
	g.bAux.AddBit()
	return cs.AuxVariable(g.baseAux + len(g.aux) - 1), nil
}

func (g *segment) AllocInput(name string, value cs.ValueFunc) (cs.Variable, error) {
	v, err := value()
	if err != nil {
		return 0, err
	}
	return g.AllocInputValue(name, &v)
}

func (g *segment) AllocInputValue(_ string, value *fr.Element) (cs.Variable, error) {
	g.input = append(g.input, *value)
	g.bIn.AddBit()
	return cs.InputVariable(g.baseIn + len(g.input) - 1), nil
}

// eval is bellperson's eval_with_trackers over prefix and segment variables: zero coefficients
// are skipped and set no density.
func (g *segment) eval(lc cs.LinearCombination, track bool, inDens, auxDens *cs.Density, inPrefix, auxPrefix map[int]struct{}) fr.Element {
	var acc, t fr.Element
	for i := range lc {
		term := &lc[i]
		if term.Coeff.IsZero() {
			continue
		}
		idx := term.Var.Index()
		var val *fr.Element
		if term.Var.IsInput() {
			if idx < g.baseIn {
				val = &g.prefix.Input[idx]
				if track && inPrefix != nil {
					inPrefix[idx] = struct{}{}
				}
			} else {
				val = &g.input[idx-g.baseIn]
				if track && inDens != nil {
					inDens.Inc(idx - g.baseIn)
				}
			}
		} else {
			if idx < g.baseAux {
				val = &g.prefix.Aux[idx]
				if track {
					auxPrefix[idx] = struct{}{}
				}
			} else {
				val = &g.aux[idx-g.baseAux]
				if track {
					auxDens.Inc(idx - g.baseAux)
				}
			}
		}
		if term.Coeff.IsOne() {
			acc.Add(&acc, val)
		} else {
			t.Mul(&term.Coeff, val)
			acc.Add(&acc, &t)
		}
	}
	return acc
}

func (g *segment) Enforce(_ string, a, b, c cs.LinearCombination) {
	g.a = append(g.a, g.eval(a, true, nil, g.aAux, nil, g.prefixAAux))
	g.b = append(g.b, g.eval(b, true, g.bIn, g.bAux, g.prefixBIn, g.prefixBAux))
	g.c = append(g.c, g.eval(c, false, nil, nil, nil, nil))
}

func (g *segment) Push(string)             {}
func (g *segment) PushIndexed(string, int) {}
func (g *segment) Pop()                    {}
func (g *segment) WitnessMode() bool       { return true }

// appendTo concatenates the segment onto pa and ORs its prefix density bits in.
func (g *segment) appendTo(pa *cs.ProvingAssignment) {
	pa.A = append(pa.A, g.a...)
	pa.B = append(pa.B, g.b...)
	pa.C = append(pa.C, g.c...)
	pa.Aux = append(pa.Aux, g.aux...)
	pa.Input = append(pa.Input, g.input...)
	pa.AAuxDensity.Extend(g.aAux, false)
	pa.BAuxDensity.Extend(g.bAux, false)
	pa.BInputDensity.Extend(g.bIn, false)
	for i := range g.prefixAAux {
		pa.AAuxDensity.Inc(i)
	}
	for i := range g.prefixBAux {
		pa.BAuxDensity.Inc(i)
	}
	for i := range g.prefixBIn {
		pa.BInputDensity.Inc(i)
	}
}
