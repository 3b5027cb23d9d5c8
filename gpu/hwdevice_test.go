//go:build cuda

package gpu

import (
	"context"
	"testing"
)

// TestModelSizerMatchesNative keeps the planner's table size equal to the native layout.
func TestModelSizerMatchesNative(t *testing.T) {
	for lg := uint32(1); lg <= MaxNTTLog; lg++ {
		if got, want := (ModelSizer{}).NTTDomainBytes(lg), NTTDomainBytes(uint(lg)); got != want {
			t.Errorf("NTTDomainBytes(%d): model %d, native %d", lg, got, want)
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
	a, err := NewAccountingAllocator(dev, AllocatorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	before := a.Stats().Others
	g, _, err := a.Admit(context.Background(), Priority{}, []Plan{{Tier: TierMinimal, Peak: 1 << 30}})
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
	pool := NewPinnedPool(dev, 64<<20)
	src, ok := pool.Acquire(32 << 20)
	if !ok {
		t.Fatal("pinned acquire failed")
	}
	if err := dev.CopyToDevice(context.Background(), g.arena, src); err != nil {
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
