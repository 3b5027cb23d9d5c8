package gpuprove

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/internal/cores"
)

const (
	// minStagedUpload is the smallest upload worth a pinned staging buffer; smaller ones go
	// straight from pageable memory.
	minStagedUpload = 1 << 20
	// slowUploadWait is how long a wait for an upload must take to get its own stage entry.
	slowUploadWait = time.Millisecond
)

// uploadChunk is gpu.StagingChunk, a variable so that tests can use small vectors with several
// chunks.
var uploadChunk = gpu.StagingChunk

// uploadRing is the number of staging chunks one upload cycles through.
const uploadRing = gpu.StagingRing

// devRange is a span of device memory that a kernel touches or an upload writes.
type devRange struct {
	p    gpu.DevicePtr
	size uint64
}

func (r devRange) overlaps(o devRange) bool {
	return r.size > 0 && o.size > 0 && r.p < o.p+gpu.DevicePtr(o.size) && o.p < r.p+gpu.DevicePtr(r.size)
}

// uploads tracks one partition attempt's uploads on the device's copy stream, so that a kernel
// waits only for the uploads into memory it touches, and so that the attempt ends with none
// in flight: the arena is freed when the grant is released, and a DMA must never write into
// memory that another partition has been given. Used by one goroutine.
type uploads struct {
	run      *gpu.Run
	slog     *stageLog
	inFlight []*stagedUpload
}

func newUploads(run *gpu.Run, slog *stageLog) *uploads { return &uploads{run: run, slog: slog} }

// start copies b to dst. Through a ring of page-locked staging chunks when the pinned pool has
// room (a parallel host copy plus a DMA at full link speed beats the driver's pageable path,
// about 6 GB/s on the H200 host): the host copy of each chunk overlaps the DMA of the chunks
// before it, a slot is refilled once its previous chunk's copy completed, and the call returns
// once the last chunk is enqueued, so the next upload's host copy overlaps this one's DMA. The
// ring keeps pinned memory per upload at uploadRing chunks however large the vector. Otherwise
// the copy is synchronous, from pageable memory.
func (t *uploads) start(ctx context.Context, name string, dst gpu.DevicePtr, b []byte) error {
	return t.startFrom(ctx, name, dst, b, nil)
}

// startFrom is start for b inside whole, a host buffer that later partitions upload from again
// (a recycled witness vector, a pooled scalar buffer): whole is page-locked in place once
// (PinnedPool.TryPin, kept across partitions) and b goes up by DMA with no host copy at all.
// When the budget cannot hold whole it is staged as start does.
func (t *uploads) startFrom(ctx context.Context, name string, dst gpu.DevicePtr, b, whole []byte) error {
	t0 := time.Now()
	u := &stagedUpload{name: name, dst: devRange{dst, uint64(len(b))}}
	if len(b) >= minStagedUpload && len(whole) >= len(b) && t.run.Pinned != nil && &whole[0] == &b[0] {
		if rel, ok := t.run.Pinned.TryPin(whole); ok {
			p, err := t.run.UploadAsync(ctx, dst, gpu.HostMem{Bytes: b, Size: uint64(len(b)), Pinned: true})
			if err != nil {
				rel()
				return u.wrap(err)
			}
			u.parts, u.unpin = []gpu.Pending{p}, rel
			t.inFlight = append(t.inFlight, u)
			t.slog.add("upload "+name+" (registered)", time.Since(t0))
			t.slog.span("upload "+name, t0)
			return nil
		}
	}
	if pm, ok := t.acquire(len(b)); ok {
		u.pool, u.pinned = t.run.Pinned, pm
		slots := (int(pm.Size) + uploadChunk - 1) / uploadChunk
		for i, off := 0, 0; off < len(b); i, off = i+1, off+uploadChunk {
			end := min(off+uploadChunk, len(b))
			if i >= slots {
				// The slot's previous chunk must have left the staging memory.
				if err := u.parts[i-slots].Wait(ctx); err != nil {
					_ = u.Wait(context.WithoutCancel(ctx))
					return u.wrap(err)
				}
			}
			at := (i % slots) * uploadChunk
			chunk := gpu.HostMem{Size: uint64(end - off), Pinned: true, Handle: pm.Handle}
			// Simulated pinned memory has no contents to stage.
			if pm.Bytes != nil {
				chunk.Bytes = pm.Bytes[at : at+end-off]
				parallelRange(end-off, func(lo, hi int) { copy(chunk.Bytes[lo:hi], b[off+lo:off+hi]) })
			}
			p, err := t.run.UploadAsync(ctx, dst+gpu.DevicePtr(off), chunk)
			if err != nil {
				// The chunks already enqueued read the staging buffer until they complete,
				// cancelled or not: settle them before it goes back to the pool.
				_ = u.Wait(context.WithoutCancel(ctx))
				return u.wrap(err)
			}
			u.parts = append(u.parts, p)
		}
		t.inFlight = append(t.inFlight, u)
	} else {
		// A synchronous copy is not ordered with the copy stream: uploads still in flight into
		// the same memory finish first.
		if err := t.wait(ctx, u.dst); err != nil {
			return err
		}
		if err := t.run.Upload(ctx, dst, gpu.HostMem{Bytes: b, Size: uint64(len(b))}); err != nil {
			return u.wrap(err)
		}
	}
	t.slog.add("upload "+name, time.Since(t0))
	t.slog.span("upload "+name, t0)
	return nil
}

// acquire takes the staging ring for an upload of n bytes.
func (t *uploads) acquire(n int) (gpu.HostMem, bool) {
	if t.run.Pinned == nil || n < minStagedUpload {
		return gpu.HostMem{}, false
	}
	return t.run.Pinned.Acquire(uint64(min(n, uploadRing*uploadChunk)))
}

// wait blocks until every upload into memory overlapping rs completed and returns the first
// upload error. When ctx ends first it returns ctx's error and the uploads stay tracked.
func (t *uploads) wait(ctx context.Context, rs ...devRange) error {
	keep := t.inFlight[:0]
	var first error
	for _, u := range t.inFlight {
		hit := false
		for _, r := range rs {
			hit = hit || r.overlaps(u.dst)
		}
		if !hit || first != nil {
			keep = append(keep, u)
			continue
		}
		t0 := time.Now()
		first = u.Wait(ctx)
		if d := time.Since(t0); d >= slowUploadWait {
			t.slog.add("wait upload "+u.name, d)
			t.slog.span("wait upload "+u.name, t0)
		}
		if !u.settled() {
			// ctx ended first: the copy stays tracked for waitAll.
			keep = append(keep, u)
		}
	}
	clear(t.inFlight[len(keep):])
	t.inFlight = keep
	return first
}

// waitAll waits for every upload still in flight, even when ctx is done (the copies run to
// completion regardless), and returns their errors joined.
func (t *uploads) waitAll(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	var errs []error
	for _, u := range t.inFlight {
		if err := u.Wait(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	t.inFlight = nil
	return errors.Join(errs...)
}

// stagedUpload is one upload enqueued in chunks from a pinned staging buffer. The buffer goes
// back to the pool only after every chunk's copy completed.
type stagedUpload struct {
	name   string
	dst    devRange
	pool   *gpu.PinnedPool
	pinned gpu.HostMem
	// unpin releases the registration of a source uploaded in place, once its copy completed.
	unpin func()

	mu    sync.Mutex
	parts []gpu.Pending // chunks not yet waited for, in issue order
	done  bool
	err   error
}

func (u *stagedUpload) wrap(err error) error {
	return fmt.Errorf("uploading %s (%s): %w", u.name, gpu.FormatBytes(u.dst.size), err)
}

func (u *stagedUpload) settled() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.done
}

// Wait implements Pending: it waits for every chunk (also after one failed, since the others
// still read the staging buffer), then releases the buffer.
func (u *stagedUpload) Wait(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.done {
		return u.err
	}
	var first error
	for len(u.parts) > 0 {
		if err := u.parts[0].Wait(ctx); err != nil {
			if ctx.Err() != nil {
				// Possibly not completed: the chunk stays for a later Wait.
				return u.wrap(err)
			}
			first = firstErr(first, err)
		}
		u.parts[0] = nil
		u.parts = u.parts[1:]
	}
	if u.pool != nil {
		if err := u.pool.Release(u.pinned); err != nil {
			first = firstErr(first, err)
		}
	}
	if u.unpin != nil {
		u.unpin()
	}
	u.done = true
	if first != nil {
		u.err = u.wrap(first)
	}
	return u.err
}

// firstErr returns a if it is an error, else b.
func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// parallelRange splits [0, n) over the CPU cores.
func parallelRange(n int, fn func(lo, hi int)) {
	workers := cores.N()
	if n < 4096 || workers == 1 {
		fn(0, n)
		return
	}
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			fn(lo, hi)
		}(lo, min(lo+per, n))
	}
	wg.Wait()
}
