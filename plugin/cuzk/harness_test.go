package cuzk

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/plugin/journal"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// gatedRunner proves with the real pipeline, but a job whose test seed has a gate waits for
// the gate to open: the tests hold a worker busy without depending on how long a proof takes.
type gatedRunner struct {
	p       *prover.Pipeline
	started chan string // request IDs of gated jobs as they start

	mu    sync.Mutex
	gates map[uint64]chan struct{}
	order []string
	// gpus makes the job of a test seed report that these GPUs proved it, as a GPU backend
	// does through prover.NoteDevice.
	gpus map[uint64][]int
	// fail makes the job of a test seed fail with this error instead of proving.
	fail map[uint64]error
}

func (r *gatedRunner) Supports(kind rpcapi.ProofKind) error {
	err := r.p.Supports(kind)
	var u *prover.UnsupportedError
	if errors.As(err, &u) {
		return &rpcapi.ErrNotSupportedYet{Kind: kind, Reason: u.Reason}
	}
	return err
}

func (r *gatedRunner) gate(seed uint64) func() {
	ch := make(chan struct{})
	r.mu.Lock()
	r.gates[seed] = ch
	r.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (r *gatedRunner) Run(ctx context.Context, t jobs.Task, report jobs.Report) (jobs.Output, error) {
	req := t.Request
	r.mu.Lock()
	r.order = append(r.order, req.RequestID)
	var g chan struct{}
	var gpus []int
	var fail error
	if req.Test != nil {
		g, gpus, fail = r.gates[req.Test.Seed], r.gpus[req.Test.Seed], r.fail[req.Test.Seed]
	}
	r.mu.Unlock()
	if fail != nil {
		return jobs.Output{}, fail
	}
	if g != nil {
		r.started <- req.RequestID
		select {
		case <-g:
		case <-ctx.Done():
			return jobs.Output{}, ctx.Err()
		}
	}
	pr := prover.FromAPI(req, nil)
	ctx, use := prover.WithUsage(ctx)
	defer use.Release()
	for _, d := range gpus {
		prover.NoteDevice(ctx, d)
	}
	res, err := r.p.Prove(ctx, pr, nil)
	out := jobs.Output{SRSLoadMs: uint64(use.SRSLoad().Milliseconds()), GPUs: use.Devices()}
	if err != nil {
		return out, err
	}
	out.Proof, out.SynthesisMs, out.ProveMs = res.Proof, uint64(res.Synthesis.Milliseconds()), uint64(res.Prove.Milliseconds())
	return out, nil
}

func (r *gatedRunner) runOrder() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.order...)
}

// managerEngine is the Engine on a job manager directly, as the daemon's ProverAPI does it.
type managerEngine struct {
	m       *jobs.Manager
	params  *prover.ParamCache
	started time.Time
}

func (e *managerEngine) Submit(ctx context.Context, req rpcapi.ProofRequest) (rpcapi.SubmitResult, error) {
	return e.m.Submit(req, jobs.SubmitOpts{Origin: jobs.OriginOf(ctx, rpcapi.OriginNative)})
}

func (e *managerEngine) Await(ctx context.Context, id rpcapi.JobID) (rpcapi.JobResult, error) {
	return e.m.Await(ctx, id)
}

func (e *managerEngine) Cancel(_ context.Context, id rpcapi.JobID) (bool, error) {
	return e.m.Cancel(id)
}

func (e *managerEngine) Jobs(_ context.Context, f rpcapi.JobFilter) ([]rpcapi.Job, error) {
	return e.m.Jobs(f), nil
}

func (e *managerEngine) Status(context.Context) (rpcapi.StatusInfo, error) {
	snap := e.m.Snapshot()
	st := rpcapi.StatusInfo{StartedAt: e.started, Devices: []rpcapi.DeviceStatus{{Name: "cpu", CurrentJobIDs: snap.RunningIDs}}}
	for _, k := range rpcapi.Kinds {
		st.Queues = append(st.Queues, rpcapi.QueueStatus{Kind: k, Queued: snap.Queued[k], Running: snap.Running[k]})
	}
	for _, p := range e.params.Loaded() {
		st.Params = append(st.Params, rpcapi.ParamStatus{Circuit: p.Circuit, Bytes: p.Bytes, Loaded: p.Loaded})
	}
	for _, v := range snap.Stats.Completed {
		st.Completed += v
	}
	for _, v := range snap.Stats.Failed {
		st.Failed += v
	}
	return st, nil
}

type harness struct {
	runner *gatedRunner
	engine *managerEngine
	params *prover.ParamCache
	client pb.ProvingEngineClient
	addr   Address
}

// newHarness runs the service on a unix socket over a real job manager and journal with one
// worker, and dials it as Curio does.
func newHarness(t *testing.T, cfg config.Cuzk) *harness {
	t.Helper()
	return newHarnessWith(t, cfg, "")
}

// newHarnessWith is newHarness with filecoinDir as the Filecoin parameter directory.
func newHarnessWith(t *testing.T, cfg config.Cuzk, filecoinDir string) *harness {
	t.Helper()
	dir := t.TempDir()
	j, err := journal.Open(filepath.Join(dir, "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	params := prover.NewParamCache(filepath.Join(dir, "params"))
	if filecoinDir != "" {
		params = params.WithFilecoinDir(filecoinDir)
	}
	r := &gatedRunner{p: prover.New(prover.CPUBackend{}, params), started: make(chan string, 16), gates: map[uint64]chan struct{}{}, gpus: map[uint64][]int{}, fail: map[uint64]error{}}
	m, err := jobs.Open(j, r, jobs.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := &managerEngine{m: m, params: params, started: time.Now()}
	if cfg.ListenAddress == "" {
		cfg.ListenAddress = "unix://" + filepath.Join(dir, "cuzk.sock")
	}
	if cfg.MaxMessageBytes == 0 {
		cfg.MaxMessageBytes = config.MinCuzkMessageBytes
	}
	srv, err := Start(cfg, NewService(e, Options{SRS: NewParamSRS(params)}))
	if err != nil {
		t.Fatal(err)
	}
	client, conn, err := cuzktest.Dial(srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
		m.Close()
		j.Close()
	})
	return &harness{runner: r, engine: e, params: params, client: client, addr: srv.Addr()}
}

// waitStarted waits for a gated job to enter the runner; the bound only keeps a broken build
// from hanging the test run.
func (h *harness) waitStarted(t *testing.T, requestID string) {
	t.Helper()
	select {
	case got := <-h.runner.started:
		if got != requestID {
			t.Fatalf("gated job %q started, want %q", got, requestID)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("gated job %q never started", requestID)
	}
}

func testReq(id string, constraints, seed uint64, prio pb.Priority) *pb.SubmitProofRequest {
	return &pb.SubmitProofRequest{
		RequestId: id, ProofKind: pb.ProofKind_SNARKD_TEST, Priority: prio,
		SnarkdTest: &pb.SnarkdTestCircuit{Constraints: constraints, Seed: seed},
	}
}
