package journal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/snarkd/snarkd/rpcapi"
)

const testJobs = 30

// writeJournal creates a journal at path with n finished jobs through the journal API; every
// tenth request is large enough to need overflow pages. It returns the proofs by job ID.
func writeJournal(t *testing.T, path string, n int) map[rpcapi.JobID][]byte {
	t.Helper()
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	rng := rand.New(rand.NewSource(1))
	proofs := map[rpcapi.JobID][]byte{}
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := 0; i < n; i++ {
		id := rpcapi.JobID(fmt.Sprintf("%08x-1111-2222-3333-%012x", rng.Uint32(), i))
		rid := fmt.Sprintf("req-%03d", i)
		req := rpcapi.ProofRequest{RequestID: rid, Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 64, Seed: uint64(i)}}
		if i%10 == 0 {
			req.Phase1Out = bytes.Repeat([]byte{byte(i)}, 9000)
		}
		rec := Record{Job: rpcapi.Job{ID: id, RequestID: rid, Kind: rpcapi.KindTest, State: rpcapi.JobQueued,
			Submitted: base.Add(time.Duration(i) * time.Second)}, Hash: fmt.Sprintf("hash-%d", i)}
		if _, ok, err := j.Create(rec, req); err != nil || !ok {
			t.Fatalf("create %d: %v %v", i, ok, err)
		}
		proof := make([]byte, 192)
		rng.Read(proof)
		rec.Job.State, rec.Job.Finished = rpcapi.JobDone, rec.Job.Submitted.Add(time.Second)
		if err := j.Update(rec, proof); err != nil {
			t.Fatal(err)
		}
		proofs[id] = proof
	}
	return proofs
}

// pageTypes returns bbolt's type of every page below the high-water mark ("free" for free
// pages) and the page size.
func pageTypes(t *testing.T, path string) ([]string, int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, PreLoadFreelist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var types []string
	err = db.View(func(tx *bolt.Tx) error {
		for id := 0; ; id++ {
			p, err := tx.Page(id)
			if err != nil {
				return err
			}
			if p == nil {
				return nil
			}
			types = append(types, p.Type)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return types, db.Info().PageSize
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustWrite(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestOpenDamagedJournal: every kind of damage makes Open fail with *CorruptError naming the
// file and what is wrong, without a panic and without touching the file.
func TestOpenDamagedJournal(t *testing.T) {
	pristineDir := t.TempDir()
	pristinePath := filepath.Join(pristineDir, "jobs.db")
	writeJournal(t, pristinePath, testJobs)
	pristine := mustRead(t, pristinePath)
	types, pageSize := pageTypes(t, pristinePath)
	rng := rand.New(rand.NewSource(7))
	var used []int
	for id, typ := range types {
		if id >= 2 && typ != "free" {
			used = append(used, id)
		}
	}

	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte // nil: remove the file
		marker bool
		want   string
	}{
		{"missing in a repo that had a journal", nil, true, "the file is missing"},
		{"truncated to zero", func([]byte) []byte { return nil }, true, "the file is empty"},
		{"truncated to zero, no marker", func([]byte) []byte { return nil }, false, "the file is empty"},
		{"truncated to half", func(b []byte) []byte { return b[:len(b)/2] }, true, "the file is truncated"},
		{"truncated mid-page", func(b []byte) []byte { return b[:len(types)*pageSize-100] }, true, "the file is truncated"},
		{"random page", func(b []byte) []byte {
			id := used[rng.Intn(len(used))]
			rng.Read(b[id*pageSize : (id+1)*pageSize])
			return b
		}, true, "page"},
		{"zeroed page", func(b []byte) []byte {
			id := used[rng.Intn(len(used))]
			copy(b[id*pageSize:(id+1)*pageSize], make([]byte, pageSize))
			return b
		}, true, "page"},
		{"random file", func(b []byte) []byte { rng.Read(b); return b }, true, "neither meta page is valid"},
		{"both meta pages", func(b []byte) []byte {
			rng.Read(b[:2*pageSize])
			return b
		}, true, "neither meta page is valid"},
		{"one meta page", func(b []byte) []byte {
			rng.Read(b[:pageSize])
			return b
		}, true, "meta page 0 is invalid"},
		{"flipped record byte", func(b []byte) []byte {
			// Every copy: the first may sit in a page the copy-on-write tree has freed, which
			// Open never reads.
			for off := 0; ; {
				i := bytes.Index(b[off:], []byte(`"State":"done"`))
				if i < 0 {
					return b
				}
				b[off+i] = '['
				off += i + 1
			}
		}, true, "record does not decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "jobs.db")
			var damaged []byte
			if tc.damage != nil {
				damaged = tc.damage(append([]byte(nil), pristine...))
				mustWrite(t, path, damaged)
			}
			if tc.marker {
				mustWrite(t, MarkerPath(path), []byte("x\n"))
			}
			j, err := Open(path)
			if err == nil {
				j.Close()
				t.Fatal("a damaged journal opened")
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != path {
				t.Fatalf("want *CorruptError for %s, got %T: %v", path, err, err)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name the file and %q", err, tc.want)
			}
			rep, err := Check(path)
			if err != nil || rep.Intact() {
				t.Fatalf("check: %+v %v", rep, err)
			}
			if tc.damage == nil {
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a missing journal was created: %v", err)
				}
			} else if got := mustRead(t, path); !bytes.Equal(got, damaged) {
				t.Fatal("the damaged file was changed")
			}
		})
	}
}

// TestOpenCreatesMarker: a new journal leaves its marker; an existing journal without one (an
// older repo) gets it at the next open; both open clean.
func TestOpenCreatesMarker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if _, err := os.Stat(MarkerPath(path)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(MarkerPath(path)); err != nil {
		t.Fatal(err)
	}
	if j, err = Open(path); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if _, err := os.Stat(MarkerPath(path)); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(path)
	if err != nil || !rep.Intact() || !rep.Exists {
		t.Fatalf("check: %+v %v", rep, err)
	}
}

// TestRepairEveryPage overwrites each page of a journal of finished jobs in turn: Check reports
// the damage (a free page holds nothing), Repair restores every job not stored on the page
// with its proof, names every job it did not restore, moves the damaged file aside unchanged,
// and the repaired journal opens.
func TestRepairEveryPage(t *testing.T) {
	pristineDir := t.TempDir()
	pristinePath := filepath.Join(pristineDir, "jobs.db")
	proofs := writeJournal(t, pristinePath, testJobs)
	pristine := mustRead(t, pristinePath)
	types, pageSize := pageTypes(t, pristinePath)
	rng := rand.New(rand.NewSource(3))
	for id, typ := range types {
		t.Run(fmt.Sprintf("page %d %s", id, typ), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "jobs.db")
			damaged := append([]byte(nil), pristine...)
			victim := damaged[id*pageSize : (id+1)*pageSize]
			original := append([]byte(nil), victim...)
			rng.Read(victim)
			mustWrite(t, path, damaged)
			mustWrite(t, MarkerPath(path), []byte("x\n"))

			rep, err := Check(path)
			if err != nil {
				t.Fatal(err)
			}
			if typ == "free" {
				if !rep.Intact() {
					t.Fatalf("a free page's content counted as damage: %v", rep.Problems)
				}
				return
			}
			if rep.Intact() {
				t.Fatal("damage not found")
			}
			res, err := Repair(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s; recovered %d, lost %v %s", strings.Join(res.Problems, "; "), res.Recovered, res.Lost, res.Unknown)
			if res.Recovered+len(res.Lost) != testJobs {
				t.Fatalf("recovered %d + lost %d != %d jobs (%s)", res.Recovered, len(res.Lost), testJobs, res.Unknown)
			}
			if got := mustRead(t, res.BrokenPath); !bytes.Equal(got, damaged) {
				t.Fatal("the damaged file was not kept as it was")
			}
			j, err := Open(path)
			if err != nil {
				t.Fatalf("the repaired journal does not open: %v", err)
			}
			defer j.Close()
			all, err := j.All()
			if err != nil {
				t.Fatal(err)
			}
			lost := map[rpcapi.JobID]bool{}
			for _, l := range res.Lost {
				lost[l.ID] = true
			}
			got := map[rpcapi.JobID]Record{}
			for _, r := range all {
				got[r.Job.ID] = r
			}
			for jid, want := range proofs {
				r, ok := got[jid]
				onVictim := bytes.Contains(original, []byte(jid))
				if lost[jid] {
					if !onVictim && id >= 2 {
						t.Errorf("job %s lost, its data was not on the damaged page", jid)
					}
					if ok && r.Job.State != rpcapi.JobFailed {
						t.Errorf("job %s lost but kept as %s", jid, r.Job.State)
					}
					continue
				}
				if !ok {
					t.Errorf("job %s neither recovered nor reported lost", jid)
					continue
				}
				p, err := j.Proof(jid)
				if id >= 2 && (r.Job.State != rpcapi.JobDone || !bytes.Equal(p, want) || err != nil) {
					t.Errorf("job %s recovered as %s, proof %x (%v)", jid, r.Job.State, p, err)
				}
			}
			// Request IDs still lead to their jobs.
			for _, r := range all {
				if _, ok, err := j.Create(Record{Job: rpcapi.Job{ID: "other", RequestID: r.Job.RequestID}}, rpcapi.ProofRequest{}); err != nil || ok {
					t.Fatalf("request ID %s of job %s is free after the repair: %v", r.Job.RequestID, r.Job.ID, err)
				}
			}
		})
	}
}

// TestRepairEmptyAndMissing: a repo that had a journal and lost it gets a fresh one from
// Repair, which says that the number of lost jobs is not known.
func TestRepairEmptyAndMissing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		empty bool
	}{{"missing", false}, {"empty", true}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs.db")
			mustWrite(t, MarkerPath(path), []byte("x\n"))
			if tc.empty {
				mustWrite(t, path, nil)
			}
			res, err := Repair(path)
			if err != nil {
				t.Fatal(err)
			}
			if res.Recovered != 0 || res.Unknown == "" || (res.BrokenPath != "") != tc.empty {
				t.Fatalf("repair: %+v", res)
			}
			j, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			j.Close()
		})
	}
}

// TestRepairIntact: Repair leaves an intact journal alone.
func TestRepairIntact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	writeJournal(t, path, 3)
	before := mustRead(t, path)
	res, err := Repair(path)
	if err != nil || len(res.Problems) != 0 || res.BrokenPath != "" {
		t.Fatalf("repair: %+v %v", res, err)
	}
	if !bytes.Equal(before, mustRead(t, path)) {
		t.Fatal("an intact journal was rewritten")
	}
}

// TestCheckRandomDamage: random bytes written anywhere never make Check, Open or Repair panic.
func TestCheckRandomDamage(t *testing.T) {
	pristinePath := filepath.Join(t.TempDir(), "jobs.db")
	writeJournal(t, pristinePath, 10)
	pristine := mustRead(t, pristinePath)
	for seed := int64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		b := append([]byte(nil), pristine...)
		for n := rng.Intn(8) + 1; n > 0; n-- {
			off := rng.Intn(len(b))
			end := off + rng.Intn(64) + 1
			if end > len(b) {
				end = len(b)
			}
			rng.Read(b[off:end])
		}
		path := filepath.Join(t.TempDir(), "jobs.db")
		mustWrite(t, path, b)
		if _, err := Check(path); err != nil {
			t.Fatalf("seed %d: check: %v", seed, err)
		}
		if j, err := Open(path); err == nil {
			j.Close()
		} else if !errors.As(err, new(*CorruptError)) {
			t.Fatalf("seed %d: open: %v", seed, err)
		}
		if _, err := Repair(path); err != nil {
			t.Fatalf("seed %d: repair: %v", seed, err)
		}
		if j, err := Open(path); err != nil {
			t.Fatalf("seed %d: open after repair: %v", seed, err)
		} else {
			j.Close()
		}
	}
}
