package post

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

// CompiledKey names the compiled circuit of cfg.
func (c Config) CompiledKey() string {
	return fmt.Sprintf("post-v%d-nodes%d-sectors%d-challenges%d-%s", compiledVersion, c.Nodes, c.Sectors, c.Challenges, c.Tree)
}

// Compile records the circuit of cfg once in blank mode: every sector is a block of one
// structure (cs.Compile), checked against a second sector.
func Compile(ctx context.Context, cfg Config) (*cs.Compiled, error) {
	b := Blank(cfg)
	if err := b.validate(); err != nil {
		return nil, err
	}
	comp, err := cs.Compile(ctx, cfg.CompiledKey(), b.blocked, cfg.Sectors, 2)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", cfg.CompiledKey(), err)
	}
	return comp, nil
}

// blocked is c as a cs.PrefixFunc: no prefix (only ONE), the sectors as blocks.
func (c *Circuit) blocked(cs.ConstraintSystem) (cs.BlockFunc, error) {
	return func(sys cs.ConstraintSystem, i int) error {
		sys.PushIndexed("sector_", i)
		defer sys.Pop()
		return c.sector(sys, i)
	}, nil
}

// WitnessOnly synthesizes c's witness-only assignment (values only, rows counted), its sectors
// on up to workers goroutines, for comp, the compiled circuit of c's configuration;
// comp.Complete finishes it with exactly SynthesizeParallel's a, b, c and densities.
func WitnessOnly(ctx context.Context, c *Circuit, comp *cs.Compiled, workers int) (*cs.ProvingAssignment, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if c.Sectors == nil {
		return nil, fmt.Errorf("post circuit: witness synthesis needs a witness: %w", cs.ErrAssignmentMissing)
	}
	if comp.Key != c.Config.CompiledKey() {
		return nil, fmt.Errorf("post circuit: compiled circuit %s does not fit %s", comp.Key, c.Config.CompiledKey())
	}
	pa, err := cs.WitnessBlocks(ctx, comp, c.blocked, c.Config.Sectors, workers)
	var be *cs.BlockError
	if errors.As(err, &be) {
		return nil, fmt.Errorf("synthesizing post circuit: sector %d: %w", be.Index, be.Err)
	} else if err != nil {
		return nil, fmt.Errorf("post circuit: %w", err)
	}
	return pa, nil
}
