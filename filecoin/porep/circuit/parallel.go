package circuit

import (
	"context"
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

// SynthesizeParallel is cs.SynthesizeProving for a witness circuit with its challenge blocks
// synthesized concurrently (at most workers at a time; 0 means twice the cores, cs.SynthesizeBlocks). The blocks only read the prefix's variables and all have
// the shape of one blank block (BlankShape), so each writes its rows and aux values in place at
// its final offsets (cs.SynthesizeBlocks): the result (a, b, c, inputs, aux, densities) is
// identical to sequential synthesis, with no copy.
func SynthesizeParallel(ctx context.Context, c *Circuit, workers int) (*cs.ProvingAssignment, error) {
	if c.Witness == nil {
		return nil, fmt.Errorf("circuit: parallel synthesis needs a witness: %w", cs.ErrAssignmentMissing)
	}
	n := c.Config.Challenges
	bs, err := blockShapeOf(ctx, c.Config)
	if err != nil {
		return nil, fmt.Errorf("circuit: blank block shape: %w", err)
	}
	total := bs.at(n)
	// a, b and c get room for the FFT domain, so the provers pad them in place (a 32 GiB
	// partition's copies would be another 13 GB while it proves).
	domain := cs.Shape{NumConstraints: total[2]}.DomainSize()
	pa := cs.NewProvingAssignment(cs.Shape{NumInputs: total[0], NumAux: total[1], NumConstraints: domain})
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
		return nil, fmt.Errorf("circuit: %w: prefix of %d rows and %d aux does not fit the blank shape", cs.ErrBlockShape, prefixRows, prefixAux)
	}
	layout := cs.BlockLayout{Rows: blockRows, Aux: blockAux, Inputs: true}
	var be *cs.BlockError
	err = cs.SynthesizeBlocks(ctx, pa, layout, n, workers, func(sys cs.ConstraintSystem, i int) error { return c.block(s, sys, i) })
	if errors.As(err, &be) {
		return nil, fmt.Errorf("synthesizing circuit: challenge block %d: %w", be.Index, be.Err)
	} else if err != nil {
		return nil, err
	}
	// bellperson's input rows x_i · 0 = 0, after the circuit.
	for i := range pa.Input {
		pa.Enforce("", cs.LCOf(cs.InputVariable(i)), nil, nil)
	}
	return pa, nil
}
