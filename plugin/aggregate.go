package plugin

import (
	"context"
	"errors"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/snarkd/snarkd/filecoin/aggregate"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// AggregateSealProofs aggregates the sectors' C2 proofs into one SnarkPack proof as an
// aggregate-seals job keyed by its content (filecoin-ffi's AggregateSealProofs).
func (p *ProverAPI) AggregateSealProofs(ctx context.Context, info proof.AggregateSealVerifyProofAndInfos, proofs [][]byte) ([]byte, error) {
	return p.proveFFI(ctx, rpcapi.ProofRequest{Kind: rpcapi.KindAggregateSeals, RegisteredProof: int64(info.SealProof), MinerID: info.Miner,
		Aggregate: &rpcapi.SealAggregate{AggregateProof: info.AggregateProof, Infos: info.Infos, Proofs: proofs}})
}

// VerifyAggregateSeals checks an aggregate at once, outside the job queue (filecoin-ffi's
// VerifyAggregateSeals): false for an aggregate that does not verify, ErrBadRequest for
// malformed infos or aggregate bytes.
func (p *ProverAPI) VerifyAggregateSeals(ctx context.Context, info proof.AggregateSealVerifyProofAndInfos) (bool, error) {
	set, err := aggregate.Decode(info.SealProof, info.AggregateProof, info.Miner, info.Infos)
	if err == nil {
		err = prover.VerifySealAggregate(ctx, p.params, set, info.Proof)
	}
	var ie *aggregate.InputError
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, snarkpack.ErrInvalid):
		log.Infow("seal aggregate does not verify", "proof", info.SealProof, "miner", info.Miner, "sectors", len(info.Infos))
		return false, nil
	case errors.As(err, &ie):
		return false, &rpcapi.ErrBadRequest{Field: ie.Field, Reason: ie.Reason}
	}
	return false, err
}

// runAggregate runs an aggregate-seals job (validated: its infos decode).
func (r pipelineRunner) runAggregate(ctx context.Context, t jobs.Task, report jobs.Report) (jobs.Output, error) {
	req := t.Request
	set, err := aggregate.Decode(abi.RegisteredSealProof(req.RegisteredProof), req.Aggregate.AggregateProof, req.MinerID, req.Aggregate.Infos)
	if err != nil {
		return jobs.Output{}, err
	}
	res, err := prover.AggregateSeals(ctx, r.p.Params(), prover.SealAggregateRequest{Set: set, Proofs: req.Aggregate.Proofs},
		func(st prover.Stage, part, n int, detail ...string) { report(rpcapi.EventType(st), part, n, detail...) })
	out := jobs.Output{SRSLoadMs: uint64(res.SRSLoad.Milliseconds())}
	if err != nil {
		return out, err
	}
	out.Proof = res.Proof
	out.ProveMs = uint64(res.Prove.Milliseconds())
	out.VerifyMs = uint64(res.Verify.Milliseconds())
	return out, nil
}
