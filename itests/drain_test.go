package itests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/rpcapi"
	"github.com/snarkd/snarkd/testcircuit"
)

// drainBigN is the test circuit of the job a drain interrupts or lets finish: its first use
// generates parameters and proves for a few seconds.
const drainBigN = 4096

// exited waits for the daemon to exit on its own and returns its exit status (nil: 0).
func (d *daemon) exited(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-d.done:
		return err
	case <-time.After(within):
		log, _ := os.ReadFile(filepath.Join(d.repo, "daemon.log"))
		t.Fatalf("daemon did not exit within %s; log:\n%s", within, log)
		return nil
	}
}

// waitRunning waits until the job runs.
func waitRunning(t *testing.T, api rpcapi.Prover, id rpcapi.JobID) {
	t.Helper()
	waitFor(t, "job running", func() bool {
		jobs, err := api.Jobs(context.Background(), rpcapi.JobFilter{JobIDs: []rpcapi.JobID{id}})
		return err == nil && len(jobs) == 1 && jobs[0].State == rpcapi.JobRunning
	})
}

// checkBigProof verifies a drainBigN proof against the verifying key the daemon cached (a
// second setup in this process would take as long as the job).
func checkBigProof(t *testing.T, repo string, seed uint64, proof []byte) {
	t.Helper()
	pk, err := groth16.OpenParameters(filepath.Join(repo, "params", fmt.Sprintf("test-%d-%d.params", drainBigN, seed)), groth16.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := groth16.ParseProofs(proof, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(&pk.VK, ps[0], testcircuit.New(drainBigN, seed).PublicInputs()); err != nil {
		t.Fatalf("proof: %v", err)
	}
}

// TestDrainLetsRunningJobFinish: SIGTERM while a job runs makes the daemon drain: new
// submissions are refused with the typed draining error, Status and `snarkd status` say so,
// the running job finishes and its awaiting client gets the proof, the queued job stays in the
// journal, and the process exits 0; the next start proves the queued job.
func TestDrainLetsRunningJobFinish(t *testing.T) {
	bin := buildDaemon(t)
	repo := t.TempDir()
	env := []string{"SNARKD_JOBS_WORKERS=1", "SNARKD_JOBS_DRAIN_GRACE=5m"}
	d := startDaemon(t, bin, repo, env)
	api := d.client(t, false)
	ctx := context.Background()
	a, err := api.Submit(ctx, rpcapi.ProofRequest{RequestID: "A", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: drainBigN, Seed: 31}})
	if err != nil {
		t.Fatal(err)
	}
	waitRunning(t, api, a.JobID)
	b, err := api.Submit(ctx, rpcapi.ProofRequest{RequestID: "B", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 128, Seed: 32}})
	if err != nil {
		t.Fatal(err)
	}
	type awaited struct {
		res rpcapi.JobResult
		err error
	}
	got := make(chan awaited, 1)
	go func() {
		res, err := api.Await(ctx, a.JobID)
		got <- awaited{res, err}
	}()

	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "draining in Status", func() bool {
		st, err := api.Status(ctx)
		return err == nil && st.Draining != nil
	})
	_, err = api.Submit(ctx, rpcapi.ProofRequest{RequestID: "C", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 128, Seed: 33}})
	var de *rpcapi.ErrDraining
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "draining") {
		t.Fatalf("submit while draining: %v, want *rpcapi.ErrDraining", err)
	}
	out, err := runCLI(bin, repo, "status")
	if err != nil || !strings.Contains(out, "draining: 1 job(s) running, 1 queued") {
		t.Logf("status while draining (the job may just have finished): %v\n%s", err, out)
		if !strings.Contains(out, "draining:") {
			t.Fatalf("status while draining: %v\n%s", err, out)
		}
	}

	r := <-got
	if r.err != nil || r.res.State != rpcapi.JobDone {
		t.Fatalf("A during the drain: %+v %v", r.res.Job, r.err)
	}
	checkBigProof(t, repo, 31, r.res.Proof)
	if err := d.exited(t, 2*time.Minute); err != nil {
		t.Fatalf("daemon exit: %v, want status 0", err)
	}

	d2 := startDaemon(t, bin, repo, env)
	api2 := d2.client(t, false)
	rb, err := api2.Await(ctx, b.JobID)
	if err != nil || rb.State != rpcapi.JobDone {
		t.Fatalf("B after restart: %+v %v", rb.Job, err)
	}
	verifyTestProof(t, rb.Proof, 128, 32, 1)
}

// TestDrainGraceHandsBack: with no grace, SIGTERM hands the running job back (queued again in
// the journal), the process exits 0, and the next start proves it. A grace of 0 rather than a
// short one: a fast runner finishes a drainBigN job (setup and proof) within a few hundred ms.
func TestDrainGraceHandsBack(t *testing.T) {
	bin := buildDaemon(t)
	repo := t.TempDir()
	env := []string{"SNARKD_JOBS_WORKERS=1", "SNARKD_JOBS_DRAIN_GRACE=0"}
	d := startDaemon(t, bin, repo, env)
	api := d.client(t, false)
	ctx := context.Background()
	a, err := api.Submit(ctx, rpcapi.ProofRequest{RequestID: "A", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: drainBigN, Seed: 41}})
	if err != nil {
		t.Fatal(err)
	}
	waitRunning(t, api, a.JobID)
	start := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := d.exited(t, 2*time.Minute); err != nil {
		t.Fatalf("daemon exit: %v, want status 0", err)
	}
	t.Logf("exited %s after SIGTERM", time.Since(start).Round(time.Millisecond))
	log, _ := os.ReadFile(filepath.Join(repo, "daemon.log"))
	if !strings.Contains(string(log), "handing back a running job") {
		t.Fatalf("no hand-back in the log:\n%s", log)
	}

	d2 := startDaemon(t, bin, repo, env)
	api2 := d2.client(t, false)
	ra, err := api2.Await(ctx, a.JobID)
	if err != nil || ra.State != rpcapi.JobDone {
		t.Fatalf("A after restart: %+v %v", ra.Job, err)
	}
	checkBigProof(t, repo, 41, ra.Proof)
}

// TestDrainCLI drives lotus-worker's commands against a running daemon: `worker tasks
// disable|enable`, `worker wait-quiet`, then `snarkd stop` with a job running (the drain
// starts) and `snarkd worker stop` (the second request skips the grace); the daemon exits 0
// and the job is proved after the next start.
func TestDrainCLI(t *testing.T) {
	bin := buildDaemon(t)
	repo := t.TempDir()
	env := []string{"SNARKD_JOBS_WORKERS=1", "SNARKD_JOBS_DRAIN_GRACE=10m"}
	d := startDaemon(t, bin, repo, env)

	out, err := runCLI(bin, repo, "worker", "tasks", "disable", "c2")
	if err != nil || !strings.Contains(out, "disabled C2 (seal/v0/commit/2)") || !strings.Contains(out, "advertised task types: PR2 (seal/v0/provereplicaupdate/2)") {
		t.Fatalf("tasks disable: %v\n%s", err, out)
	}
	var tasks struct{ Changed, Enabled []string }
	out, err = runCLI(bin, repo, "worker", "tasks", "enable", "--json", "--all")
	if err != nil || json.Unmarshal([]byte(out), &tasks) != nil || len(tasks.Enabled) != 2 {
		t.Fatalf("tasks enable --all: %v\n%s", err, out)
	}
	if out, err := runCLI(bin, repo, "worker", "tasks", "disable", "C3"); err == nil || !strings.Contains(out, `task type "C3": want one of C2`) {
		t.Fatalf("tasks disable C3: %v\n%s", err, out)
	}
	var quiet struct{ Quiet bool }
	if out, err := runCLI(bin, repo, "worker", "wait-quiet", "--json"); err != nil || json.Unmarshal([]byte(out), &quiet) != nil || !quiet.Quiet {
		t.Fatalf("wait-quiet: %v\n%s", err, out)
	}

	api := d.client(t, false)
	ctx := context.Background()
	a, err := api.Submit(ctx, rpcapi.ProofRequest{RequestID: "A", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: drainBigN, Seed: 51}})
	if err != nil {
		t.Fatal(err)
	}
	waitRunning(t, api, a.JobID)
	var st rpcapi.DrainStatus
	out, err = runCLI(bin, repo, "stop", "--json")
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || st.Running != 1 || st.Skipped || time.Until(st.Until) < 5*time.Minute {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	out, err = runCLI(bin, repo, "worker", "stop")
	if err != nil || !strings.Contains(out, "grace skipped") {
		t.Fatalf("worker stop: %v\n%s", err, out)
	}
	if err := d.exited(t, 2*time.Minute); err != nil {
		t.Fatalf("daemon exit: %v, want status 0", err)
	}

	d2 := startDaemon(t, bin, repo, env)
	api2 := d2.client(t, false)
	ra, err := api2.Await(ctx, a.JobID)
	if err != nil || ra.State != rpcapi.JobDone {
		t.Fatalf("A after restart: %+v %v", ra.Job, err)
	}
	checkBigProof(t, repo, 51, ra.Proof)
}
