// Package seal is the entry point for SealCommitPhase2 work: it turns the bytes filecoin-ffi
// passes (a C1 output, the sector number and the miner actor id) into checked partition circuits
// with their public inputs, ready for the Groth16 prover.
package seal

import (
	"context"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"
	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/porep"
	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

var log = logging.Logger("snarkd/filecoin")

// Commit2 is a decoded, validated and verified C2 request.
type Commit2 struct {
	Proof        *prooftypes.SealProof
	Output       *c1.Output
	Public       *porep.PublicParams
	SectorNumber abi.SectorNumber
	Miner        abi.ActorID
}

// Options adjust NewCommit2.
type Options struct {
	// SkipReplicaIDCheck accepts a replica ID that does not derive from the miner and sector
	// (rust-fil-proofs only notices this when it verifies the finished proof).
	SkipReplicaIDCheck bool
}

// NewCommit2 decodes phase1Out strictly (c1.FieldError on malformed input) and verifies every
// vanilla proof (porep.VerifyError naming the partition, challenge and field), so that a C1
// output that cannot produce a valid proof is refused before any synthesis.
func NewCommit2(ctx context.Context, phase1Out []byte, sector abi.SectorNumber, miner abi.ActorID, opts Options) (*Commit2, error) {
	start := time.Now()
	o, p, err := c1.Decode(phase1Out)
	if err != nil {
		return nil, err
	}
	c, err := Commit2From(ctx, o, p, sector, miner, opts)
	if err == nil {
		log.Debugw("C1 output decoded", "proof", p.Name, "bytes", len(phase1Out), "took", time.Since(start))
	}
	return c, err
}

// Commit2From is NewCommit2 for a C1 output already decoded by c1.Decode (o of type p): the
// vanilla proofs are verified all the same.
func Commit2From(ctx context.Context, o *c1.Output, p *prooftypes.SealProof, sector abi.SectorNumber, miner abi.ActorID, opts Options) (*Commit2, error) {
	start := time.Now()
	var id *porep.SectorIdentity
	if !opts.SkipReplicaIDCheck {
		id = &porep.SectorIdentity{ProverID: prooftypes.ProverID(miner), SectorNumber: uint64(sector)}
	}
	if err := porep.Verify(ctx, o, p, id); err != nil {
		return nil, err
	}
	pp, err := porep.FromOutput(o, p)
	if err != nil {
		return nil, err
	}
	log.Debugw("C1 output verified", "proof", p.Name, "sector", sector, "miner", miner, "took", time.Since(start))
	return &Commit2{Proof: p, Output: o, Public: pp, SectorNumber: sector, Miner: miner}, nil
}

// Partitions is the number of partition circuits (Groth16 proofs).
func (c *Commit2) Partitions() int { return c.Proof.Partitions }

// Circuit returns partition k's witness circuit.
func (c *Commit2) Circuit(k int) (*circuit.Circuit, error) {
	return circuit.FromC1(c.Output, c.Proof, k)
}

// PublicInputs returns partition k's public inputs (without ONE), as get_seal_inputs does.
func (c *Commit2) PublicInputs(k int) ([]fr.Element, error) {
	return c.Public.PublicInputs(k)
}

// Synthesize builds partition k's proving assignment with its challenge blocks synthesized on up
// to workers goroutines (0: GOMAXPROCS), checks that every constraint holds (a failure names the
// constraint) and that the circuit's inputs are the expected public inputs.
func (c *Commit2) Synthesize(ctx context.Context, k int, workers int) (*cs.ProvingAssignment, error) {
	start := time.Now()
	circ, err := c.Circuit(k)
	if err != nil {
		return nil, err
	}
	pa, err := circuit.SynthesizeParallel(ctx, circ, workers)
	if err != nil {
		return nil, fmt.Errorf("partition %d: %w", k, err)
	}
	if row := circuit.FirstUnsatisfied(pa); row >= 0 {
		return nil, fmt.Errorf("partition %d: %w", k, circuit.Unsatisfied(circ, row))
	}
	if err := c.CheckInputs(k, pa); err != nil {
		return nil, err
	}
	log.Debugw("partition synthesized", "proof", c.Proof.Name, "sector", c.SectorNumber, "partition", k, "rows", len(pa.A), "took", time.Since(start))
	return pa, nil
}

// Compile records the compiled circuit of this request's partitions (circuit.Compile).
func (c *Commit2) Compile(ctx context.Context) (*cs.Compiled, error) {
	return circuit.Compile(ctx, circuit.ConfigOf(c.Proof))
}

// CompiledKey names the compiled circuit WitnessOnly needs.
func (c *Commit2) CompiledKey() string { return circuit.ConfigOf(c.Proof).Key() }

// WitnessOnly is partition k's witness-only assignment for comp, the compiled circuit of
// CompiledKey (circuit.WitnessOnly): comp.Complete finishes it into what Synthesize builds,
// and CheckInputs and a row check then do what Synthesize checks.
func (c *Commit2) WitnessOnly(ctx context.Context, k int, comp *cs.Compiled, workers int) (*cs.ProvingAssignment, error) {
	circ, err := c.Circuit(k)
	if err != nil {
		return nil, err
	}
	pa, err := circuit.WitnessOnly(ctx, circ, comp, workers)
	if err != nil {
		return nil, fmt.Errorf("partition %d: %w", k, err)
	}
	return pa, nil
}

// CheckInputs checks that the circuit's inputs are partition k's public inputs.
func (c *Commit2) CheckInputs(k int, pa *cs.ProvingAssignment) error {
	want, err := c.PublicInputs(k)
	if err != nil {
		return err
	}
	if len(pa.Input) != len(want)+1 {
		return fmt.Errorf("partition %d: circuit has %d inputs, expected %d", k, len(pa.Input)-1, len(want))
	}
	for i := range want {
		if !pa.Input[i+1].Equal(&want[i]) {
			return fmt.Errorf("partition %d: circuit input %d differs from the public input", k, i+1)
		}
	}
	return nil
}
