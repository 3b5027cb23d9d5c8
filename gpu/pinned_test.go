package gpu

import "testing"

func TestPinnedPool(t *testing.T) {
	dev := NewSimDevice(SimConfig{TotalMem: 1 << 30})
	p := NewPinnedPool(dev, 100*mib)
	var fallbacks []uint64
	p.OnFallback = func(n uint64) { fallbacks = append(fallbacks, n) }

	a, ok := p.Acquire(60 * mib)
	if !ok || !a.Pinned || a.Size != 60*mib {
		t.Fatalf("first acquire: %+v %v", a, ok)
	}
	if _, ok := p.Acquire(50 * mib); ok {
		t.Fatal("acquire past the budget succeeded")
	}
	if len(fallbacks) != 1 || fallbacks[0] != 50*mib {
		t.Fatalf("fallback hook got %v", fallbacks)
	}
	b, ok := p.Acquire(40 * mib)
	if !ok {
		t.Fatal("acquire within the budget failed")
	}
	if err := p.Release(a); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(a); err == nil {
		t.Fatal("double release accepted")
	}
	// A cached 60 MiB buffer serves a 35 MiB request (within 2×), without a new allocation.
	c, ok := p.Acquire(35 * mib)
	if !ok || c.Size != 35*mib {
		t.Fatalf("reuse: %+v %v", c, ok)
	}
	st := p.Stats()
	if st.Allocs != 2 || st.Reuses != 1 || st.Fallbacks != 1 || st.FallbackBytes != 50*mib ||
		st.Held != 100*mib || st.InUse != 100*mib { // in use counts whole buffers
		t.Fatalf("stats %+v", st)
	}
	// Nothing is cached and the budget is spent: fallback.
	if _, ok := p.Acquire(20 * mib); ok {
		t.Fatal("acquire with the budget spent succeeded")
	}
	for _, m := range []HostMem{b, c} {
		if err := p.Release(m); err != nil {
			t.Fatal(err)
		}
	}
	// A request no cached buffer fits evicts cached buffers to make room.
	d, ok := p.Acquire(90 * mib)
	if !ok {
		t.Fatal("acquire after release failed; cached buffers should have been dropped")
	}
	if err := p.Release(d); err != nil {
		t.Fatal(err)
	}
	p.Trim()
	if st := p.Stats(); st.Held != 0 || st.InUse != 0 || dev.Stats().HostPinned != 0 {
		t.Fatalf("after trim: %+v, device pinned %d", st, dev.Stats().HostPinned)
	}
}

func TestDefaultPinnedBudget(t *testing.T) {
	if b := DefaultPinnedBudget(); b < 1<<28 {
		t.Fatalf("DefaultPinnedBudget = %d", b)
	}
}
