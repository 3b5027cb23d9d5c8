package jobs

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/snarkd/snarkd/rpcapi"
)

// loadingRunner reports a parameter load, waits to be released, then synthesizes and proves.
type loadingRunner struct {
	loading, release chan struct{}
}

func (loadingRunner) Supports(rpcapi.ProofKind) error { return nil }

func (r loadingRunner) Run(ctx context.Context, t Task, report Report) (Output, error) {
	report(rpcapi.EventLoadingParams, 0, 0, "generate test-64-1")
	r.loading <- struct{}{}
	select {
	case <-r.release:
	case <-ctx.Done():
		return Output{}, ctx.Err()
	}
	report(rpcapi.EventSynthesizing, 0, 1)
	report(rpcapi.EventProving, 0, 1)
	return Output{Proof: []byte("proof"), SRSLoadMs: 7}, nil
}

// TestLoadingParamsStage: a job whose runner reports a parameter load shows it as its Stage
// while it lasts (what `snarkd jobs` prints), streams it with its detail before synthesizing,
// keeps the load time in its Timings, and has no Stage once final.
func TestLoadingParamsStage(t *testing.T) {
	r := loadingRunner{loading: make(chan struct{}), release: make(chan struct{})}
	m := open(t, filepath.Join(t.TempDir(), "j.db"), r, Config{Workers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := m.Subscribe(ctx, rpcapi.JobFilter{})
	res, err := m.Submit(testReq("load", 1), SubmitOpts{})
	if err != nil {
		t.Fatal(err)
	}
	<-r.loading
	job, err := m.Get(res.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if job.State != rpcapi.JobRunning || job.Stage != rpcapi.EventLoadingParams {
		t.Fatalf("while loading: state %s, stage %q", job.State, job.Stage)
	}
	close(r.release)
	done, err := m.Await(ctx, res.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != rpcapi.JobDone || done.Stage != "" || done.Timings.SRSLoadMs != 7 {
		t.Fatalf("done: state %s, stage %q, timings %+v", done.State, done.Stage, done.Timings)
	}
	var seq []rpcapi.JobEvent
	for ev := range events {
		seq = append(seq, ev)
		if ev.Type == rpcapi.EventDone {
			break
		}
	}
	wantTypes := []rpcapi.EventType{rpcapi.EventQueued, rpcapi.EventStarted, rpcapi.EventLoadingParams,
		rpcapi.EventSynthesizing, rpcapi.EventProving, rpcapi.EventDone}
	if len(seq) != len(wantTypes) {
		t.Fatalf("events %+v", seq)
	}
	for i, ev := range seq {
		if ev.Type != wantTypes[i] {
			t.Fatalf("event %d: %s, want %s (%+v)", i, ev.Type, wantTypes[i], seq)
		}
	}
	if seq[2].Detail != "generate test-64-1" {
		t.Errorf("loading-params detail %q", seq[2].Detail)
	}
}
