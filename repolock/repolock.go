// Package repolock keeps two daemons off one repo. The daemon holds an exclusive flock on
// <repo>/repo.lock while it runs and writes its pid and, once it listens, its API address into
// the file, so that a second daemon on the same repo fails at once naming the first, and a
// client can tell a live daemon's api file from one a killed daemon left behind.
package repolock

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// FileName is the lock file inside the repo.
const FileName = "repo.lock"

// Holder is what the daemon holding a repo wrote into its lock file.
type Holder struct {
	// PID is the daemon's process ID.
	PID int `json:"pid"`
	// Listen is the API address (http://host:port/rpc/v0); empty while it is starting.
	Listen string `json:"listen,omitempty"`
}

// String renders "pid N, listening on ADDR" (or "pid N, starting").
func (h Holder) String() string {
	if h.Listen == "" {
		return fmt.Sprintf("pid %d, starting", h.PID)
	}
	return fmt.Sprintf("pid %d, listening on %s", h.PID, h.Listen)
}

// HeldError is returned by Acquire when another process holds the repo.
type HeldError struct {
	Repo   string
	Holder Holder // zero when the holder has not written the file yet
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("repo %s is in use by another %s: stop it first, or start this one on its own repo (--repo DIR or SNARKD_PATH) and address (--listen)", e.Repo, e.Who())
}

// Who names the holder: "snarkd daemon", with its pid and address when it wrote them.
func (e *HeldError) Who() string {
	if e.Holder.PID == 0 {
		return "snarkd daemon"
	}
	return "snarkd daemon (" + e.Holder.String() + ")"
}

// Lock is a held repo lock. Release it when the daemon stops; a killed daemon's lock goes
// with its process.
type Lock struct {
	f      *os.File
	holder Holder
}

// acquireWait bounds how long Acquire retries: a client's Probe holds a shared lock for a
// moment, which must not make a starting daemon fail.
const acquireWait = time.Second

// Acquire takes repo's lock and records this process's pid in it. It returns *HeldError when
// another process holds it.
func Acquire(repo string) (*Lock, error) {
	path := filepath.Join(repo, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening repo lock %s: %w", path, err)
	}
	deadline := time.Now().Add(acquireWait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			h, _ := readHolder(f)
			f.Close()
			return nil, &HeldError{Repo: repo, Holder: h}
		}
		time.Sleep(50 * time.Millisecond)
	}
	l := &Lock{f: f, holder: Holder{PID: os.Getpid()}}
	if err := l.write(); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// SetListen records the API address the daemon serves on.
func (l *Lock) SetListen(addr string) error {
	l.holder.Listen = addr
	return l.write()
}

func (l *Lock) write() error {
	b, err := json.Marshal(l.holder)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("writing %s: %w", l.f.Name(), err)
	}
	if _, err := l.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("writing %s: %w", l.f.Name(), err)
	}
	return nil
}

// Release empties the lock file and unlocks it.
func (l *Lock) Release() {
	_ = l.f.Truncate(0)
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}

// Probe reports whether a process holds repo's lock, and what the last holder wrote (after a
// crash: the dead daemon's pid). A repo without a lock file is not held.
func Probe(repo string) (held bool, h Holder, err error) {
	path := filepath.Join(repo, FileName)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, Holder{}, nil
	}
	if err != nil {
		return false, Holder{}, fmt.Errorf("opening repo lock %s: %w", path, err)
	}
	defer f.Close()
	h, _ = readHolder(f)
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); {
	case err == nil:
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false, h, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return true, h, nil
	default:
		return false, h, fmt.Errorf("probing %s: %w", path, err)
	}
}

// readHolder decodes the lock file; an empty or half-written one gives the zero Holder.
func readHolder(f *os.File) (Holder, error) {
	b := make([]byte, 4096)
	n, err := f.ReadAt(b, 0)
	if n == 0 {
		return Holder{}, err
	}
	var h Holder
	if err := json.Unmarshal(b[:n], &h); err != nil {
		return Holder{}, fmt.Errorf("decoding %s: %w", f.Name(), err)
	}
	return h, nil
}
