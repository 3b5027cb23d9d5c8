package itests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestChaosKills submits 50 jobs, 40 native test proofs and 10 Lotus SealCommit2 calls of
// Go-sealed 2KiB sectors (devnet parameters), while the daemon is SIGKILLed at random moments
// (a bounded loop, seeded and logged) and restarted on the same repo. Clients retry with their
// request IDs until a submission is accepted. Afterwards every native request has exactly one
// job, done, whose proof verifies; every Lotus call got exactly one result at the miner: a
// proof, or "worker restarted" for a call the kill interrupted, which the miner (like
// lotus-miner) then sends again; every sector ends with exactly one proof, and it verifies.
func TestChaosKills(t *testing.T) {
	const natives, lotusCalls, kills = 40, 10, 5
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	killRng, submitRng := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 2))
	bin := buildDaemon(t)
	p, err := prooftypes.LookupName("StackedDrg2KiBV1_1")
	if err != nil {
		t.Fatal(err)
	}
	params := devnetParams(t, bin, p.Name)
	phase1 := make([][]byte, lotusCalls)
	for i := range phase1 {
		phase1[i] = encodeC1(t, sealedC1(t, p, 1000, abi.SectorNumber(100+i), byte(40+i)))
	}
	m := newStandIn(t, 100*time.Millisecond)
	repo := t.TempDir()
	env := append([]string{"SNARKD_JOBS_WORKERS=2", "FIL_PROOFS_PARAMETER_CACHE=" + params}, lotusEnv...)
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
	var callsMu sync.Mutex
	sectorOf := map[rpcapi.CallID]int{}
	call := func(i int) {
		for attempt := 0; ; attempt++ {
			if w, ok := m.worker(); ok {
				sector := rpcapi.SectorRef{ID: abi.SectorID{Miner: 1000, Number: abi.SectorNumber(100 + i)}, ProofType: p.Proof}
				c, err := w.API.SealCommit2(ctx, sector, phase1[i])
				if err == nil {
					callsMu.Lock()
					sectorOf[c] = i
					callsMu.Unlock()
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
	// Every Lotus call: one result at the miner; a call the kills interrupted is sent again, as
	// lotus-miner does, until each sector has its proof.
	proved := map[int][][]byte{}
	for round := 0; ; round++ {
		waitWithin(t, "a result for every Lotus call", 10*time.Minute, func() bool {
			m.mu.Lock()
			defer m.mu.Unlock()
			callsMu.Lock()
			defer callsMu.Unlock()
			for c := range sectorOf {
				if !m.reported[c] {
					return false
				}
			}
			return true
		})
		m.mu.Lock()
		callsMu.Lock()
		clear(proved)
		codes := map[rpcapi.ErrorCode]int{}
		for _, r := range m.returns {
			if r.Err != nil {
				codes[r.Err.Code]++
				if r.Err.Code != rpcapi.ErrTempWorkerRestart {
					t.Errorf("call %v: result %+v (want a proof, or worker restarted)", r.CallID, r.Err)
				}
				continue
			}
			i, ok := sectorOf[r.CallID]
			if !ok {
				t.Errorf("a result for call %v, which the miner never made", r.CallID)
				continue
			}
			proved[i] = append(proved[i], r.Proof)
		}
		callsMu.Unlock()
		m.mu.Unlock()
		t.Logf("round %d: %d sectors proved; errors by code %v (%d: worker restarted)", round, len(proved), codes, rpcapi.ErrTempWorkerRestart)
		if len(proved) == lotusCalls || round == 3 || t.Failed() {
			break
		}
		for i := range lotusCalls {
			if len(proved[i]) == 0 {
				call(i)
			}
		}
	}
	for i := range lotusCalls {
		if len(proved[i]) != 1 {
			t.Errorf("sector %d: %d proofs delivered, want 1", 100+i, len(proved[i]))
			continue
		}
		verifyPoRep(t, params, p, phase1[i], 1000, abi.SectorNumber(100+i), proved[i][0])
	}
	m.mu.Lock()
	got := map[rpcapi.CallID]int{}
	for _, r := range m.returns {
		got[r.CallID]++
	}
	m.mu.Unlock()
	jobs, err = api.Jobs(ctx, rpcapi.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	clear(perRequest)
	for _, j := range jobs {
		perRequest[j.RequestID]++
	}
	callsMu.Lock()
	defer callsMu.Unlock()
	for c, i := range sectorOf {
		if got[c] != 1 {
			t.Errorf("Lotus call %v (sector %d): %d results at the miner", c, 100+i, got[c])
		}
		if n := perRequest["lotus:"+c.String()]; n != 1 {
			t.Errorf("Lotus call %v (sector %d): %d jobs", c, 100+i, n)
		}
	}
}
