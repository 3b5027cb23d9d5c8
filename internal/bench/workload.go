package bench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/filecoin/update"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/prover"
)

// Workload is what a pipeline benchmark proves: synthetic requests of one production proof
// type, and for --setup dummy keys of its real size.
type Workload struct {
	// Name is the proof type; Partitions the Groth16 proofs of one request.
	Name       string
	Partitions int
	// requests builds n requests of production shape from rng.
	requests func(ctx context.Context, n int, rng *rand.ChaCha8) ([]prover.Request, error)
	// dummyKeys puts keys of the real size into params, and returns them. It may record the
	// compiled circuit into circuitDir, where the first proof then reads it.
	dummyKeys func(ctx context.Context, params *prover.ParamCache, circuitDir string) (*groth16.Parameters, error)
}

// PoRepWorkload proves C2 requests of seal proof type p from synthetic C1 outputs.
func PoRepWorkload(p *prooftypes.SealProof) *Workload {
	return &Workload{Name: p.Name, Partitions: p.Partitions,
		requests: func(ctx context.Context, n int, rng *rand.ChaCha8) ([]prover.Request, error) {
			out := make([]prover.Request, n)
			for i := range out {
				var ticket, seed [32]byte
				rng.Read(ticket[:])
				rng.Read(seed[:])
				sector := uint64(i + 1)
				o, err := sealer.SyntheticC1(ctx, p, prooftypes.ProverID(1000), sector, ticket, seed, rng)
				if err != nil {
					return nil, fmt.Errorf("synthetic C1 output %d: %w", i, err)
				}
				js, err := o.Encode()
				if err != nil {
					return nil, err
				}
				out[i] = prover.Request{PoRep: &prover.PoRepRequest{RegisteredProof: p.Proof, MinerID: 1000, SectorNumber: sector, Phase1Out: js}}
			}
			return out, nil
		},
		dummyKeys: func(ctx context.Context, params *prover.ParamCache, _ string) (*groth16.Parameters, error) {
			info, err := circuit.QuickCircuitInfo(ctx, p)
			if err != nil {
				return nil, err
			}
			pk := groth16.DummyParametersOf(info.SynthesisShape, info.AAuxDensity, info.BInputDensity, info.BAuxDensity)
			return pk, params.PutSeal(ctx, p, &prover.SealParams{PK: pk, VK: &pk.VK})
		},
	}
}

// SnapWorkload proves SnapDeals requests of update proof type pt from synthetic updates (sparse
// trees of production shape).
func SnapWorkload(pt abi.RegisteredUpdateProof) (*Workload, error) {
	ps, err := update.ForProof(pt)
	if err != nil {
		return nil, err
	}
	return &Workload{Name: prover.UpdateProofName(pt), Partitions: ps.PartitionCount,
		requests: func(ctx context.Context, n int, rng *rand.ChaCha8) ([]prover.Request, error) {
			out := make([]prover.Request, n)
			for i := range out {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				e, err := update.Synthetic(ps, ps.HDefault(), int(min(256, ps.SectorNodes/4)), rng)
				if err != nil {
					return nil, fmt.Errorf("synthetic update %d: %w", i, err)
				}
				req := &prover.SnapRequest{RegisteredProof: pt, CommROld: bytes.Clone(e.CommROld[:]),
					CommDNew: bytes.Clone(e.CommDNew[:]), CommRNew: bytes.Clone(e.CommRNew[:])}
				for k := range ps.PartitionCount {
					v, err := e.PartitionProof(k)
					if err != nil {
						return nil, fmt.Errorf("synthetic update %d, partition %d: %w", i, k, err)
					}
					req.VanillaProofs = append(req.VanillaProofs, v)
				}
				out[i] = prover.Request{Snap: req}
			}
			return out, nil
		},
		dummyKeys: compiledDummyKeys(ps.CompiledKey(), func(ctx context.Context) (*cs.Compiled, error) { return update.Compile(ctx, ps) },
			func(ctx context.Context, c *prover.ParamCache, sp *prover.SealParams) error {
				return c.PutUpdate(ctx, pt, sp)
			}),
	}, nil
}

// PoStWorkload proves requests of PoSt proof type p, one partition each (a WindowPoSt
// partition full of sectors), from synthetic vanilla proofs.
func PoStWorkload(p *post.Proof) *Workload {
	cfg := p.Config()
	return &Workload{Name: p.Name, Partitions: 1,
		requests: func(ctx context.Context, n int, rng *rand.ChaCha8) ([]prover.Request, error) {
			out := make([]prover.Request, n)
			for i := range out {
				var rnd [32]byte
				rng.Read(rnd[:])
				rnd[31] &= 0x3f
				vanilla := make([][]byte, p.SectorCount)
				for k := range vanilla {
					if err := ctx.Err(); err != nil {
						return nil, err
					}
					var err error
					if vanilla[k], err = post.SyntheticSectorVanilla(p, uint64(1000+k), rnd, k, rng); err != nil {
						return nil, fmt.Errorf("request %d, synthetic vanilla proof %d: %w", i, k, err)
					}
				}
				out[i] = prover.Request{PoSt: &prover.PoStRequest{RegisteredProof: p.Proof, MinerID: 1000, Randomness: rnd[:], VanillaProofs: vanilla}}
			}
			return out, nil
		},
		dummyKeys: compiledDummyKeys(cfg.CompiledKey(), func(ctx context.Context) (*cs.Compiled, error) { return post.Compile(ctx, cfg) },
			func(ctx context.Context, c *prover.ParamCache, sp *prover.SealParams) error {
				return c.PutPoSt(ctx, p, sp)
			}),
	}
}

// compiledDummyKeys makes dummy keys of the compiled circuit's shape and densities (no blank
// synthesis; the circuit read from or recorded into the circuit directory) and puts them into
// the parameter cache with put.
func compiledDummyKeys(key string, build func(context.Context) (*cs.Compiled, error),
	put func(context.Context, *prover.ParamCache, *prover.SealParams) error) func(context.Context, *prover.ParamCache, string) (*groth16.Parameters, error) {
	return func(ctx context.Context, params *prover.ParamCache, dir string) (*groth16.Parameters, error) {
		comp, err := prover.LoadOrCompile(ctx, dir, key, build)
		if err != nil {
			return nil, err
		}
		aAux, bIn, bAux := comp.Densities()
		pk := groth16.DummyParametersOf(comp.Shape(), aAux.Count(), bIn.Count(), bAux.Count())
		return pk, put(ctx, params, &prover.SealParams{PK: pk, VK: &pk.VK})
	}
}
