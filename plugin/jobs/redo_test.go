package jobs

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/snarkd/snarkd/plugin/journal"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestRedoDoneThroughCuzk: through the cuzk front door, the request ID of a done job (Curio's
// IDs name the sector) is taken by new content as a new job that supersedes it; a job still
// queued or running keeps its ID; the native front door keeps refusing. A restart while the new
// job runs keeps it, and the ID names it, not the superseded job.
func TestRedoDoneThroughCuzk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	g := newGateRunner()
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	m, err := Open(j, g, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	const id = "porep-1000-5"
	cuzk := SubmitOpts{Origin: rpcapi.OriginCuzk}
	first, err := m.Submit(testReq(id, 1), cuzk)
	if err != nil {
		t.Fatal(err)
	}
	waitStart(t, g)
	// Running: other content is a conflict, through either front door.
	for _, o := range []SubmitOpts{cuzk, {}} {
		var conflict *rpcapi.ErrRequestConflict
		if _, err := m.Submit(testReq(id, 2), o); !errors.As(err, &conflict) || conflict.JobID != first.JobID || conflict.State != rpcapi.JobRunning {
			t.Fatalf("%q: other content while the job runs: %v; want a conflict naming the running job", o.Origin, err)
		}
	}
	g.release <- struct{}{}
	if res, err := m.Await(context.Background(), first.JobID); err != nil || res.State != rpcapi.JobDone {
		t.Fatalf("first job: %+v %v", res.Job, err)
	}
	// Done: the same content is the same job; the native API refuses other content.
	if res, err := m.Submit(testReq(id, 1), cuzk); err != nil || !res.Existing || res.JobID != first.JobID || res.Replaces != "" {
		t.Fatalf("same content after done: %+v %v", res, err)
	}
	var conflict *rpcapi.ErrRequestConflict
	if _, err := m.Submit(testReq(id, 2), SubmitOpts{Origin: rpcapi.OriginNative}); !errors.As(err, &conflict) || conflict.State != rpcapi.JobDone {
		t.Fatalf("native: other content under a done job's ID: %v; want a conflict", err)
	}
	redo, err := m.Submit(testReq(id, 2), cuzk)
	if err != nil {
		t.Fatalf("cuzk redo refused: %v", err)
	}
	if redo.Existing || redo.JobID == first.JobID || redo.Replaces != first.JobID || redo.State != rpcapi.JobQueued {
		t.Fatalf("cuzk redo: %+v; want a new queued job replacing %s", redo, first.JobID)
	}
	if got := waitStart(t, g); got != 2 {
		t.Fatalf("started seed %d, want the redo's 2", got)
	}
	// The redo runs: the old content is now the conflict, and the redo's own content joins it.
	if _, err := m.Submit(testReq(id, 1), cuzk); !errors.As(err, &conflict) || conflict.JobID != redo.JobID {
		t.Fatalf("old content while the redo runs: %v", err)
	}
	if res, err := m.Submit(testReq(id, 2), cuzk); err != nil || !res.Existing || res.JobID != redo.JobID {
		t.Fatalf("redo's content again: %+v %v", res, err)
	}
	// A restart now (the redo interrupted while running) keeps the redo: it is queued again
	// and the ID names it.
	m.Close()
	m, err = Open(j, g, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { m.Close() }()
	if got := waitStart(t, g); got != 2 {
		t.Fatalf("after restart started seed %d, want the redo's 2", got)
	}
	if res, err := m.Submit(testReq(id, 2), SubmitOpts{}); err != nil || !res.Existing || res.JobID != redo.JobID {
		t.Fatalf("after restart the ID names %+v %v; want the redo %s", res, err, redo.JobID)
	}
	g.release <- struct{}{}
	done, err := m.Await(context.Background(), redo.JobID)
	if err != nil || done.State != rpcapi.JobDone || string(done.Proof) != "proof-2" {
		t.Fatalf("redo: %+v %v", done, err)
	}
	// The superseded job is still readable by its ID, with its own proof.
	old, err := m.Await(context.Background(), first.JobID)
	if err != nil || old.State != rpcapi.JobDone || string(old.Proof) != "proof-1" {
		t.Fatalf("superseded job: %+v %v", old, err)
	}
	if js := m.Jobs(rpcapi.JobFilter{}); len(js) != 2 {
		t.Fatalf("%d jobs, want the superseded one and the redo", len(js))
	}
}

// TestRequestIDBindingAtRestart: which job a request ID names after a restart is the journal's
// binding, not the newest submission time, so a redo journaled while the clock stood earlier
// than the superseded job's submission does not give the ID back to the superseded job.
func TestRequestIDBindingAtRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	now := time.Now()
	req := func(seed uint64) (journal.Record, rpcapi.ProofRequest) {
		r := testReq("porep-1000-7", seed)
		h, err := ContentHash(r)
		if err != nil {
			t.Fatal(err)
		}
		return journal.Record{Hash: h, Job: rpcapi.Job{RequestID: r.RequestID, Kind: r.Kind, Priority: rpcapi.PrioritySeal,
			Origin: rpcapi.OriginCuzk, State: rpcapi.JobDone, Finished: now}}, r
	}
	oldRec, oldReq := req(1)
	oldRec.Job.ID, oldRec.Job.Submitted = "old", now
	if _, ok, err := j.Create(oldRec, oldReq); err != nil || !ok {
		t.Fatalf("create: %v %v", ok, err)
	}
	newRec, newReq := req(2)
	newRec.Job.ID, newRec.Job.Submitted = "new", now.Add(-time.Hour)
	if _, ok, err := j.CreateReplacing(newRec, newReq, "old"); err != nil || !ok {
		t.Fatalf("create replacing: %v %v", ok, err)
	}
	m, err := Open(j, newGateRunner(), Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, err := m.Submit(newReq, SubmitOpts{})
	if err != nil || !res.Existing || res.JobID != "new" {
		t.Fatalf("the redo's content: %+v %v; want job new", res, err)
	}
	var conflict *rpcapi.ErrRequestConflict
	if _, err := m.Submit(oldReq, SubmitOpts{}); !errors.As(err, &conflict) || conflict.JobID != "new" {
		t.Fatalf("the superseded content: %v; want a conflict naming job new", err)
	}
}
