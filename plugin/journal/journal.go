// Package journal is the daemon's durable job store: every accepted job, its request and its
// result live in one bbolt file, written with fsync before the daemon acknowledges anything, so
// a crash or restart loses no accepted job and no undelivered result.
package journal

import (
	"encoding/json"
	"errors"
	"fmt"

	logging "github.com/ipfs/go-log/v2"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/snarkd/snarkd/rpcapi"
)

var (
	bucketJobs     = []byte("jobs")     // job ID -> Record JSON
	bucketRequests = []byte("requests") // job ID -> ProofRequest JSON
	bucketProofs   = []byte("proofs")   // job ID -> proof bytes
	bucketReqIDs   = []byte("reqids")   // request ID -> job ID
)

var log = logging.Logger("snarkd/journal")

// Record is a job's metadata as stored.
type Record struct {
	Job rpcapi.Job
	// Hash is the sha256 of the request content without its RequestID: the idempotency check.
	Hash string
}

// Journal is an open job store. Its methods are safe for concurrent use.
type Journal struct {
	db *bolt.DB
}

// ErrNotFound is returned for an unknown job ID.
var ErrNotFound = errors.New("job not in journal")

// Open opens or creates the journal file. It first checks the whole file (Check): a damaged
// journal gives *CorruptError and stays untouched, as does a missing or empty file in a repo that
// had a journal (its marker, MarkerPath, exists). Another process holding the file makes Open
// fail with ErrInUse after a short wait instead of blocking forever.
func Open(path string) (*Journal, error) {
	rep, err := Check(path)
	if err != nil {
		return nil, fmt.Errorf("opening job journal %s: %w", path, err)
	}
	if !rep.Intact() {
		return nil, &CorruptError{Path: path, Problems: rep.Problems}
	}
	var db *bolt.DB
	err = protect(func() (err error) {
		db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: lockWait})
		return err
	})
	if errors.Is(err, berrors.ErrTimeout) {
		err = ErrInUse
	}
	if err != nil {
		return nil, fmt.Errorf("opening job journal %s: %w", path, err)
	}
	err = protect(func() error { return db.Update(createBuckets) })
	if err == nil {
		err = writeMarker(path)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("initialising job journal %s: %w", path, err)
	}
	if rep.Exists {
		log.Infow("job journal checked", "file", path, "jobs", rep.Jobs, "bytes", rep.Size)
	} else {
		log.Infow("created a new job journal", "file", path, "marker", MarkerPath(path))
	}
	return &Journal{db: db}, nil
}

func createBuckets(tx *bolt.Tx) error {
	for _, b := range [][]byte{bucketJobs, bucketRequests, bucketProofs, bucketReqIDs} {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the file.
func (j *Journal) Close() error { return j.db.Close() }

// Create stores a new job with its request, and its request ID when it has one. If the request
// ID is already taken, nothing is written and the existing job ID is returned with ok false.
func (j *Journal) Create(rec Record, req rpcapi.ProofRequest) (existing rpcapi.JobID, ok bool, err error) {
	return j.CreateReplacing(rec, req, "")
}

// CreateReplacing is Create, except that a request ID bound to job replaces (a finished job
// being retried or redone) is bound to the new job instead, in the same transaction as the new
// job is stored; replaces stays in the journal.
func (j *Journal) CreateReplacing(rec Record, req rpcapi.ProofRequest, replaces rpcapi.JobID) (existing rpcapi.JobID, ok bool, err error) {
	recJSON, err := json.Marshal(rec)
	if err != nil {
		return "", false, fmt.Errorf("encoding job %s: %w", rec.Job.ID, err)
	}
	reqJSON, err := json.Marshal(req)
	if err != nil {
		return "", false, fmt.Errorf("encoding request of job %s: %w", rec.Job.ID, err)
	}
	err = j.db.Update(func(tx *bolt.Tx) error {
		if rec.Job.RequestID != "" {
			ids := tx.Bucket(bucketReqIDs)
			if v := ids.Get([]byte(rec.Job.RequestID)); v != nil && (replaces == "" || rpcapi.JobID(v) != replaces) {
				existing = rpcapi.JobID(v)
				return nil
			}
			if err := ids.Put([]byte(rec.Job.RequestID), []byte(rec.Job.ID)); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketRequests).Put([]byte(rec.Job.ID), reqJSON); err != nil {
			return err
		}
		return tx.Bucket(bucketJobs).Put([]byte(rec.Job.ID), recJSON)
	})
	if err != nil {
		return "", false, fmt.Errorf("journaling job %s: %w", rec.Job.ID, err)
	}
	if existing != "" {
		return existing, false, nil
	}
	return "", true, nil
}

// Update rewrites a job's record and, when proof is non-nil, stores its proof in the same
// transaction.
func (j *Journal) Update(rec Record, proof []byte) error {
	recJSON, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encoding job %s: %w", rec.Job.ID, err)
	}
	err = j.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketJobs).Get([]byte(rec.Job.ID)) == nil {
			return ErrNotFound
		}
		if proof != nil {
			if err := tx.Bucket(bucketProofs).Put([]byte(rec.Job.ID), proof); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketJobs).Put([]byte(rec.Job.ID), recJSON)
	})
	if err != nil {
		return fmt.Errorf("journaling job %s: %w", rec.Job.ID, err)
	}
	return nil
}

// Request returns a job's request.
func (j *Journal) Request(id rpcapi.JobID) (rpcapi.ProofRequest, error) {
	var req rpcapi.ProofRequest
	err := j.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketRequests).Get([]byte(id))
		if v == nil {
			return ErrNotFound
		}
		return json.Unmarshal(v, &req)
	})
	if err != nil {
		return req, fmt.Errorf("reading request of job %s: %w", id, err)
	}
	return req, nil
}

// Proof returns a job's proof, nil if it has none.
func (j *Journal) Proof(id rpcapi.JobID) ([]byte, error) {
	var out []byte
	err := j.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketProofs).Get([]byte(id)); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	})
	return out, err
}

// All returns every job record.
func (j *Journal) All() ([]Record, error) {
	var out []Record
	err := j.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
			var r Record
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("job %s: %w", k, err)
			}
			out = append(out, r)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading job journal: %w", err)
	}
	return out, nil
}

// RequestIDs returns the request-ID bindings: each request ID and the job it names now. A
// request ID taken over by a new job (CreateReplacing) names the new job, while the old job's
// record still carries the ID, so these bindings, not the records, say which job answers it.
func (j *Journal) RequestIDs() (map[string]rpcapi.JobID, error) {
	out := map[string]rpcapi.JobID{}
	err := j.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketReqIDs).ForEach(func(k, v []byte) error {
			out[string(k)] = rpcapi.JobID(v)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading request IDs of the job journal: %w", err)
	}
	return out, nil
}

// Delete removes a job, its request, its proof and its request ID.
func (j *Journal) Delete(id rpcapi.JobID) error {
	return j.db.Update(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketJobs).Get([]byte(id))
		if v == nil {
			return nil
		}
		var r Record
		if err := json.Unmarshal(v, &r); err == nil && r.Job.RequestID != "" {
			ids := tx.Bucket(bucketReqIDs)
			if string(ids.Get([]byte(r.Job.RequestID))) == string(id) {
				if err := ids.Delete([]byte(r.Job.RequestID)); err != nil {
					return err
				}
			}
		}
		for _, b := range [][]byte{bucketJobs, bucketRequests, bucketProofs} {
			if err := tx.Bucket(b).Delete([]byte(id)); err != nil {
				return err
			}
		}
		return nil
	})
}
