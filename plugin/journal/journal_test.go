package journal

import (
	"path/filepath"
	"testing"

	"github.com/snarkd/snarkd/rpcapi"
)

func TestJournalLifecycle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := Record{Job: rpcapi.Job{ID: "a", RequestID: "r1", Kind: rpcapi.KindTest, State: rpcapi.JobQueued}, Hash: "h"}
	req := rpcapi.ProofRequest{RequestID: "r1", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 8}}
	if _, ok, err := j.Create(rec, req); err != nil || !ok {
		t.Fatalf("create: %v %v", ok, err)
	}
	// The same request ID is not stored twice.
	dup := Record{Job: rpcapi.Job{ID: "b", RequestID: "r1"}}
	if ex, ok, err := j.Create(dup, req); err != nil || ok || ex != "a" {
		t.Fatalf("duplicate: %q %v %v", ex, ok, err)
	}
	rec.Job.State = rpcapi.JobDone
	if err := j.Update(rec, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := j.Update(Record{Job: rpcapi.Job{ID: "zzz"}}, nil); err == nil {
		t.Fatal("update of unknown job succeeded")
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	// Everything survives a reopen.
	j, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	all, err := j.All()
	if err != nil || len(all) != 1 || all[0].Job.State != rpcapi.JobDone || all[0].Hash != "h" {
		t.Fatalf("all: %+v %v", all, err)
	}
	got, err := j.Request("a")
	if err != nil || got.Test == nil || got.Test.Constraints != 8 {
		t.Fatalf("request: %+v %v", got, err)
	}
	p, err := j.Proof("a")
	if err != nil || len(p) != 3 {
		t.Fatalf("proof: %v %v", p, err)
	}
	if err := j.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := j.Create(Record{Job: rpcapi.Job{ID: "c", RequestID: "r1"}}, req); !ok {
		t.Fatal("request ID still taken after delete")
	}
	if _, err := j.Request("a"); err == nil {
		t.Fatal("request of deleted job still there")
	}
}
