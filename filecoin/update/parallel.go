package update

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

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
		return blockShape{}, fmt.Errorf("%w: a block allocates inputs", cs.ErrBlockShape)
	}
	bs := blockShape{prefixRows: before.NumConstraints, prefixAux: before.NumAux,
		blockRows: after.NumConstraints - before.NumConstraints, blockAux: after.NumAux - before.NumAux}
	blockShapes.Store(*p, bs)
	return bs, nil
}

// SynthesizeParallel is cs.SynthesizeProving for a witness circuit with its challenge blocks
// synthesized concurrently (at most workers at a time; ≤ 0 means twice the cores,
// cs.SynthesizeBlocks). Blocks only read the prefix's variables and have the
// blank block's shape, so each writes its rows and aux values at their final offsets
// (cs.SynthesizeBlocks): a, b, c, inputs, aux and densities are exactly those of sequential
// synthesis.
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
		return nil, fmt.Errorf("update circuit: %w: prefix of %d rows and %d aux, blank %d and %d", cs.ErrBlockShape, len(pa.A), len(pa.Aux), bs.prefixRows, bs.prefixAux)
	}
	var be *cs.BlockError
	err = cs.SynthesizeBlocks(ctx, pa, cs.BlockLayout{Rows: bs.blockRows, Aux: bs.blockAux}, n, workers, func(sys cs.ConstraintSystem, i int) error { return c.block(sys, s, i) })
	if errors.As(err, &be) {
		return nil, fmt.Errorf("synthesizing update circuit: challenge %d: %w", be.Index, be.Err)
	} else if err != nil {
		return nil, err
	}
	for i := range pa.Input {
		pa.Enforce("", cs.LCOf(cs.InputVariable(i)), nil, nil)
	}
	return pa, nil
}
