package cuzk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
	"github.com/snarkd/snarkd/testcircuit"
)

const testN = 64

func verifyTest(t *testing.T, proof []byte, n, seed uint64) {
	t.Helper()
	pk, err := testcircuit.DevnetParameters(context.Background(), int(n), seed, prover.DevnetParamSeed)
	if err != nil {
		t.Fatal(err)
	}
	proofs, err := groth16.ParseProofs(proof, 1)
	if err != nil {
		t.Fatalf("parsing proof: %v", err)
	}
	if err := groth16.Verify(&pk.VK, proofs[0], testcircuit.New(int(n), seed).PublicInputs()); err != nil {
		t.Fatalf("proof does not verify: %v", err)
	}
}

func wantCode(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if err == nil || st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Fatalf("got %v, want %s containing %q", err, code, msg)
	}
}

func TestProveSubmitAwait(t *testing.T) {
	h := newHarness(t, config.Cuzk{})
	ctx := context.Background()

	res, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("prove-1", testN, 1, pb.Priority_NORMAL)})
	if err != nil {
		t.Fatal(err)
	}
	r := res.GetResult()
	if r.Status != pb.AwaitProofResponse_COMPLETED || len(r.Proof) != 192 || r.JobId == "" {
		t.Fatalf("Prove: %v", r)
	}
	verifyTest(t, r.Proof, testN, 1)

	sub, err := h.client.SubmitProof(ctx, testReq("submit-1", testN, 2, pb.Priority_PRIORITY_UNSPECIFIED))
	if err != nil {
		t.Fatal(err)
	}
	aw, err := h.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: sub.JobId})
	if err != nil {
		t.Fatal(err)
	}
	if aw.Status != pb.AwaitProofResponse_COMPLETED || aw.JobId != sub.JobId {
		t.Fatalf("AwaitProof: %v", aw)
	}
	verifyTest(t, aw.Proof, testN, 2)

	st, err := h.client.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.TotalProofsCompleted != 2 || len(st.LoadedSrs) != 2 || st.LoadedSrs[0].SizeBytes == 0 || st.LoadedSrs[0].Tier != pb.SRSStatus_HOT {
		t.Fatalf("GetStatus after two proofs: %v", st)
	}
	mt, err := h.client.GetMetrics(ctx, &pb.GetMetricsRequest{})
	if err != nil || !strings.Contains(mt.PrometheusText, "cuzk_proofs_completed_total 2\n") {
		t.Fatalf("GetMetrics: %v %q", err, mt.GetPrometheusText())
	}
}

// TestQueue holds the only worker with a gated job, then checks what Curio relies on while
// work waits: queue depth in GetStatus, cancel of a queued job, a CRITICAL (WinningPoSt)
// request overtaking queued NORMAL (PoRep) work, and AwaitProof's timeout.
func TestQueue(t *testing.T) {
	h := newHarness(t, config.Cuzk{})
	ctx := context.Background()
	release := h.runner.gate(100)
	defer release()
	releaseWin := h.runner.gate(20) // the CRITICAL request, held on the PoSt-only worker
	defer releaseWin()

	a, err := h.client.SubmitProof(ctx, testReq("blocker", testN, 100, pb.Priority_NORMAL))
	if err != nil {
		t.Fatal(err)
	}
	h.waitStarted(t, "blocker")
	var ids []string
	for i, id := range []string{"porep-a", "porep-b"} {
		r, err := h.client.SubmitProof(ctx, testReq(id, testN, uint64(10+i), pb.Priority_NORMAL))
		if err != nil {
			t.Fatal(err)
		}
		if r.QueuePosition != uint32(i) {
			t.Errorf("%s queued at %d, want %d", id, r.QueuePosition, i)
		}
		ids = append(ids, r.JobId)
	}
	win, err := h.client.SubmitProof(ctx, testReq("winpost", testN, 20, pb.Priority_CRITICAL))
	if err != nil {
		t.Fatal(err)
	}
	if win.QueuePosition != 0 {
		t.Errorf("CRITICAL request queued at %d, want 0", win.QueuePosition)
	}
	h.waitStarted(t, "winpost")

	st, err := h.client.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var q *pb.QueueStatus
	for _, qs := range st.Queues {
		if qs.ProofKind == "test" {
			q = qs
		}
	}
	// The CRITICAL request runs at once on the daemon's PoSt-only worker; the two NORMAL ones wait.
	if q == nil || q.Pending != 2 || q.InProgress != 2 {
		t.Fatalf("test queue %v, want 2 pending and 2 in progress", q)
	}
	if len(st.Gpus) != 1 || (st.Gpus[0].CurrentJobId != a.JobId && st.Gpus[0].CurrentJobId != win.JobId) || st.Gpus[0].CurrentProofKind != "test" {
		t.Fatalf("devices %v, want the blocker or the CRITICAL request running", st.Gpus)
	}

	aw, err := h.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: a.JobId, TimeoutMs: 1})
	if err != nil || aw.Status != pb.AwaitProofResponse_TIMEOUT {
		t.Fatalf("AwaitProof of a held job with a 1 ms timeout: %v %v", aw, err)
	}

	c, err := h.client.CancelProof(ctx, &pb.CancelProofRequest{JobId: ids[0]})
	if err != nil || c.WasRunning {
		t.Fatalf("CancelProof of a queued job: %v %v", c, err)
	}
	aw, err = h.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: ids[0]})
	if err != nil || aw.Status != pb.AwaitProofResponse_CANCELLED {
		t.Fatalf("AwaitProof of the cancelled job: %v %v", aw, err)
	}
	st, err = h.client.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, qs := range st.Queues {
		if qs.ProofKind == "test" && qs.Pending != 1 {
			t.Fatalf("after the cancel: %v, want 1 pending", qs)
		}
	}

	release()
	releaseWin()
	for _, id := range []string{a.JobId, win.JobId, ids[1]} {
		aw, err := h.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: id})
		if err != nil || aw.Status != pb.AwaitProofResponse_COMPLETED {
			t.Fatalf("AwaitProof %s: %v %v", id, aw, err)
		}
	}
	order := h.runner.runOrder()
	want := []string{"blocker", "winpost", "porep-b"}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("run order %v, want %v", order, want)
	}
}

func TestCancelRunning(t *testing.T) {
	h := newHarness(t, config.Cuzk{})
	ctx := context.Background()
	release := h.runner.gate(7)
	defer release()
	a, err := h.client.SubmitProof(ctx, testReq("held", testN, 7, pb.Priority_NORMAL))
	if err != nil {
		t.Fatal(err)
	}
	h.waitStarted(t, "held")
	c, err := h.client.CancelProof(ctx, &pb.CancelProofRequest{JobId: a.JobId})
	if err != nil || !c.WasRunning {
		t.Fatalf("CancelProof of a running job: %v %v", c, err)
	}
	aw, err := h.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: a.JobId})
	if err != nil || aw.Status != pb.AwaitProofResponse_CANCELLED {
		t.Fatalf("AwaitProof: %v %v", aw, err)
	}
	_, err = h.client.CancelProof(ctx, &pb.CancelProofRequest{JobId: "no-such-job"})
	wantCode(t, err, codes.NotFound, "not found")
}

func TestRequestIDs(t *testing.T) {
	h := newHarness(t, config.Cuzk{})
	ctx := context.Background()
	first, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("porep-1000-5", testN, 5, pb.Priority_NORMAL)})
	if err != nil || first.Result.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("Prove: %v %v", first, err)
	}
	// The same request again (Curio retrying a task) is the same job and the same proof.
	again, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("porep-1000-5", testN, 5, pb.Priority_NORMAL)})
	if err != nil || again.Result.JobId != first.Result.JobId || string(again.Result.Proof) != string(first.Result.Proof) {
		t.Fatalf("Prove again: %v %v", again, err)
	}
	sub, err := h.client.SubmitProof(ctx, testReq("porep-1000-5", testN, 5, pb.Priority_NORMAL))
	if err != nil || sub.JobId != first.Result.JobId {
		t.Fatalf("SubmitProof of a known request: %v %v", sub, err)
	}
	// While a job runs, the same ID for different content is refused, never merged with it.
	release := h.runner.gate(7)
	defer release()
	running, err := h.client.SubmitProof(ctx, testReq("snap-1000-6", testN, 7, pb.Priority_NORMAL))
	if err != nil {
		t.Fatal(err)
	}
	h.waitStarted(t, "snap-1000-6")
	_, err = h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("snap-1000-6", testN, 8, pb.Priority_NORMAL)})
	wantCode(t, err, codes.AlreadyExists, `request ID "snap-1000-6" already names job `+running.JobId+` (running) with different content`)
	// Queued behind it, too.
	queued, err := h.client.SubmitProof(ctx, testReq("wdpost-1000-0-0a0b", testN, 9, pb.Priority_NORMAL))
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.client.SubmitProof(ctx, testReq("wdpost-1000-0-0a0b", testN, 9, pb.Priority_CRITICAL))
	wantCode(t, err, codes.AlreadyExists, queued.JobId+" (queued) with different content")
	release()
	for _, id := range []string{running.JobId, queued.JobId} {
		if aw, err := h.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: id}); err != nil || aw.Status != pb.AwaitProofResponse_COMPLETED {
			t.Fatalf("job %s after the conflicts: %v %v", id, aw, err)
		}
	}
	aw, err := h.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: first.Result.JobId})
	if err != nil || string(aw.Proof) != string(first.Result.Proof) {
		t.Fatalf("first job: %v %v", aw, err)
	}
	verifyTest(t, aw.Proof, testN, 5)
}

// TestRedoFinished: Curio's request IDs name the sector, so a sector proved again with new
// inputs comes under the ID of a finished job; as Curio's own cuzk daemon does, snarkd proves
// the new content as a new job, whether the old one is done or failed, and the old job stays
// readable by its ID. The native API behind the same manager keeps refusing new content under a
// done job's ID.
func TestRedoFinished(t *testing.T) {
	h := newHarness(t, config.Cuzk{})
	ctx := context.Background()
	first, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("porep-1000-5", testN, 5, pb.Priority_NORMAL)})
	if err != nil || first.Result.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("Prove: %v %v", first, err)
	}
	native := rpcapi.ProofRequest{RequestID: "porep-1000-5", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: testN, Seed: 6}}
	if _, err := h.engine.Submit(ctx, native); !errors.As(err, new(*rpcapi.ErrRequestConflict)) {
		t.Fatalf("native Submit of new content under a done job's ID: %v; want a conflict", err)
	}
	redo, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("porep-1000-5", testN, 6, pb.Priority_NORMAL)})
	if err != nil || redo.Result.Status != pb.AwaitProofResponse_COMPLETED || redo.Result.JobId == first.Result.JobId {
		t.Fatalf("redo of a done sector: %v %v; want a new completed job", redo, err)
	}
	verifyTest(t, redo.Result.Proof, testN, 6)
	old, err := h.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: first.Result.JobId})
	if err != nil || old.Status != pb.AwaitProofResponse_COMPLETED || string(old.Proof) != string(first.Result.Proof) {
		t.Fatalf("the superseded job by its ID: %v %v", old, err)
	}
	// The ID now names the redo: its content again is the same job.
	again, err := h.client.SubmitProof(ctx, testReq("porep-1000-5", testN, 6, pb.Priority_NORMAL))
	if err != nil || again.JobId != redo.Result.JobId {
		t.Fatalf("the redo's content again: %v %v; want job %s", again, err, redo.Result.JobId)
	}

	// A failed job's ID takes new content the same way.
	h.runner.mu.Lock()
	h.runner.fail[11] = errors.New("synthesis failed")
	h.runner.mu.Unlock()
	failed, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("porep-1000-9", testN, 11, pb.Priority_NORMAL)})
	if err != nil || failed.Result.Status != pb.AwaitProofResponse_FAILED {
		t.Fatalf("Prove of a failing job: %v %v", failed, err)
	}
	fixed, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("porep-1000-9", testN, 12, pb.Priority_NORMAL)})
	if err != nil || fixed.Result.Status != pb.AwaitProofResponse_COMPLETED || fixed.Result.JobId == failed.Result.JobId {
		t.Fatalf("new content under a failed job's ID: %v %v; want a new completed job", fixed, err)
	}
	verifyTest(t, fixed.Result.Proof, testN, 12)
}

func TestToken(t *testing.T) {
	h := newHarness(t, config.Cuzk{Token: "s3cret"})
	ctx := context.Background()
	_, err := h.client.GetStatus(ctx, &pb.GetStatusRequest{})
	wantCode(t, err, codes.Unauthenticated, "authorization: Bearer")
	_, err = h.client.GetStatus(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer wrong"), &pb.GetStatusRequest{})
	wantCode(t, err, codes.Unauthenticated, "invalid bearer token")
	if _, err := h.client.GetStatus(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer s3cret"), &pb.GetStatusRequest{}); err != nil {
		t.Fatal(err)
	}
}

// TestSRSWithoutCache: a service without an SRS (an Engine reached remotely) answers from the
// Engine's Status and neither loads nor drops anything.
func TestSRSWithoutCache(t *testing.T) {
	h := newHarness(t, config.Cuzk{})
	svc := NewService(h.engine, Options{})
	ctx := context.Background()
	_, err := svc.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "porep-32g"})
	wantCode(t, err, codes.Unimplemented, "load when the first proof needs them")
	_, err = svc.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "bogus"})
	wantCode(t, err, codes.InvalidArgument, `circuit_id "bogus": unknown`)
	ev, err := svc.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "wpost-32g"})
	if err != nil || ev.WasLoaded {
		t.Fatalf("EvictSRS of parameters never loaded: %v %v", ev, err)
	}
	if _, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("p", testN, 3, pb.Priority_NORMAL)}); err != nil {
		t.Fatal(err)
	}
	pre, err := svc.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: fmt.Sprintf("test-%d-3", testN)})
	if err != nil || !pre.AlreadyLoaded {
		t.Fatalf("PreloadSRS of loaded parameters: %v %v", pre, err)
	}
	st, err := svc.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil || len(st.LoadedSrs) != 1 || st.LoadedSrs[0].SizeBytes == 0 {
		t.Fatalf("GetStatus: %v %v", st, err)
	}
	_, err = svc.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: fmt.Sprintf("test-%d-3", testN)})
	wantCode(t, err, codes.Unimplemented, "not available")
}

func TestAddress(t *testing.T) {
	for _, c := range []struct {
		in       string
		network  string
		loopback bool
		err      bool
	}{
		{"unix:///run/snarkd/cuzk.sock", "unix", true, false},
		{"127.0.0.1:9820", "tcp", true, false},
		{"[::1]:9820", "tcp", true, false},
		{"localhost:9820", "tcp", true, false},
		{"tcp://127.0.0.1:9820", "tcp", true, false},
		{"0.0.0.0:9820", "tcp", false, false},
		{":9820", "tcp", false, false},
		{"10.0.0.5:9820", "tcp", false, false},
		{"unix://relative.sock", "", false, true},
		{"nonsense", "", false, true},
	} {
		a, err := ParseAddress(c.in)
		if (err != nil) != c.err {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if err == nil && (a.Network != c.network || a.Loopback() != c.loopback) {
			t.Errorf("%q: %+v loopback %v", c.in, a, a.Loopback())
		}
	}
}

// TestStaleSocket: a socket file left by a killed daemon is replaced; a live one is not.
func TestStaleSocket(t *testing.T) {
	h := newHarness(t, config.Cuzk{})
	if _, err := Start(config.Cuzk{ListenAddress: h.addr.String(), MaxMessageBytes: config.MinCuzkMessageBytes}, NewService(h.engine, Options{})); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second service on a live socket: %v", err)
	}
	if _, _, err := cuzktest.Dial(h.addr.String()); err != nil {
		t.Fatal(err)
	}
}
