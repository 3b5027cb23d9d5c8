package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/sim"
	"github.com/snarkd/snarkd/priority"
)

// Shapes of the test partitions: small enough for megabyte-sized simulated GPUs.
var (
	shapeSmall = gpu.Shape{LogDomain: 14, SRSKey: "winning",
		Points: [gpu.NumQueries]uint64{1<<14 - 1, 15_000, 16_000, 4_000, 4_000}}
	shapeMedium = gpu.Shape{LogDomain: 18, SRSKey: "window",
		Points: [gpu.NumQueries]uint64{1<<18 - 1, 250_000, 260_000, 60_000, 60_000}}
	shapeLarge = gpu.Shape{LogDomain: 20, SRSKey: "porep",
		Points: [gpu.NumQueries]uint64{1<<20 - 1, 1_000_000, 1_040_000, 250_000, 250_000}}
)

// simProver is a WorkFunc that does what the GPU prover does, in simulation: uploads the
// pre-staged vectors from pinned memory (pageable when the pool is spent), fills resident
// vectors once, runs its kernels under the device lock, and checks that no two kernels of one
// device overlap.
type simProver struct {
	inKernel [8]atomic.Int32
	overlaps atomic.Int32
	runs     atomic.Int32
	gate     chan struct{} // when non-nil, work waits for it to close
}

func (sp *simProver) work(ctx context.Context, run *gpu.Run) error {
	if sp.gate != nil {
		select {
		case <-sp.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// a, b and c sit in host memory together, as synthesis leaves them; each comes from the
	// pinned pool when it has room.
	var pinned []gpu.HostMem
	defer func() {
		for _, m := range pinned {
			if err := run.Pinned.Release(m); err != nil {
				panic(err)
			}
		}
	}()
	for _, name := range run.Plan.PrestagedBuffers() {
		ptr, size, err := run.Buffer(name)
		if err != nil {
			return err
		}
		src, ok := run.Pinned.Acquire(size)
		if ok {
			pinned = append(pinned, src)
		} else {
			src = gpu.HostMem{Size: size}
		}
		if err := run.Upload(ctx, ptr, src); err != nil {
			return fmt.Errorf("uploading %s: %w", name, err)
		}
	}
	for _, r := range run.Plan.Resident {
		rv, err := run.Resident(r.Key)
		if err != nil {
			return err
		}
		if _, _, err := rv.Ensure(ctx, func(ctx context.Context, p gpu.DevicePtr) (any, error) {
			return nil, run.Upload(ctx, p, gpu.HostMem{Size: r.Bytes, Pinned: true})
		}); err != nil {
			return err
		}
	}
	for _, k := range []string{"ntt-h", "msm-h", "msm-l", "msm-a", "msm-b"} {
		err := run.Kernel(ctx, k, func() error {
			c := &sp.inKernel[run.Ordinal]
			if c.Add(1) > 1 {
				sp.overlaps.Add(1)
			}
			defer c.Add(-1)
			return nil
		})
		if err != nil {
			return err
		}
	}
	sp.runs.Add(1)
	return nil
}

// eventLog collects events from every goroutine.
type eventLog struct {
	mu  sync.Mutex
	evs []gpu.Event
}

func (l *eventLog) add(ev gpu.Event) {
	l.mu.Lock()
	l.evs = append(l.evs, ev)
	l.mu.Unlock()
}

func (l *eventLog) of(typ gpu.EventType) []gpu.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []gpu.Event
	for _, ev := range l.evs {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

type countMetrics struct {
	mu       sync.Mutex
	tiers    map[gpu.Tier]int
	oom      int
	fallback int
	done     []gpu.PartitionTimes
}

func (m *countMetrics) PartitionDone(_ int, _ string, t gpu.PartitionTimes) {
	m.mu.Lock()
	m.done = append(m.done, t)
	m.mu.Unlock()
}

func (m *countMetrics) PlanGranted(_ int, _ string, tier gpu.Tier, _ bool, _ uint64) {
	m.mu.Lock()
	m.tiers[tier]++
	m.mu.Unlock()
}

func (m *countMetrics) AllocFailed(int, gpu.Tier) {
	m.mu.Lock()
	m.oom++
	m.mu.Unlock()
}

func (m *countMetrics) PinnedFallback(uint64) {
	m.mu.Lock()
	m.fallback++
	m.mu.Unlock()
}

// needOf is the device memory a device must offer for plan (tier, resident) of s.
func needOf(s gpu.Shape, tier gpu.Tier, resident bool) uint64 {
	return (gpu.Planner{}).Plan(s, tier, resident).Need()
}

func newTestScheduler(t *testing.T, cfg gpu.Config, devs ...*sim.Device) (*gpu.Scheduler, *eventLog) {
	t.Helper()
	log := &eventLog{}
	for _, d := range devs {
		cfg.Devices = append(cfg.Devices, d)
	}
	cfg.OnEvent = log.add
	if cfg.Allocator.RefreshInterval == 0 {
		cfg.Allocator.RefreshInterval = 200 * time.Microsecond
	}
	s, err := gpu.NewScheduler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, log
}

// checkIdle closes s and checks that every accounted byte came back.
func checkIdle(t *testing.T, s *gpu.Scheduler, devs ...*sim.Device) {
	t.Helper()
	for i := range devs {
		if st := s.Allocator(i).Stats(); st.Grants != 0 || st.Waiting != 0 || st.Reserved != st.ResidentBytes {
			t.Errorf("gpu %d idle with partition memory still booked: %+v", i, st)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i, d := range devs {
		st := s.Allocator(i).Stats()
		if st.Reserved != 0 || st.Allocated != 0 || st.ResidentBytes != 0 {
			t.Errorf("gpu %d books after Close: %+v", i, st)
		}
		if ds := d.Stats(); ds.Allocated != 0 || ds.HostPinned != 0 || ds.Allocs != ds.Frees {
			t.Errorf("gpu %d device after Close: %+v", i, ds)
		}
	}
	if ps := s.Pinned().Stats(); ps.InUse != 0 || ps.Held != 0 {
		t.Errorf("pinned pool after Close: %+v", ps)
	}
}

func TestSchedulerInjectedFailuresShrinkPlan(t *testing.T) {
	full := needOf(shapeLarge, gpu.TierFull, false)
	// Each failure moves one candidate down: full, partial, partial with compact NTT tables,
	// minimal with compact tables.
	cands := (gpu.Planner{}).Candidates(shapeLarge, false)
	if len(cands) != 4 || cands[2].Tier != gpu.TierPartial || !cands[2].CompactNTT || cands[3].Tier != gpu.TierMinimal {
		t.Fatalf("candidates %v", cands)
	}
	for _, tc := range []struct {
		inject   int
		retries  int
		wantTier gpu.Tier
		wantErr  bool
	}{
		{inject: 0, wantTier: gpu.TierFull},
		{inject: 1, wantTier: gpu.TierPartial},
		{inject: 2, wantTier: gpu.TierPartial},
		{inject: 3, wantTier: gpu.TierMinimal},
		{inject: 5, wantTier: gpu.TierMinimal}, // the minimal plan is retried
		{inject: 20, retries: 3, wantErr: true},
	} {
		t.Run(fmt.Sprintf("inject=%d", tc.inject), func(t *testing.T) {
			dev := sim.New(sim.Config{TotalMem: full + 64*mib})
			m := &countMetrics{tiers: map[gpu.Tier]int{}}
			s, log := newTestScheduler(t, gpu.Config{WorkersPerDevice: 1, MaxOOMRetries: tc.retries,
				Metrics: m, Allocator: gpu.AllocatorConfig{Headroom: 64 * mib}}, dev)
			dev.InjectAllocFailures(tc.inject)
			sp := &simProver{}
			var events []gpu.Event
			res, err := s.Prove(context.Background(), gpu.Partition{JobID: "j", Kind: "porep-c2", Class: priority.Seal, Shape: shapeLarge,
				OnEvent: func(ev gpu.Event) { events = append(events, ev) }}, sp.work)
			if tc.wantErr {
				if err == nil || !gpu.IsOutOfMemory(err) {
					t.Fatalf("Prove = %v, want an out-of-memory error after the retries", err)
				}
				if res.OOMs != tc.retries+1 {
					t.Fatalf("%d OOMs, want %d", res.OOMs, tc.retries+1)
				}
				checkIdle(t, s, dev)
				return
			}
			if err != nil {
				t.Fatalf("Prove: %v", err)
			}
			if want := cands[min(tc.inject, len(cands)-1)]; res.Plan.String() != want.String() ||
				res.Plan.CompactNTT != want.CompactNTT || res.Plan.Tier != tc.wantTier ||
				res.OOMs != tc.inject || res.Attempts != tc.inject+1 {
				t.Fatalf("result %+v (tier %s), want tier %s after %d OOMs", res, res.Plan.Tier, tc.wantTier, tc.inject)
			}
			if got := len(log.of(gpu.EventAllocFailed)); got != tc.inject || m.oom != tc.inject {
				t.Fatalf("%d alloc-failed events, %d metric counts, want %d", got, m.oom, tc.inject)
			}
			last := events[len(events)-1]
			if last.Type != gpu.EventDone || last.Tier != tc.wantTier || last.CompactNTT != res.Plan.CompactNTT {
				t.Fatalf("last job event %+v", last)
			}
			if m.tiers[tc.wantTier] == 0 {
				t.Fatalf("metrics saw tiers %v", m.tiers)
			}
			if sp.runs.Load() != 1 {
				t.Fatalf("work completed %d times", sp.runs.Load())
			}
			checkIdle(t, s, dev)
		})
	}
}

func TestSchedulerPartitionWaitsForMemory(t *testing.T) {
	minimal := (gpu.Planner{}).PlanCompact(shapeLarge, gpu.TierMinimal, false).Need()
	total := minimal + 32*mib // with the headroom, exactly the minimal plan fits an idle device
	dev := sim.New(sim.Config{TotalMem: total, OthersMem: total / 2})
	s, log := newTestScheduler(t, gpu.Config{Allocator: gpu.AllocatorConfig{Headroom: 32 * mib}}, dev)
	sp := &simProver{}
	done := make(chan error, 1)
	go func() {
		_, err := s.Prove(context.Background(), gpu.Partition{JobID: "j", Kind: "porep-c2", Class: priority.Seal, Shape: shapeLarge}, sp.work)
		done <- err
	}()
	waitFor(t, "the partition waits for memory", func() bool { return s.Allocator(0).Stats().Waiting == 1 })
	select {
	case err := <-done:
		t.Fatalf("Prove returned %v while the memory was taken", err)
	default:
	}
	dev.SetOthers(0)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ev := log.of(gpu.EventAdmitted); len(ev) != 1 || ev[0].Tier != gpu.TierMinimal || ev[0].Waited <= 0 {
		t.Fatalf("admitted %+v", ev)
	}
	checkIdle(t, s, dev)
}

func TestSchedulerRejectsPlanThatNeverFits(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: needOf(shapeLarge, gpu.TierMinimal, false)})
	s, _ := newTestScheduler(t, gpu.Config{}, dev)
	_, err := s.Prove(context.Background(), gpu.Partition{JobID: "j", Shape: shapeLarge}, (&simProver{}).work)
	var fe *gpu.FitError
	if !errors.As(err, &fe) {
		t.Fatalf("Prove = %v, want *FitError", err)
	}
}

func TestSchedulerPriorityOrder(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 4 << 30})
	s, log := newTestScheduler(t, gpu.Config{WorkersPerDevice: 1}, dev)
	gate := &simProver{gate: make(chan struct{})}
	first := make(chan error, 1)
	go func() {
		_, err := s.Prove(context.Background(), gpu.Partition{JobID: "blocker", Kind: "porep-c2", Class: priority.Seal, Shape: shapeSmall}, gate.work)
		first <- err
	}()
	waitFor(t, "the worker holds the blocker", func() bool { return s.Allocator(0).Stats().Grants == 1 })

	t0 := time.Unix(1_700_000_000, 0)
	var parts []gpu.Partition
	for i, k := range []testKind{kindPoRep, kindSnap, kindWindow, kindWinning} {
		for j := range 3 {
			parts = append(parts, gpu.Partition{JobID: fmt.Sprintf("%s-%d", k.name, j), Kind: k.name, Class: k.class,
				Submitted: t0.Add(time.Duration((j*7+i*3)%5) * time.Second), Index: 2 - j, Shape: shapeSmall})
		}
	}
	rand.New(rand.NewSource(1)).Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	sp := &simProver{}
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Prove(context.Background(), p, sp.work); err != nil {
				t.Error(err)
			}
		}()
	}
	waitFor(t, "all partitions queued", func() bool { return s.Status().Queued == len(parts) })
	close(gate.gate)
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	var got []priority.Key
	for _, ev := range log.of(gpu.EventAdmitted) {
		if ev.JobID != "blocker" {
			got = append(got, priority.Key{Class: classOf(ev.Kind), JobID: ev.JobID, Index: ev.Index})
		}
	}
	want := make([]priority.Key, len(parts))
	for i := range parts {
		want[i] = parts[i].Key()
	}
	sort.Slice(want, func(i, j int) bool { return want[i].Less(want[j]) })
	for i := range want {
		if got[i].JobID != want[i].JobID || got[i].Index != want[i].Index {
			t.Fatalf("run order %v\nwant %v", got, want)
		}
	}
	checkIdle(t, s, dev)
}

func TestSchedulerCancelQueued(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 4 << 30})
	s, _ := newTestScheduler(t, gpu.Config{WorkersPerDevice: 1}, dev)
	gate := &simProver{gate: make(chan struct{})}
	go func() {
		_, _ = s.Prove(context.Background(), gpu.Partition{JobID: "blocker", Shape: shapeSmall}, gate.work)
	}()
	waitFor(t, "the worker holds the blocker", func() bool { return s.Allocator(0).Stats().Grants == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := s.Prove(ctx, gpu.Partition{JobID: "queued", Shape: shapeSmall}, (&simProver{}).work)
		done <- err
	}()
	waitFor(t, "queued", func() bool { return s.Status().Queued == 1 })
	st := s.Status()
	if w := st.Devices[0].Workers[0]; !w.Busy || w.JobID != "blocker" || w.Tier != "full" || w.Bytes == 0 ||
		st.Devices[0].Tiers["full"] != 1 || st.Devices[0].Memory.Grants != 1 {
		t.Fatalf("status while the blocker runs: %+v", st.Devices[0])
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Prove = %v", err)
	}
	if q := s.Status().Queued; q != 0 {
		t.Fatalf("%d still queued", q)
	}
	close(gate.gate)
	waitFor(t, "blocker done", func() bool { return s.Allocator(0).Stats().Grants == 0 })
	checkIdle(t, s, dev)
}

// TestSchedulerRandomStream runs 2 workers on each of 2 devices under a random stream of jobs
// of every kind, with other processes' usage changing and allocation failures injected. It
// checks that everything completes (no deadlock), that no partition was taken while a
// better-ranked one waited, that kernels never overlap on a device, and that every accounted
// byte returns.
func TestSchedulerRandomStream(t *testing.T) {
	const headroom = 64 * mib
	// Device 0 fits one full PoRep plan; device 1 fits the PoRep SRS beside two full plans.
	small := sim.New(sim.Config{Ordinal: 0, TotalMem: needOf(shapeLarge, gpu.TierFull, false) + needOf(shapeLarge, gpu.TierMinimal, false)/2 + headroom,
		PinnedBandwidth: 1e14, PageableBandwidth: 1e13, KernelLatency: 5 * time.Microsecond})
	big := sim.New(sim.Config{Ordinal: 1, TotalMem: 2*needOf(shapeLarge, gpu.TierFull, true) + 256*mib + headroom,
		PinnedBandwidth: 1e14, PageableBandwidth: 1e13, KernelLatency: 5 * time.Microsecond})
	m := &countMetrics{tiers: map[gpu.Tier]int{}}
	s, log := newTestScheduler(t, gpu.Config{WorkersPerDevice: 2, SRSResidency: true, MaxOOMRetries: 100, ResidentTTL: -1,
		PinnedBudget: 64 * mib, Metrics: m, Allocator: gpu.AllocatorConfig{Headroom: headroom}}, small, big)

	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second) // deadlock guard only
	defer cancel()
	rng := rand.New(rand.NewSource(42))
	sp := &simProver{}
	var wg sync.WaitGroup
	var failures atomic.Int32
	kinds := testKinds
	nparts := map[testKind]int{kindWinning: 1, kindWindow: 2, kindPoRep: 10, kindSnap: 16}
	shapes := map[testKind]gpu.Shape{kindWinning: shapeSmall, kindWindow: shapeMedium, kindPoRep: shapeLarge,
		kindSnap: shapeMedium}
	// Status is polled throughout, as `snarkd status` would.
	statusDone := make(chan struct{})
	statusStopped := make(chan struct{})
	go func() {
		defer close(statusStopped)
		for {
			select {
			case <-statusDone:
				return
			default:
				_ = s.Status()
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	total := 0
	for j := range 24 {
		k := kinds[rng.Intn(len(kinds))]
		submitted := time.Now()
		for i := range nparts[k] {
			total++
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Prove(ctx, gpu.Partition{JobID: fmt.Sprintf("job-%02d", j), Kind: k.name, Class: k.class, Submitted: submitted,
					Index: i, Shape: shapes[k]}, sp.work)
				if err != nil {
					failures.Add(1)
					t.Errorf("job %d partition %d: %v", j, i, err)
				}
			}()
		}
		// Disturb the devices between submissions: other processes come and go, and the
		// driver refuses some allocations the books expected to succeed.
		switch rng.Intn(4) {
		case 0:
			small.InjectAllocFailures(1)
		case 1:
			big.SetOthers(uint64(rng.Intn(300)) * mib)
		case 2:
			small.SetOthers(uint64(rng.Intn(100)) * mib)
		}
		time.Sleep(time.Duration(rng.Intn(300)) * time.Microsecond)
	}
	wg.Wait()
	close(statusDone)
	<-statusStopped
	if ctx.Err() != nil {
		t.Fatal("the stream did not finish: deadlock")
	}
	small.SetOthers(0)
	big.SetOthers(0)
	if n := sp.runs.Load(); int(n) != total || failures.Load() != 0 {
		t.Fatalf("%d of %d partitions completed", n, total)
	}
	if n := sp.overlaps.Load(); n != 0 {
		t.Fatalf("kernels overlapped %d times on one device", n)
	}
	for i, d := range []*sim.Device{small, big} {
		if n := d.Stats().MaxConcurrentLaunches; n != 1 {
			t.Fatalf("gpu %d ran %d kernels at once", i, n)
		}
	}

	// Queue order: whenever a partition was taken, no better-ranked partition was waiting.
	type rec struct {
		prio      priority.Key
		queued    uint64
		taken     uint64
		hasQueued bool
	}
	recs := map[string]*rec{}
	key := func(ev gpu.Event) string { return fmt.Sprintf("%s/%d", ev.JobID, ev.Index) }
	for _, ev := range log.of(gpu.EventQueued) {
		recs[key(ev)] = &rec{queued: ev.Seq, hasQueued: true}
	}
	for _, ev := range log.of(gpu.EventAdmitted) {
		r := recs[key(ev)]
		if ev.Attempt == 1 {
			r.taken = ev.Seq
		}
	}
	for _, p := range log.evs {
		if r := recs[key(p)]; r != nil && p.Type == gpu.EventQueued {
			r.prio = priority.Key{Class: classOf(p.Kind), JobID: p.JobID, Index: p.Index}
		}
	}
	// Submission times are per job; recover them from the job order of the stream.
	violations := 0
	for kx, x := range recs {
		for ky, y := range recs {
			if kx == ky || x.queued >= y.taken || x.taken <= y.taken {
				continue
			}
			// x waited in the queue while y was taken; x must not rank better than y by class,
			// and within a class by job then index (job IDs are in submission order).
			if x.prio.Less(y.prio) {
				violations++
				if violations < 5 {
					t.Errorf("%s (%+v) waited while %s (%+v) was taken", kx, x.prio, ky, y.prio)
				}
			}
		}
	}
	if violations > 0 {
		t.Fatalf("%d priority violations", violations)
	}
	t.Logf("%d partitions; tiers %v; %d OOM retries; %d pinned fallbacks; device status %+v",
		total, m.tiers, m.oom, m.fallback, s.Status().Devices[1].Memory)
	if m.oom == 0 {
		t.Error("no injected failure was hit; the stream did not exercise the retry path")
	}
	if m.fallback == 0 || s.Pinned().Stats().Fallbacks != m.fallback {
		t.Errorf("pinned fallbacks: metric %d, pool %+v; the stream should exhaust the pool", m.fallback, s.Pinned().Stats())
	}
	for i, d := range []*sim.Device{small, big} {
		if peak, limit := d.Stats().PeakAllocated, s.Allocator(i).Stats().Total-headroom; peak > limit {
			t.Errorf("gpu %d: this process held %d bytes at peak, more than total − headroom %d", i, peak, limit)
		}
	}
	checkIdle(t, s, small, big)
}

func TestSchedulerResidentTTL(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 4 << 30})
	s, _ := newTestScheduler(t, gpu.Config{SRSResidency: true, ResidentTTL: time.Millisecond}, dev)
	res, err := s.Prove(context.Background(), gpu.Partition{JobID: "j", Kind: "window-post", Class: priority.WindowPoSt, Shape: shapeMedium}, (&simProver{}).work)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Plan.SRSResident {
		t.Fatalf("plan %s: the SRS should have been resident on an idle 4 GiB device", res.Plan)
	}
	waitFor(t, "idle resident vectors expire", func() bool {
		st := s.Allocator(0).Stats()
		return st.Reserved == 0 && st.Allocated == 0
	})
	if ds := dev.Stats(); ds.Allocated != 0 {
		t.Fatalf("device still holds %d bytes", ds.Allocated)
	}
}

// BenchmarkSchedulerOverhead measures queue, admission and worker hand-off per partition on
// 2 simulated devices × 2 workers with instant copies and kernels.
func BenchmarkSchedulerOverhead(b *testing.B) {
	var devs []gpu.Device
	for i := range 2 {
		devs = append(devs, sim.New(sim.Config{Ordinal: i, TotalMem: 16 << 30}))
	}
	s, err := gpu.NewScheduler(gpu.Config{Devices: devs, ResidentTTL: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sp := &simProver{}
	ctx := context.Background()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if _, err := s.Prove(ctx, gpu.Partition{JobID: "bench", Kind: "porep-c2", Class: priority.Seal, Index: i, Shape: shapeLarge}, sp.work); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestSchedulerTakeOver: a partition whose device has no memory (another process holds it)
// is taken over by the other device's worker as soon as that one is free, instead of waiting
// for memory that may not come back soon.
func TestSchedulerTakeOver(t *testing.T) {
	starved := sim.New(sim.Config{Ordinal: 0, TotalMem: 4 << 30, OthersMem: 4<<30 - 100*mib})
	free := sim.New(sim.Config{Ordinal: 1, TotalMem: 4 << 30})
	s, log := newTestScheduler(t, gpu.Config{WorkersPerDevice: 1}, starved, free)
	gate := &simProver{gate: make(chan struct{})}
	blocker := make(chan gpu.Result, 1)
	go func() {
		res, err := s.Prove(context.Background(), gpu.Partition{JobID: "blocker", Kind: "porep-c2", Class: priority.Seal, Shape: shapeLarge}, gate.work)
		if err != nil {
			t.Error(err)
		}
		blocker <- res
	}()
	waitFor(t, "the blocker runs on the free device", func() bool { return s.Allocator(1).Stats().Grants == 1 })

	done := make(chan gpu.Result, 1)
	go func() {
		res, err := s.Prove(context.Background(), gpu.Partition{JobID: "p", Kind: "window-post", Class: priority.WindowPoSt, Shape: shapeLarge}, (&simProver{}).work)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	// While it waits for memory on gpu 0 it stays in the queue, where gpu 1 can take it.
	waitFor(t, "the partition waits on the starved device", func() bool {
		st := s.Status()
		w := st.Devices[0].Workers[0]
		return st.Queued == 1 && st.Devices[0].Memory.Waiting == 1 && w.Busy && w.JobID == "p"
	})
	close(gate.gate)
	if res := <-blocker; res.Device != 1 {
		t.Fatalf("blocker ran on gpu %d", res.Device)
	}
	var res gpu.Result
	select {
	case res = <-done:
	case <-time.After(20 * time.Second): // hang guard, not a timing assertion
		t.Fatal("the partition was not taken over by the free device")
	}
	if res.Device != 1 {
		t.Fatalf("partition ran on gpu %d, want the free gpu 1", res.Device)
	}
	waitFor(t, "the starved device's waiter leaves", func() bool { return s.Allocator(0).Stats().Waiting == 0 })
	var admitted []int
	for _, ev := range log.of(gpu.EventAdmitted) {
		if ev.JobID == "p" {
			admitted = append(admitted, ev.Device)
		}
	}
	if len(admitted) != 1 || admitted[0] != 1 {
		t.Fatalf("partition admitted on %v", admitted)
	}
	checkIdle(t, s, starved, free)
}

// TestSchedulerCloseWhileWaiting: Close fails a partition that waits for memory, once.
func TestSchedulerCloseWhileWaiting(t *testing.T) {
	for _, ndev := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d devices", ndev), func(t *testing.T) {
			var devs []*sim.Device
			for i := range ndev {
				devs = append(devs, sim.New(sim.Config{Ordinal: i, TotalMem: 4 << 30, OthersMem: 4<<30 - 100*mib}))
			}
			s, _ := newTestScheduler(t, gpu.Config{WorkersPerDevice: 1}, devs...)
			errc := make(chan error, 2)
			for range 2 {
				go func() {
					_, err := s.Prove(context.Background(), gpu.Partition{JobID: "p", Shape: shapeLarge}, (&simProver{}).work)
					errc <- err
				}()
			}
			waitFor(t, "partitions wait", func() bool {
				n := 0
				for i := range devs {
					n += s.Allocator(i).Stats().Waiting
				}
				return n == ndev && s.Status().Queued >= 2-ndev
			})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := <-errc; err == nil {
					t.Fatal("Prove succeeded after Close")
				}
			}
			checkIdle(t, s, devs...)
		})
	}
}

// TestSqueezeRehearsal rehearses issue 6's H200 run on a simulated 139.8 GiB card: another
// process leaves only N GiB. For each N it records the plans admission grants to a first
// partition and to a second one running beside it, checks that the first degrades as N shrinks
// (with the whole card free: full, SRS resident), and proves five partitions with two workers
// to completion.
func TestSqueezeRehearsal(t *testing.T) {
	const h200 = 150_109_880_320 // bytes, as the H200's driver reports
	shapeOf := func(lg uint32) gpu.Shape {
		n := uint64(1) << lg
		return gpu.Shape{LogDomain: lg, SRSKey: fmt.Sprintf("synthetic-2^%d", lg),
			Points: [gpu.NumQueries]uint64{n - 1, n - n/16, n - n/32, n / 4, n / 4}}
	}
	rankOf := func(p gpu.Plan) int { // resident full 0 … streamed minimal 5
		if p.SRSResident {
			return int(p.Tier)
		}
		return 3 + int(p.Tier)
	}
	for _, lg := range []uint32{24, 25, 26} {
		shape := shapeOf(lg)
		prevRank := 0
		for _, left := range []float64{0, 13, 9, 5, 2.5} { // GiB left to snarkd; 0: the whole card
			others := uint64(0)
			if left > 0 {
				others = h200 - uint64(left*(1<<30))
			}
			smallest := (gpu.Planner{}).PlanCompact(shape, gpu.TierMinimal, false).Need()
			if left > 0 && smallest > uint64(left*(1<<30))-gpu.DefaultHeadroom {
				t.Logf("2^%d, %.1f GiB left: the minimal plan (%s) cannot fit", lg, left, gpu.FormatBytes(smallest))
				continue
			}
			dev := sim.New(sim.Config{TotalMem: h200, OthersMem: others})
			s, _ := newTestScheduler(t, gpu.Config{WorkersPerDevice: 2, SRSResidency: true}, dev)
			plans := s.Candidates(shape)
			first, _, ok := s.Allocator(0).TryAdmit(priority.Key{}, plans)
			if !ok {
				t.Fatalf("2^%d, %.1f GiB left: nothing admitted on an otherwise idle device", lg, left)
			}
			second := "waits"
			if g, _, ok := s.Allocator(0).TryAdmit(priority.Key{}, plans); ok {
				second = g.Plan.String()
				g.Release()
			}
			t.Logf("2^%d, %4.1f GiB left: first %s; beside it %s", lg, left, first.Plan, second)
			if left == 0 && rankOf(first.Plan) != 0 {
				t.Errorf("2^%d on a free card: %s, want full with the SRS resident", lg, first.Plan)
			}
			if r := rankOf(first.Plan); r < prevRank {
				t.Errorf("2^%d: the plan improved as memory shrank to %.1f GiB", lg, left)
			} else {
				prevRank = r
			}
			first.Release()

			var wg sync.WaitGroup
			for p := range 5 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := s.Prove(context.Background(), gpu.Partition{JobID: "squeeze", Kind: "porep-c2", Class: priority.Seal, Index: p, Shape: shape},
						(&simProver{}).work); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			checkIdle(t, s, dev)
		}
	}
}

func TestPriorityOrder(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	// Each partition ranks before the next.
	ordered := []gpu.Partition{
		{Kind: "winning-post", Class: priority.WinningPoSt, Submitted: t0.Add(time.Hour), JobID: "z"},
		{Kind: "window-post", Class: priority.WindowPoSt, JobID: "a"}, // zero time: first of its class
		{Kind: "window-post", Class: priority.WindowPoSt, Submitted: t0, JobID: "b"},
		{Kind: "snap-prove", Class: priority.Seal, Submitted: t0, JobID: "a", Index: 3},
		{Kind: "porep-c2", Class: priority.Seal, Submitted: t0, JobID: "b", Index: 0},
		{Kind: "porep-c2", Class: priority.Seal, Submitted: t0, JobID: "b", Index: 1},
		{Kind: "porep-c2", Class: priority.Seal, Submitted: t0.Add(time.Second), JobID: "a", Index: 0},
	}
	for i := range ordered {
		for j := range ordered {
			pi, pj := ordered[i].Key(), ordered[j].Key()
			if got, want := pi.Less(pj), i < j; got != want {
				t.Errorf("%+v < %+v = %v, want %v", pi, pj, got, want)
			}
		}
	}
}

func TestSchedulerWorkPanics(t *testing.T) {
	// The panic is logged with its stack; keep the test output quiet.
	if err := logging.SetLogLevel("snarkd/gpu", "fatal"); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = logging.SetLogLevel("snarkd/gpu", "info") }()
	dev := sim.New(sim.Config{TotalMem: 4 << 30})
	s, log := newTestScheduler(t, gpu.Config{}, dev)
	_, err := s.Prove(context.Background(), gpu.Partition{JobID: "j", Shape: shapeSmall},
		func(context.Context, *gpu.Run) error { panic("kernel binding bug") })
	if err == nil || gpu.IsOutOfMemory(err) {
		t.Fatalf("Prove = %v, want the panic as an error", err)
	}
	if ev := log.of(gpu.EventFailed); len(ev) != 1 {
		t.Fatalf("failed events %+v", ev)
	}
	// The scheduler keeps working.
	if _, err := s.Prove(context.Background(), gpu.Partition{JobID: "k", Shape: shapeSmall}, (&simProver{}).work); err != nil {
		t.Fatal(err)
	}
	checkIdle(t, s, dev)
}

// TestSchedulerChaos mixes everything that can go wrong at once on 2 devices × 2 workers:
// devices starved by other processes for a while (so partitions wait and are taken over),
// injected allocation failures on both, and partitions cancelled while queued, waiting or
// running. Every Prove must return (success or its own cancellation), kernels must never
// overlap, and the books must end empty.
func TestSchedulerChaos(t *testing.T) {
	var devs []*sim.Device
	for i := range 2 {
		devs = append(devs, sim.New(sim.Config{Ordinal: i, TotalMem: 3 * needOf(shapeLarge, gpu.TierFull, false),
			PinnedBandwidth: 1e13, PageableBandwidth: 1e12, KernelLatency: 2 * time.Microsecond}))
	}
	s, _ := newTestScheduler(t, gpu.Config{SRSResidency: true, MaxOOMRetries: 1000, PinnedBudget: 96 * mib,
		ResidentTTL: -1, Allocator: gpu.AllocatorConfig{Headroom: 32 * mib}}, devs...)
	guard, stopGuard := context.WithTimeout(context.Background(), 45*time.Second) // deadlock guard
	defer stopGuard()
	rng := rand.New(rand.NewSource(7))
	sp := &simProver{}
	var wg sync.WaitGroup
	var cancelled, succeeded atomic.Int32
	shapes := []gpu.Shape{shapeSmall, shapeMedium, shapeLarge}
	for i := range 150 {
		ctx, cancel := context.WithCancel(guard)
		cancelAfter := time.Duration(-1)
		if rng.Intn(5) == 0 {
			cancelAfter = time.Duration(rng.Intn(400)) * time.Microsecond
		}
		k := testKinds[rng.Intn(len(testKinds))]
		p := gpu.Partition{JobID: fmt.Sprintf("job-%03d", i/4), Kind: k.name, Class: k.class, Index: i % 4,
			Submitted: time.Now(), Shape: shapes[rng.Intn(len(shapes))]}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancel()
			if cancelAfter >= 0 {
				time.AfterFunc(cancelAfter, cancel)
			}
			_, err := s.Prove(ctx, p, sp.work)
			switch {
			case err == nil:
				succeeded.Add(1)
			case errors.Is(err, context.Canceled):
				cancelled.Add(1)
			default:
				t.Errorf("%s/%d: %v", p.JobID, p.Index, err)
			}
		}()
		d := devs[rng.Intn(2)]
		switch rng.Intn(6) {
		case 0:
			d.InjectAllocFailures(1 + rng.Intn(2))
		case 1: // another process takes almost the whole card for a while
			d.SetOthers(d.Info().TotalMem - 64*mib)
		case 2:
			d.SetOthers(0)
		}
		time.Sleep(time.Duration(rng.Intn(200)) * time.Microsecond)
	}
	for _, d := range devs {
		d.SetOthers(0)
	}
	wg.Wait()
	if guard.Err() != nil {
		t.Fatal("partitions still unfinished: deadlock")
	}
	t.Logf("%d succeeded, %d cancelled", succeeded.Load(), cancelled.Load())
	if succeeded.Load() == 0 || succeeded.Load()+cancelled.Load() != 150 {
		t.Fatalf("%d succeeded + %d cancelled of 150", succeeded.Load(), cancelled.Load())
	}
	for i, d := range devs {
		if n := d.Stats().MaxConcurrentLaunches; n > 1 {
			t.Errorf("gpu %d ran %d kernels at once", i, n)
		}
	}
	checkIdle(t, s, devs...)
}

// TestSchedulerMixedCards: a partition too large for one card ever to hold runs on the card
// that can; one too large for every card fails with *FitError.
func TestSchedulerMixedCards(t *testing.T) {
	minimal := needOf(shapeLarge, gpu.TierMinimal, false)
	small := sim.New(sim.Config{Ordinal: 0, TotalMem: minimal / 2})
	big := sim.New(sim.Config{Ordinal: 1, TotalMem: 4 * minimal})
	s, _ := newTestScheduler(t, gpu.Config{Allocator: gpu.AllocatorConfig{Headroom: 16 * mib}}, small, big)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Prove(context.Background(), gpu.Partition{JobID: "j", Kind: "porep-c2", Class: priority.Seal, Index: i, Shape: shapeLarge},
				(&simProver{}).work)
			if err != nil || res.Device != 1 {
				t.Errorf("partition %d: gpu %d, %v", i, res.Device, err)
			}
		}()
	}
	// Small partitions still use the small card.
	if res, err := s.Prove(context.Background(), gpu.Partition{JobID: "w", Kind: "winning-post", Class: priority.WinningPoSt, Shape: shapeSmall},
		(&simProver{}).work); err != nil {
		t.Fatal(err)
	} else {
		t.Logf("small partition ran on gpu %d", res.Device)
	}
	wg.Wait()
	huge := shapeLarge
	huge.LogDomain = 26
	_, err := s.Prove(context.Background(), gpu.Partition{JobID: "h", Shape: huge}, (&simProver{}).work)
	var fe *gpu.FitError
	if !errors.As(err, &fe) {
		t.Fatalf("Prove of a partition no card can hold = %v, want *FitError", err)
	}
	checkIdle(t, s, small, big)
}

// TestRunHoldKernels: while one run holds the kernel lock, its own kernels run and another
// worker's kernel waits; after release the other kernel runs.
func TestRunHoldKernels(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 8 << 30})
	s, _ := newTestScheduler(t, gpu.Config{WorkersPerDevice: 2}, dev)
	held, release := make(chan struct{}), make(chan struct{})
	var otherRan, ownRan atomic.Bool
	done := make(chan error, 2)
	go func() {
		_, err := s.Prove(context.Background(), gpu.Partition{JobID: "holder", Kind: "porep-c2", Class: priority.Seal, Shape: shapeSmall},
			func(ctx context.Context, run *gpu.Run) error {
				rel, err := run.HoldKernels(ctx)
				if err != nil {
					return err
				}
				defer rel()
				// A second hold while held is a no-op, its release too.
				rel2, err := run.HoldKernels(ctx)
				if err != nil {
					return err
				}
				rel2()
				close(held)
				<-release
				if err := run.Kernel(ctx, "own", func() error { ownRan.Store(true); return nil }); err != nil {
					return err
				}
				if otherRan.Load() {
					return errors.New("another worker's kernel ran while the lock was held")
				}
				rel()
				rel() // idempotent
				return nil
			})
		done <- err
	}()
	<-held
	reached := make(chan struct{})
	go func() {
		_, err := s.Prove(context.Background(), gpu.Partition{JobID: "other", Kind: "porep-c2", Class: priority.Seal, Shape: shapeSmall},
			func(ctx context.Context, run *gpu.Run) error {
				close(reached)
				return run.Kernel(ctx, "other", func() error { otherRan.Store(true); return nil })
			})
		done <- err
	}()
	// The other partition was admitted and is at its kernel; it must still be waiting.
	<-reached
	time.Sleep(20 * time.Millisecond)
	if otherRan.Load() {
		t.Fatal("kernel ran while another run held the lock")
	}
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if !ownRan.Load() || !otherRan.Load() {
		t.Fatalf("own kernel ran %v, other %v", ownRan.Load(), otherRan.Load())
	}
	checkIdle(t, s, dev)
}

// TestSchedulerBusyAndWaits: the kernel lock's holds are the device's busy time, and each
// partition's result, done event, metrics and the recent averages say where it waited: in the
// queue (one worker busy with another partition), or for the kernel lock (another worker's
// kernels).
func TestSchedulerBusyAndWaits(t *testing.T) {
	const hold = 30 * time.Millisecond
	dev := sim.New(sim.Config{TotalMem: 8 << 30})
	m := &countMetrics{tiers: map[gpu.Tier]int{}}
	s, log := newTestScheduler(t, gpu.Config{WorkersPerDevice: 2, Metrics: m}, dev)
	work := func(ctx context.Context, run *gpu.Run) error {
		return run.Kernel(ctx, "k", func() error { time.Sleep(hold); return nil })
	}
	// Three partitions on two workers: the third queues until a worker is free, and the two
	// running at once take turns at the kernel lock.
	results := make([]gpu.Result, 3)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			results[i], err = s.Prove(context.Background(), gpu.Partition{JobID: "j", Kind: "porep-c2", Class: priority.Seal,
				Index: i, Shape: shapeSmall}, work)
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	var sum gpu.PartitionTimes
	var queued, lockWaits int
	for i, r := range results {
		tm := r.Times
		if tm.Kernels < hold || tm.Run < tm.Kernels+tm.KernelWait {
			t.Errorf("partition %d: times %+v: kernels under %s, or run shorter than kernels and their wait", i, tm, hold)
		}
		if tm.Queued >= hold/2 {
			queued++
		}
		if tm.KernelWait >= hold/2 {
			lockWaits++
		}
		sum.Kernels += tm.Kernels
	}
	if queued == 0 || lockWaits == 0 {
		t.Errorf("times %+v: want a partition that queued and one that waited for the kernel lock", results)
	}
	done := log.of(gpu.EventDone)
	if len(done) != 3 || len(m.done) != 3 {
		t.Fatalf("%d done events, %d metric records, want 3", len(done), len(m.done))
	}
	for _, ev := range done {
		if ev.Times.Kernels < hold {
			t.Errorf("done event %+v without its kernel time", ev)
		}
	}
	b := s.Status().Devices[0].Busy
	if b.Seconds < sum.Kernels.Seconds() || b.Recent <= 0 || b.Recent > 1 || b.Partitions != 3 || b.Mean.Kernels < hold {
		t.Fatalf("busy %+v, want at least %.3fs busy, a fraction in (0, 1] and 3 recent partitions", b, sum.Kernels.Seconds())
	}
	checkIdle(t, s, dev)
}

// TestRunHoldKernelsReleasedAfterWork: a work function that returns, or panics, holding the
// kernel lock does not keep the device's other partitions from running.
func TestRunHoldKernelsReleasedAfterWork(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 8 << 30})
	s, _ := newTestScheduler(t, gpu.Config{WorkersPerDevice: 1}, dev)
	for i, work := range []gpu.WorkFunc{
		func(ctx context.Context, run *gpu.Run) error { _, err := run.HoldKernels(ctx); return err },
		func(ctx context.Context, run *gpu.Run) error {
			if _, err := run.HoldKernels(ctx); err != nil {
				return err
			}
			panic("work function bug")
		},
	} {
		_, err := s.Prove(context.Background(), gpu.Partition{JobID: fmt.Sprint("leaky-", i), Kind: "porep-c2", Class: priority.Seal, Shape: shapeSmall}, work)
		if (i == 1) != (err != nil) {
			t.Fatalf("work %d: %v", i, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ran := false
		_, err = s.Prove(ctx, gpu.Partition{JobID: fmt.Sprint("next-", i), Kind: "porep-c2", Class: priority.Seal, Shape: shapeSmall},
			func(ctx context.Context, run *gpu.Run) error {
				return run.Kernel(ctx, "next", func() error { ran = true; return nil })
			})
		cancel()
		if err != nil || !ran {
			t.Fatalf("after work %d kept the lock: ran %v, %v", i, ran, err)
		}
	}
	checkIdle(t, s, dev)
}

// TestSchedulerLeavesRoomForWorkers: a streamed full plan is offered only when the device's
// other workers keep room for a partial plan each beside it.
func TestSchedulerLeavesRoomForWorkers(t *testing.T) {
	const gib = 1 << 30
	shape := gpu.Shape{LogDomain: 27, SRSKey: "porep-32g",
		Points: [gpu.NumQueries]uint64{1<<27 - 1, 130_000_000, 130_000_000, 33_000_000, 33_000_000}}
	for _, tc := range []struct {
		card    uint64
		workers int
		first   gpu.Tier
		second  string // the plan admitted beside the first, or "waits"
	}{
		{24 * gib, 2, gpu.TierPartial, "partial"},
		{24 * gib, 1, gpu.TierFull, "waits"},
		{32 * gib, 2, gpu.TierFull, "partial"},
		{16 * gib, 2, gpu.TierPartial, "waits"},
	} {
		t.Run(fmt.Sprintf("%s-%d", gpu.FormatBytes(tc.card), tc.workers), func(t *testing.T) {
			dev := sim.New(sim.Config{TotalMem: tc.card})
			s, _ := newTestScheduler(t, gpu.Config{WorkersPerDevice: tc.workers, SRSResidency: true}, dev)
			plans := s.Candidates(shape)
			first, _, ok := s.Allocator(0).TryAdmit(priority.Key{}, plans)
			if !ok || first.Plan.Tier != tc.first || first.Plan.SRSResident {
				t.Fatalf("first partition: %v (admitted %v), want %s streamed", first, ok, tc.first)
			}
			second := "waits"
			if g, _, ok := s.Allocator(0).TryAdmit(priority.Key{}, plans); ok {
				second = g.Plan.Tier.String()
				g.Release()
			}
			first.Release()
			if tc.workers == 1 {
				second = "waits" // one worker: nothing runs beside it
			}
			if second != tc.second {
				t.Errorf("beside %s: %s, want %s", first.Plan, second, tc.second)
			}
		})
	}
}

// testKind is a proof kind as the prover hands it to the scheduler: its label and its class.
type testKind struct {
	name  string
	class priority.Class
}

var (
	kindWinning = testKind{"winning-post", priority.WinningPoSt}
	kindWindow  = testKind{"window-post", priority.WindowPoSt}
	kindPoRep   = testKind{"porep-c2", priority.Seal}
	kindSnap    = testKind{"snap-prove", priority.Seal}
	testKinds   = []testKind{kindWinning, kindWindow, kindPoRep, kindSnap}
)

// classOf is the class of a test kind's label.
func classOf(kind string) priority.Class {
	for _, k := range testKinds {
		if k.name == kind {
			return k.class
		}
	}
	return priority.Seal
}

// TestGathersOnDevice: a device that holds the wide full resident plan for every worker gathers
// the A and B scalars itself; a smaller one, or a scheduler without SRS residency, leaves them
// to the host before admission.
func TestGathersOnDevice(t *testing.T) {
	wide := gpu.Planner{WideChunks: true}.Plan(shapeLarge, gpu.TierFull, true)
	need := 2*wide.Peak + 1<<30
	for _, r := range wide.Resident {
		need += gpu.RoundAlloc(r.Bytes)
	}
	for _, tc := range []struct {
		name      string
		mem       uint64
		residency bool
		want      bool
	}{{"room for both wide arenas", need + gpu.DefaultHeadroom, true, true}, {"no SRS residency", need + gpu.DefaultHeadroom, false, false},
		{"too small for wide arenas", need / 2, true, false}} {
		s, _ := newTestScheduler(t, gpu.Config{WorkersPerDevice: 2, SRSResidency: tc.residency}, sim.New(sim.Config{TotalMem: tc.mem}))
		if got := s.GathersOnDevice(shapeLarge); got != tc.want {
			t.Errorf("%s: GathersOnDevice = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestGathersOnDeviceFollowsPlanFilter: a plan filter that leaves out the wide plan leaves the
// A and B gather to the host, before admission.
func TestGathersOnDeviceFollowsPlanFilter(t *testing.T) {
	wide := gpu.Planner{WideChunks: true}.Plan(shapeLarge, gpu.TierFull, true)
	need := 2*wide.Peak + 1<<30 + gpu.DefaultHeadroom
	for _, r := range wide.Resident {
		need += gpu.RoundAlloc(r.Bytes)
	}
	s, _ := newTestScheduler(t, gpu.Config{WorkersPerDevice: 2, SRSResidency: true, PlanFilter: gpu.OnlyTier(gpu.TierPartial, true)},
		sim.New(sim.Config{TotalMem: need}))
	if s.GathersOnDevice(shapeLarge) {
		t.Fatal("device gather reported for a scheduler whose filter grants only partial plans")
	}
}
