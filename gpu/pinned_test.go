package gpu_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/sim"
)

func TestPinnedPool(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 1 << 30})
	p := gpu.NewPinnedPool(dev, 100*mib)
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
	for _, m := range []gpu.HostMem{b, c} {
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
	if b := gpu.DefaultPinnedBudget(); b < 1<<28 {
		t.Fatalf("DefaultPinnedBudget = %d", b)
	}
}

func TestPinHost(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 1 << 30})
	p := gpu.NewPinnedPool(dev, 100*mib) // staging reserve 50 MiB: pins take at most 50 MiB
	var fallbacks []uint64
	p.OnFallback = func(n uint64) { fallbacks = append(fallbacks, n) }
	vec := func(n uint64) []byte { return make([]byte, n) }
	a, b, c, d := vec(20*mib), vec(25*mib), vec(10*mib), vec(5*mib)
	pin := func(v []byte) (func(), bool) {
		t.Helper()
		return p.PinHost(v)
	}

	relA1, ok1 := pin(a)
	relA2, ok2 := pin(a) // a second partition streaming the same vector shares the registration
	if !ok1 || !ok2 || p.Stats().Pins != 1 || dev.Stats().HostRegistered != 20*mib {
		t.Fatalf("pinning a twice: %v %v, pool %+v, device %+v", ok1, ok2, p.Stats(), dev.Stats())
	}
	relA1()
	relA1() // idempotent
	relA2()
	time.Sleep(time.Millisecond)
	cut := time.Now() // after a's last release, before b's
	time.Sleep(time.Millisecond)
	relB, ok := pin(b)
	if !ok || p.Stats().Registered != 45*mib {
		t.Fatalf("pinning b: %v %+v", ok, p.Stats())
	}
	relB()
	// c does not fit beside a and b, which are idle but recently used: it streams from pageable
	// memory rather than trade registrations with them every partition.
	if _, ok := pin(c); ok {
		t.Fatal("c pinned past the budget")
	}
	if st := p.Stats(); st.PinFallbacks != 1 || st.PinFallbackBytes != 10*mib || len(fallbacks) != 1 {
		t.Fatalf("after c's fallback: %+v, hook %v", st, fallbacks)
	}
	// Expiry unpins what has been idle since a point in time: a (released before b), not b.
	if n := p.UnpinIdleSince(cut); n != 20*mib {
		t.Fatalf("UnpinIdleSince released %d bytes, want a's %d", n, 20*mib)
	}
	relC, ok := pin(c)
	if !ok || dev.Stats().HostRegistered != 35*mib || p.Stats().Registered != 35*mib {
		t.Fatalf("pinning c after a expired: %v, pool %+v, device %+v", ok, p.Stats(), dev.Stats())
	}
	// Pins in use are never dropped: with b and c held, a cannot come back.
	relB, _ = pin(b)
	if _, ok := pin(a); ok {
		t.Fatal("a pinned by dropping a pin in use")
	}
	// Upload staging shares the budget: with 65 MiB of staging in use nothing else fits; once
	// the staging buffer is cached, a pin frees it.
	s, ok := p.Acquire(65 * mib)
	if !ok {
		t.Fatal("staging within the budget failed")
	}
	if _, ok := pin(d); ok {
		t.Fatal("d pinned past the budget with staging in use")
	}
	if err := p.Release(s); err != nil {
		t.Fatal(err)
	}
	relD, ok := pin(d)
	if !ok || dev.Stats().HostPinned != 0 || p.Stats().Held != 40*mib {
		t.Fatalf("pinning d after staging was released: %v, pool %+v, device %+v", ok, p.Stats(), dev.Stats())
	}
	// A failed registration is not retried: the vector streams from pageable memory.
	e := vec(mib)
	dev.InjectRegisterFailures(1)
	for i := 0; i < 2; i++ {
		if _, ok := pin(e); ok {
			t.Fatalf("attempt %d: e pinned after its registration failed", i)
		}
	}
	if st := p.Stats(); st.Pins != 4 || st.Registered != 40*mib {
		t.Fatalf("after e: %+v", st)
	}
	// Trim unregisters every idle pin and leaves the ones in use.
	relB()
	relC()
	p.Trim()
	if st := p.Stats(); st.Registered != 5*mib || dev.Stats().HostRegistered != 5*mib {
		t.Fatalf("after trim with d in use: pool %+v, device %+v", st, dev.Stats())
	}
	relD()
	p.Trim()
	if st := p.Stats(); st.Registered != 0 || st.Held != 0 || dev.Stats().HostRegistered != 0 {
		t.Fatalf("after the last trim: pool %+v, device %+v", st, dev.Stats())
	}
}

func TestPinHostConcurrent(t *testing.T) {
	// Registration takes a while, so the other callers find it in progress and must wait for it.
	dev := sim.New(sim.Config{TotalMem: 1 << 30, RegisterLatency: 20 * time.Millisecond})
	p := gpu.NewPinnedPool(dev, 100*mib)
	pinAll := func(v []byte) (ok int) {
		var wg sync.WaitGroup
		var n atomic.Int32
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				release, ok := p.PinHost(v)
				if ok {
					n.Add(1)
				}
				release()
			}()
		}
		wg.Wait()
		return int(n.Load())
	}
	v := make([]byte, 10*mib)
	if ok := pinAll(v); ok != 16 || p.Stats().Pins != 1 || dev.Stats().HostRegistered != 10*mib {
		t.Fatalf("%d of 16 pinned, pool %+v, device %+v", ok, p.Stats(), dev.Stats())
	}
	// A registration that fails while others wait for it fails them all, once.
	w := make([]byte, 10*mib)
	dev.InjectRegisterFailures(1)
	if ok := pinAll(w); ok != 0 || p.Stats().Pins != 1 || p.Stats().PinFallbacks != 16 {
		t.Fatalf("failed registration: %d pinned, pool %+v", ok, p.Stats())
	}
	p.Trim()
	if dev.Stats().HostRegistered != 0 || p.Stats().Held != 0 {
		t.Fatalf("after trim: pool %+v, device %+v", p.Stats(), dev.Stats())
	}
}

// TestPinHostDuringUnpin: a partition that pins a vector while its expiry is unregistering it
// waits and registers it again, instead of failing on memory that is still registered.
func TestPinHostDuringUnpin(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 1 << 30, RegisterLatency: 30 * time.Millisecond})
	p := gpu.NewPinnedPool(dev, 100*mib)
	v := make([]byte, 10*mib)
	release, ok := p.PinHost(v)
	if !ok {
		t.Fatal("first pin failed")
	}
	release()
	done := make(chan uint64)
	go func() { done <- p.UnpinIdleSince(time.Now().Add(time.Hour)) }()
	time.Sleep(10 * time.Millisecond) // inside the unregistration
	release, ok = p.PinHost(v)
	if n := <-done; n != 10*mib {
		t.Fatalf("expiry unpinned %d bytes", n)
	}
	if !ok || p.Stats().Pins != 2 || p.Stats().Registered != 10*mib || dev.Stats().HostRegistered != 10*mib {
		t.Fatalf("pin during unpin: ok %v, pool %+v, device %+v", ok, p.Stats(), dev.Stats())
	}
	release()
	p.Trim()
}

// TestPinnedForget: parameters that left the cache are unregistered at once when idle, and at
// their last release when a partition still streams from them.
func TestPinnedForget(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 1 << 30})
	p := gpu.NewPinnedPool(dev, 100*mib)
	idle, busy := make([]byte, 10*mib), make([]byte, 20*mib)
	release, _ := p.PinHost(idle)
	release()
	release, ok := p.PinHost(busy)
	if !ok || p.Stats().Registered != 30*mib {
		t.Fatalf("pinning: %+v", p.Stats())
	}
	p.Forget(idle)
	p.Forget(busy)
	if st := p.Stats(); st.Registered != 20*mib || st.PinsInUse != 1 || dev.Stats().HostRegistered != 20*mib {
		t.Fatalf("after Forget: pool %+v, device %+v", st, dev.Stats())
	}
	release()
	if st := p.Stats(); st.Registered != 0 || st.Held != 0 || dev.Stats().HostRegistered != 0 {
		t.Fatalf("after the last release of a forgotten vector: pool %+v, device %+v", st, dev.Stats())
	}
	// Forget also clears a failed registration: the next parameters at that address may pin.
	dev.InjectRegisterFailures(1)
	if _, ok := p.PinHost(idle); ok {
		t.Fatal("pinned through an injected failure")
	}
	p.Forget(idle)
	if release, ok := p.PinHost(idle); !ok {
		t.Fatal("a forgotten failure still blocks pinning")
	} else {
		release()
	}
	p.Trim()
}

// TestPinnedRoom: Room is what PinHost can still register, counting the caller's own
// registration and the cached staging buffers PinHost would drop.
func TestPinnedRoom(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 1 << 30})
	p := gpu.NewPinnedPool(dev, 100*mib) // staging reserve 50 MiB: pins take at most 50 MiB
	a, b := make([]byte, 20*mib), make([]byte, 40*mib)
	if got := p.Room(nil); got != 50*mib {
		t.Fatalf("empty pool: room %d MiB, want 50", got/mib)
	}
	rel, ok := p.PinHost(a)
	if !ok {
		t.Fatal("pinning a failed")
	}
	rel()
	if got := p.Room(nil); got != 30*mib {
		t.Errorf("beside a: room %d MiB, want 30", got/mib)
	}
	if got := p.Room(a); got != 50*mib {
		t.Errorf("for a itself: room %d MiB, want 50", got/mib)
	}
	// Staging in use counts against the budget; released, it is cached and counts as room.
	m, ok := p.Acquire(70 * mib)
	if !ok {
		t.Fatal("staging 70 MiB failed")
	}
	if got := p.Room(nil); got != 10*mib {
		t.Errorf("with 70 MiB of staging in use: room %d MiB, want 10", got/mib)
	}
	p.Release(m)
	if got := p.Room(nil); got != 30*mib {
		t.Errorf("with the staging cached: room %d MiB, want 30", got/mib)
	}
	if _, ok := p.PinHost(b); ok {
		t.Error("b (40 MiB) registered beside a with 30 MiB of room")
	}
}
