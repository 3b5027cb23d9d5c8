package update

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

// CompiledKey names the compiled circuit of p's partition circuit.
func (p *Params) CompiledKey() string {
	return fmt.Sprintf("update-v%d-nodes%d-challenges%d-partitions%d-apex%d-poseidon%t", compiledVersion, p.SectorNodes, p.ChallengeCount, p.PartitionCount, p.ApexLeafCount, p.Poseidon)
}

// Compile records p's partition circuit once in blank mode: the prefix and one challenge block
// (cs.Compile), each block reading its own challenge's variables from the prefix (strides).
// Should the blocks differ otherwise, every row is kept (cs.CompileFlat).
func Compile(ctx context.Context, p *Params) (*cs.Compiled, error) {
	comp, err := cs.Compile(ctx, p.CompiledKey(), Blank(p).blocked, p.ChallengeCount, 2)
	if errors.Is(err, cs.ErrBlockStructure) {
		comp, err = cs.CompileFlat(ctx, p.CompiledKey(), Blank(p).blocked, p.ChallengeCount)
	}
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", p.CompiledKey(), err)
	}
	return comp, nil
}

// blocked is c as a cs.PrefixFunc: the prefix, then the function of its challenge blocks.
func (c *Circuit) blocked(sys cs.ConstraintSystem) (cs.BlockFunc, error) {
	s, err := c.prefix(sys)
	if err != nil {
		return nil, err
	}
	return func(sys cs.ConstraintSystem, i int) error { return c.block(sys, s, i) }, nil
}

// WitnessOnly synthesizes c's witness-only assignment (values only, rows counted) for comp, the
// compiled circuit of c's parameters; comp.Complete finishes it.
func WitnessOnly(ctx context.Context, c *Circuit, comp *cs.Compiled, workers int) (*cs.ProvingAssignment, error) {
	if c.Witness == nil {
		return nil, fmt.Errorf("update circuit: witness synthesis needs a witness: %w", cs.ErrAssignmentMissing)
	}
	if comp.Key != c.Params.CompiledKey() {
		return nil, fmt.Errorf("update circuit: compiled circuit %s does not fit %s", comp.Key, c.Params.CompiledKey())
	}
	pa, err := cs.WitnessBlocks(ctx, comp, c.blocked, c.Params.ChallengeCount, workers)
	var be *cs.BlockError
	if errors.As(err, &be) {
		return nil, fmt.Errorf("synthesizing update circuit: challenge %d: %w", be.Index, be.Err)
	} else if err != nil {
		return nil, fmt.Errorf("update circuit: %w", err)
	}
	return pa, nil
}
