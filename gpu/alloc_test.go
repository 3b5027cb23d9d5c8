package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/sim"
	"github.com/snarkd/snarkd/priority"
)

const mib = 1 << 20

func newTestAllocator(t *testing.T, total, others, headroom uint64) (*sim.Device, *gpu.AccountingAllocator) {
	t.Helper()
	dev := sim.New(sim.Config{TotalMem: total, OthersMem: others})
	a, err := gpu.NewAccountingAllocator(dev, gpu.AllocatorConfig{Headroom: headroom, RefreshInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return dev, a
}

func arenaPlan(tier gpu.Tier, bytes uint64) gpu.Plan {
	return gpu.Plan{Tier: tier, Peak: gpu.RoundAlloc(bytes)}
}

// waitFor polls cond; it guards against hangs, not durations.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func TestAdmitPicksBestFittingPlan(t *testing.T) {
	for _, tc := range []struct {
		name              string
		total, others, hr uint64
		held              uint64 // granted before
		wantTier          gpu.Tier
	}{
		{"all fits with the default headroom", 2048 * mib, 0, 0, 0, gpu.TierFull},
		{"headroom pushes to partial", 1024 * mib, 0, 512 * mib, 0, gpu.TierPartial},
		{"others push to minimal", 1024 * mib, 600 * mib, 100 * mib, 0, gpu.TierMinimal},
		{"granted pushes to minimal", 1024 * mib, 0, 512 * mib, 300 * mib, gpu.TierMinimal},
		{"exactly full", 1024*mib + gpu.DefaultHeadroom, 0, 0, 0, gpu.TierFull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev, a := newTestAllocator(t, tc.total, tc.others, tc.hr)
			plans := []gpu.Plan{arenaPlan(gpu.TierFull, 1024*mib), arenaPlan(gpu.TierPartial, 400*mib), arenaPlan(gpu.TierMinimal, 100*mib)}
			ctx := context.Background()
			if tc.held > 0 {
				g, _, err := a.Admit(ctx, priority.Key{}, []gpu.Plan{arenaPlan(gpu.TierFull, tc.held)})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Release()
			}
			g, idx, err := a.Admit(ctx, priority.Key{}, plans)
			if err != nil {
				t.Fatal(err)
			}
			if g.Plan.Tier != tc.wantTier || plans[idx].Tier != tc.wantTier {
				t.Fatalf("granted %s (index %d), want %s", g.Plan.Tier, idx, tc.wantTier)
			}
			if err := g.Prepare(); err != nil {
				t.Fatal(err)
			}
			st := a.Stats()
			if st.Reserved > st.Total-st.Others-st.Headroom {
				t.Fatalf("reserved %d > total %d − others %d − headroom %d", st.Reserved, st.Total, st.Others, st.Headroom)
			}
			g.Release()
			g.Release() // idempotent
			if tc.held == 0 {
				if st := a.Stats(); st.Reserved != 0 || st.Allocated != 0 || dev.Stats().Allocated != 0 {
					t.Fatalf("after release: %+v, device %+v", st, dev.Stats())
				}
			}
		})
	}
}

func TestAdmitNeverFits(t *testing.T) {
	_, a := newTestAllocator(t, 1024*mib, 0, 512*mib)
	_, _, err := a.Admit(context.Background(), priority.Key{}, []gpu.Plan{arenaPlan(gpu.TierMinimal, 600*mib)})
	var fe *gpu.FitError
	if !errors.As(err, &fe) || fe.Limit != 512*mib {
		t.Fatalf("Admit = %v, want *FitError with limit 512 MiB", err)
	}
}

// TestAdmissionBound hammers one device from many goroutines with random plans while other
// processes' usage is fixed: the books and the device itself must never pass
// total − others − headroom.
func TestAdmissionBound(t *testing.T) {
	const total, others, headroom = 4096 * mib, 700 * mib, 512 * mib
	dev, a := newTestAllocator(t, total, others, headroom)
	limit := uint64(total - others - headroom)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := range 40 {
				plans := []gpu.Plan{arenaPlan(gpu.TierFull, uint64(rng.Intn(2000)+1)*mib),
					arenaPlan(gpu.TierPartial, uint64(rng.Intn(800)+1)*mib),
					arenaPlan(gpu.TierMinimal, uint64(rng.Intn(300)+1)*mib)}
				g, _, err := a.Admit(ctx, priority.Key{Index: w*100 + i}, plans)
				if err != nil {
					errs <- err
					return
				}
				if err := g.Prepare(); err != nil {
					errs <- fmt.Errorf("prepare after admission: %w", err)
				}
				if st := a.Stats(); st.Reserved > limit {
					errs <- fmt.Errorf("reserved %d > limit %d", st.Reserved, limit)
				}
				if rng.Intn(2) == 0 {
					time.Sleep(time.Duration(rng.Intn(50)) * time.Microsecond)
				}
				g.Release()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ds := dev.Stats()
	if ds.PeakAllocated > limit {
		t.Errorf("device peak %d > total − others − headroom %d", ds.PeakAllocated, limit)
	}
	if ds.FailedAllocs != 0 || ds.Allocated != 0 {
		t.Errorf("device stats %+v: want no failed allocation and nothing left", ds)
	}
	if st := a.Stats(); st.Reserved != 0 || st.Allocated != 0 || st.Grants != 0 || st.Waiting != 0 {
		t.Errorf("books not empty: %+v", st)
	}
}

func TestAdmitWaitsForOtherProcesses(t *testing.T) {
	dev, a := newTestAllocator(t, 2048*mib, 1800*mib, 128*mib)
	got := make(chan *gpu.Grant)
	go func() {
		g, _, err := a.Admit(context.Background(), priority.Key{}, []gpu.Plan{arenaPlan(gpu.TierMinimal, 200*mib)})
		if err != nil {
			t.Error(err)
		}
		got <- g
	}()
	waitFor(t, "the partition queues for memory", func() bool { return a.Stats().Waiting == 1 })
	select {
	case g := <-got:
		t.Fatalf("granted %v while other processes hold the memory", g.Plan)
	default:
	}
	dev.SetOthers(100 * mib) // the other process exits; the next refresh sees it
	g := <-got
	if g == nil {
		t.FailNow()
	}
	if err := g.Prepare(); err != nil {
		t.Fatal(err)
	}
	g.Release()
	if st := a.Stats(); st.Others != 100*mib || st.Reserved != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestAdmitWaitsForRelease(t *testing.T) {
	_, a := newTestAllocator(t, 1024*mib, 0, 512*mib) // 512 MiB to give
	ctx := context.Background()
	g1, _, err := a.Admit(ctx, priority.Key{}, []gpu.Plan{arenaPlan(gpu.TierFull, 400*mib)})
	if err != nil {
		t.Fatal(err)
	}
	// A WinningPoSt-class partition needing 450 MiB waits; a PoRep-class one needing 100 MiB,
	// which would fit now, arrives later and must not overtake it. The two cannot hold their
	// memory together, so the order of the channel is the order of the grants.
	order := make(chan string, 2)
	var wg sync.WaitGroup
	for i, w := range []struct {
		name  string
		prio  priority.Key
		bytes uint64
	}{{"winning", priority.Key{Class: 0}, 450 * mib}, {"porep", priority.Key{Class: 2}, 100 * mib}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, _, err := a.Admit(ctx, w.prio, []gpu.Plan{arenaPlan(gpu.TierMinimal, w.bytes)})
			if err != nil {
				t.Error(err)
				return
			}
			order <- w.name
			g.Release()
		}()
		waitFor(t, "waiter queued", func() bool { return a.Stats().Waiting == i+1 })
	}
	select {
	case name := <-order:
		t.Fatalf("%s was granted while a better-ranked partition waited", name)
	default:
	}
	g1.Release()
	if first, second := <-order, <-order; first != "winning" || second != "porep" {
		t.Fatalf("granted %s then %s, want winning then porep", first, second)
	}
	wg.Wait()
}

func TestAdmitCancel(t *testing.T) {
	_, a := newTestAllocator(t, 1024*mib, 0, 512*mib)
	g, _, err := a.Admit(context.Background(), priority.Key{}, []gpu.Plan{arenaPlan(gpu.TierFull, 500*mib)})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, _, err := a.Admit(ctx, priority.Key{}, []gpu.Plan{arenaPlan(gpu.TierMinimal, 100*mib)})
		done <- err
	}()
	waitFor(t, "waiter queued", func() bool { return a.Stats().Waiting == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Admit = %v", err)
	}
	if st := a.Stats(); st.Waiting != 0 || st.Reserved != 500*mib {
		t.Fatalf("stats after cancel %+v", st)
	}
}

func TestPrepareOutOfMemory(t *testing.T) {
	dev, a := newTestAllocator(t, 1024*mib, 0, 0)
	g, _, err := a.Admit(context.Background(), priority.Key{}, []gpu.Plan{arenaPlan(gpu.TierFull, 300*mib)})
	if err != nil {
		t.Fatal(err)
	}
	dev.SetOthers(900 * mib) // another process took memory after admission
	if err := g.Prepare(); !gpu.IsOutOfMemory(err) {
		t.Fatalf("Prepare = %v, want out-of-memory", err)
	}
	g.Release()
	a.NoteOutOfMemory()
	if st := a.Stats(); st.Others != 900*mib || st.Reserved != 0 || st.Allocated != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRefreshCountsOnlyOthers(t *testing.T) {
	dev, a := newTestAllocator(t, 1024*mib, 100*mib, 0)
	g, _, err := a.Admit(context.Background(), priority.Key{}, []gpu.Plan{arenaPlan(gpu.TierFull, 300*mib)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Prepare(); err != nil {
		t.Fatal(err)
	}
	dev.SetOthers(150 * mib)
	if err := a.Refresh(); err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.Others != 150*mib || st.Allocated != 300*mib {
		t.Fatalf("stats %+v: our own allocation must not count as others'", st)
	}
	g.Release()
}

func residentPlan(arena uint64, keys ...string) gpu.Plan {
	p := arenaPlan(gpu.TierFull, arena)
	for _, k := range keys {
		p.Resident = append(p.Resident, gpu.ResidentNeed{Key: k, Bytes: 100 * mib})
	}
	return p
}

func TestResidentLRU(t *testing.T) {
	dev, a := newTestAllocator(t, 1024*mib, 0, 400*mib) // 624 MiB to give
	ctx := context.Background()
	use := func(keys ...string) {
		t.Helper()
		g, _, err := a.Admit(ctx, priority.Key{}, []gpu.Plan{residentPlan(100*mib, keys...)})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Prepare(); err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			rv, err := g.Resident(k)
			if err != nil {
				t.Fatal(err)
			}
			loads := 0
			load := func(context.Context, gpu.DevicePtr) (any, error) { loads++; return "handle-" + k, nil }
			if _, h, err := rv.Ensure(ctx, load); err != nil || h != "handle-"+k {
				t.Fatalf("Ensure = %v, %v", h, err)
			}
			if _, h, err := rv.Ensure(ctx, load); err != nil || loads > 1 || h != "handle-"+k {
				t.Fatalf("second Ensure loaded again (%d loads, handle %v, %v)", loads, h, err)
			}
		}
		g.Release()
	}
	keys := func() (out []string) {
		for _, r := range a.Stats().Resident {
			out = append(out, r.Key)
		}
		return out
	}
	use("x", "y", "z") // 300 MiB resident
	use("w")           // 400 MiB
	use("x")           // x is now the most recently used
	use("v", "u", "t") // 300 MiB more + 100 MiB arena on 400 held: 176 over → evict y, z (LRU)
	if got := fmt.Sprint(keys()); got != "[t u v w x]" {
		t.Fatalf("resident after eviction %s, want [t u v w x]", got)
	}
	if st := a.Stats(); st.ResidentBytes != 500*mib || st.Reserved != 500*mib || st.Allocated != 500*mib {
		t.Fatalf("stats %+v", st)
	}
	if n := a.EvictIdle(); n != 500*mib {
		t.Fatalf("EvictIdle released %d", n)
	}
	if st := a.Stats(); st.Reserved != 0 || st.Allocated != 0 || dev.Stats().Allocated != 0 {
		t.Fatalf("after EvictIdle %+v", st)
	}
}

func TestResidentFailedLoadIsRetried(t *testing.T) {
	_, a := newTestAllocator(t, 1024*mib, 0, 0)
	ctx := context.Background()
	g, _, err := a.Admit(ctx, priority.Key{}, []gpu.Plan{residentPlan(10*mib, "k")})
	if err != nil {
		t.Fatal(err)
	}
	rv, _ := g.Resident("k")
	boom := errors.New("read error")
	if _, _, err := rv.Ensure(ctx, func(context.Context, gpu.DevicePtr) (any, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("Ensure = %v", err)
	}
	g.Release()
	g2, _, err := a.Admit(ctx, priority.Key{}, []gpu.Plan{residentPlan(10*mib, "k")})
	if err != nil {
		t.Fatal(err)
	}
	rv, _ = g2.Resident("k")
	if _, _, err := rv.Ensure(ctx, func(context.Context, gpu.DevicePtr) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	g2.Release()
	if st := a.Stats(); len(st.Resident) != 1 || !st.Resident[0].Loaded || st.Resident[0].Refs != 0 {
		t.Fatalf("stats %+v", st)
	}
	a.EvictIdle()
}

func TestResidentNeverAllocatedIsDropped(t *testing.T) {
	_, a := newTestAllocator(t, 1024*mib, 0, 0)
	g, _, err := a.Admit(context.Background(), priority.Key{}, []gpu.Plan{residentPlan(10*mib, "k")})
	if err != nil {
		t.Fatal(err)
	}
	g.Release()
	if st := a.Stats(); st.Reserved != 0 || len(st.Resident) != 0 {
		t.Fatalf("an unused resident reservation outlived its grant: %+v", st)
	}
}

// BenchmarkAdmitRelease measures the books' cost per partition attempt (no device work).
func BenchmarkAdmitRelease(b *testing.B) {
	dev := sim.New(sim.Config{TotalMem: 16 << 30})
	a, err := gpu.NewAccountingAllocator(dev, gpu.AllocatorConfig{})
	if err != nil {
		b.Fatal(err)
	}
	plans := (gpu.Planner{}).Candidates(shapeLarge, false)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		g, _, err := a.Admit(ctx, priority.Key{}, plans)
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Prepare(); err != nil {
			b.Fatal(err)
		}
		g.Release()
	}
}

// A released arena is kept while another grant is live and reused by the next grant of the
// same size without a driver allocation; a different size, other processes growing past the
// limit, or the last release give it back.
func TestSpareArena(t *testing.T) {
	ctx := context.Background()
	admit := func(t *testing.T, a *gpu.AccountingAllocator, bytes uint64) *gpu.Grant {
		t.Helper()
		g, _, err := a.Admit(ctx, priority.Key{}, []gpu.Plan{arenaPlan(gpu.TierFull, bytes)})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Prepare(); err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, tc := range []struct {
		name        string
		next        uint64 // the third grant's arena
		othersEarly uint64 // other processes' usage before the release
		othersGrow  uint64 // other processes' growth after the release
		wantAllocs  int    // driver allocations in all
		wantSpare   bool   // the kept arena survives until the third grant
	}{
		{"same size reuses", 300 * mib, 0, 0, 2, true},
		{"other size frees first", 200 * mib, 0, 0, 3, true},
		{"others grow past the limit", 300 * mib, 0, 600 * mib, 3, false},
		{"others past the limit at release", 300 * mib, 400 * mib, 0, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev, a := newTestAllocator(t, 1024*mib, 0, 100*mib)
			g1 := admit(t, a, 300*mib)
			g2 := admit(t, a, 300*mib)
			if tc.othersEarly > 0 {
				dev.SetOthers(tc.othersEarly)
				if err := a.Refresh(); err != nil {
					t.Fatal(err)
				}
			}
			g1.Release()
			wantSpare := gpu.RoundAlloc(300 * mib)
			if tc.othersEarly > 0 {
				wantSpare = 0
			}
			if st := a.Stats(); st.Spare != wantSpare || st.Allocated != gpu.RoundAlloc(300*mib)+wantSpare || st.Reserved != gpu.RoundAlloc(300*mib) {
				t.Fatalf("after the first release: %+v", st)
			}
			if tc.othersEarly > 0 {
				dev.SetOthers(0)
				if err := a.Refresh(); err != nil {
					t.Fatal(err)
				}
			}
			if tc.othersGrow > 0 {
				dev.SetOthers(tc.othersGrow)
				if err := a.Refresh(); err != nil {
					t.Fatal(err)
				}
			}
			if got := a.Stats().Spare != 0; got != tc.wantSpare {
				t.Fatalf("spare kept = %v, want %v", got, tc.wantSpare)
			}
			if tc.othersGrow > 0 {
				dev.SetOthers(0)
				if err := a.Refresh(); err != nil {
					t.Fatal(err)
				}
			}
			g3 := admit(t, a, tc.next)
			if st := a.Stats(); st.Spare != 0 {
				t.Fatalf("spare still kept with the third grant prepared: %+v", st)
			}
			if ds := dev.Stats(); ds.Allocs != tc.wantAllocs || ds.PeakAllocated > 1024*mib-100*mib {
				t.Fatalf("driver allocations %d (want %d), peak %d", ds.Allocs, tc.wantAllocs, ds.PeakAllocated)
			}
			g2.Release()
			g3.Release()
			if st, ds := a.Stats(), dev.Stats(); st.Allocated != 0 || st.Spare != 0 || st.Reserved != 0 || ds.Allocated != 0 {
				t.Fatalf("after the last release: books %+v, device %+v", st, ds)
			}
		})
	}
}

// TestResidentKeyOfAnotherSize: a plan that names a resident vector whose key is held by one of
// another size gets an error from Resident, never the other vector.
func TestResidentKeyOfAnotherSize(t *testing.T) {
	_, a := newTestAllocator(t, 1024*mib, 0, 400*mib)
	ctx := context.Background()
	g, _, err := a.Admit(ctx, priority.Key{}, []gpu.Plan{residentPlan(100*mib, "srs")})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	other := residentPlan(100*mib, "srs")
	other.Resident[0].Bytes *= 2
	g2, _, err := a.Admit(ctx, priority.Key{}, []gpu.Plan{other})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Release()
	if _, err := g.Resident("srs"); err != nil {
		t.Fatalf("the vector's own plan: %v", err)
	}
	if _, err := g2.Resident("srs"); err == nil || !strings.Contains(err.Error(), "the key names two vectors") {
		t.Fatalf("a plan of another size got the vector: %v", err)
	}
}
