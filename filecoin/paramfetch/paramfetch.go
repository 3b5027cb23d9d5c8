// Package paramfetch downloads Filecoin's published parameter files into a parameter directory,
// from an IPFS gateway (by CID, as Lotus's paramfetch does) or an HTTP mirror (by file name).
// Downloads run in parallel and resume where an interrupted one stopped; each file is written
// under name.partial, hashed as it arrives, and takes its final name only once its digest is the
// published one. A directory-wide fetch lock (fetch.lock, the lock Lotus takes) keeps two
// fetches, ours or Lotus's, from writing one file.
package paramfetch

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	logging "github.com/ipfs/go-log/v2"
	"golang.org/x/crypto/blake2b"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

var log = logging.Logger("snarkd/paramfetch")

// DefaultGateway is the IPFS gateway Lotus's paramfetch uses when IPFS_GATEWAY is unset.
const DefaultGateway = "https://proofs.filecoin.io/ipfs/"

// GatewayEnv names the environment variable the ecosystem reads the gateway from.
const GatewayEnv = "IPFS_GATEWAY"

// PartialSuffix marks a file still being downloaded.
const PartialSuffix = ".partial"

// File is one file to fetch: its name in the directory and its parameters.json entry.
type File struct {
	Name string
	prooftypes.Published
}

// Options configure a fetch.
type Options struct {
	// Dir is the parameter directory (created if missing).
	Dir string
	// Gateway is an IPFS gateway URL; a file's CID is appended. Default: $IPFS_GATEWAY, else
	// DefaultGateway.
	Gateway string
	// Mirror, when set, is an HTTP directory URL serving the files by name; it replaces Gateway.
	Mirror string
	// Parallel is how many files download at once (default 4).
	Parallel int
	// Retries is how many times an interrupted download resumes before the file fails (default 5).
	Retries int
	// Force replaces a file that exists under its final name with another digest (devnet
	// parameters from `snarkd params gen`, say); without it such a file is reported, not touched.
	Force bool
	// Client is the HTTP client (default: one without an overall timeout, so that 47 GB files
	// finish; a stalled body is caught by StallTimeout).
	Client *http.Client
	// StallTimeout aborts (and then resumes) a download that received nothing for this long
	// (default 2 minutes).
	StallTimeout time.Duration
	// Progress, when set, is called about every ProgressEvery (default 1 s) and once at the end,
	// from a goroutine Fetch owns.
	Progress      func(Snapshot)
	ProgressEvery time.Duration
	// LockRetry is how often a held fetch lock is tried again (default 5 s).
	LockRetry time.Duration
}

// Status is what a fetch did with one file.
type Status string

// Statuses of Result.
const (
	StatusPresent  Status = "present"  // already there with the published digest
	StatusFetched  Status = "fetched"  // downloaded and verified
	StatusMismatch Status = "mismatch" // exists with another digest, left alone (see Options.Force)
	StatusFailed   Status = "failed"
)

// Result reports one file.
type Result struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Bytes is the file's size; Downloaded what this fetch transferred (less after a resume).
	Bytes      int64   `json:"bytes"`
	Downloaded int64   `json:"downloaded"`
	Seconds    float64 `json:"seconds"`
	Error      string  `json:"error,omitempty"`
}

// Snapshot is the progress of a fetch.
type Snapshot struct {
	Files, Done, Failed int
	// Bytes received so far and the total of the files whose size is known (a file's size is
	// known once its download starts, or once an existing file was checked).
	Bytes, Total int64
	// Active are the files downloading or being checked now, by name.
	Active []string
	// WaitingForLock is set while another fetch holds the directory's lock.
	WaitingForLock bool
	Elapsed        time.Duration
}

// DigestMismatchError is prooftypes' error: a downloaded file is not the published one.
type DigestMismatchError = prooftypes.DigestMismatchError

// HTTPError is a gateway or mirror answer that retrying would not change.
type HTTPError struct {
	URL    string
	Status string
}

func (e *HTTPError) Error() string { return fmt.Sprintf("GET %s: %s", e.URL, e.Status) }

// Fetch downloads the files that are not in o.Dir with their published digest. It returns one
// result per file (in the order given) and an error naming the files that failed.
func Fetch(ctx context.Context, o Options, files []File) ([]Result, error) {
	o = o.withDefaults()
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("parameter directory %s: %w", o.Dir, err)
	}
	for _, f := range files {
		if f.Name == "" || filepath.Base(f.Name) != f.Name {
			return nil, fmt.Errorf("parameter file %q: not a plain file name", f.Name)
		}
	}
	start := time.Now()
	ft := &fetcher{o: o, start: start, active: map[string]bool{}}
	stop := ft.reportProgress(len(files))
	defer stop()

	ft.waitingLock.Store(true)
	unlock, err := lock(ctx, o.Dir, o.LockRetry)
	ft.waitingLock.Store(false)
	if err != nil {
		return nil, err
	}
	defer unlock()

	results := make([]Result, len(files))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i] = Result{Name: f.Name, Status: StatusFailed, Error: ctx.Err().Error()}
				ft.failed.Add(1)
				return
			}
			defer func() { <-sem }()
			results[i] = ft.one(ctx, f)
		}()
	}
	wg.Wait()
	var failed []string
	for _, r := range results {
		if r.Status == StatusFailed || r.Status == StatusMismatch {
			failed = append(failed, r.Name+": "+r.Error)
		}
	}
	if len(failed) > 0 {
		return results, fmt.Errorf("%d of %d parameter file(s) failed:\n  %s", len(failed), len(files), strings.Join(failed, "\n  "))
	}
	return results, nil
}

func (o Options) withDefaults() Options {
	if o.Gateway == "" {
		o.Gateway = os.Getenv(GatewayEnv)
	}
	if o.Gateway == "" {
		o.Gateway = DefaultGateway
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	if o.Retries <= 0 {
		o.Retries = 5
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = 2 * time.Minute
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = time.Second
	}
	if o.LockRetry <= 0 {
		o.LockRetry = 5 * time.Second
	}
	return o
}

// URL is where o fetches f from.
func (o Options) URL(f File) string {
	if o.Mirror != "" {
		return strings.TrimSuffix(o.Mirror, "/") + "/" + f.Name
	}
	gw := o.Gateway
	if gw == "" {
		gw = o.withDefaults().Gateway
	}
	if !strings.HasSuffix(gw, "/") {
		gw += "/"
	}
	return gw + f.CID
}

type fetcher struct {
	o     Options
	start time.Time

	bytes, total atomic.Int64
	done, failed atomic.Int64
	waitingLock  atomic.Bool
	mu           sync.Mutex
	active       map[string]bool
}

func (ft *fetcher) setActive(name string, on bool) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if on {
		ft.active[name] = true
	} else {
		delete(ft.active, name)
	}
}

func (ft *fetcher) snapshot(files int) Snapshot {
	ft.mu.Lock()
	act := make([]string, 0, len(ft.active))
	for n := range ft.active {
		act = append(act, n)
	}
	ft.mu.Unlock()
	sort.Strings(act)
	return Snapshot{Files: files, Done: int(ft.done.Load()), Failed: int(ft.failed.Load()),
		Bytes: ft.bytes.Load(), Total: ft.total.Load(), Active: act,
		WaitingForLock: ft.waitingLock.Load(), Elapsed: time.Since(ft.start)}
}

// reportProgress calls o.Progress until the returned function is called (which reports once
// more and waits for the reporter to exit).
func (ft *fetcher) reportProgress(files int) (stop func()) {
	if ft.o.Progress == nil {
		return func() {}
	}
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(ft.o.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				ft.o.Progress(ft.snapshot(files))
			case <-quit:
				ft.o.Progress(ft.snapshot(files))
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-exited
	}
}

// one brings f into the directory.
func (ft *fetcher) one(ctx context.Context, f File) Result {
	t0 := time.Now()
	ft.setActive(f.Name, true)
	defer ft.setActive(f.Name, false)
	r := ft.fetchOne(ctx, f)
	r.Name, r.Seconds = f.Name, time.Since(t0).Seconds()
	if r.Status == StatusFailed || r.Status == StatusMismatch {
		ft.failed.Add(1)
	} else {
		ft.done.Add(1)
	}
	return r
}

func (ft *fetcher) fetchOne(ctx context.Context, f File) Result {
	final := filepath.Join(ft.o.Dir, f.Name)
	if fi, err := os.Stat(final); err == nil {
		ft.total.Add(fi.Size())
		got, err := digestFile(ctx, final, &ft.bytes)
		if err != nil {
			return Result{Status: StatusFailed, Bytes: fi.Size(), Error: fmt.Sprintf("checking the existing file: %v", err)}
		}
		if got == f.Digest {
			return Result{Status: StatusPresent, Bytes: fi.Size()}
		}
		if !ft.o.Force {
			return Result{Status: StatusMismatch, Bytes: fi.Size(), Error: fmt.Sprintf(
				"exists with digest %s, published %s (devnet parameters from `snarkd params gen`?); --force replaces it", got, f.Digest)}
		}
		log.Warnw("replacing a parameter file that is not the published one", "file", final, "digest", got, "published", f.Digest)
		ft.total.Add(-fi.Size())
		ft.bytes.Add(-fi.Size())
	} else if !errors.Is(err, os.ErrNotExist) {
		return Result{Status: StatusFailed, Error: err.Error()}
	}
	d := &download{ft: ft, f: f, url: ft.o.URL(f), part: final + PartialSuffix}
	n, size, err := d.run(ctx)
	if err != nil {
		return Result{Status: StatusFailed, Bytes: size, Downloaded: n, Error: err.Error()}
	}
	if err := os.Rename(d.part, final); err != nil {
		return Result{Status: StatusFailed, Bytes: size, Downloaded: n, Error: err.Error()}
	}
	syncDir(ft.o.Dir)
	log.Infow("parameter file fetched and verified", "file", f.Name, "bytes", size, "downloaded", n)
	return Result{Status: StatusFetched, Bytes: size, Downloaded: n}
}

// download is one file's transfer into its .partial file, resumed across attempts; h hashes the
// first hashed bytes of the partial file.
type download struct {
	ft     *fetcher
	f      File
	url    string
	part   string
	h      hash.Hash
	hashed int64
	// counted is how much of the partial file the progress counters include.
	counted, size int64
	sizeKnown     bool
}

// run downloads until the partial file is complete and verified; it returns the bytes this
// fetch transferred and the file's size.
func (d *download) run(ctx context.Context) (transferred, size int64, err error) {
	d.h, _ = blake2b.New512(nil)
	backoff := time.Second
	for attempt := 0; ; attempt++ {
		n, err := d.attempt(ctx)
		transferred += n
		if err == nil {
			got := hex.EncodeToString(d.h.Sum(nil))[:32]
			if got != d.f.Digest {
				os.Remove(d.part)
				return transferred, d.size, &DigestMismatchError{File: d.f.Name, Got: got, Want: d.f.Digest}
			}
			return transferred, d.size, nil
		}
		var he *HTTPError
		if ctx.Err() != nil || errors.As(err, &he) || attempt >= d.ft.o.Retries {
			return transferred, d.size, err
		}
		log.Warnw("parameter download interrupted; resuming", "file", d.f.Name, "at", d.hashed, "attempt", attempt+1, "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return transferred, d.size, ctx.Err()
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// attempt continues the partial file from its end. It returns nil once the whole file is in
// it and hashed.
func (d *download) attempt(ctx context.Context) (int64, error) {
	out, err := os.OpenFile(d.part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	have, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if err := d.catchUp(ctx, out, have); err != nil {
		return 0, err
	}
	if d.sizeKnown && have == d.size {
		return 0, out.Sync()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url, nil)
	if err != nil {
		return 0, err
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	resp, err := d.ft.o.Client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		start, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != have {
			// Not the range asked for: start over.
			return 0, d.restart(out, fmt.Errorf("server answered range %q for bytes=%d-", resp.Header.Get("Content-Range"), have))
		}
		d.setSize(total)
	case resp.StatusCode == http.StatusOK:
		if have > 0 {
			// The server ignores ranges: what we have is rewritten.
			if err := d.truncate(out); err != nil {
				return 0, err
			}
			log.Infow("server does not resume; downloading from the start", "file", d.f.Name, "url", d.url)
		}
		if resp.ContentLength >= 0 {
			d.setSize(resp.ContentLength)
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		// The partial file is as long as the file, or longer: its digest decides.
		if _, total, ok := parseContentRange(resp.Header.Get("Content-Range")); ok && total == have {
			d.setSize(have)
			return 0, out.Sync()
		}
		return 0, d.restart(out, fmt.Errorf("partial file of %d bytes is longer than the file", have))
	default:
		return 0, &HTTPError{URL: d.url, Status: resp.Status}
	}
	body := &stallReader{r: resp.Body, cancel: cancel, timeout: d.ft.o.StallTimeout}
	defer body.stop()
	w := &countingWriter{dst: io.MultiWriter(out, d.h), n: &d.hashed, progress: &d.ft.bytes}
	n, err := io.Copy(w, body)
	d.counted += n
	if err != nil {
		if body.stalled.Load() {
			err = fmt.Errorf("no data for %s: %w", d.ft.o.StallTimeout, err)
		}
		return n, err
	}
	if d.sizeKnown && d.hashed != d.size {
		return n, fmt.Errorf("transfer ended at %d of %d bytes", d.hashed, d.size)
	}
	if !d.sizeKnown {
		d.setSize(d.hashed)
	}
	return n, out.Sync()
}

// catchUp hashes the partial file's bytes the hash has not seen (a partial file left by an
// earlier fetch, or bytes written before an interrupted attempt failed).
func (d *download) catchUp(ctx context.Context, out *os.File, have int64) error {
	if have < d.hashed {
		d.h.Reset()
		d.hashed = 0
	}
	if have == d.hashed {
		return nil
	}
	if _, err := out.Seek(d.hashed, io.SeekStart); err != nil {
		return err
	}
	n, err := io.Copy(d.h, &ctxReader{ctx: ctx, r: io.LimitReader(out, have-d.hashed)})
	d.hashed += n
	if err != nil {
		return fmt.Errorf("reading the partial file: %w", err)
	}
	if add := d.hashed - d.counted; add > 0 {
		d.ft.bytes.Add(add)
		d.counted = d.hashed
	}
	_, err = out.Seek(0, io.SeekEnd)
	return err
}

func (d *download) setSize(n int64) {
	if d.sizeKnown {
		return
	}
	d.size, d.sizeKnown = n, true
	d.ft.total.Add(n)
}

func (d *download) truncate(out *os.File) error {
	if err := out.Truncate(0); err != nil {
		return err
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return err
	}
	d.ft.bytes.Add(-d.counted)
	d.counted, d.hashed = 0, 0
	d.h.Reset()
	return nil
}

// restart empties the partial file and returns cause (retried).
func (d *download) restart(out *os.File, cause error) error {
	if err := d.truncate(out); err != nil {
		return err
	}
	return cause
}

// parseContentRange reads "bytes start-end/total".
func parseContentRange(s string) (start, total int64, ok bool) {
	s, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	total, err := strconv.ParseInt(tot, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if rng == "*" {
		return 0, total, true
	}
	a, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err = strconv.ParseInt(a, 10, 64)
	return start, total, err == nil
}

// digestFile is a whole file's parameters.json digest, its bytes added to progress.
func digestFile(ctx context.Context, path string, progress *atomic.Int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return prooftypes.FileDigest(&ctxReader{ctx: ctx, r: &countingReader{r: f, progress: progress}})
}

type countingReader struct {
	r        io.Reader
	progress *atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.progress.Add(int64(n))
	return n, err
}

type countingWriter struct {
	dst      io.Writer
	n        *int64
	progress *atomic.Int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.dst.Write(p)
	*w.n += int64(n)
	w.progress.Add(int64(n))
	return n, err
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// stallReader cancels the request when no byte arrived for timeout.
type stallReader struct {
	r       io.Reader
	cancel  func()
	timeout time.Duration
	timer   *time.Timer
	stalled atomic.Bool
}

func (s *stallReader) Read(p []byte) (int, error) {
	if s.timer == nil {
		s.timer = time.AfterFunc(s.timeout, func() {
			s.stalled.Store(true)
			s.cancel()
		})
	}
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.timeout)
	}
	return n, err
}

func (s *stallReader) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// dirLocks serialise fetches into one directory within this process, where the record lock
// (held per process) does not.
var dirLocks sync.Map // absolute directory → chan struct{}

// lock takes the in-process lock of dir, then its fetch lock.
func lock(ctx context.Context, dir string, retry time.Duration) (func(), error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	v, _ := dirLocks.LoadOrStore(abs, make(chan struct{}, 1))
	ch := v.(chan struct{})
	select {
	case ch <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for another fetch into %s: %w", dir, ctx.Err())
	}
	unlock, err := lockDir(ctx, dir, retry)
	if err != nil {
		<-ch
		return nil, err
	}
	return func() {
		unlock()
		<-ch
	}, nil
}

// syncDir makes a rename durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
