package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/snarkd/snarkd/rpcapi"
)

// BrokenSuffix starts the name a repair gives the damaged file: jobs.db.broken-20060102T150405Z.
const BrokenSuffix = ".broken-"

// LostJob is a job a repair could not restore whole.
type LostJob struct {
	ID rpcapi.JobID
	// Reason says what was unreadable, and whether the job was kept (as failed) or dropped.
	Reason string
}

// RepairResult is what Repair did.
type RepairResult struct {
	Path string
	// Problems is the damage Check found; empty when the journal was intact and Repair did
	// nothing.
	Problems []string
	// Recovered counts the jobs restored whole into the fresh journal.
	Recovered int
	// Lost are the jobs that were not restored whole, by ID.
	Lost []LostJob
	// Unknown, when set, says why more jobs than Lost may be gone (an empty or missing file,
	// pages whose jobs cannot be named).
	Unknown string
	// BrokenPath is where the damaged file was moved; empty when there was no file.
	BrokenPath string
}

// Repair rebuilds a damaged journal: every job whose record is readable goes into a fresh
// journal at path, with its request and proof where they are readable, and the damaged file is
// moved aside to path.broken-<UTC time>, unchanged. A job whose request (not yet proved) or
// proof (done) is lost is kept as failed, its error saying so, and counted as lost. An intact
// journal is left as it is. The daemon must not run: the file is locked for the whole repair.
func Repair(path string) (*RepairResult, error) {
	rep, err := Check(path)
	if err != nil {
		return nil, fmt.Errorf("repairing job journal %s: %w", path, err)
	}
	res := &RepairResult{Path: path, Problems: rep.Problems}
	if rep.Intact() {
		return res, nil
	}
	var fresh salvage
	switch {
	case !rep.Exists:
		res.Unknown = "the journal file was missing: how many jobs it held is not known"
	case rep.Size == 0:
		res.Unknown = "the journal file was empty: how many jobs it held is not known"
	default:
		f, err := lockFile(path, true)
		if err != nil {
			return nil, fmt.Errorf("repairing job journal %s: %w", path, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("repairing job journal %s: %w", path, err)
		}
		fresh = salvageFrom(f, st.Size())
		res.Recovered, res.Lost, res.Unknown = fresh.recovered, fresh.lost, fresh.unknown
	}
	tmp := path + ".repair"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("repairing job journal %s: %w", path, err)
	}
	if err := fresh.write(tmp); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("repairing job journal %s: writing the new journal: %w", path, err)
	}
	if rep.Exists {
		res.BrokenPath = brokenName(path)
		if err := os.Rename(path, res.BrokenPath); err != nil {
			os.Remove(tmp)
			return nil, fmt.Errorf("repairing job journal %s: moving it aside: %w", path, err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("repairing job journal %s: installing the new journal %s: %w", path, tmp, err)
	}
	if err := writeMarker(path); err != nil {
		return nil, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("repairing job journal %s: %w", path, err)
	}
	log.Warnw("job journal repaired", "file", path, "recovered", res.Recovered, "lost", len(res.Lost), "damaged_file", res.BrokenPath)
	return res, nil
}

// brokenName is a name for the damaged file next to path that no file has yet.
func brokenName(path string) string {
	base := path + BrokenSuffix + time.Now().UTC().Format("20060102T150405Z")
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			return name
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

// salvage is what goes into the fresh journal.
type salvage struct {
	records   map[string][]byte // job ID -> Record JSON
	requests  map[string][]byte
	proofs    map[string][]byte
	reqIDs    map[string][]byte // request ID -> job ID
	recovered int
	lost      []LostJob
	unknown   string
}

// salvageFrom gathers the readable jobs of s: the values reached through the tree first, then,
// for a bucket whose tree was damaged, the orphan leaf pages that hold its entries.
func salvageFrom(r io.ReaderAt, size int64) salvage {
	buckets := map[string]map[string][]byte{}
	for _, b := range [][]byte{bucketJobs, bucketRequests, bucketProofs, bucketReqIDs} {
		buckets[string(b)] = map[string][]byte{}
	}
	s2 := scanReader(r, size, func(e kv) {
		if m := buckets[string(e.bucket)]; m != nil {
			m[string(e.key)] = clone(e.value)
		}
	})
	jobs, requests, proofs, reqIDs := buckets[string(bucketJobs)], buckets[string(bucketRequests)],
		buckets[string(bucketProofs)], buckets[string(bucketReqIDs)]
	incomplete := func(b []byte) bool { return s2.incomplete[string(b)] || s2.incomplete[""] }

	treeJobs := map[string]bool{}
	for k := range jobs {
		treeJobs[k] = true
	}
	// Orphan leaves: unreachable, unfreed pages below a damaged page. Each holds the entries of
	// one bucket; tell which by their shape.
	var orphanProofs, orphanReqIDs [][2][]byte
	for _, id := range s2.orphans {
		els := s2.leaves(id)
		if len(els) == 0 {
			continue
		}
		switch orphanKind(els) {
		case "jobs":
			if !incomplete(bucketJobs) {
				continue
			}
			for _, e := range els {
				k := string(e[0])
				if treeJobs[k] {
					continue
				}
				// Without the freelist, a free page may hold an older version of a record.
				if cur, ok := jobs[k]; !ok || newerRecord(e[1], cur) {
					jobs[k] = e[1]
				}
			}
		case "requests":
			if incomplete(bucketRequests) {
				addMissing(requests, els)
			}
		default: // proofs or request IDs: told apart once the job IDs are known
			orphanProofs = append(orphanProofs, els...)
		}
	}
	for _, e := range orphanProofs {
		if _, ok := jobs[string(e[1])]; ok {
			orphanReqIDs = append(orphanReqIDs, e)
		}
	}
	if incomplete(bucketReqIDs) {
		addMissing(reqIDs, orphanReqIDs)
	}
	if incomplete(bucketProofs) {
		var ps [][2][]byte
		for _, e := range orphanProofs {
			if _, ok := jobs[string(e[0])]; ok && !json.Valid(e[1]) {
				ps = append(ps, e)
			}
		}
		addMissing(proofs, ps)
	}

	out := salvage{records: map[string][]byte{}, requests: map[string][]byte{}, proofs: map[string][]byte{}, reqIDs: map[string][]byte{}}
	lost := map[string]string{}
	recs := map[string]Record{}
	for id, v := range requests {
		if !json.Valid(v) {
			delete(requests, id)
		}
	}
	for id, v := range jobs {
		var r Record
		if err := json.Unmarshal(v, &r); err != nil || string(r.Job.ID) != id {
			lost[id] = "its record does not decode; dropped"
			continue
		}
		recs[id] = r
	}
	for id, r := range recs {
		req, hasReq := requests[id]
		proof, hasProof := proofs[id]
		switch {
		case !hasReq && !r.Job.State.Final():
			r.Job.State, r.Job.Error, r.Job.Finished = rpcapi.JobFailed, "its request was lost in a journal repair", time.Now()
			lost[id] = "its request is unreadable; kept as failed"
		case r.Job.State == rpcapi.JobDone && !hasProof && incomplete(bucketProofs):
			r.Job.State, r.Job.Error = rpcapi.JobFailed, "its proof was lost in a journal repair"
			lost[id] = "its proof is unreadable; kept as failed"
		}
		b, err := json.Marshal(r)
		if err != nil {
			lost[id] = fmt.Sprintf("its record does not encode: %v; dropped", err)
			continue
		}
		out.records[id] = b
		if hasReq {
			out.requests[id] = req
		}
		if hasProof {
			out.proofs[id] = proof
		}
		if _, ok := lost[id]; !ok {
			out.recovered++
		}
	}
	// Jobs known only by their other entries (keys that a damaged page garbled are no job's).
	for _, m := range []map[string][]byte{requests, proofs} {
		for id := range m {
			if _, ok := recs[id]; !ok && lost[id] == "" && plausibleID(id) {
				lost[id] = "its record is unreadable; dropped"
			}
		}
	}
	for _, id := range reqIDs {
		if _, ok := recs[string(id)]; !ok && lost[string(id)] == "" && plausibleID(string(id)) {
			lost[string(id)] = "its record is unreadable; dropped"
		}
	}
	// Request IDs: the salvaged binding where its job survived, otherwise the latest job
	// submitted with that request ID (the binding the job manager rebuilds at start).
	latest := map[string]Record{}
	for _, r := range recs {
		if _, ok := out.records[string(r.Job.ID)]; !ok || r.Job.RequestID == "" {
			continue
		}
		if l, ok := latest[r.Job.RequestID]; !ok || r.Job.Submitted.After(l.Job.Submitted) {
			latest[r.Job.RequestID] = r
		}
	}
	for rid, r := range latest {
		out.reqIDs[rid] = []byte(r.Job.ID)
		if id, ok := reqIDs[rid]; ok {
			if b, ok := recs[string(id)]; ok && b.Job.RequestID == rid {
				out.reqIDs[rid] = id
			}
		}
	}
	for id, why := range lost {
		out.lost = append(out.lost, LostJob{ID: rpcapi.JobID(id), Reason: why})
	}
	sort.Slice(out.lost, func(a, b int) bool { return out.lost[a].ID < out.lost[b].ID })
	switch {
	case len(s2.problems) > 0 && s2.meta.pgid == 0:
		out.unknown = "no page of the journal could be read: how many jobs it held is not known"
	case incomplete(bucketJobs) && incomplete(bucketRequests):
		out.unknown = "pages of both the job records and the requests are unreadable: jobs stored only there cannot be named"
	case incomplete(bucketJobs) && !s2.freelistOK:
		out.unknown = "pages of the job records are unreadable and the freelist too: jobs stored only there cannot be named"
	}
	return out
}

// orphanKind tells which bucket a leaf page's entries belong to: "jobs" (job records),
// "requests" (other JSON objects), or "" (binary values: proofs, or request IDs).
func orphanKind(els [][2][]byte) string {
	records, objects := 0, 0
	for _, e := range els {
		var r Record
		if json.Unmarshal(e[1], &r) == nil && r.Job.ID != "" && string(r.Job.ID) == string(e[0]) {
			records++
		}
		if len(e[1]) > 0 && e[1][0] == '{' && json.Valid(e[1]) {
			objects++
		}
	}
	switch {
	case records == len(els):
		return "jobs"
	case objects == len(els):
		return "requests"
	}
	return ""
}

// newerRecord reports whether record JSON a is a later version of the same job than b: a final
// state over a running one over a queued one, then delivered, then the later times.
func newerRecord(a, b []byte) bool {
	var ra, rb Record
	if json.Unmarshal(a, &ra) != nil {
		return false
	}
	if json.Unmarshal(b, &rb) != nil {
		return true
	}
	rank := func(r Record) int {
		switch {
		case r.Job.State.Final():
			return 2
		case r.Job.State == rpcapi.JobRunning:
			return 1
		}
		return 0
	}
	switch {
	case rank(ra) != rank(rb):
		return rank(ra) > rank(rb)
	case ra.Job.Delivered != rb.Job.Delivered:
		return ra.Job.Delivered
	case !ra.Job.Finished.Equal(rb.Job.Finished):
		return ra.Job.Finished.After(rb.Job.Finished)
	}
	return ra.Job.Started.After(rb.Job.Started)
}

// plausibleID reports whether id can be a job ID (a UUID; letters, digits, '-', '_', '.').
func plausibleID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func addMissing(m map[string][]byte, els [][2][]byte) {
	for _, e := range els {
		if _, ok := m[string(e[0])]; !ok {
			m[string(e[0])] = e[1]
		}
	}
}

// write creates the journal at path holding s.
func (s salvage) write(path string) error {
	return protect(func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockWait})
		if err != nil {
			return err
		}
		err = db.Update(func(tx *bolt.Tx) error {
			if err := createBuckets(tx); err != nil {
				return err
			}
			for _, b := range []struct {
				name []byte
				m    map[string][]byte
			}{{bucketJobs, s.records}, {bucketRequests, s.requests}, {bucketProofs, s.proofs}, {bucketReqIDs, s.reqIDs}} {
				bk := tx.Bucket(b.name)
				for k, v := range b.m {
					if err := bk.Put([]byte(k), v); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		return err
	})
}
