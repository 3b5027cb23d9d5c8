package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/snarkd/snarkd/internal/atomicfile"
	"github.com/snarkd/snarkd/rpcapi"
)

// MarkerSuffix names the marker file written next to the journal when it is created
// (jobs.db.created): while it exists, a missing or empty journal is damage, not a fresh start.
const MarkerSuffix = ".created"

// MarkerPath is the marker file of the journal at path.
func MarkerPath(path string) string { return path + MarkerSuffix }

// lockWait bounds how long Open, Check and Repair wait for another process's lock on the file.
const lockWait = 5 * time.Second

// ErrInUse is returned when another process holds the journal file.
var ErrInUse = errors.New("the journal file is locked by another process")

// CorruptError is returned by Open for a damaged journal; the file was left untouched.
type CorruptError struct {
	Path string
	// Problems says what is wrong, one finding per entry.
	Problems []string
}

// maxProblemsShown bounds the problems an error message lists.
const maxProblemsShown = 3

func (e *CorruptError) Error() string {
	shown := e.Problems
	more := ""
	if len(shown) > maxProblemsShown {
		more = fmt.Sprintf(" (and %d more problems)", len(shown)-maxProblemsShown)
		shown = shown[:maxProblemsShown]
	}
	return fmt.Sprintf("job journal %s is damaged (left untouched): %s%s", e.Path, strings.Join(shown, "; "), more)
}

// Report is what Check found.
type Report struct {
	Path string
	// Exists is false when there is no journal file and the repo never had one.
	Exists bool
	// Size is the file's length in bytes.
	Size int64
	// Jobs counts the job records that were read.
	Jobs int
	// Problems lists the damage; none when the journal is intact.
	Problems []string
}

// Intact reports whether Check found no damage.
func (r *Report) Intact() bool { return len(r.Problems) == 0 }

// Check reads the whole journal at path without changing it: every page is read with bounds
// checks, every job record decoded, and then bbolt's own consistency check runs. Damage is in
// the report's problems; the error is for a journal that could not be read (in use by another
// process: ErrInUse; an I/O error).
func Check(path string) (*Report, error) {
	rep := &Report{Path: path}
	marker, err := markerExists(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && marker:
		rep.Problems = append(rep.Problems, fmt.Sprintf("the file is missing, but %s shows that this repo had a journal: its jobs are gone", MarkerPath(path)))
		return rep, nil
	case errors.Is(err, os.ErrNotExist):
		return rep, nil
	case err != nil:
		return nil, fmt.Errorf("checking job journal %s: %w", path, err)
	}
	rep.Exists, rep.Size = true, st.Size()
	if st.Size() == 0 {
		rep.Problems = append(rep.Problems, "the file is empty (0 bytes): its jobs are gone")
		return rep, nil
	}
	f, err := lockFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("checking job journal %s: %w", path, err)
	}
	defer f.Close()
	var (
		requests = map[string]bool{}
		records  = map[string]rpcapi.JobState{}
	)
	s := scanReader(f, st.Size(), func(e kv) {
		switch string(e.bucket) {
		case string(bucketJobs):
			var r Record
			if err := json.Unmarshal(e.value, &r); err != nil {
				rep.Problems = append(rep.Problems, fmt.Sprintf("job %q: its record does not decode: %v", e.key, err))
				return
			}
			if string(r.Job.ID) != string(e.key) {
				rep.Problems = append(rep.Problems, fmt.Sprintf("job %q: its record names job %q", e.key, r.Job.ID))
				return
			}
			records[string(e.key)] = r.Job.State
		case string(bucketRequests):
			requests[string(e.key)] = true
			if !json.Valid(e.value) {
				rep.Problems = append(rep.Problems, fmt.Sprintf("job %q: its request does not decode", e.key))
			}
		}
	})
	rep.Jobs = len(records)
	rep.Problems = append(s.problems, rep.Problems...)
	if !rep.Intact() {
		return rep, nil
	}
	// A job's request goes into the journal with its record and is needed until it ends.
	for id, state := range records {
		if !requests[id] && !state.Final() {
			rep.Problems = append(rep.Problems, fmt.Sprintf("job %s (%s): its request is missing", id, state))
		}
		delete(requests, id)
	}
	for id := range requests {
		rep.Problems = append(rep.Problems, fmt.Sprintf("the request of job %s is there, its record is not", id))
	}
	sort.Strings(rep.Problems)
	if !rep.Intact() {
		return rep, nil
	}
	// The file is structurally sound: bbolt's own check can read it without faulting.
	err = protect(func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, PreLoadFreelist: true, Timeout: lockWait})
		if err != nil {
			return err
		}
		defer db.Close()
		return db.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				rep.Problems = append(rep.Problems, "bbolt consistency check: "+err.Error())
			}
			return nil
		})
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("checking job journal %s: %w", path, ErrInUse)
	}
	if err != nil {
		rep.Problems = append(rep.Problems, "bbolt consistency check: "+err.Error())
	}
	return rep, nil
}

// protect runs f, turning a panic or a memory fault inside it (bbolt reading a damaged file
// through its memory map) into an error.
func protect(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading the file failed: %v", r)
		}
	}()
	return f()
}

// lockFile opens path and takes a shared (or, with exclusive, an exclusive) flock on it, the
// lock bbolt takes, waiting at most lockWait.
func lockFile(path string, exclusive bool) (*os.File, error) {
	flag, how := os.O_RDONLY, syscall.LOCK_SH
	if exclusive {
		flag, how = os.O_RDWR, syscall.LOCK_EX
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking: %w", err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, ErrInUse
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func markerExists(path string) (bool, error) {
	_, err := os.Stat(MarkerPath(path))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading journal marker: %w", err)
	}
	return true, nil
}

// writeMarker records, durably, that the repo has a journal at path.
func writeMarker(path string) error {
	if ok, err := markerExists(path); err != nil || ok {
		return err
	}
	name := MarkerPath(path)
	text := fmt.Sprintf("snarkd created the job journal %s on %s.\n"+
		"While this file exists, a missing or empty %s is an error, not a fresh start.\n",
		filepath.Base(path), time.Now().UTC().Format(time.RFC3339), filepath.Base(path))
	err := atomicfile.Write(name, 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	})
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("writing journal marker %s: %w", name, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
