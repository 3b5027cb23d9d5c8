package itests

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/rpcapi"
	"github.com/snarkd/snarkd/testcircuit"
)

// TestLoad submits 200 test-circuit proofs from 20 clients at once (each also resubmits one of
// its request IDs), then a WinningPoSt-class job last. Every proof must verify, no job may be
// lost or duplicated, the WinningPoSt-class job must jump the queue, and /metrics must agree
// with what the clients saw.
func TestLoad(t *testing.T) {
	const clients, perClient, n, seed = 20, 10, 64, 3
	bin := buildDaemon(t)
	d := startDaemon(t, bin, t.TempDir(), []string{"SNARKD_JOBS_WORKERS=2"})
	ctx := context.Background()
	req := func(id string) rpcapi.ProofRequest {
		return rpcapi.ProofRequest{RequestID: id, Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: n, Seed: seed}}
	}
	// Warm the parameter cache so the queue, not setup, dominates.
	if _, err := d.client(t, false).Prove(ctx, req("warmup")); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	ids := map[rpcapi.JobID]string{}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := 0; c < clients; c++ {
		api := d.client(t, false) // one connection per client
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			var first rpcapi.JobID
			for i := 0; i < perClient; i++ {
				rid := fmt.Sprintf("client%d-req%d", c, i)
				res, err := api.Submit(ctx, req(rid))
				if err != nil {
					errs <- fmt.Errorf("%s: %w", rid, err)
					return
				}
				if i == 0 {
					first = res.JobID
				}
				mu.Lock()
				if prev, dup := ids[res.JobID]; dup {
					errs <- fmt.Errorf("job %s returned for %s and %s", res.JobID, prev, rid)
				}
				ids[res.JobID] = rid
				mu.Unlock()
			}
			again, err := api.Submit(ctx, req(fmt.Sprintf("client%d-req0", c)))
			if err != nil || again.JobID != first || !again.Existing {
				errs <- fmt.Errorf("client %d resubmission: %+v %v", c, again, err)
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	api := d.client(t, false)
	queued, err := api.Jobs(ctx, rpcapi.JobFilter{States: []rpcapi.JobState{rpcapi.JobQueued}})
	if err != nil {
		t.Fatal(err)
	}
	winning := rpcapi.PriorityWinningPoSt
	wreq := req("winning-last")
	wreq.Priority = &winning
	wres, err := api.Submit(ctx, wreq)
	if err != nil {
		t.Fatal(err)
	}
	if wres.QueuePosition != 0 {
		t.Errorf("WinningPoSt-class job queued at position %d, want 0", wres.QueuePosition)
	}

	// Await everything from 20 clients; verify every proof.
	pk := testParams(t, n, seed)
	pvk, err := groth16.Prepare(&pk.VK)
	if err != nil {
		t.Fatal(err)
	}
	inputs := testcircuit.New(n, seed).PublicInputs()
	all := make([]rpcapi.JobID, 0, len(ids)+1)
	for id := range ids {
		all = append(all, id)
	}
	all = append(all, wres.JobID)
	results := make([]rpcapi.JobResult, len(all))
	var wg2 sync.WaitGroup
	for c := 0; c < clients; c++ {
		capi := d.client(t, false)
		wg2.Add(1)
		go func(c int) {
			defer wg2.Done()
			for i := c; i < len(all); i += clients {
				r, err := capi.Await(ctx, all[i])
				if err != nil {
					t.Errorf("await %s: %v", all[i], err)
					continue
				}
				results[i] = r
			}
		}(c)
	}
	wg2.Wait()
	proofs := map[string]bool{}
	for _, r := range results {
		if r.State != rpcapi.JobDone {
			t.Fatalf("job %s (%s) ended %s: %s", r.ID, r.RequestID, r.State, r.Error)
		}
		pr, err := groth16.ParseProof(r.Proof)
		if err != nil {
			t.Fatalf("job %s: %v", r.ID, err)
		}
		if err := pvk.Verify(pr, inputs); err != nil {
			t.Fatalf("job %s: proof does not verify: %v", r.ID, err)
		}
		if proofs[string(r.Proof)] {
			t.Fatalf("job %s: duplicate proof bytes", r.ID)
		}
		proofs[string(r.Proof)] = true
	}
	if len(proofs) != clients*perClient+1 {
		t.Fatalf("%d distinct proofs, want %d", len(proofs), clients*perClient+1)
	}

	// The WinningPoSt-class job started before the seal-class jobs that were waiting when it
	// arrived (a few may have been picked up between the listing and its submission).
	started := map[rpcapi.JobID]rpcapi.Job{}
	for _, r := range results {
		started[r.ID] = r.Job
	}
	wjob := started[wres.JobID]
	after := 0
	for _, q := range queued {
		if started[q.ID].Started.After(wjob.Started) {
			after++
		}
	}
	if len(queued) < 20 || after < len(queued)/2 {
		t.Errorf("WinningPoSt-class job started after %d of %d queued seal jobs", len(queued)-after, len(queued))
	}

	// /metrics agrees with the clients: 200 + warmup + winning submitted and completed.
	metrics := scrape(t, d.base+"/metrics")
	want := float64(clients*perClient + 2)
	for _, name := range []string{`snarkd_jobs_submitted_total{kind="test"}`, `snarkd_jobs_completed_total{kind="test"}`} {
		if metrics[name] != want {
			t.Errorf("%s = %v, want %v", name, metrics[name], want)
		}
	}
	for _, name := range []string{`snarkd_jobs_failed_total{kind="test"}`, `snarkd_jobs_queued{kind="test"}`, `snarkd_jobs_running{kind="test"}`} {
		if metrics[name] != 0 {
			t.Errorf("%s = %v, want 0", name, metrics[name])
		}
	}
}
