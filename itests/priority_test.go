package itests

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/rpcapi"
)

// priorityLoad is the work of one TestPriorityUnderLoad run: multi-partition seal-class
// requests and the WinningPoSt submitted behind them.
type priorityLoad struct {
	name    string
	seal    func(i int) rpcapi.ProofRequest
	winning rpcapi.ProofRequest
	env     []string
	check   func(t *testing.T, proof []byte) // checks the WinningPoSt proof, if set
}

// priorityWorkers is how many jobs the daemon runs at once in TestPriorityUnderLoad; every one
// of them holds a seal job when the WinningPoSt arrives.
const priorityWorkers = 2

// priorityLoads builds the loads SNARKD_ITEST_PRIORITY names. A seal proof type or sector size
// (2KiB, 8MiB, StackedDrg8MiBV1_1) gives PoRep C2 jobs of that type behind a real WinningPoSt of
// the same sector size, with devnet parameters; these sizes prove one partition per C2, so a
// second load stands in for 32GiB's 10-partition C2s: test-circuit jobs of 3 partitions of
// SNARKD_ITEST_PRIORITY_CONSTRAINTS constraints (default 2^18), behind a 1-partition test job of
// WinningPoSt priority. "test" gives only the second load.
func priorityLoads(t *testing.T, bin, mode string) []*priorityLoad {
	t.Helper()
	constraints := uint64(1 << 18)
	if c := os.Getenv("SNARKD_ITEST_PRIORITY_CONSTRAINTS"); c != "" {
		n, err := strconv.ParseUint(c, 0, 64)
		if err != nil {
			t.Fatalf("SNARKD_ITEST_PRIORITY_CONSTRAINTS: %v", err)
		}
		constraints = n
	}
	const partitions, seed = 3, 7
	winning := rpcapi.PriorityWinningPoSt
	multi := &priorityLoad{
		name: fmt.Sprintf("test circuit, %d partitions of %d constraints", partitions, constraints),
		seal: func(i int) rpcapi.ProofRequest {
			return rpcapi.ProofRequest{RequestID: fmt.Sprintf("seal-%d", i), Kind: rpcapi.KindTest,
				Test: &rpcapi.TestCircuit{Constraints: constraints, Partitions: partitions, Seed: seed}}
		},
		// The daemon verifies every proof it returns; a check here would run the setup again.
		winning: rpcapi.ProofRequest{RequestID: "winning", Kind: rpcapi.KindTest, Priority: &winning,
			Test: &rpcapi.TestCircuit{Constraints: constraints, Partitions: 1, Seed: seed}},
	}
	if mode == "test" {
		return []*priorityLoad{multi}
	}
	sp, err := prooftypes.LookupName(mode)
	if err != nil {
		if sp, err = prooftypes.LookupName("StackedDrg" + mode + "V1_1"); err != nil {
			t.Fatalf("SNARKD_ITEST_PRIORITY=%s: %v", mode, err)
		}
	}
	winP, _ := postProofs(t, prooftypes.SectorSizeLabel(sp.SectorSize))
	dir := devnetParams(t, bin, sp.Name, winP.Name)
	const miner, sector = 1000, 31
	// One sealed sector serves every C2 job: separate request IDs make separate jobs.
	phase1 := encodeC1(t, sealedC1(t, sp, miner, sector, 5))
	win := postInput(t, winP, miner, 1, 6)
	porep := &priorityLoad{
		name: fmt.Sprintf("%s C2 (%d partition each) and %s", sp.Name, sp.Partitions, winP.Name),
		seal: func(i int) rpcapi.ProofRequest {
			return rpcapi.ProofRequest{RequestID: fmt.Sprintf("c2-%d", i), Kind: rpcapi.KindPoRepC2, RegisteredProof: int64(sp.Proof),
				MinerID: miner, SectorNumber: sector, Phase1Out: phase1}
		},
		winning: rpcapi.ProofRequest{RequestID: "winning", Kind: rpcapi.KindWinningPoSt, RegisteredProof: int64(winP.Proof),
			MinerID: miner, Randomness: win.Randomness[:], VanillaProofs: win.Vanilla},
		env:   []string{"FIL_PROOFS_PARAMETER_CACHE=" + dir},
		check: func(t *testing.T, proof []byte) { verifyPoSt(t, dir, win, miner, 0, proof) },
	}
	return []*priorityLoad{porep, multi}
}

// eventLog collects a daemon's job events.
type eventLog struct {
	mu  sync.Mutex
	evs []rpcapi.JobEvent
}

func (l *eventLog) follow(ch <-chan rpcapi.JobEvent) {
	for ev := range ch {
		l.mu.Lock()
		l.evs = append(l.evs, ev)
		l.mu.Unlock()
	}
}

func (l *eventLog) snapshot() []rpcapi.JobEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.evs)
}

// partitionSpan is when one partition of a job was worked on: from its synthesizing event to
// the next partition's (or the job's verifying event).
type partitionSpan struct {
	job        rpcapi.JobID
	partition  int
	start, end time.Time
}

// partitionSpans reads the partitions' spans from a job's events.
func partitionSpans(evs []rpcapi.JobEvent, job rpcapi.JobID) []partitionSpan {
	var spans []partitionSpan
	for _, ev := range evs {
		if ev.JobID != job {
			continue
		}
		if n := len(spans); n > 0 && spans[n-1].end.IsZero() && (ev.Type == rpcapi.EventSynthesizing || ev.Type == rpcapi.EventVerifying) {
			spans[n-1].end = ev.Time
		}
		if ev.Type == rpcapi.EventSynthesizing {
			spans = append(spans, partitionSpan{job: job, partition: ev.Partition, start: ev.Time})
		}
	}
	return spans
}

// TestPriorityUnderLoad measures issue 9's acceptance: with multi-partition seal jobs running on
// every worker and more queued behind them, a WinningPoSt submitted last starts within one
// partition's time. For each load (priorityLoads; SNARKD_ITEST_PRIORITY selects them, unset the
// test is skipped) it submits priorityWorkers+2 seal jobs, waits until every worker has begun a
// job's first partition, submits the WinningPoSt, and reads from the job events when every
// partition ran. Asserted are orderings only: the WinningPoSt starts before every seal job that
// was still queued, and before any seal partition that had not begun when it was submitted (so
// at most the partitions in flight finish first). The delay and the partition times of the same
// run are logged as "TIMING …" lines.
func TestPriorityUnderLoad(t *testing.T) {
	mode := os.Getenv("SNARKD_ITEST_PRIORITY")
	if mode == "" || mode == "off" {
		t.Skip("set SNARKD_ITEST_PRIORITY=test, 2KiB or 8MiB")
	}
	bin := buildDaemon(t)
	for _, load := range priorityLoads(t, bin, mode) {
		t.Run(load.name, func(t *testing.T) { testPriority(t, bin, load) })
	}
}

func testPriority(t *testing.T, bin string, load *priorityLoad) {
	t.Logf("load: %s; %d workers", load.name, priorityWorkers)
	// The load's test jobs are larger than a write token's default quota.
	d := startDaemon(t, bin, t.TempDir(), append([]string{fmt.Sprintf("SNARKD_JOBS_WORKERS=%d", priorityWorkers),
		"SNARKD_JOBS_MAX_TEST_CONSTRAINTS=16777216", "SNARKD_JOBS_MAX_TEST_PARTITIONS=16"}, load.env...))
	api := d.client(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := d.client(t, true).Events(ctx, rpcapi.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var events eventLog
	go events.follow(ch)

	var seal []rpcapi.JobID
	for i := 0; i < priorityWorkers+2; i++ {
		res, err := api.Submit(ctx, load.seal(i))
		if err != nil {
			t.Fatalf("submitting seal job %d: %v", i, err)
		}
		seal = append(seal, res.JobID)
	}
	// Every worker is inside a seal job's first partition (parameters loaded, C1 checked).
	deadline := time.Now().Add(15 * time.Minute) // only keeps a broken build from hanging
	for {
		busy := 0
		for _, ev := range events.snapshot() {
			if ev.Type == rpcapi.EventSynthesizing && ev.Partition == 0 {
				busy++
			}
		}
		if busy >= priorityWorkers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d seal jobs began a partition", busy)
		}
		time.Sleep(20 * time.Millisecond)
	}
	wres, err := api.Submit(ctx, load.winning)
	if err != nil {
		t.Fatalf("submitting the WinningPoSt: %v", err)
	}
	if wres.QueuePosition != 0 {
		t.Errorf("WinningPoSt at queue position %d, want 0", wres.QueuePosition)
	}

	for _, id := range append(slices.Clone(seal), wres.JobID) {
		r, err := api.Await(ctx, id)
		if err != nil {
			t.Fatalf("await %s: %v", id, err)
		}
		if r.State != rpcapi.JobDone {
			t.Fatalf("job %s (%s) ended %s: %s", r.ID, r.RequestID, r.State, r.Error)
		}
		if id == wres.JobID && load.check != nil {
			load.check(t, r.Proof)
		}
	}
	jobs := map[rpcapi.JobID]rpcapi.Job{}
	all, err := api.Jobs(ctx, rpcapi.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range all {
		jobs[j.ID] = j
	}
	w := jobs[wres.JobID]
	// Events of finished jobs may still be on their way; the job records are final.
	waitFor(t, "every job's done event", func() bool {
		done := 0
		for _, ev := range events.snapshot() {
			if ev.Type == rpcapi.EventDone {
				done++
			}
		}
		return done == len(seal)+1
	})
	evs := events.snapshot()
	// The WinningPoSt's own start is when its partition was admitted to synthesis (the job
	// itself starts at once on the daemon's PoSt worker; its partition then waits for a slot).
	wStart := w.Started
	for _, ev := range evs {
		if ev.JobID == wres.JobID && ev.Type == rpcapi.EventSynthesizing {
			wStart = ev.Time
			break
		}
	}

	var spans []partitionSpan
	for _, id := range seal {
		spans = append(spans, partitionSpans(evs, id)...)
	}
	var durations []time.Duration
	inFlight, overtaking := 0, 0
	for _, s := range spans {
		if !s.end.IsZero() {
			durations = append(durations, s.end.Sub(s.start))
		}
		switch {
		case s.start.Before(w.Submitted) && (s.end.IsZero() || s.end.After(w.Submitted)):
			inFlight++
		case s.start.After(w.Submitted) && s.start.Before(wStart):
			overtaking++
			t.Errorf("seal job %s partition %d began %v after the WinningPoSt was submitted, %v before its partition started",
				s.job, s.partition, s.start.Sub(w.Submitted).Round(time.Millisecond), wStart.Sub(s.start).Round(time.Millisecond))
		}
	}
	for _, id := range seal {
		j := jobs[id]
		if j.Started.After(w.Submitted) && !j.Started.After(w.Started) {
			t.Errorf("seal job %s, queued when the WinningPoSt arrived, started at %v, not after it (%v)", id, j.Started, w.Started)
		}
	}
	if len(durations) == 0 {
		t.Fatal("no complete partition in the seal jobs' events")
	}
	slices.Sort(durations)
	delay := wStart.Sub(w.Submitted)
	median := durations[len(durations)/2]
	t.Logf("seal partitions: %d measured, shortest %v, median %v, longest %v; %d in flight when the WinningPoSt was submitted, %d began after it and before it started",
		len(durations), durations[0].Round(time.Millisecond), median.Round(time.Millisecond), durations[len(durations)-1].Round(time.Millisecond), inFlight, overtaking)
	logTiming(t, "priority ("+load.name+"): one seal partition (median)", median)
	logTiming(t, "priority ("+load.name+"): WinningPoSt submit to start", delay)
	logTiming(t, "priority ("+load.name+"): WinningPoSt submit to done", w.Finished.Sub(w.Submitted))
	t.Logf("WinningPoSt waited %.2f median partition times", float64(delay)/float64(median))
}
