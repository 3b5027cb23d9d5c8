package itests

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/rpcapi"
)

const cuzkN = 64

func cuzkTestReq(id string, seed uint64, prio pb.Priority) *pb.SubmitProofRequest {
	return &pb.SubmitProofRequest{RequestId: id, ProofKind: pb.ProofKind_SNARKD_TEST, Priority: prio,
		SnarkdTest: &pb.SnarkdTestCircuit{Constraints: cuzkN, Seed: seed}}
}

func wantStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if err == nil || st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Fatalf("got %v, want %s containing %q", err, code, msg)
	}
}

// checkFilecoinProof accepts the answer to a well-formed Filecoin request: Unimplemented while
// the kind's circuit is not in the build; once it is, a completed proof of whole 192-byte
// partitions (verified by the daemon against the verifying key before it answers), or a
// failure that says why (the daemon runs with an empty parameter directory here, so a circuit
// whose parameters are missing fails instead of proving for minutes).
func checkFilecoinProof(t *testing.T, res *pb.ProveResponse, err error, unsupported string) {
	t.Helper()
	if err != nil {
		wantStatus(t, err, codes.Unimplemented, unsupported)
		return
	}
	r := res.GetResult()
	switch r.GetStatus() {
	case pb.AwaitProofResponse_COMPLETED:
		if len(r.Proof) == 0 || len(r.Proof)%192 != 0 {
			t.Fatalf("Filecoin proof of %d bytes", len(r.Proof))
		}
	case pb.AwaitProofResponse_FAILED:
		if r.ErrorMessage == "" {
			t.Fatalf("failed Filecoin proof without a reason: %v", r)
		}
		t.Logf("Filecoin proof failed: %s", r.ErrorMessage)
	default:
		t.Fatalf("Filecoin proof: %v", r)
	}
}

func queueOf(t *testing.T, c pb.ProvingEngineClient, kind string) *pb.QueueStatus {
	t.Helper()
	st, err := c.GetStatus(context.Background(), &pb.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range st.Queues {
		if q.ProofKind == kind {
			return q
		}
	}
	t.Fatalf("GetStatus has no %s queue: %v", kind, st.Queues)
	return nil
}

// TestCuzkProve drives `snarkd run --cuzk-listen` with a client built from the same proto, as
// Curio does: Prove, SubmitProof + AwaitProof with proofs that verify, request-ID idempotence,
// Curio-shaped Filecoin requests (2KiB and 8MiB PoRep, WinningPoSt, WindowPoSt, SnapDeals),
// malformed requests, and metrics that come from the daemon itself.
func TestCuzkProve(t *testing.T) {
	d, c := startCuzkDaemon(t, []string{"FIL_PROOFS_PARAMETER_CACHE=" + t.TempDir()}, nil)
	ctx := context.Background()

	res, err := c.Prove(ctx, &pb.ProveRequest{Submit: cuzkTestReq("prove-1", 1, pb.Priority_NORMAL)})
	if err != nil || res.Result.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("Prove: %v %v", res, err)
	}
	verifyTestProof(t, res.Result.Proof, cuzkN, 1, 1)

	sub, err := c.SubmitProof(ctx, cuzkTestReq("submit-1", 2, pb.Priority_PRIORITY_UNSPECIFIED))
	if err != nil {
		t.Fatal(err)
	}
	aw, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: sub.JobId, TimeoutMs: 600_000})
	if err != nil || aw.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("AwaitProof: %v %v", aw, err)
	}
	verifyTestProof(t, aw.Proof, cuzkN, 2, 1)

	// The gRPC job is the native API's job: one job manager behind both.
	job, err := d.client(t, false).Await(ctx, rpcapi.JobID(sub.JobId))
	if err != nil || job.RequestID != "submit-1" || !bytes.Equal(job.Proof, aw.Proof) {
		t.Fatalf("native Await of the gRPC job: %+v %v", job.Job, err)
	}

	// Idempotence: the same request is the same job and proof. The same ID with other content
	// after the job is done is a redo, as Curio's cuzk daemon proves every submission: a new
	// job proves the new content, and the first job still answers by its job ID.
	again, err := c.Prove(ctx, &pb.ProveRequest{Submit: cuzkTestReq("prove-1", 1, pb.Priority_NORMAL)})
	if err != nil || again.Result.JobId != res.Result.JobId || !bytes.Equal(again.Result.Proof, res.Result.Proof) {
		t.Fatalf("Prove with a known request ID: %v %v", again, err)
	}
	redo, err := c.Prove(ctx, &pb.ProveRequest{Submit: cuzkTestReq("prove-1", 3, pb.Priority_NORMAL)})
	if err != nil || redo.Result.Status != pb.AwaitProofResponse_COMPLETED || redo.Result.JobId == res.Result.JobId {
		t.Fatalf("Prove of a done request ID with new content: %v %v", redo, err)
	}
	verifyTestProof(t, redo.Result.Proof, cuzkN, 3, 1)
	if first, err := d.client(t, false).Await(ctx, rpcapi.JobID(res.Result.JobId)); err != nil || !bytes.Equal(first.Proof, res.Result.Proof) {
		t.Fatalf("the first job after its request ID was redone: %+v %v", first.Job, err)
	}

	// Curio's Filecoin requests pass the wire checks and reach the job manager, which refuses
	// the kinds whose circuits are not in this build yet (nothing is queued) and runs the others.
	for _, spt := range []abi.RegisteredSealProof{abi.RegisteredSealProof_StackedDrg2KiBV1_1, abi.RegisteredSealProof_StackedDrg8MiBV1_1} {
		in, err := cuzktest.Commit2In(ctx, spt, 1000, 5, 1)
		if err != nil {
			t.Fatal(err)
		}
		size, _ := spt.SectorSize()
		res, err := c.Prove(ctx, &pb.ProveRequest{Submit: &pb.SubmitProofRequest{RequestId: fmt.Sprintf("porep-1000-5-%d", spt),
			ProofKind: pb.ProofKind_POREP_SEAL_COMMIT, SectorSize: uint64(size), RegisteredProof: uint64(spt),
			Priority: pb.Priority_NORMAL, VanillaProof: in, SectorNumber: 5, MinerId: 1000}})
		checkFilecoinProof(t, res, err, `proof kind "porep-c2" is not supported yet`)
	}
	win, err := cuzktest.PoStInput(ctx, abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, 1000, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := cuzktest.PoStInput(ctx, abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, 1000, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	comm := bytes.Repeat([]byte{1}, 32)
	for _, req := range []*pb.SubmitProofRequest{
		{RequestId: "winpost-1000-01", ProofKind: pb.ProofKind_WINNING_POST, SectorSize: 2048, RegisteredProof: uint64(win.Proof),
			Priority: pb.Priority_CRITICAL, VanillaProofs: win.Vanilla, MinerId: 1000, Randomness: win.Randomness[:]},
		{RequestId: "wdpost-1000-0-01", ProofKind: pb.ProofKind_WINDOW_POST_PARTITION, SectorSize: 2048, RegisteredProof: uint64(wd.Proof),
			Priority: pb.Priority_HIGH, VanillaProofs: wd.Vanilla, MinerId: 1000, Randomness: wd.Randomness[:]},
		{RequestId: "snap-1000-5", ProofKind: pb.ProofKind_SNAP_DEALS_UPDATE, SectorSize: 2048, RegisteredProof: 0,
			Priority: pb.Priority_NORMAL, VanillaProofs: [][]byte{{1}}, SectorNumber: 5, MinerId: 1000, CommROld: comm, CommRNew: comm, CommDNew: comm},
	} {
		res, err := c.Prove(ctx, &pb.ProveRequest{Submit: req})
		checkFilecoinProof(t, res, err, "is not supported yet")
	}

	// Malformed requests: InvalidArgument naming the field.
	for _, bad := range []struct {
		req *pb.SubmitProofRequest
		msg string
	}{
		{&pb.SubmitProofRequest{RequestId: "x", ProofKind: 42}, "proof_kind: value 42 is not a proof kind"},
		{&pb.SubmitProofRequest{RequestId: "x", ProofKind: pb.ProofKind_POREP_SEAL_COMMIT, RegisteredProof: 5,
			VanillaProof: []byte(`{"SectorNum":5,"Phase1Out":"bm90IGpzb24=","SectorSize":2048}`), SectorNumber: 5}, "vanilla_proof: Commit2In.Phase1Out: malformed C1 output JSON"},
		{&pb.SubmitProofRequest{RequestId: "x", ProofKind: pb.ProofKind_WINNING_POST, RegisteredProof: uint64(win.Proof),
			VanillaProofs: [][]byte{win.Vanilla[0][:40]}, Randomness: win.Randomness[:]}, "vanilla_proofs[0]: not a bincode FallbackPoStSectorProof"},
		{&pb.SubmitProofRequest{RequestId: "x", ProofKind: pb.ProofKind_WINDOW_POST_PARTITION, RegisteredProof: uint64(wd.Proof),
			VanillaProofs: wd.Vanilla, Randomness: wd.Randomness[:31]}, "randomness: 31 bytes, want 32"},
	} {
		_, err := c.Prove(ctx, &pb.ProveRequest{Submit: bad.req})
		wantStatus(t, err, codes.InvalidArgument, bad.msg)
	}
	if q := queueOf(t, c, "porep-c2"); q.Pending != 0 || q.InProgress != 0 {
		t.Fatalf("porep queue after refused requests: %v", q)
	}

	// Still proving after all that, and the daemon's own metrics come through GetMetrics.
	if r, err := c.Prove(ctx, &pb.ProveRequest{Submit: cuzkTestReq("prove-2", 4, pb.Priority_NORMAL)}); err != nil || r.Result.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("Prove after bad requests: %v %v", r, err)
	}
	m, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// Four test proofs: submit-1, prove-1, its redo and prove-2.
	for _, want := range []string{`snarkd_jobs_completed_total{kind="test"} 4`, "cuzk_proofs_completed_total 4\n", "snarkd_params_bytes{circuit=\"test-64-1\"}"} {
		if !strings.Contains(m.PrometheusText, want) {
			t.Errorf("GetMetrics lacks %q:\n%s", want, m.PrometheusText)
		}
	}
	st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil || st.TotalProofsCompleted != 4 || len(st.LoadedSrs) == 0 || st.LoadedSrs[0].SizeBytes == 0 || len(st.Gpus) == 0 {
		t.Fatalf("GetStatus: %v %v", st, err)
	}
}

// TestCuzkQueue holds the daemon's only worker (a parameter gate), then checks GetStatus while
// jobs wait, CancelProof of a queued job, AwaitProof's timeout, and that a WinningPoSt-priority
// request sent behind queued PoRep-priority work runs first.
func TestCuzkQueue(t *testing.T) {
	var release func()
	d, c := startCuzkDaemon(t, []string{"SNARKD_JOBS_WORKERS=1"}, func(repo string) {
		release = paramGate(t, repo, cuzkN, 100)
	})
	ctx := context.Background()
	blocker, err := c.SubmitProof(ctx, cuzkTestReq("blocker", 100, pb.Priority_NORMAL))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the blocker to run", func() bool {
		st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
		return err == nil && len(st.Gpus) > 0 && st.Gpus[0].CurrentJobId == blocker.JobId
	})

	var porep []string
	for i, id := range []string{"porep-1000-1", "porep-1000-2", "porep-1000-3"} {
		r, err := c.SubmitProof(ctx, cuzkTestReq(id, uint64(10+i), pb.Priority_NORMAL))
		if err != nil {
			t.Fatal(err)
		}
		porep = append(porep, r.JobId)
	}
	winpost, err := c.SubmitProof(ctx, cuzkTestReq("winpost-1000-aa", 20, pb.Priority_CRITICAL))
	if err != nil {
		t.Fatal(err)
	}
	if winpost.QueuePosition != 0 {
		t.Errorf("CRITICAL request at queue position %d, want 0", winpost.QueuePosition)
	}
	// The CRITICAL request runs at once on the daemon's PoSt-only worker (and may be done by
	// now); the NORMAL ones wait behind the held blocker.
	native := d.client(t, false)
	waitFor(t, "the CRITICAL request to start", func() bool {
		js, err := native.Jobs(ctx, rpcapi.JobFilter{})
		if err != nil {
			return false
		}
		for _, j := range js {
			if j.ID == rpcapi.JobID(winpost.JobId) {
				return !j.Started.IsZero()
			}
		}
		return false
	})
	if q := queueOf(t, c, "test"); q.Pending != 3 || q.InProgress < 1 || q.InProgress > 2 {
		t.Fatalf("queue while the blocker is held: %v, want 3 pending and the blocker (and perhaps the CRITICAL request) in progress", q)
	}
	st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil || st.Gpus[0].CurrentProofKind != "test" {
		t.Fatalf("GetStatus device: %v %v", st, err)
	}

	aw, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: blocker.JobId, TimeoutMs: 1})
	if err != nil || aw.Status != pb.AwaitProofResponse_TIMEOUT {
		t.Fatalf("AwaitProof of the held job with a 1 ms timeout: %v %v", aw, err)
	}
	cr, err := c.CancelProof(ctx, &pb.CancelProofRequest{JobId: porep[1]})
	if err != nil || cr.WasRunning {
		t.Fatalf("CancelProof of a queued job: %v %v", cr, err)
	}
	if q := queueOf(t, c, "test"); q.Pending != 2 {
		t.Fatalf("queue after the cancel: %v, want 2 pending", q)
	}
	aw, err = c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: porep[1]})
	if err != nil || aw.Status != pb.AwaitProofResponse_CANCELLED {
		t.Fatalf("AwaitProof of the cancelled job: %v %v", aw, err)
	}

	release()
	for _, id := range []string{blocker.JobId, winpost.JobId, porep[0], porep[2]} {
		aw, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: id})
		if err != nil || aw.Status != pb.AwaitProofResponse_COMPLETED {
			t.Fatalf("AwaitProof %s: %v %v", id, aw, err)
		}
	}
	jobs, err := d.client(t, false).Jobs(ctx, rpcapi.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	started := map[string]rpcapi.Job{}
	for _, j := range jobs {
		started[j.RequestID] = j
	}
	w := started["winpost-1000-aa"]
	for _, id := range []string{"porep-1000-1", "porep-1000-3"} {
		if !w.Started.Before(started[id].Started) {
			t.Errorf("WinningPoSt-priority job started %v, not before queued %s (%v)", w.Started, id, started[id].Started)
		}
	}
	if started["porep-1000-2"].State != rpcapi.JobCancelled || !started["porep-1000-2"].Started.IsZero() {
		t.Errorf("cancelled job: %+v", started["porep-1000-2"])
	}
}

// TestCuzkBadListen: a listen address that cannot work stops the daemon at start.
func TestCuzkBadListen(t *testing.T) {
	bin := buildDaemon(t)
	out, err := exec.Command(bin, "--repo", t.TempDir(), "run", "--listen", "127.0.0.1:0", "--cuzk-listen", "unix://relative.sock").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Cuzk.ListenAddress") {
		t.Fatalf("snarkd run with a bad --cuzk-listen: %v\n%s", err, out)
	}
}

// TestCuzkRestart: a job submitted over gRPC survives a daemon crash, and Curio's retry with
// the same request ID after the restart finds that job instead of starting another.
func TestCuzkRestart(t *testing.T) {
	var (
		repo    string
		release func()
	)
	d, c := startCuzkDaemon(t, nil, func(r string) {
		repo = r
		release = paramGate(t, r, cuzkN, 200)
	})
	ctx := context.Background()
	first, err := c.SubmitProof(ctx, cuzkTestReq("porep-1000-77", 200, pb.Priority_NORMAL))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job to run", func() bool { return queueOf(t, c, "test").InProgress == 1 })
	d.kill()

	// The gate is still in place, so the re-queued job holds the worker again after the restart.
	_, c = startCuzkDaemonIn(t, repo, nil)
	again, err := c.SubmitProof(ctx, cuzkTestReq("porep-1000-77", 200, pb.Priority_NORMAL))
	if err != nil || again.JobId != first.JobId {
		t.Fatalf("resubmission after the restart: %v %v, want job %s", again, err, first.JobId)
	}
	waitFor(t, "the re-queued job to run", func() bool { return queueOf(t, c, "test").InProgress == 1 })
	release()
	res, err := c.Prove(ctx, &pb.ProveRequest{Submit: cuzkTestReq("porep-1000-77", 200, pb.Priority_NORMAL)})
	if err != nil || res.Result.Status != pb.AwaitProofResponse_COMPLETED || res.Result.JobId != first.JobId {
		t.Fatalf("Prove after the restart: %v %v", res, err)
	}
	verifyTestProof(t, res.Result.Proof, cuzkN, 200, 1)
}

// TestCuzkConcurrent: Curio keeps several Prove calls in flight (MaxPending); 24 calls from 8
// connections, a third of them repeating another's request ID, each get their own job (or
// the repeated one's), and every proof verifies.
func TestCuzkConcurrent(t *testing.T) {
	d, c := startCuzkDaemon(t, []string{"SNARKD_JOBS_WORKERS=2"}, nil)
	ctx := context.Background()
	const conns, perConn = 8, 3
	type answer struct {
		rid   string
		seed  uint64
		job   string
		proof []byte
		err   error
	}
	answers := make(chan answer, conns*perConn)
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		client := c
		if i > 0 {
			var err error
			if client, err = dialCuzk(t, d); err != nil {
				t.Fatal(err)
			}
		}
		wg.Add(1)
		go func(i int, client pb.ProvingEngineClient) {
			defer wg.Done()
			for k := 0; k < perConn; k++ {
				n := i*perConn + k
				if k == perConn-1 {
					n = ((i + 1) % conns) * perConn // the first request of the next connection, again
				}
				rid, seed := fmt.Sprintf("porep-1000-%d", n), uint64(1000+n)
				res, err := client.Prove(ctx, &pb.ProveRequest{Submit: cuzkTestReq(rid, seed, pb.Priority_NORMAL)})
				a := answer{rid: rid, seed: seed, err: err}
				if err == nil {
					if res.Result.Status != pb.AwaitProofResponse_COMPLETED {
						a.err = fmt.Errorf("status %v: %s", res.Result.Status, res.Result.ErrorMessage)
					}
					a.job, a.proof = res.Result.JobId, res.Result.Proof
				}
				answers <- a
			}
		}(i, client)
	}
	wg.Wait()
	close(answers)
	jobOf := map[string]string{}
	ridOf := map[string]string{}
	for a := range answers {
		if a.err != nil {
			t.Fatalf("%s: %v", a.rid, a.err)
		}
		if j, ok := jobOf[a.rid]; ok && j != a.job {
			t.Fatalf("request %s answered by jobs %s and %s", a.rid, j, a.job)
		}
		if r, ok := ridOf[a.job]; ok && r != a.rid {
			t.Fatalf("job %s answered requests %s and %s", a.job, r, a.rid)
		}
		jobOf[a.rid], ridOf[a.job] = a.job, a.rid
		verifyTestProof(t, a.proof, cuzkN, a.seed, 1)
	}
	if len(jobOf) != conns*(perConn-1) {
		t.Fatalf("%d distinct requests proved, want %d", len(jobOf), conns*(perConn-1))
	}
}
