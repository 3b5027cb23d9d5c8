package itests

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/rpcapi"
	"github.com/snarkd/snarkd/testcircuit"
)

// TestRestartSafety SIGKILLs the daemon with a native job running, one queued, a Lotus call
// queued and a Lotus result produced but not yet accepted by the miner. After a restart on the
// same repo: the native jobs complete with valid proofs, the queued Lotus call is reported
// with code 101, and the undelivered result is delivered.
func TestRestartSafety(t *testing.T) {
	bin := buildDaemon(t)
	m := newStandIn(t, 100*time.Millisecond)
	repo := t.TempDir()
	env := append([]string{"SNARKD_JOBS_WORKERS=1"}, lotusEnv...)
	d1 := startDaemon(t, bin, repo, env, "--miner-api-info", m.apiInfo())
	waitFor(t, "WorkerConnect", func() bool { _, ok := m.worker(); return ok })
	w, _ := m.worker()
	ctx := context.Background()

	// L0: its verdict is ready at once, but the miner refuses it for now.
	m.setRefuse(true)
	l0, err := w.API.SealCommit2(ctx, rpcapi.SectorRef{ID: abi.SectorID{Miner: 1000, Number: 1}, ProofType: 5}, []byte(c1For2KiB))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "refused deliveries", func() bool { m.mu.Lock(); defer m.mu.Unlock(); return m.attempts >= 2 })

	// A runs (its first use generates parameters, which takes seconds); B and L1 wait behind it.
	api := d1.client(t, false)
	const bigN, smallN = 4096, 128
	a, err := api.Submit(ctx, rpcapi.ProofRequest{RequestID: "A", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: bigN, Seed: 11}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := api.Submit(ctx, rpcapi.ProofRequest{RequestID: "B", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: smallN, Seed: 12}})
	if err != nil {
		t.Fatal(err)
	}
	l1, err := w.API.SealCommit2(ctx, rpcapi.SectorRef{ID: abi.SectorID{Miner: 1000, Number: 2}, ProofType: 5}, []byte(c1For2KiB))
	if err != nil {
		t.Fatal(err)
	}
	states := func(api rpcapi.Prover) map[string]rpcapi.Job {
		list, err := api.Jobs(ctx, rpcapi.JobFilter{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]rpcapi.Job{}
		for _, j := range list {
			out[j.RequestID] = j
		}
		return out
	}
	l0ID, l1ID := "lotus:"+l0.String(), "lotus:"+l1.String()
	before := states(api)
	if before["A"].State != rpcapi.JobRunning || before["B"].State != rpcapi.JobQueued ||
		before[l1ID].State != rpcapi.JobQueued || before[l0ID].State != rpcapi.JobFailed || before[l0ID].Delivered {
		t.Fatalf("before the kill: A %s, B %s, L1 %s, L0 %s delivered=%v",
			before["A"].State, before["B"].State, before[l1ID].State, before[l0ID].State, before[l0ID].Delivered)
	}

	// While A keeps the CPU busy the miner's heartbeat and Info are answered.
	m.mu.Lock()
	pollErrs := m.pollErrs
	m.mu.Unlock()
	if pollErrs != 0 {
		t.Fatalf("%d failed Session polls while proving", pollErrs)
	}
	if info, err := w.API.Info(ctx); err != nil || info.Hostname != "itest-worker" {
		t.Fatalf("Info while proving: %+v %v", info, err)
	}
	if s, err := w.API.Session(ctx); err != nil || s != w.Session {
		t.Fatalf("Session while proving: %v %v", s, err)
	}

	d1.kill()
	m.setRefuse(false)
	d2 := startDaemon(t, bin, repo, env, "--miner-api-info", m.apiInfo())

	got := map[rpcapi.CallID]recordedReturn{}
	for len(got) < 2 {
		r := m.nextReturn(t)
		got[r.CallID] = r
	}
	if r := got[l0]; r.Err == nil || r.Err.Code != rpcapi.ErrUnknown || !strings.Contains(r.Err.Message, "Phase1Out: ") {
		t.Fatalf("L0 after restart: %+v", r)
	}
	if r := got[l1]; r.Err == nil || r.Err.Code != rpcapi.ErrTempWorkerRestart || r.Err.Message != "worker [name: itest-worker] restarted" || r.Proof != nil {
		t.Fatalf("L1 after restart: %+v", r)
	}

	api2 := d2.client(t, false)
	ra, err := api2.Await(ctx, a.JobID)
	if err != nil || ra.State != rpcapi.JobDone {
		t.Fatalf("A after restart: %+v %v", ra.Job, err)
	}
	rb, err := api2.Await(ctx, b.JobID)
	if err != nil || rb.State != rpcapi.JobDone {
		t.Fatalf("B after restart: %+v %v", rb.Job, err)
	}
	verifyTestProof(t, rb.Proof, smallN, 12, 1)
	// A's parameters are big to generate under the race detector: check its proof against the
	// verifying key the daemon cached, with this process's verifier.
	pk, err := groth16.OpenParameters(filepath.Join(repo, "params", "test-4096-11.params"), groth16.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pa, err := groth16.ParseProofs(ra.Proof, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(&pk.VK, pa[0], testcircuit.New(bigN, 11).PublicInputs()); err != nil {
		t.Fatalf("A's proof: %v", err)
	}
	waitFor(t, "deliveries recorded", func() bool {
		after := states(api2)
		return after[l0ID].Delivered && after[l1ID].Delivered
	})
	// Resubmitting A's request ID returns the same (finished) job.
	again, err := api2.Submit(ctx, rpcapi.ProofRequest{RequestID: "A", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: bigN, Seed: 11}})
	if err != nil || again.JobID != a.JobID || !again.Existing || again.State != rpcapi.JobDone {
		t.Fatalf("resubmit A: %+v %v", again, err)
	}
}
