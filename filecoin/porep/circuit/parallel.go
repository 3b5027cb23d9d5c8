package circuit

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

// SynthesizeParallel is cs.SynthesizeProving for a witness circuit with its challenge blocks
// synthesized concurrently (at most workers at a time; 0 means one goroutine per block, which the
// Go scheduler spreads over GOMAXPROCS). The blocks only read the prefix's variables and all have
// the shape of one blank block (BlankShape), so each writes its rows and aux values in place at
// its final offsets: the result (a, b, c, inputs, aux, densities) is identical to sequential
// synthesis, with no copy.
func SynthesizeParallel(ctx context.Context, c *Circuit, workers int) (*cs.ProvingAssignment, error) {
	if c.Witness == nil {
		return nil, fmt.Errorf("circuit: parallel synthesis needs a witness: %w", cs.ErrAssignmentMissing)
	}
	n := c.Config.Challenges
	if workers <= 0 {
		workers = n
	}
	bs, err := blockShapeOf(ctx, c.Config)
	if err != nil {
		return nil, fmt.Errorf("circuit: blank block shape: %w", err)
	}
	total := bs.at(n)
	pa := cs.NewProvingAssignment(cs.Shape{NumInputs: total[0], NumAux: total[1], NumConstraints: total[2]})
	one := fr.One()
	if _, err := pa.AllocInputValue("ONE", &one); err != nil {
		return nil, err
	}
	s, err := c.prefix(pa)
	if err != nil {
		return nil, fmt.Errorf("synthesizing circuit: %w", err)
	}
	prefixRows, prefixAux := len(pa.A), len(pa.Aux)
	blockRows, blockAux := bs.block[2]-bs.block[0], bs.block[1] // rows less the block's input rows
	if prefixRows+n*blockRows+total[0] != total[2] || prefixAux+n*blockAux != total[1] {
		return nil, fmt.Errorf("circuit: %w: prefix of %d rows and %d aux does not fit the blank shape", errShape, prefixRows, prefixAux)
	}
	rows := prefixRows + n*blockRows
	pa.A, pa.B, pa.C = pa.A[:rows], pa.B[:rows], pa.C[:rows]
	pa.Aux = pa.Aux[:total[1]]
	segs := make([]*segment, n)
	errs := make([]error, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		seg := newSegment(ctx, pa, prefixAux, len(pa.Input))
		seg.place(pa, prefixRows+i*blockRows, prefixAux+i*blockAux, blockRows, blockAux)
		segs[i] = seg
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			err := c.block(s, seg, i)
			if err == nil {
				err = seg.finish()
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
// belong to the prefix (read-only). The block's aux variables carry their final indices and its
// rows and values go straight into the shared vectors (disjoint ranges, so blocks never race);
// its inputs and density bits are buffered and appended in block order.
type segment struct {
	ctx                    context.Context
	prefix                 *cs.ProvingAssignment
	baseAux, baseIn        int // first index of this block's aux and input variables
	prefixAux              int
	a, b, c                []fr.Element
	aux, input             []fr.Element
	nRows, nAux            int // rows and aux written (in place) so far
	maxRows, maxAux        int
	aAux, bAux, bIn        *cs.Density
	prefixAAux, prefixBAux []bool // prefix aux variables this block uses in A / B
	prefixBIn              []bool // prefix inputs this block uses in B
	allocs                 int
}

func newSegment(ctx context.Context, prefix *cs.ProvingAssignment, prefixAux, prefixIn int) *segment {
	return &segment{
		ctx: ctx, prefix: prefix, baseAux: prefixAux, prefixAux: prefixAux, baseIn: prefixIn,
		aAux: cs.NewDensity(0), bAux: cs.NewDensity(0), bIn: cs.NewDensity(0),
		prefixAAux: make([]bool, prefixAux), prefixBAux: make([]bool, prefixAux), prefixBIn: make([]bool, prefixIn),
	}
}

// place makes the segment write rows [row, row+rows) and aux [aux, aux+auxN) of pa directly.
func (g *segment) place(pa *cs.ProvingAssignment, row, aux, rows, auxN int) {
	g.a, g.b, g.c = pa.A[row:row+rows], pa.B[row:row+rows], pa.C[row:row+rows]
	g.aux = pa.Aux[aux : aux+auxN]
	g.baseAux = aux
	g.maxRows, g.maxAux = rows, auxN
	g.aAux, g.bAux = cs.NewDensity(auxN), cs.NewDensity(auxN)
}

// errShape reports a block that does not have the shape the blank synthesis implied.
var minusOne = func() fr.Element { var e fr.Element; e.SetOne(); e.Neg(&e); return e }()

var errShape = errors.New("challenge block does not have the blank circuit's shape")

func (g *segment) finish() error {
	if g.nRows != g.maxRows || g.nAux != g.maxAux {
		return fmt.Errorf("%w: %d rows and %d aux, expected %d and %d", errShape, g.nRows, g.nAux, g.maxRows, g.maxAux)
	}
	return nil
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
	if g.nAux == g.maxAux {
		return 0, fmt.Errorf("%w: more than %d aux variables", errShape, g.maxAux)
	}
	g.aux[g.nAux] = *value
	g.nAux++
	g.aAux.AddBit()
	g.bAux.AddBit()
	return cs.AuxVariable(g.baseAux + g.nAux - 1), nil
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
func (g *segment) eval(lc cs.LinearCombination, track bool, inDens, auxDens *cs.Density, inPrefix, auxPrefix []bool) fr.Element {
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
					inPrefix[idx] = true
				}
			} else {
				val = &g.input[idx-g.baseIn]
				if track && inDens != nil {
					inDens.Inc(idx - g.baseIn)
				}
			}
		} else {
			if idx < g.prefixAux {
				val = &g.prefix.Aux[idx]
				if track {
					auxPrefix[idx] = true
				}
			} else {
				val = &g.aux[idx-g.baseAux]
				if track {
					auxDens.Inc(idx - g.baseAux)
				}
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

func (g *segment) Enforce(_ string, a, b, c cs.LinearCombination) {
	va := g.eval(a, true, nil, g.aAux, nil, g.prefixAAux)
	vb := g.eval(b, true, g.bIn, g.bAux, g.prefixBIn, g.prefixBAux)
	vc := g.eval(c, false, nil, nil, nil, nil)
	if g.nRows < g.maxRows {
		g.a[g.nRows], g.b[g.nRows], g.c[g.nRows] = va, vb, vc
	}
	// Extra rows have nowhere to go; finish reports the count.
	g.nRows++
}

func (g *segment) Push(string)             {}
func (g *segment) PushIndexed(string, int) {}
func (g *segment) Pop()                    {}
func (g *segment) WitnessMode() bool       { return true }

// appendTo appends the segment's inputs and density bits to pa and ORs its prefix density bits in.
func (g *segment) appendTo(pa *cs.ProvingAssignment) {
	pa.Input = append(pa.Input, g.input...)
	pa.AAuxDensity.Extend(g.aAux, false)
	pa.BAuxDensity.Extend(g.bAux, false)
	pa.BInputDensity.Extend(g.bIn, false)
	for i, used := range g.prefixAAux {
		if used {
			pa.AAuxDensity.Inc(i)
		}
	}
	for i, used := range g.prefixBAux {
		if used {
			pa.BAuxDensity.Inc(i)
		}
	}
	for i, used := range g.prefixBIn {
		if used {
			pa.BInputDensity.Inc(i)
		}
	}
}
