package itests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/rpcapi"
)

// TestChaosKills submits 50 jobs, 40 native test proofs and 10 Lotus SealCommit2 calls, while
// the daemon is SIGKILLed at random moments (a bounded loop, seeded and logged) and restarted on
// the same repo. Clients retry with their request IDs until a submission is accepted. Afterwards
// every native request has exactly one job, done, whose proof verifies; every Lotus call got
// exactly one result at the miner (its verdict, or "worker restarted" for a call the kill
// interrupted, as lotus-miner expects), and the journal lists each call once.
func TestChaosKills(t *testing.T) {
	const natives, lotusCalls, kills = 40, 10, 5
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	killRng, submitRng := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 2))
	bin := buildDaemon(t)
	m := newStandIn(t, 100*time.Millisecond)
	repo := t.TempDir()
	env := append([]string{"SNARKD_JOBS_WORKERS=2"}, lotusEnv...)
	start := func() *daemon { return startDaemon(t, bin, repo, env, "--miner-api-info", m.apiInfo()) }

	// The daemon in service, swapped on every restart.
	var mu sync.Mutex
	d := start()
	current := func() *daemon { mu.Lock(); defer mu.Unlock(); return d }
	ctx := context.Background()
	sizes := []struct {
		n    uint64
		seed uint64
	}{{2048, 21}, {4096, 22}, {8192, 23}}
	req := func(i int) rpcapi.ProofRequest {
		s := sizes[i%len(sizes)]
		return rpcapi.ProofRequest{RequestID: fmt.Sprintf("chaos-%d", i), Kind: rpcapi.KindTest,
			Test: &rpcapi.TestCircuit{Constraints: s.n, Seed: s.seed, Partitions: 1 + i%3}}
	}
	// submit retries one request until a daemon accepts it (a submission cut by a kill may or
	// may not have been journaled: the request ID makes the retry safe).
	accepted := make([]rpcapi.JobID, natives)
	submit := func(i int) {
		for attempt := 0; ; attempt++ {
			api, closer, err := rpcapi.NewProverClient(ctx, current().base+"/rpc/v0", current().header(current().token))
			if err == nil {
				res, err := api.Submit(ctx, req(i))
				closer()
				if err == nil {
					accepted[i] = res.JobID
					return
				}
			}
			if attempt > 600 {
				t.Errorf("request %d never accepted: %v", i, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Lotus calls go to whichever worker session the miner has; a call on a dying connection
	// fails at the miner, which then (like lotus-miner) tries again on the next session.
	calls := make([]rpcapi.CallID, lotusCalls)
	call := func(i int) {
		for attempt := 0; ; attempt++ {
			if w, ok := m.worker(); ok {
				sector := rpcapi.SectorRef{ID: abi.SectorID{Miner: 1000, Number: abi.SectorNumber(100 + i)}, ProofType: 5}
				c, err := w.API.SealCommit2(ctx, sector, []byte(c1For2KiB))
				if err == nil {
					calls[i] = c
					return
				}
			}
			if attempt > 600 {
				t.Errorf("Lotus call %d never accepted", i)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		order := submitRng.Perm(natives + lotusCalls)
		for _, k := range order {
			if k < natives {
				submit(k)
			} else {
				call(k - natives)
			}
			time.Sleep(time.Duration(submitRng.IntN(200)) * time.Millisecond)
		}
	}()
	for k := 0; k < kills; k++ {
		time.Sleep(time.Duration(300+killRng.IntN(1200)) * time.Millisecond)
		if list, err := current().client(t, false).Jobs(ctx, rpcapi.JobFilter{}); err == nil {
			states := map[rpcapi.JobState]int{}
			for _, j := range list {
				states[j.State]++
			}
			t.Logf("kill %d: jobs %v", k+1, states)
		}
		current().kill()
		next := start()
		mu.Lock()
		d = next
		mu.Unlock()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	// Every native request: one job, done, with a valid proof.
	api := current().client(t, false)
	for i, id := range accepted {
		res, err := api.Await(ctx, id)
		if err != nil || res.State != rpcapi.JobDone {
			t.Fatalf("request %d (job %s): %+v %v", i, id, res.Job, err)
		}
		r := req(i)
		verifyTestProof(t, res.Proof, int(r.Test.Constraints), r.Test.Seed, r.Test.Partitions)
	}
	jobs, err := api.Jobs(ctx, rpcapi.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	perRequest := map[string]int{}
	for _, j := range jobs {
		perRequest[j.RequestID]++
	}
	for i := range natives {
		if n := perRequest[req(i).RequestID]; n != 1 {
			t.Errorf("request %s has %d jobs", req(i).RequestID, n)
		}
	}
	// Every Lotus call: one result at the miner, and one job in the journal.
	waitFor(t, "a result for every Lotus call", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, c := range calls {
			if !m.reported[c] {
				return false
			}
		}
		return true
	})
	m.mu.Lock()
	got := map[rpcapi.CallID]int{}
	codes := map[rpcapi.ErrorCode]int{}
	for _, r := range m.returns {
		got[r.CallID]++
		if r.Err != nil {
			codes[r.Err.Code]++
		}
		if r.Err == nil || (r.Err.Code != rpcapi.ErrUnknown && r.Err.Code != rpcapi.ErrTempWorkerRestart) {
			t.Errorf("call %v: result %+v (want its input error, or worker restarted)", r.CallID, r.Err)
		}
	}
	m.mu.Unlock()
	t.Logf("Lotus results by code: %v (%d: the call's input error, %d: worker restarted)", codes, rpcapi.ErrUnknown, rpcapi.ErrTempWorkerRestart)
	for i, c := range calls {
		if got[c] != 1 {
			t.Errorf("Lotus call %d (%v): %d results at the miner", i, c, got[c])
		}
		if n := perRequest["lotus:"+c.String()]; n != 1 {
			t.Errorf("Lotus call %d (%v): %d jobs", i, c, n)
		}
	}
}
