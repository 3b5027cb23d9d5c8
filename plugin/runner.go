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
	if kind == rpcapi.KindAggregateSeals {
		return nil
	}
	return unsupported(r.p.Supports(kind))
}

func (r pipelineRunner) Run(ctx context.Context, t jobs.Task, report jobs.Report) (jobs.Output, error) {
	if t.Request.Kind == rpcapi.KindAggregateSeals {
		return r.runAggregate(ctx, t, report)
	}
	var c1 *prover.DecodedC1
	if t.Decoded != nil && t.Decoded.C1 != nil {
		c1 = &prover.DecodedC1{Output: t.Decoded.C1, Proof: t.Decoded.SealProof}
	}
	preq := prover.FromAPI(t.Request, c1)
	preq.Job.ID, preq.Job.Submitted = string(t.ID), t.Submitted
	res, err := r.p.Prove(ctx, preq, func(st prover.Stage, part, n int, detail ...string) {
		report(rpcapi.EventType(st), part, n, detail...)
	})
	// The parameter load time and the GPUs come with errors too.
	out := jobs.Output{SRSLoadMs: uint64(res.SRSLoad.Milliseconds()), GPUs: res.Devices}
	if err != nil {
		return out, unsupported(err)
	}
	out.Proof = res.Proof
	out.SynthesisMs = uint64(res.Synthesis.Milliseconds())
	out.ProveMs = uint64(res.Prove.Milliseconds())
	out.VerifyMs = uint64(res.Verify.Milliseconds())
	return out, nil
}
