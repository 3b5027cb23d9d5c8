package itests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
)

// startCuzkDaemon runs `snarkd run --cuzk-listen unix://<repo>/cuzk.sock` in a new repo and
// dials the socket the way Curio does. prepare runs on the repo before the daemon starts.
func startCuzkDaemon(t *testing.T, env []string, prepare func(repo string)) (*daemon, pb.ProvingEngineClient) {
	t.Helper()
	repo := t.TempDir()
	if prepare != nil {
		prepare(repo)
	}
	return startCuzkDaemonIn(t, repo, env)
}

// startCuzkDaemonIn is startCuzkDaemon on an existing repo (a restart).
func startCuzkDaemonIn(t *testing.T, repo string, env []string) (*daemon, pb.ProvingEngineClient) {
	t.Helper()
	bin := buildDaemon(t)
	sock := cuzkTarget(repo)
	d := startDaemon(t, bin, repo, env, "--cuzk-listen", sock)
	client, conn, err := cuzktest.Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return d, client
}

// dialCuzk opens another connection to the daemon's service.
func dialCuzk(t *testing.T, d *daemon) (pb.ProvingEngineClient, error) {
	t.Helper()
	client, conn, err := cuzktest.Dial(cuzkTarget(d.repo))
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { conn.Close() })
	return client, nil
}

// cuzkProve sends a Curio-shaped request through Prove, as Curio does, logs its time as
// "TIMING <what> cuzk Prove" and returns the proof of the completed job.
func cuzkProve(t *testing.T, c pb.ProvingEngineClient, what string, req *pb.SubmitProofRequest) []byte {
	t.Helper()
	start := time.Now()
	res, err := c.Prove(context.Background(), &pb.ProveRequest{Submit: req})
	if err != nil {
		t.Fatalf("Prove %s: %v", req.RequestId, err)
	}
	if r := res.GetResult(); r.GetStatus() != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("Prove %s: %v", req.RequestId, r)
	}
	logTiming(t, what+" cuzk Prove", time.Since(start))
	return res.Result.Proof
}

// cuzkSubmitAwait sends a Curio-shaped request through SubmitProof and waits for it with
// AwaitProof (no timeout: proving speed is not under test), logs the time from the submission
// to the answer as "TIMING <what> cuzk SubmitProof to AwaitProof" and returns the proof.
func cuzkSubmitAwait(t *testing.T, c pb.ProvingEngineClient, what string, req *pb.SubmitProofRequest) []byte {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	sub, err := c.SubmitProof(ctx, req)
	if err != nil {
		t.Fatalf("SubmitProof %s: %v", req.RequestId, err)
	}
	aw, err := c.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: sub.JobId})
	if err != nil {
		t.Fatalf("AwaitProof %s (job %s): %v", req.RequestId, sub.JobId, err)
	}
	if aw.Status != pb.AwaitProofResponse_COMPLETED || aw.JobId != sub.JobId {
		t.Fatalf("AwaitProof %s (job %s): %v", req.RequestId, sub.JobId, aw)
	}
	logTiming(t, what+" cuzk SubmitProof to AwaitProof", time.Since(start))
	return aw.Proof
}

// cuzkTarget is where a daemon started by startCuzkDaemon in repo serves the cuzk service.
func cuzkTarget(repo string) string { return "unix://" + filepath.Join(repo, "cuzk.sock") }

// paramGate holds the first job of a test circuit (constraints, seed) in the daemon's worker:
// it puts a FIFO where the daemon's parameter cache looks for that circuit's parameters, so
// the job blocks opening it until release writes nothing and closes it; the cache then finds
// an empty file, regenerates the parameters and the job proves normally. This keeps a worker
// busy for exactly as long as a test needs, with no timing involved.
func paramGate(t *testing.T, repo string, constraints int, seed uint64) (release func()) {
	t.Helper()
	dir := filepath.Join(repo, "params")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("test-%d-%d.params", constraints, seed))
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	released := false
	return func() {
		if released {
			return
		}
		released = true
		// Opening for writing pairs with the daemon's pending open for reading.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatalf("releasing parameter gate: %v", err)
		}
		f.Close()
	}
}
