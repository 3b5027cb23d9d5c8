package plugin

import (
	"context"
	"errors"

	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// pipelineRunner adapts the proving pipeline to the job manager.
type pipelineRunner struct {
	p *prover.Pipeline
}

var _ jobs.Runner = pipelineRunner{}

// unsupported maps the pipeline's error onto the wire type.
func unsupported(err error) error {
	var u *prover.UnsupportedError
	if errors.As(err, &u) {
		return &rpcapi.ErrNotSupportedYet{Kind: rpcapi.ProofKind(u.Kind), Reason: u.Reason}
	}
	return err
}

func (r pipelineRunner) Supports(kind rpcapi.ProofKind) error {
	return unsupported(r.p.Supports(kind))
}

func (r pipelineRunner) Run(ctx context.Context, req rpcapi.ProofRequest, dec *jobs.Decoded, report jobs.Report) (jobs.Output, error) {
	// The usage holds the job's parameters in the cache while it runs and records the time it
	// waited for them and the GPUs that proved it.
	ctx, use := prover.WithUsage(ctx)
	defer use.Release()
	var c1 *prover.DecodedC1
	if dec != nil && dec.C1 != nil {
		c1 = &prover.DecodedC1{Output: dec.C1, Proof: dec.SealProof}
	}
	preq := prover.FromAPI(req, c1)
	if info, ok := jobs.RunInfoFrom(ctx); ok {
		preq.Job.ID, preq.Job.Submitted = string(info.ID), info.Submitted
	}
	res, err := r.p.Prove(ctx, preq, func(st prover.Stage, part, n int, detail ...string) {
		report(rpcapi.EventType(st), part, n, detail...)
	})
	out := jobs.Output{SRSLoadMs: uint64(use.SRSLoad().Milliseconds()), GPUs: use.Devices()}
	if err != nil {
		return out, unsupported(err)
	}
	out.Proof = res.Proof
	out.SynthesisMs = uint64(res.Synthesis.Milliseconds())
	out.ProveMs = uint64(res.Prove.Milliseconds())
	out.VerifyMs = uint64(res.Verify.Milliseconds())
	return out, nil
}
