package prover

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/seal"
	"github.com/snarkd/snarkd/groth16/snarkpack"
)

// InputError marks a request whose Filecoin input (a C1 output) cannot produce a valid proof:
// it is malformed or inconsistent. Retrying it cannot succeed.
type InputError struct {
	Field string
	Err   error
}

func (e *InputError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the decoder's or verifier's error (c1.FieldError, porep.VerifyError, …).
func (e *InputError) Unwrap() error { return e.Err }

// DecodedC1 is a C1 output already decoded (c1.Decode) and the seal proof type it names.
type DecodedC1 struct {
	Output *c1.Output
	Proof  *prooftypes.SealProof
}

// planPoRep decodes (unless the request carries it decoded) and verifies the C1 output (every vanilla proof is checked before any
// synthesis), loads the parameters of its circuit, and returns one partition per Groth16 proof.
// An NI-PoRep C2's answer is, as filecoin-ffi's, the SnarkPack aggregate (V2) of its partition
// proofs padded to a power of two, with the SHA-256 of comm_r bound into the transcript: its
// aggregation keys are read here too, so that a missing SRS is reported before any proving.
func (p *Pipeline) planPoRep(ctx context.Context, req PoRepRequest) (planned, error) {
	var c *seal.Commit2
	var err error
	if req.C1 != nil {
		c, err = seal.Commit2From(ctx, req.C1.Output, req.C1.Proof, abi.SectorNumber(req.SectorNumber), abi.ActorID(req.MinerID), seal.Options{})
	} else {
		c, err = seal.NewCommit2(ctx, req.Phase1Out, abi.SectorNumber(req.SectorNumber), abi.ActorID(req.MinerID), seal.Options{})
	}
	if err != nil {
		if ctx.Err() != nil {
			return planned{}, ctx.Err()
		}
		return planned{}, &InputError{Field: "Phase1Out", Err: err}
	}
	// filecoin-ffi proves the type the C1 output names. A request whose proof type is another
	// sector size was built for a different sector: refuse it rather than guess.
	if want, err := prooftypes.Lookup(req.RegisteredProof); err != nil {
		return planned{}, &InputError{Field: "RegisteredProof", Err: err}
	} else if want.SectorSize != c.Proof.SectorSize {
		return planned{}, &InputError{Field: "RegisteredProof", Err: fmt.Errorf("%s (%d) does not match the C1 output's %s", want.Name, req.RegisteredProof, c.Proof.Name)}
	} else if want.Proof != c.Proof.Proof {
		log.Warnw("request proof type differs from the C1 output's; proving the C1 output's", "request", want.Name, "c1", c.Proof.Name)
	}
	sp, err := p.params.Seal(ctx, c.Proof)
	if err != nil {
		return planned{}, err
	}
	var agg *aggregation
	if c.Proof.Feature == prooftypes.NonInteractive {
		include := seal.AggregateInclude(c.Proof, [][32]byte{c.Output.CommR}, nil)
		if agg, err = p.newAggregation(ctx, c.Partitions(), include[:], snarkpack.V2); err != nil {
			return planned{}, fmt.Errorf("%s: %w", c.Proof.Name, err)
		}
	}
	parts := make([]partition, c.Partitions())
	for k := range parts {
		inputs, err := c.PublicInputs(k)
		if err != nil {
			return planned{}, &InputError{Field: "Phase1Out", Err: fmt.Errorf("public inputs of partition %d: %w", k, err)}
		}
		parts[k] = partition{
			synthesize: func(ctx context.Context, _ cs.Shape, ph *Phases) (*cs.ProvingAssignment, error) {
				// Both paths check every constraint (full synthesis names the first unsatisfied
				// one by its namespace) and that the circuit's inputs are the public inputs.
				return p.synthesize(ctx, sp, ph, compiledSynthesis{
					key:     c.CompiledKey(),
					compile: c.Compile,
					witness: func(ctx context.Context, comp *cs.Compiled) (*cs.ProvingAssignment, error) {
						return c.WitnessOnly(ctx, k, comp, 0)
					},
					check: func(pa *cs.ProvingAssignment) error { return c.CheckInputs(k, pa) },
					full:  func(ctx context.Context) (*cs.ProvingAssignment, error) { return c.Synthesize(ctx, k, 0) },
				})
			},
			inputs: append([]fr.Element(nil), inputs...),
		}
	}
	log.Infow("PoRep C2 planned", "proof", c.Proof.Name, "miner", req.MinerID, "sector", req.SectorNumber, "partitions", len(parts), "aggregate", agg != nil)
	return planned{pk: sp.PK, vk: sp.VK, parts: parts, aggregate: agg}, nil
}
