package sim

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/snarkd/snarkd/gpu"
)

func TestParseSimSpec(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		want    []uint64
		wantErr bool
	}{
		{spec: "2x16GiB", want: []uint64{16 << 30, 16 << 30}},
		{spec: "16GiB", want: []uint64{16 << 30}},
		{spec: "1x80GB, 2X24gib", want: []uint64{80e9, 24 << 30, 24 << 30}},
		{spec: "3x1.5GiB", want: []uint64{3 << 29, 3 << 29, 3 << 29}},
		{spec: "", wantErr: true},
		{spec: "2x", wantErr: true},
		{spec: "0x16GiB", wantErr: true},
		{spec: "2x16XB", wantErr: true},
		{spec: "2x512MiB", wantErr: true},
		{spec: "ax16GiB", wantErr: true},
		{spec: "2x16GiB,", wantErr: true},
		// Sizes are read by internal/bytesize, as config's are.
		{spec: "2G", want: []uint64{2 << 30}},
		{spec: "1.5 GB", want: []uint64{1.5e9}},
		{spec: "1x1T", want: []uint64{1 << 40}},
		{spec: "1PiB", wantErr: true},
		{spec: "-1GiB", wantErr: true},
		{spec: "8388608TiB", wantErr: true},
	} {
		cfgs, err := ParseSpec(tc.spec)
		if tc.wantErr {
			if err == nil {
				t.Errorf("ParseSpec(%q) = %v, want an error", tc.spec, cfgs)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSpec(%q): %v", tc.spec, err)
			continue
		}
		var got []uint64
		for i, c := range cfgs {
			got = append(got, c.TotalMem)
			if c.Ordinal != i || c.PinnedBandwidth <= 0 {
				t.Errorf("ParseSpec(%q)[%d] = %+v", tc.spec, i, c)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSpec(%q) sizes = %v, want %v", tc.spec, got, tc.want)
		}
	}
	devs, err := NewDevices("2x16GiB")
	if err != nil || len(devs) != 2 || devs[1].Info().Ordinal != 1 || devs[0].Info().TotalMem != 16<<30 {
		t.Fatalf("NewDevices: %v %v", devs, err)
	}
}

func TestSimDeviceMemory(t *testing.T) {
	d := New(Config{TotalMem: 100 << 20, OthersMem: 20 << 20})
	if free, total, _ := d.MemInfo(); free != 80<<20 || total != 100<<20 {
		t.Fatalf("MemInfo = %d, %d", free, total)
	}
	p, err := d.Alloc(1) // booked as one 2 MiB page
	if err != nil {
		t.Fatal(err)
	}
	if free, _, _ := d.MemInfo(); free != 78<<20 {
		t.Fatalf("free after 1-byte alloc = %d, want 78 MiB", free)
	}
	if _, err := d.Alloc(79 << 20); !gpu.IsOutOfMemory(err) {
		t.Fatalf("over-capacity alloc: %v, want out-of-memory", err)
	}
	d.InjectAllocFailures(1)
	if _, err := d.Alloc(1 << 20); !gpu.IsOutOfMemory(err) {
		t.Fatalf("injected failure: %v", err)
	}
	q, err := d.Alloc(1 << 20)
	if err != nil {
		t.Fatalf("alloc after the injected failure: %v", err)
	}
	if err := d.Free(q + 1); err == nil {
		t.Fatal("freeing an interior pointer succeeded")
	}
	for _, x := range []gpu.DevicePtr{p, q} {
		if err := d.Free(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Free(p); err == nil {
		t.Fatal("double free succeeded")
	}
	st := d.Stats()
	if st.Allocated != 0 || st.FailedAllocs != 2 || st.Injected != 1 || st.PeakAllocated != 4<<20 {
		t.Fatalf("stats = %+v", st)
	}
	d.SetOthers(99 << 20)
	if free, _, _ := d.MemInfo(); free != 1<<20 {
		t.Fatalf("free after SetOthers = %d", free)
	}
}

// TestSimDeviceCopyAsync: an async copy returns at once, Wait joins it and reports its result
// (the same on every Wait), copies run in the order they were started, and a cancelled ctx
// ends a Wait without settling the copy.
func TestSimDeviceCopyAsync(t *testing.T) {
	ctx := context.Background()
	d := New(Config{TotalMem: 1 << 30, PinnedBandwidth: 100e6}) // 10 ms per MB
	p, err := d.Alloc(8 << 20)
	if err != nil {
		t.Fatal(err)
	}
	src := gpu.HostMem{Size: 5e6, Pinned: true} // 50 ms
	t0 := time.Now()
	slow, err := d.CopyToDeviceAsync(ctx, p, src)
	if err != nil {
		t.Fatal(err)
	}
	quick, err := d.CopyToDeviceAsync(ctx, p, gpu.HostMem{Size: 1, Pinned: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 40*time.Millisecond {
		t.Errorf("starting two copies took %s", d)
	}
	if err := quick.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	// In stream order the slow copy finished first: it settles even for a done context.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := slow.Wait(done); err != nil {
		t.Fatalf("the earlier copy is not complete after the later one: %v", err)
	}
	if d := time.Since(t0); d < 45*time.Millisecond {
		t.Errorf("a 5 MB copy at 100 MB/s took %s", d)
	}
	if err := slow.Wait(ctx); err != nil {
		t.Fatalf("second Wait: %v", err)
	}
	if st := d.Stats(); st.AsyncCopies != 2 || st.CopiedPinned != 5e6+1 {
		t.Fatalf("stats = %+v", st)
	}

	// A copy into memory that is not allocated fails when it runs, through Wait.
	if err := d.Free(p); err != nil {
		t.Fatal(err)
	}
	bad, err := d.CopyToDeviceAsync(ctx, p, src)
	if err != nil {
		t.Fatalf("starting a copy into freed memory: %v (the copy itself should fail)", err)
	}
	err1 := bad.Wait(ctx)
	var gerr *gpu.Error
	if !errors.As(err1, &gerr) {
		t.Fatalf("copy into freed memory: %v, want a device error", err1)
	}
	if err2 := bad.Wait(ctx); err2 != err1 {
		t.Fatalf("second Wait = %v, first %v", err2, err1)
	}

	// A Wait whose ctx ends returns promptly and leaves the copy running; the copy stops when
	// the ctx it was started with is cancelled, and that is its result.
	slowDev := New(Config{TotalMem: 1 << 30, PinnedBandwidth: 1e6})
	q, err := slowDev.Alloc(8 << 20)
	if err != nil {
		t.Fatal(err)
	}
	copyCtx, stopCopy := context.WithCancel(ctx)
	defer stopCopy()
	long, err := slowDev.CopyToDeviceAsync(copyCtx, q, gpu.HostMem{Size: 8 << 20, Pinned: true}) // about 8 s
	if err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancelShort()
	t0 = time.Now()
	if err := long.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with an expiring ctx: %v", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("Wait with a 20 ms ctx took %s", d)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		stopCopy()
	}()
	if err := long.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait for a copy whose ctx was cancelled: %v", err)
	}
	if err := long.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("second Wait: %v", err)
	}
	if d := time.Since(t0); d > 4*time.Second {
		t.Fatalf("cancelling the copy took %s", d)
	}
	if _, err := slowDev.CopyToDeviceAsync(done, q, src); !errors.Is(err, context.Canceled) {
		t.Fatalf("starting a copy with a cancelled ctx: %v", err)
	}
}
