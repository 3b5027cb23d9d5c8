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

// TestNativeSizer plans a 32 GiB PoRep partition with the kernels' own workspace sizes.
func TestNativeSizer(t *testing.T) {
	if n, err := DeviceCount(); err != nil || n == 0 {
		t.Skip("no CUDA device visible")
	}
	sz := NativeSizer{Ordinal: 0}
	for _, tc := range []struct {
		c     Curve
		n     uint64
		flags MSMFlags
	}{
		{G1, 1<<27 - 1, MSMPointsOnHost},
		{G1, 130_000_000, MSMSplit01 | MSMPointsOnHost | MSMScalarsOnHost},
		{G2, 33_000_000, MSMSplit01},
	} {
		native := sz.MSMWorkspace(tc.c, tc.n, tc.flags, 22)
		model := ModelSizer{}.MSMWorkspace(tc.c, tc.n, tc.flags, 22)
		t.Logf("MSM G%d n=%d flags=%d: native %s, model %s", tc.c, tc.n, tc.flags, FormatBytes(native), FormatBytes(model))
		if native == 0 {
			t.Errorf("native workspace of %d points is zero", tc.n)
		}
	}
	cands := Planner{Sizer: sz}.Candidates(porepShape, true)
	for i, p := range cands {
		t.Logf("%-40s need %s", p, FormatBytes(p.Need()))
		if i > 0 && p.SRSResident == cands[i-1].SRSResident && p.Need() >= cands[i-1].Need() {
			t.Errorf("candidate %s is not smaller than %s", p, cands[i-1])
		}
	}
}
