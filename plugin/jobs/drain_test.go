package jobs

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/google/uuid"

	"github.com/snarkd/snarkd/rpcapi"
)

// TestDrainLetsRunningJobFinish: a drain refuses new work with the typed error, keeps the
// queued job queued, lets the running one finish within the grace and returns at once after
// it; the next start proves the queued job.
func TestDrainLetsRunningJobFinish(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	g := newGateRunner()
	m := openManual(t, path, g, Config{Workers: 1, DrainLogEvery: 20 * time.Millisecond})
	a := must(m.Submit(testReq("A", 1), SubmitOpts{}))
	waitStart(t, g)
	b := must(m.Submit(testReq("B", 2), SubmitOpts{}))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reports := make(chan DrainReport, 1)
	go func() { reports <- m.Drain(ctx) }()
	waitCond(t, "drain started", func() bool { return m.DrainStatus() != nil })

	_, err := m.Submit(testReq("C", 3), SubmitOpts{})
	var de *rpcapi.ErrDraining
	if !errors.As(err, &de) || de.Until.IsZero() {
		t.Fatalf("submit while draining: %v, want *rpcapi.ErrDraining with Until", err)
	}
	// The same request again names its job: no new work, so it is answered.
	if again, err := m.Submit(testReq("B", 2), SubmitOpts{}); err != nil || again.JobID != b.JobID || !again.Existing {
		t.Fatalf("resubmit B while draining: %+v %v", again, err)
	}
	st := m.DrainStatus()
	if st.Running != 1 || st.Queued != 1 || st.Skipped {
		t.Fatalf("drain status %+v, want 1 running, 1 queued", st)
	}
	select {
	case rep := <-reports:
		t.Fatalf("drain returned while A runs: %+v", rep)
	case <-time.After(100 * time.Millisecond):
	}

	g.release <- struct{}{} // A finishes within the grace
	var rep DrainReport
	select {
	case rep = <-reports:
	case <-time.After(30 * time.Second):
		t.Fatal("drain did not return after the running job finished")
	}
	if rep.Finished != 1 || rep.Requeued != 0 || rep.Restarted != 0 || rep.Skipped {
		t.Fatalf("report %+v, want one finished and nothing handed back", rep)
	}
	if res, err := m.Await(ctx, a.JobID); err != nil || res.State != rpcapi.JobDone || string(res.Proof) != "proof-1" {
		t.Fatalf("A: %+v %v", res.Job, err)
	}
	if j := must(m.Get(b.JobID)); j.State != rpcapi.JobQueued {
		t.Fatalf("B after the drain: %s, want queued", j.State)
	}
	g.mu.Lock()
	started := append([]uint64(nil), g.started...)
	g.mu.Unlock()
	if len(started) != 1 {
		t.Fatalf("jobs started: %v, want only A's", started)
	}
	m.Close()
	m.j.Close()

	g2 := newGateRunner()
	m2 := open(t, path, g2, Config{Workers: 1})
	if s := waitStart(t, g2); s != 2 {
		t.Fatalf("after restart started seed %d, want B's", s)
	}
	g2.release <- struct{}{}
	if res, err := m2.Await(ctx, b.JobID); err != nil || res.State != rpcapi.JobDone {
		t.Fatalf("B after restart: %+v %v", res.Job, err)
	}
}

// TestDrainHandsBackAfterGrace: when the grace ends a running native job is queued again (in
// memory and in the journal, and proved after the next start) and a running Lotus call fails
// with code 101; a queued Lotus call fails with code 101 as soon as the drain starts.
func TestDrainHandsBackAfterGrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	g := newGateRunner()
	const restarted = "worker [name: w] restarted"
	m := openManual(t, path, g, Config{Workers: 2, RestartError: restarted, DrainLogEvery: 20 * time.Millisecond})
	final := make(chan rpcapi.Job, 10)
	m.OnFinal(func(j rpcapi.Job) { final <- j })
	lotus := func(id string, seed uint64) rpcapi.JobID {
		call := rpcapi.CallID{Sector: abi.SectorID{Miner: 1000, Number: abi.SectorNumber(seed)}, ID: uuid.New()}
		return must(m.Submit(testReq(id, seed), SubmitOpts{Origin: rpcapi.OriginLotus, CallID: &call, Deferred: true})).JobID
	}
	a := must(m.Submit(testReq("A", 1), SubmitOpts{}))
	l1 := lotus("L1", 2)
	waitStart(t, g)
	waitStart(t, g)
	b := must(m.Submit(testReq("B", 3), SubmitOpts{}))
	l2 := lotus("L2", 4)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	rep := m.Drain(ctx)
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("drain returned after %s, before its grace", d)
	}
	if rep.Finished != 0 || rep.Requeued != 1 || rep.Restarted != 1 || rep.Skipped {
		t.Fatalf("report %+v, want A requeued and L1 restarted", rep)
	}
	got := map[rpcapi.JobID]rpcapi.Job{}
	for len(got) < 2 {
		select {
		case j := <-final:
			got[j.ID] = j
		case <-time.After(10 * time.Second):
			t.Fatalf("final jobs reported: %v, want L1 and L2", got)
		}
	}
	for _, id := range []rpcapi.JobID{l1, l2} {
		j := got[id]
		if j.State != rpcapi.JobFailed || j.ErrorCode != rpcapi.ErrTempWorkerRestart || j.Error != restarted {
			t.Fatalf("Lotus job %s: %s %d %q, want failed with code 101", id, j.State, j.ErrorCode, j.Error)
		}
	}
	for _, id := range []rpcapi.JobID{a.JobID, b.JobID} {
		if j := must(m.Get(id)); j.State != rpcapi.JobQueued || j.Stage != "" {
			t.Fatalf("native job %s after the drain: %s (%s), want queued", id, j.State, j.Stage)
		}
	}
	m.Close()
	recs, err := m.j.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if (r.Job.ID == a.JobID || r.Job.ID == b.JobID) && r.Job.State != rpcapi.JobQueued {
			t.Fatalf("journal: job %s %s, want queued", r.Job.RequestID, r.Job.State)
		}
	}
	m.j.Close()

	g2 := newGateRunner()
	m2 := open(t, path, g2, Config{Workers: 1})
	if s := waitStart(t, g2); s != 1 {
		t.Fatalf("after restart started seed %d, want A's", s)
	}
	g2.release <- struct{}{}
	if res, err := m2.Await(context.Background(), a.JobID); err != nil || res.State != rpcapi.JobDone || string(res.Proof) != "proof-1" {
		t.Fatalf("A after restart: %+v %v", res.Job, err)
	}
}

// TestDrainSkip: SkipDrain ends the wait at once and hands the running job back.
func TestDrainSkip(t *testing.T) {
	g := newGateRunner()
	m := open(t, filepath.Join(t.TempDir(), "j.db"), g, Config{Workers: 1})
	a := must(m.Submit(testReq("A", 1), SubmitOpts{}))
	waitStart(t, g)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	m.StartDrain(time.Now().Add(time.Hour))
	m.SkipDrain()
	start := time.Now()
	rep := m.Drain(ctx)
	if !rep.Skipped || rep.Requeued != 1 || time.Since(start) > 30*time.Second {
		t.Fatalf("report %+v after %s, want skipped with A requeued", rep, time.Since(start))
	}
	if st := m.DrainStatus(); !st.Skipped || st.Until.After(time.Now()) {
		t.Fatalf("drain status %+v, want skipped", st)
	}
	if j := must(m.Get(a.JobID)); j.State != rpcapi.JobQueued {
		t.Fatalf("A: %s, want queued", j.State)
	}
}

func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
