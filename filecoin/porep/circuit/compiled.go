package circuit

import (
	"context"
	"errors"
	"fmt"

	"github.com/snarkd/snarkd/cs"
)

// compiledVersion is part of the compiled circuit's key: change it whenever the circuit's
// constraints change, its gadgets' included. (Stored files recorded by another build of snarkd
// are recorded again anyway; the key also separates builds that report the same version.)
const compiledVersion = 1

// Key names the compiled circuit of a configuration (and is its file name's stem).
func (c Config) Key() string {
	return fmt.Sprintf("porep-v%d-nodes%d-layers%d-challenges%d-%s", compiledVersion, c.Nodes, c.Layers, c.Challenges, c.Tree)
}

// Compile records the partition circuit of cfg once in blank mode (cs.Compile): the prefix and
// one challenge block, checked against a second block.
func Compile(ctx context.Context, cfg Config) (*cs.Compiled, error) {
	comp, err := cs.Compile(ctx, cfg.Key(), Blank(cfg).blocked, cfg.Challenges, 2)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", cfg.Key(), err)
	}
	return comp, nil
}

// WitnessOnly is the witness-only assignment of c for comp, the compiled circuit of its
// configuration (inputs and aux; rows counted, no a, b, c): comp.Complete turns it into
// exactly SynthesizeParallel's.
func WitnessOnly(ctx context.Context, c *Circuit, comp *cs.Compiled, workers int) (*cs.ProvingAssignment, error) {
	if c.Witness == nil {
		return nil, fmt.Errorf("circuit: witness synthesis needs a witness: %w", cs.ErrAssignmentMissing)
	}
	if comp.Key != c.Config.Key() {
		return nil, fmt.Errorf("circuit: compiled circuit %s does not fit %s", comp.Key, c.Config.Key())
	}
	pa, err := cs.WitnessBlocks(ctx, comp, c.blocked, c.Config.Challenges, workers)
	var be *cs.BlockError
	if errors.As(err, &be) {
		return nil, fmt.Errorf("synthesizing circuit: challenge block %d: %w", be.Index, be.Err)
	} else if err != nil {
		return nil, fmt.Errorf("circuit: %w", err)
	}
	return pa, nil
}

// blocked is c as a cs.PrefixFunc: the prefix, then the function of its challenge blocks.
func (c *Circuit) blocked(sys cs.ConstraintSystem) (cs.BlockFunc, error) {
	s, err := c.prefix(sys)
	if err != nil {
		return nil, err
	}
	return func(sys cs.ConstraintSystem, i int) error { return c.block(s, sys, i) }, nil
}
