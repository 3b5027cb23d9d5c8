package prover

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/update"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/internal/cores"
)

// synthesisWorkers is the parallelism of PoSt and SnapDeals synthesis (it does not change the
// constraint order).
func synthesisWorkers() int { return cores.N() }

// PoStParams returns the parameters of a PoSt proof type from the Filecoin parameter directory.
func (c *ParamCache) PoSt(ctx context.Context, p *post.Proof) (*SealParams, error) {
	e, _, err := c.post(ctx, p)
	if err != nil {
		return nil, err
	}
	return e.sp, nil
}

// Update returns the parameters of a SnapDeals (EmptySectorUpdate) circuit from the Filecoin
// parameter directory.
func (c *ParamCache) Update(ctx context.Context, name string, ps *update.Params) (*SealParams, error) {
	e, _, err := c.update(ctx, name, ps)
	if err != nil {
		return nil, err
	}
	return e.sp, nil
}

// planPoSt decodes and verifies the vanilla proofs of a WinningPoSt or single-partition
// WindowPoSt request and returns its one partition.
func (p *Pipeline) planPoSt(ctx context.Context, req PoStRequest) (*groth16.Parameters, *groth16.VerifyingKey, []partition, error) {
	pt, err := post.Lookup(req.RegisteredProof)
	if err != nil {
		return nil, nil, nil, &InputError{Field: "RegisteredProof", Err: err}
	}
	if len(req.Randomness) != 32 {
		return nil, nil, nil, &InputError{Field: "Randomness", Err: fmt.Errorf("%d bytes, want 32", len(req.Randomness))}
	}
	var rnd [32]byte
	copy(rnd[:], req.Randomness)
	prover := prooftypes.ProverID(abi.ActorID(req.MinerID))
	vanillaErr := func(err error) error {
		return &InputError{Field: "VanillaProofs", Err: fmt.Errorf("%s: %w", pt.Name, err)}
	}
	var (
		part   *post.Partition
		verify func(context.Context) error
	)
	if pt.Kind == post.Winning {
		part, err = post.WinningPartition(pt, rnd, prover, req.VanillaProofs)
	} else {
		// A full WindowPoSt partition's hashing takes 1.6 s of 16 cores: it runs while the
		// partition proves (witness first, then the check beside the GPU's kernels).
		part, verify, err = post.WindowPartitionDeferred(pt, rnd, prover, req.VanillaProofs, int(req.PartitionIndex))
	}
	if err != nil {
		return nil, nil, nil, vanillaErr(err)
	}
	sp, err := p.params.PoSt(ctx, pt)
	if err != nil {
		if verify != nil {
			// Without parameters nothing proves: the deferred check runs now, so that a bad
			// request is still refused as such.
			if verr := verify(ctx); verr != nil && ctx.Err() == nil {
				return nil, nil, nil, vanillaErr(verr)
			}
		}
		return nil, nil, nil, err
	}
	parts := []partition{{
		synthesize: func(ctx context.Context, _ cs.Shape, ph *Phases) (*cs.ProvingAssignment, error) {
			cfg := part.Circuit.Config
			return p.synthesize(ctx, sp, ph, compiledSynthesis{
				key:     cfg.CompiledKey(),
				compile: func(ctx context.Context) (*cs.Compiled, error) { return post.Compile(ctx, cfg) },
				witness: func(ctx context.Context, comp *cs.Compiled) (*cs.ProvingAssignment, error) {
					return post.WitnessOnly(ctx, part.Circuit, comp, synthesisWorkers())
				},
				full: func(ctx context.Context) (*cs.ProvingAssignment, error) {
					return post.SynthesizeParallel(ctx, part.Circuit, synthesisWorkers())
				},
			})
		},
		inputs: part.Inputs,
	}}
	if verify != nil {
		parts[0].verifyInputs = func(ctx context.Context) error {
			if err := verify(ctx); err != nil {
				if ctx.Err() != nil {
					return err
				}
				return vanillaErr(err)
			}
			return nil
		}
	}
	log.Infow("PoSt planned", "proof", pt.Name, "miner", req.MinerID, "sectors", part.SectorIDs, "partition", req.PartitionIndex)
	return sp.PK, sp.VK, parts, nil
}

// commitment decodes a raw 32-byte commitment.
func commitment(field string, b []byte) (fr.Element, error) {
	if len(b) != 32 {
		return fr.Element{}, &InputError{Field: field, Err: fmt.Errorf("%d bytes, want 32", len(b))}
	}
	e, err := c1.Domain(b).Element()
	if err != nil {
		return fr.Element{}, &InputError{Field: field, Err: err}
	}
	return e, nil
}

// planUpdate decodes and verifies a SnapDeals request's partition vanilla proofs (all of them
// before any synthesis) and returns one partition per Groth16 proof.
func (p *Pipeline) planUpdate(ctx context.Context, req SnapRequest) (*groth16.Parameters, *groth16.VerifyingKey, []partition, error) {
	ps, err := update.ForProof(req.RegisteredProof)
	if err != nil {
		return nil, nil, nil, &InputError{Field: "RegisteredProof", Err: err}
	}
	name := UpdateProofName(req.RegisteredProof)
	in := update.PublicInputs{H: ps.HDefault()}
	if in.CommROld, err = commitment("CommROld", req.CommROld); err != nil {
		return nil, nil, nil, err
	}
	if in.CommDNew, err = commitment("CommDNew", req.CommDNew); err != nil {
		return nil, nil, nil, err
	}
	if in.CommRNew, err = commitment("CommRNew", req.CommRNew); err != nil {
		return nil, nil, nil, err
	}
	circuits, inputs, err := ps.Partitions(req.VanillaProofs, in)
	if err != nil {
		return nil, nil, nil, &InputError{Field: "VanillaProofs", Err: err}
	}
	sp, err := p.params.Update(ctx, name, ps)
	if err != nil {
		return nil, nil, nil, err
	}
	parts := make([]partition, len(circuits))
	for k, c := range circuits {
		parts[k] = partition{
			synthesize: func(ctx context.Context, _ cs.Shape, ph *Phases) (*cs.ProvingAssignment, error) {
				return p.synthesize(ctx, sp, ph, compiledSynthesis{
					key:     ps.CompiledKey(),
					compile: func(ctx context.Context) (*cs.Compiled, error) { return update.Compile(ctx, ps) },
					witness: func(ctx context.Context, comp *cs.Compiled) (*cs.ProvingAssignment, error) {
						return update.WitnessOnly(ctx, c, comp, synthesisWorkers())
					},
					full: func(ctx context.Context) (*cs.ProvingAssignment, error) {
						return update.SynthesizeParallel(ctx, c, synthesisWorkers())
					},
				})
			},
			inputs: inputs[k],
		}
	}
	log.Infow("SnapDeals planned", "proof", name, "partitions", len(parts))
	return sp.PK, sp.VK, parts, nil
}

// UpdateProofName names a registered update proof type as the CLI accepts it
// (UpdateStackedDrg2KiBV1 … UpdateStackedDrg64GiBV1).
func UpdateProofName(pt abi.RegisteredUpdateProof) string {
	labels := []string{"2KiB", "8MiB", "512MiB", "32GiB", "64GiB"}
	if pt < 0 || int(pt) >= len(labels) {
		return fmt.Sprintf("update proof %d", int64(pt))
	}
	return "UpdateStackedDrg" + labels[pt] + "V1"
}
