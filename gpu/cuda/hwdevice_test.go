//go:build cuda

package cuda

import (
	"bytes"
	"context"
	"testing"
	"unsafe"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/priority"
)

// TestModelSizerMatchesNative keeps the planner's table size equal to the native layout.
func TestModelSizerMatchesNative(t *testing.T) {
	for lg := uint32(1); lg <= MaxNTTLog; lg++ {
		for _, compact := range []bool{false, true} {
			if got, want := (gpu.ModelSizer{}).NTTDomainBytes(lg, compact), NTTDomainBytes(uint(lg), compact); got != want {
				t.Errorf("NTTDomainBytes(%d, compact %v): model %d, native %d", lg, compact, got, want)
			}
		}
	}
}

// TestHardwareDeviceAccounting runs the accounting allocator over a real GPU: the books and
// the driver agree on what this process holds.
func TestHardwareDeviceAccounting(t *testing.T) {
	if n, err := DeviceCount(); err != nil || n == 0 {
		t.Skip("no CUDA device visible")
	}
	dev, err := NewHardwareDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := gpu.NewAccountingAllocator(dev, gpu.AllocatorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	before := a.Stats().Others
	g, _, err := a.Admit(context.Background(), priority.Key{}, []gpu.Plan{{Tier: gpu.TierMinimal, Peak: 1 << 30,
		Buffers: []gpu.Buffer{{Name: "arena", Size: 1 << 30}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Prepare(); err != nil {
		t.Fatal(err)
	}
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	st := a.Stats()
	// Others may move by what the driver itself takes for the allocation's page tables.
	if st.Allocated != 1<<30 || st.Others > before+64<<20 {
		t.Fatalf("books after a 1 GiB arena: %+v (others before %d)", st, before)
	}
	pool := gpu.NewPinnedPool(dev, 64<<20)
	src, ok := pool.Acquire(32 << 20)
	if !ok {
		t.Fatal("pinned acquire failed")
	}
	arena, _, err := g.Buffer("arena")
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.CopyToDevice(context.Background(), arena, src); err != nil {
		t.Fatal(err)
	}
	if err := pool.Release(src); err != nil {
		t.Fatal(err)
	}
	pool.Trim()
	g.Release()
	if st := a.Stats(); st.Allocated != 0 || st.Reserved != 0 {
		t.Fatalf("books after release: %+v", st)
	}
}

// TestNativeSizer plans a 32 GiB PoRep partition with the kernels' own workspace sizes.
func TestNativeSizer(t *testing.T) {
	if n, err := DeviceCount(); err != nil || n == 0 {
		t.Skip("no CUDA device visible")
	}
	sz := NativeSizer{Ordinal: 0}
	for _, tc := range []struct {
		c     gpu.Curve
		n     uint64
		flags gpu.MSMFlags
	}{
		{gpu.G1, 1<<27 - 1, gpu.MSMPointsOnHost},
		{gpu.G1, 1<<27 - 1, 0},
		{gpu.G1, 130_000_000, gpu.MSMSplit01 | gpu.MSMPointsOnHost | gpu.MSMScalarsOnHost},
		{gpu.G1, 130_000_000, gpu.MSMSplit01},
		{gpu.G2, 33_000_000, gpu.MSMSplit01},
		{gpu.G2, 1 << 20, gpu.MSMScalarsOnHost},
		{gpu.G1, 1000, 0},
	} {
		for _, chunkLog := range []uint32{20, 22, 24, 26} {
			native := sz.MSMWorkspace(tc.c, tc.n, tc.flags, chunkLog)
			model := gpu.ModelSizer{}.MSMWorkspace(tc.c, tc.n, tc.flags, chunkLog)
			t.Logf("MSM G%d n=%d flags=%d chunk 2^%d: native %s, model %s", tc.c, tc.n, tc.flags, chunkLog,
				gpu.FormatBytes(native), gpu.FormatBytes(model))
			if native == 0 {
				t.Errorf("native workspace of %d points is zero", tc.n)
			}
			// The model mirrors the native layout except the radix sort's scratch.
			diff := max(native, model) - min(native, model)
			if diff > max(native/50, 2<<20) {
				t.Errorf("MSM G%d n=%d flags=%d chunk 2^%d: model %d bytes, native %d", tc.c, tc.n, tc.flags, chunkLog, model, native)
			}
		}
	}
	cands := gpu.Planner{Sizer: sz}.Candidates(gpu.Shape{LogDomain: 27, SRSKey: "porep-32g",
		Points: [gpu.NumQueries]uint64{1<<27 - 1, 130_000_000, 130_000_000, 33_000_000, 33_000_000}}, true)
	for i, p := range cands {
		t.Logf("%-40s need %s", p, gpu.FormatBytes(p.Need()))
		if i > 0 && p.SRSResident == cands[i-1].SRSResident && p.Need() >= cands[i-1].Need() {
			t.Errorf("candidate %s is not smaller than %s", p, cands[i-1])
		}
	}
}

// TestHardwareCopyToDeviceAsync copies a few MiB from pinned memory through the copy stream
// in several copies, overwrites one range with a later copy (stream order), and reads it back.
func TestHardwareCopyToDeviceAsync(t *testing.T) {
	ctx := context.Background()
	const size = 6 << 20
	dev, dst := deviceBuffer(t, size)
	src, err := dev.HostAlloc(size)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dev.HostFree(src) }()
	later, err := dev.HostAlloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dev.HostFree(later) }()
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i*131 + i>>12)
	}
	copy(src.Bytes, want)
	for i := range later.Bytes {
		later.Bytes[i] = byte(255 - i)
	}
	var pend []gpu.Pending
	const chunk = 2 << 20
	for off := 0; off < size; off += chunk {
		part := gpu.HostMem{Bytes: src.Bytes[off : off+chunk], Size: chunk, Pinned: true}
		p, err := dev.CopyToDeviceAsync(ctx, dst+gpu.DevicePtr(off), part)
		if err != nil {
			t.Fatal(err)
		}
		pend = append(pend, p)
	}
	// Enqueued after the first chunk on the same stream: these bytes win.
	p, err := dev.CopyToDeviceAsync(ctx, dst+1<<19, later)
	if err != nil {
		t.Fatal(err)
	}
	pend = append(pend, p)
	copy(want[1<<19:], later.Bytes)
	for i, p := range pend {
		if err := p.Wait(ctx); err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		if err := p.Wait(ctx); err != nil {
			t.Fatalf("second Wait of copy %d: %v", i, err)
		}
	}
	got := make([]byte, size)
	if err := CopyDeviceToHost(0, unsafe.Pointer(&got[0]), dst, size); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for got[i] == want[i] {
			i++
		}
		t.Fatalf("device bytes differ from the source at offset %d", i)
	}
	if p, err := dev.CopyToDeviceAsync(ctx, dst, gpu.HostMem{}); err != nil || p.Wait(ctx) != nil {
		t.Fatalf("empty copy: %v", err)
	}
}

// TestHardwarePinHost page-locks Go memory in place through the pool, copies from it
// asynchronously, and unregisters it on Trim.
func TestHardwarePinHost(t *testing.T) {
	ctx := context.Background()
	const size = 24<<20 + 96
	dev, dst := deviceBuffer(t, size)
	v := make([]byte, size)
	for i := range v {
		v[i] = byte(i*197 + i>>10)
	}
	pool := gpu.NewPinnedPool(dev, 1<<30)
	release, ok := pool.PinHost(v)
	if !ok {
		t.Fatalf("pinning %d bytes failed: %+v", size, pool.Stats())
	}
	if _, err := dev.HostRegister(v); err == nil {
		t.Fatal("registering pinned memory a second time succeeded: PinHost did not register it")
	}
	p, err := dev.CopyToDeviceAsync(ctx, dst, gpu.HostMem{Bytes: v, Size: size, Pinned: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, size)
	if err := CopyDeviceToHost(0, unsafe.Pointer(&got[0]), dst, size); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, v) {
		t.Fatal("device copy of the pinned vector differs")
	}
	release()
	pool.Trim()
	if st := pool.Stats(); st.Registered != 0 || st.Pins != 1 {
		t.Fatalf("after trim: %+v", st)
	}
	if err := dev.HostUnregister(gpu.HostMem{Bytes: v}); err == nil {
		t.Fatal("unregistering after Trim succeeded: Trim left the vector registered")
	}
}

// deviceBuffer opens device 0 and allocates size bytes on it for the test (skipped without a
// device).
func deviceBuffer(t *testing.T, size uint64) (*HardwareDevice, gpu.DevicePtr) {
	t.Helper()
	requireDevice(t)
	dev, err := NewHardwareDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := dev.Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dev.Free(dst) })
	return dev, dst
}
