package gpuprove

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/sim"
)

// contentDevice is a simulated device whose pinned memory and device allocation have contents: an
// async copy reads its source when the simulated DMA ends, as the hardware reads pinned memory
// while the copy runs, so a staging buffer reused before its copy completed shows up as wrong
// contents (and as a data race under -race).
type contentDevice struct {
	*sim.Device
	base gpu.DevicePtr

	mu  sync.Mutex
	mem []byte
}

func newContentDevice(t *testing.T, size uint64, bandwidth float64) *contentDevice {
	t.Helper()
	dev := sim.New(sim.Config{TotalMem: 1 << 30, PinnedBandwidth: bandwidth})
	base, err := dev.Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	return &contentDevice{Device: dev, base: base, mem: make([]byte, size)}
}

func (d *contentDevice) HostAlloc(n uint64) (gpu.HostMem, error) {
	m, err := d.Device.HostAlloc(n)
	m.Bytes = make([]byte, n)
	return m, err
}

func (d *contentDevice) CopyToDevice(ctx context.Context, dst gpu.DevicePtr, src gpu.HostMem) error {
	if err := d.Device.CopyToDevice(ctx, dst, src); err != nil {
		return err
	}
	d.write(dst, src.Bytes)
	return nil
}

func (d *contentDevice) CopyToDeviceAsync(ctx context.Context, dst gpu.DevicePtr, src gpu.HostMem) (gpu.Pending, error) {
	p, err := d.Device.CopyToDeviceAsync(ctx, dst, src)
	if err != nil {
		return nil, err
	}
	c := &contentPending{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		if c.err = p.Wait(context.WithoutCancel(ctx)); c.err == nil {
			d.write(dst, src.Bytes)
		}
	}()
	return c, nil
}

// contentPending is a contentDevice copy in flight: done once the contents are written.
type contentPending struct {
	done chan struct{}
	err  error
}

func (p *contentPending) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *contentDevice) write(dst gpu.DevicePtr, b []byte) {
	d.mu.Lock()
	copy(d.mem[dst-d.base:], b)
	d.mu.Unlock()
}

func (d *contentDevice) read(r devRange) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]byte(nil), d.mem[r.p-d.base:][:r.size]...)
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return b
}

func smallChunks(t *testing.T) {
	old := uploadChunk
	uploadChunk = 1 << 20
	t.Cleanup(func() { uploadChunk = old })
}

// TestUploadsStagedAsync: staged uploads are enqueued in chunks and return before their DMA;
// a wait covers exactly the uploads into the memory asked for; a staging buffer goes back to
// the pool only after its copy completed; the device ends with the host's bytes.
func TestUploadsStagedAsync(t *testing.T) {
	smallChunks(t)
	ctx := context.Background()
	const n = 3<<20 + 12345               // four chunks
	dev := newContentDevice(t, 3*n, 20e6) // 150 ms per vector: still in flight when b is waited for
	pool := gpu.NewPinnedPool(dev, 64<<20)
	var slog stageLog
	up := newUploads(&gpu.Run{Device: dev, Pinned: pool}, &slog)
	vecs := []struct {
		name string
		r    devRange
		b    []byte
	}{
		{"a", devRange{dev.base, n}, pattern(n, 1)},
		{"b", devRange{dev.base + n, n}, pattern(n, 2)},
		{"c", devRange{dev.base + 2*n, n}, pattern(n, 3)},
	}
	t0 := time.Now()
	for _, v := range vecs {
		if err := up.start(ctx, v.name, v.r.p, v.b); err != nil {
			t.Fatal(err)
		}
	}
	// About 470 ms of simulated DMA for 9.4 MB: the staging returned before it ran.
	if st := pool.Stats(); st.InUse != 3*n {
		t.Fatalf("pinned in use with three uploads in flight: %+v (the DMA took %s)", st, time.Since(t0))
	}
	if st := dev.Stats(); st.AsyncCopies != 12 || st.CopiedPaged != 0 {
		t.Fatalf("device stats: %+v", st)
	}
	// Overwrite the host vectors: the copies read the staging buffers, not these.
	for _, v := range vecs {
		clear(v.b)
	}
	if err := up.wait(ctx, vecs[1].r); err != nil {
		t.Fatal(err)
	}
	if len(up.inFlight) != 2 || up.inFlight[0].name != "a" || up.inFlight[1].name != "c" {
		t.Fatalf("after waiting for b, in flight: %d", len(up.inFlight))
	}
	if !bytes.Equal(dev.read(vecs[1].r), pattern(n, 2)) {
		t.Fatal("b on the device differs from the host vector")
	}
	if err := up.waitAll(ctx); err != nil {
		t.Fatal(err)
	}
	if st := pool.Stats(); st.InUse != 0 {
		t.Fatalf("pinned in use after waitAll: %+v", st)
	}
	for i, v := range vecs {
		if !bytes.Equal(dev.read(v.r), pattern(n, byte(i+1))) {
			t.Fatalf("%s on the device differs from the host vector", v.name)
		}
	}
	names := map[string]bool{}
	for _, s := range slog.stages {
		names[s.Name] = true
	}
	if !names["upload a"] || !names["upload c"] || !names["wait upload b"] {
		t.Fatalf("stages: %+v", slog.stages)
	}

	// Reusing the staging buffers: the next vector into a must not see b's bytes.
	next := pattern(n, 9)
	if err := up.start(ctx, "a again", vecs[0].r.p, next); err != nil {
		t.Fatal(err)
	}
	if err := up.wait(ctx, devRange{vecs[0].r.p + n - 1, 1}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dev.read(vecs[0].r), next) || pool.Stats().Reuses == 0 {
		t.Fatalf("second upload into a: reuses %d", pool.Stats().Reuses)
	}
}

// TestUploadsRing: a vector of many chunks cycles through uploadRing staging slots, so the
// pinned memory it holds stays at the ring's size, and every chunk lands intact although the
// slots are refilled while earlier chunks are still being copied.
func TestUploadsRing(t *testing.T) {
	smallChunks(t)
	ctx := context.Background()
	const n = 10<<20 + 777 // eleven chunks through four slots
	dev := newContentDevice(t, n, 200e6)
	pool := gpu.NewPinnedPool(dev, 64<<20)
	var slog stageLog
	up := newUploads(&gpu.Run{Device: dev, Pinned: pool}, &slog)
	want := pattern(n, 5)
	if err := up.start(ctx, "big", dev.base, want); err != nil {
		t.Fatal(err)
	}
	if st := pool.Stats(); st.InUse != uint64(uploadRing*uploadChunk) {
		t.Fatalf("pinned in use during a ring upload: %+v, want %d", st, uploadRing*uploadChunk)
	}
	if st := dev.Stats(); st.AsyncCopies != 11 {
		t.Fatalf("async copies: %d, want 11", st.AsyncCopies)
	}
	if err := up.waitAll(ctx); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dev.read(devRange{dev.base, n}), want) {
		t.Fatal("ring upload: device bytes differ from the host vector")
	}
	if st := pool.Stats(); st.InUse != 0 {
		t.Fatalf("pinned in use after waitAll: %+v", st)
	}
}

// TestUploadsErrors: a copy that fails reports the vector through the wait that covers it,
// its staging buffer still comes back, a cancelled wait leaves the upload to waitAll, and a
// synchronous (pageable) upload first waits for copies in flight into the same memory.
func TestUploadsErrors(t *testing.T) {
	smallChunks(t)
	ctx := context.Background()
	const n = 2 << 20
	dev := newContentDevice(t, 2*n, 20e6) // 100 ms per vector
	pool := gpu.NewPinnedPool(dev, 64<<20)
	var slog stageLog
	up := newUploads(&gpu.Run{Device: dev, Pinned: pool}, &slog)

	// Into memory that is not allocated: the chunks start, the wait reports the failure.
	if err := up.start(ctx, "x", dev.base+1<<28, pattern(n, 1)); err != nil {
		t.Fatalf("start: %v", err)
	}
	err := up.wait(ctx, devRange{dev.base + 1<<28, 1})
	var gerr *gpu.Error
	if !errors.As(err, &gerr) || !strings.Contains(err.Error(), "uploading x (2.0 MiB)") {
		t.Fatalf("wait for a copy outside any allocation: %v", err)
	}
	if len(up.inFlight) != 0 || pool.Stats().InUse != 0 {
		t.Fatalf("after a failed upload: %d in flight, pool %+v", len(up.inFlight), pool.Stats())
	}

	// A wait whose ctx ends keeps the upload; waitAll settles it even with that ctx.
	if err := up.start(ctx, "a", dev.base, pattern(n, 2)); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := up.wait(cctx, devRange{dev.base, n}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	if len(up.inFlight) != 1 || pool.Stats().InUse != n {
		t.Fatalf("after a cancelled wait: %d in flight, pool %+v", len(up.inFlight), pool.Stats())
	}
	if err := up.waitAll(cctx); err != nil {
		t.Fatal(err)
	}
	if pool.Stats().InUse != 0 || !bytes.Equal(dev.read(devRange{dev.base, n}), pattern(n, 2)) {
		t.Fatal("waitAll with a cancelled ctx did not complete the upload")
	}

	// Without a pinned pool the copy is synchronous and ordered after the staged copy into
	// the same memory, so the device ends with the later bytes.
	if err := up.start(ctx, "b", dev.base+n, pattern(n, 3)); err != nil {
		t.Fatal(err)
	}
	up.run = &gpu.Run{Device: dev}
	if err := up.start(ctx, "b (pageable)", dev.base+n, pattern(n, 4)); err != nil {
		t.Fatal(err)
	}
	if len(up.inFlight) != 0 || !bytes.Equal(dev.read(devRange{dev.base + n, n}), pattern(n, 4)) {
		t.Fatal("a pageable upload did not follow the staged one into the same memory")
	}
	if st := dev.Stats(); st.CopiedPaged != n {
		t.Fatalf("device stats: %+v", st)
	}
	// Small vectors skip the staging buffer.
	up.run = &gpu.Run{Device: dev, Pinned: pool}
	if err := up.start(ctx, "tiny", dev.base, pattern(4096, 5)); err != nil {
		t.Fatal(err)
	}
	if st := dev.Stats(); st.CopiedPaged != n+4096 || len(up.inFlight) != 0 {
		t.Fatalf("device stats after a small upload: %+v", st)
	}
}

// TestUploadsFromRegisteredBuffer: a vector inside a buffer later partitions reuse goes up in
// place (registered once, one DMA, no staging buffer), stays registered for the next upload,
// and is staged as usual when the budget cannot hold its buffer.
func TestUploadsFromRegisteredBuffer(t *testing.T) {
	smallChunks(t)
	ctx := context.Background()
	const n = 3 << 20
	dev := newContentDevice(t, 2*n, 1e9)
	pool := gpu.NewPinnedPool(dev, 64<<20)
	var slog stageLog
	up := newUploads(&gpu.Run{Device: dev, Pinned: pool}, &slog)
	whole := pattern(n+4096, 7)
	v := whole[:n]
	for round := range 2 {
		if err := up.startFrom(ctx, "witness", dev.base, v, whole); err != nil {
			t.Fatal(err)
		}
		if st := pool.Stats(); st.InUse != 0 || st.PinsInUse != 1 || st.Registered != uint64(len(whole)) {
			t.Fatalf("round %d, in flight: %+v", round, st)
		}
		if err := up.waitAll(ctx); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dev.read(devRange{dev.base, n}), v) {
			t.Fatalf("round %d: the device differs from the registered vector", round)
		}
		if st := pool.Stats(); st.PinsInUse != 0 || st.Registered != uint64(len(whole)) || st.Pins != 1 || st.Allocs != 0 {
			t.Fatalf("round %d, after the copy: %+v", round, st)
		}
	}
	if st := dev.Stats(); st.AsyncCopies != 2 || st.CopiedPaged != 0 {
		t.Fatalf("device stats: %+v", st)
	}
	pool.Forget(whole)
	if st := pool.Stats(); st.Registered != 0 {
		t.Fatalf("after Forget: %+v", st)
	}

	// A buffer over the budget is staged, quietly: it is not a pageable fallback.
	small := gpu.NewPinnedPool(dev, 8<<20)
	up = newUploads(&gpu.Run{Device: dev, Pinned: small}, &slog)
	big := pattern(2*n, 9)
	if err := up.startFrom(ctx, "witness", dev.base, big[:n], big); err != nil {
		t.Fatal(err)
	}
	if err := up.waitAll(ctx); err != nil {
		t.Fatal(err)
	}
	if st := small.Stats(); st.Registered != 0 || st.Allocs == 0 || st.PinFallbacks != 0 || st.Fallbacks != 0 {
		t.Fatalf("over the budget: %+v", st)
	}
	if !bytes.Equal(dev.read(devRange{dev.base, n}), big[:n]) {
		t.Fatal("the staged copy differs")
	}
}
