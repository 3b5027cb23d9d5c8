//go:build unix

package paramfetch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// LockFile is the parameter directory's fetch lock, the file Lotus's paramfetch locks (with
// the same POSIX record lock, so a Lotus fetch and ours exclude each other).
const LockFile = "fetch.lock"

// lockDir takes dir's fetch lock, waiting (retry apart) while another process holds it.
func lockDir(ctx context.Context, dir string, retry time.Duration) (unlock func(), err error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("fetch lock %s: %w", path, err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	warned := false
	for {
		err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EACCES) {
			f.Close()
			return nil, fmt.Errorf("fetch lock %s: %w", path, err)
		}
		if !warned {
			log.Warnw("another fetch holds the parameter directory's lock; waiting", "lock", path)
			warned = true
		}
		select {
		case <-time.After(retry):
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the fetch lock %s: %w", path, ctx.Err())
		}
	}
	return func() {
		lk.Type = unix.F_UNLCK
		unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
		f.Close()
	}, nil
}
