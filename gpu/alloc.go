package gpu

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/priority"
)

var log = logging.Logger("snarkd/gpu")

// AllocatorConfig configures one device's accounting allocator.
type AllocatorConfig struct {
	// Headroom is kept free for other processes; zero means DefaultHeadroom.
	Headroom uint64
	// NoHeadroom makes a zero Headroom mean zero rather than the default.
	NoHeadroom bool
	// RefreshInterval bounds how often other processes' usage is re-sampled from the driver
	// while partitions wait or admit; zero means one second.
	RefreshInterval time.Duration
}

// FitError reports a plan that cannot fit the device even with nothing else on it.
type FitError struct {
	Device int
	Need   uint64
	Limit  uint64
}

func (e *FitError) Error() string {
	return fmt.Sprintf("gpu %d: smallest plan needs %s but at most %s can ever be granted",
		e.Device, FormatBytes(e.Need), FormatBytes(e.Limit))
}

// ErrOverReservation reports an allocation beyond what a grant reserved: a planner bug.
var ErrOverReservation = errors.New("gpu: allocation exceeds the granted reservation")

// AllocatorStats is a snapshot of one device's books.
type AllocatorStats struct {
	Device        int            `json:"device"`
	Total         uint64         `json:"total"`
	Headroom      uint64         `json:"headroom"`
	Others        uint64         `json:"others"`
	Reserved      uint64         `json:"reserved"`       // partitions + resident vectors
	ResidentBytes uint64         `json:"resident_bytes"` // resident vectors alone
	Allocated     uint64         `json:"allocated"`      // bytes on the device now
	Spare         uint64         `json:"spare"`          // a released arena kept for the next grant
	Grants        int            `json:"grants"`         // live partition grants
	Waiting       int            `json:"waiting"`
	Resident      []ResidentStat `json:"resident,omitempty"`
}

// ResidentStat describes one resident vector.
type ResidentStat struct {
	Key    string `json:"key"`
	Bytes  uint64 `json:"bytes"`
	Refs   int    `json:"refs"`
	Loaded bool   `json:"loaded"`
}

// AccountingAllocator is the accounting allocator of one device and the only path to its
// memory. It knows the device's total, the usage of other processes (sampled from the driver
// at start and refreshed), a headroom, and every reservation it granted; admission never
// grants more than total − others − headroom − reserved.
type AccountingAllocator struct {
	dev      Device
	ordinal  int
	total    uint64
	headroom uint64
	refresh  time.Duration

	refreshMu sync.Mutex // one driver sample at a time
	// spareMu orders the kept arena's transitions with the driver allocations (taken before
	// mu): no allocation runs while a kept arena is being freed or could still be kept.
	spareMu sync.Mutex

	mu          sync.Mutex
	sampling    bool
	sampleMin   uint64 // least value of allocated while a sample is taken
	others      uint64
	reserved    uint64
	residentRes uint64
	allocated   uint64
	grants      int
	lastRefresh time.Time
	changed     chan struct{}
	waiters     priority.Queue[struct{}]
	resident    map[string]*residentEntry
	tick        uint64
	// A released arena kept for the next grant of the same size while another grant is live:
	// freeing and allocating tens of GiB takes the driver for 20–40 ms, during which the other
	// worker's kernel calls wait and the GPU idles. It stays booked in allocated, not reserved;
	// every other allocation frees it first. Reuse relies on a released grant's device work
	// being done (its kernels synchronize before they return, its uploads are waited for):
	// cudaFree's implicit device-wide wait no longer stands between two grants.
	spare     DevicePtr
	spareSize uint64
}

// NewAccountingAllocator samples the device's memory and returns its allocator.
func NewAccountingAllocator(dev Device, cfg AllocatorConfig) (*AccountingAllocator, error) {
	info := dev.Info()
	a := &AccountingAllocator{dev: dev, ordinal: info.Ordinal, headroom: cfg.Headroom, refresh: cfg.RefreshInterval,
		changed: make(chan struct{}), resident: map[string]*residentEntry{}}
	if a.headroom == 0 && !cfg.NoHeadroom {
		a.headroom = DefaultHeadroom
	}
	if a.refresh <= 0 {
		a.refresh = time.Second
	}
	free, total, err := dev.MemInfo()
	if err != nil {
		return nil, fmt.Errorf("sampling memory of gpu %d: %w", a.ordinal, err)
	}
	a.total = total
	a.others = total - min(free, total)
	a.lastRefresh = time.Now()
	log.Infow("gpu memory accounting", "device", a.ordinal, "total", FormatBytes(total),
		"others", FormatBytes(a.others), "headroom", FormatBytes(a.headroom))
	return a, nil
}

// Device returns the device this allocator owns.
func (a *AccountingAllocator) Device() Device { return a.dev }

// Refresh re-samples other processes' usage: what the driver reports used minus what this
// allocator has on the device. The books count an allocation only after the driver made it and
// drop a free before the driver sees it, so they never exceed the driver's view; subtracting
// the smallest value the books took while the driver was sampled therefore over-estimates
// others, never under-estimates them.
func (a *AccountingAllocator) Refresh() error {
	a.refreshMu.Lock()
	defer a.refreshMu.Unlock()
	a.mu.Lock()
	a.sampling = true
	a.sampleMin = a.allocated
	a.mu.Unlock()
	free, total, err := a.dev.MemInfo()
	if a.refreshLocked(free, total, err) {
		// Other processes grew: the kept arena must not eat into their headroom.
		a.dropSpare()
	}
	if err != nil {
		return fmt.Errorf("refreshing memory of gpu %d: %w", a.ordinal, err)
	}
	return nil
}

// refreshLocked books a driver sample; it reports whether a kept arena now exceeds the limit.
func (a *AccountingAllocator) refreshLocked(free, total uint64, err error) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sampling = false
	if err != nil {
		return false
	}
	used := total - min(free, total)
	others := uint64(0)
	if used > a.sampleMin {
		others = used - a.sampleMin
	}
	if others != a.others {
		log.Debugw("other processes' gpu memory changed", "device", a.ordinal,
			"from", FormatBytes(a.others), "to", FormatBytes(others))
	}
	if others < a.others {
		a.broadcastLocked()
	}
	a.others = others
	a.lastRefresh = time.Now()
	return a.spare != 0 && a.reserved+a.spareSize > a.limitLocked()
}

func (a *AccountingAllocator) maybeRefresh() {
	a.mu.Lock()
	due := time.Since(a.lastRefresh) >= a.refresh
	a.mu.Unlock()
	if due {
		if err := a.Refresh(); err != nil {
			log.Warnw("gpu memory refresh failed", "device", a.ordinal, "err", err)
		}
	}
}

func (a *AccountingAllocator) broadcastLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}

// limitLocked is what may be reserved in total now.
func (a *AccountingAllocator) limitLocked() uint64 {
	used := a.others + a.headroom
	if used >= a.total {
		return 0
	}
	return a.total - used
}

// Limit is what may be reserved in total now: total − others − headroom.
func (a *AccountingAllocator) Limit() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.limitLocked()
}

// Stats returns a snapshot of the books.
func (a *AccountingAllocator) Stats() AllocatorStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := AllocatorStats{Device: a.ordinal, Total: a.total, Headroom: a.headroom, Others: a.others,
		Reserved: a.reserved, ResidentBytes: a.residentRes, Allocated: a.allocated, Spare: a.spareSize, Grants: a.grants,
		Waiting: a.waiters.Len()}
	for _, e := range a.resident {
		s.Resident = append(s.Resident, ResidentStat{Key: e.key, Bytes: e.size, Refs: e.refs, Loaded: e.loaded})
	}
	sort.Slice(s.Resident, func(i, j int) bool { return s.Resident[i].Key < s.Resident[j].Key })
	return s
}

// Admit waits until one of plans (best first) fits and grants the first that does. Waiters
// are served in priority order: a waiter is granted only when no better-ranked one waits.
// Unreferenced resident vectors are evicted least-recently-used to make room. A plan set whose
// smallest member can never fit fails with *FitError; otherwise Admit waits until ctx ends.
func (a *AccountingAllocator) Admit(ctx context.Context, key priority.Key, plans []Plan) (*Grant, int, error) {
	if len(plans) == 0 {
		return nil, 0, errors.New("gpu: no plan to admit")
	}
	smallest := plans[0].Need()
	for _, p := range plans[1:] {
		smallest = min(smallest, p.Need())
	}
	if ceiling := a.total - min(a.total, a.headroom); smallest > ceiling {
		return nil, 0, &FitError{Device: a.ordinal, Need: smallest, Limit: ceiling}
	}
	a.maybeRefresh()
	a.mu.Lock()
	w := a.waiters.Push(key, struct{}{})
	defer func() {
		a.mu.Lock()
		a.waiters.Remove(w)
		a.broadcastLocked()
		a.mu.Unlock()
	}()
	for {
		var victims []*residentEntry
		if a.waiters.Peek() == w {
			for i, p := range plans {
				g, ev, ok := a.tryGrantLocked(p, true)
				if ok {
					a.mu.Unlock()
					return g, i, nil
				}
				if ev != nil {
					victims = ev
					break
				}
			}
		}
		changed := a.changed
		refresh := a.refresh
		a.mu.Unlock()
		if victims != nil {
			a.evict(victims)
			a.mu.Lock()
			continue
		}
		t := time.NewTimer(refresh)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, 0, ctx.Err()
		case <-changed:
		case <-t.C:
			if err := a.Refresh(); err != nil {
				log.Warnw("gpu memory refresh failed", "device", a.ordinal, "err", err)
			}
		}
		t.Stop()
		a.mu.Lock()
	}
}

// TryAdmit grants the first of plans that fits now, without waiting or evicting, unless a
// better-ranked partition waits on this device.
func (a *AccountingAllocator) TryAdmit(key priority.Key, plans []Plan) (*Grant, int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for w := range a.waiters.All() {
		if w.Key().Less(key) {
			return nil, 0, false
		}
	}
	for i, p := range plans {
		if g, _, ok := a.tryGrantLocked(p, false); ok {
			return g, i, true
		}
	}
	return nil, 0, false
}

// tryGrantLocked grants p if it fits. If it would fit after evicting unreferenced resident
// vectors it does not need and evict is set, it marks and returns those victims instead.
func (a *AccountingAllocator) tryGrantLocked(p Plan, evict bool) (*Grant, []*residentEntry, bool) {
	need := p.Peak
	wanted := map[string]bool{}
	for _, r := range p.Resident {
		wanted[r.Key] = true
		if e, ok := a.resident[r.Key]; !ok || e.evicting {
			need += RoundAlloc(r.Bytes)
		}
	}
	limit := a.limitLocked()
	if a.reserved+need <= limit {
		g := &Grant{a: a, Plan: p, reserved: p.Peak}
		a.reserved += p.Peak
		a.grants++
		for _, r := range p.Resident {
			e, ok := a.resident[r.Key]
			if !ok || e.evicting {
				e = &residentEntry{key: r.Key, size: RoundAlloc(r.Bytes), lock: make(chan struct{}, 1)}
				a.resident[r.Key] = e
				a.reserved += e.size
				a.residentRes += e.size
			}
			e.refs++
			a.tick++
			e.used = a.tick
			e.usedAt = time.Now()
			g.resident = append(g.resident, e)
		}
		return g, nil, true
	}
	if !evict {
		return nil, nil, false
	}
	// Free the least recently used vectors nobody holds, if that is enough.
	var idle []*residentEntry
	var idleBytes uint64
	for _, e := range a.resident {
		if e.refs == 0 && !e.evicting && !wanted[e.key] {
			idle = append(idle, e)
			idleBytes += e.size
		}
	}
	if a.reserved+need > limit+idleBytes {
		return nil, nil, false
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].used < idle[j].used })
	var victims []*residentEntry
	short := a.reserved + need - limit
	for _, e := range idle {
		if short == 0 {
			break
		}
		e.evicting = true
		victims = append(victims, e)
		short -= min(short, e.size)
	}
	return nil, victims, false
}

// evict frees victims marked by tryGrantLocked and returns their reservations.
func (a *AccountingAllocator) evict(victims []*residentEntry) {
	for _, e := range victims {
		log.Infow("evicting resident vector", "device", a.ordinal, "key", e.key, "bytes", FormatBytes(e.size))
		a.freeResident(e)
	}
}

// EvictIdle frees every resident vector no grant holds; it returns the bytes released.
func (a *AccountingAllocator) EvictIdle() uint64 { return a.EvictUnusedSince(time.Time{}, true) }

// EvictUnusedSince frees the resident vectors no grant holds that were last granted before
// t (all of them when all is set); it returns the bytes released.
func (a *AccountingAllocator) EvictUnusedSince(t time.Time, all bool) uint64 {
	a.mu.Lock()
	var victims []*residentEntry
	for _, e := range a.resident {
		if e.refs == 0 && !e.evicting && (all || e.usedAt.Before(t)) {
			e.evicting = true
			victims = append(victims, e)
		}
	}
	a.mu.Unlock()
	var n uint64
	for _, e := range victims {
		n += e.size
		a.freeResident(e)
	}
	return n
}

func (a *AccountingAllocator) freeResident(e *residentEntry) {
	e.lock <- struct{}{}
	ptr := e.ptr
	e.ptr, e.handle = 0, nil
	a.mu.Lock()
	e.loaded = false
	a.mu.Unlock()
	<-e.lock
	if ptr != 0 {
		a.free(ptr, e.size)
	}
	a.mu.Lock()
	if a.resident[e.key] == e {
		delete(a.resident, e.key)
	}
	a.reserved -= e.size
	a.residentRes -= e.size
	a.broadcastLocked()
	a.mu.Unlock()
}

// takeSpareLocked removes the kept arena from the books' spare slot and returns it.
func (a *AccountingAllocator) takeSpareLocked() (DevicePtr, uint64) {
	p, size := a.spare, a.spareSize
	a.spare, a.spareSize = 0, 0
	return p, size
}

// dropSpare frees the kept arena, if any.
func (a *AccountingAllocator) dropSpare() {
	a.spareMu.Lock()
	defer a.spareMu.Unlock()
	a.dropSpareHeld()
}

// dropSpareHeld is dropSpare with spareMu held.
func (a *AccountingAllocator) dropSpareHeld() {
	a.mu.Lock()
	p, size := a.takeSpareLocked()
	a.mu.Unlock()
	if p != 0 {
		a.free(p, size)
	}
}

// alloc allocates from the device and books the rounded size once the driver has it. A kept
// arena is freed first, so that allocations stay within the reservations.
func (a *AccountingAllocator) alloc(bytes uint64) (DevicePtr, error) {
	a.spareMu.Lock()
	defer a.spareMu.Unlock()
	a.dropSpareHeld()
	p, err := a.dev.Alloc(bytes)
	if err != nil {
		return 0, fmt.Errorf("gpu %d: allocating %s: %w", a.ordinal, FormatBytes(bytes), err)
	}
	a.mu.Lock()
	a.allocated += RoundAlloc(max(bytes, 1))
	a.mu.Unlock()
	return p, nil
}

// free un-books before the driver frees, so that a concurrent Refresh errs on the safe side.
func (a *AccountingAllocator) free(p DevicePtr, bytes uint64) {
	a.mu.Lock()
	a.allocated -= RoundAlloc(max(bytes, 1))
	if a.sampling {
		a.sampleMin = min(a.sampleMin, a.allocated)
	}
	a.mu.Unlock()
	if err := a.dev.Free(p); err != nil {
		log.Errorw("freeing device memory", "device", a.ordinal, "err", err)
	}
}

// NoteOutOfMemory records an allocation failure that admission did not predict: another
// process took memory, so other processes' usage is re-sampled at once.
func (a *AccountingAllocator) NoteOutOfMemory() {
	if err := a.Refresh(); err != nil {
		log.Warnw("gpu memory refresh failed", "device", a.ordinal, "err", err)
	}
}

// residentEntry is one shared vector kept on the device across partitions.
type residentEntry struct {
	key  string
	size uint64
	// Guarded by AccountingAllocator.mu.
	refs     int
	used     uint64 // LRU clock
	usedAt   time.Time
	evicting bool
	hasMem   bool
	// Guarded by lock (a one-slot channel so that waiting for a load is cancellable).
	lock   chan struct{}
	ptr    DevicePtr
	handle any
	// Written holding both lock and AccountingAllocator.mu; read holding either.
	loaded bool
}

// Grant is one admitted partition attempt: a reservation of Plan.Peak bytes for its arena and
// references on its resident vectors. Release returns everything.
type Grant struct {
	a        *AccountingAllocator
	Plan     Plan
	reserved uint64
	arena    DevicePtr
	resident []*residentEntry

	mu       sync.Mutex
	released bool
}

// Device returns the ordinal the grant is on.
func (g *Grant) Device() int { return g.a.ordinal }

// Prepare allocates the arena. An out-of-memory error means the driver had less than the
// books said; the caller releases the grant and re-plans.
func (g *Grant) Prepare() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return errClosed
	}
	if g.arena != 0 || g.Plan.Peak == 0 {
		return nil
	}
	if g.Plan.Peak > g.reserved {
		return ErrOverReservation
	}
	a := g.a
	a.mu.Lock()
	if a.spare != 0 && a.spareSize == g.Plan.Peak {
		g.arena, _ = a.takeSpareLocked()
		a.mu.Unlock()
		return nil
	}
	a.mu.Unlock()
	p, err := a.alloc(g.Plan.Peak)
	if err != nil {
		return err
	}
	g.arena = p
	return nil
}

// Buffer returns the device address and size of a named arena buffer.
func (g *Grant) Buffer(name string) (DevicePtr, uint64, error) {
	b, ok := g.Plan.Buffer(name)
	if !ok {
		return 0, 0, fmt.Errorf("gpu: plan %s has no buffer %q", g.Plan.Tier, name)
	}
	g.mu.Lock()
	base := g.arena
	g.mu.Unlock()
	if base == 0 {
		return 0, 0, errors.New("gpu: arena not prepared")
	}
	return base + DevicePtr(b.Offset), b.Size, nil
}

// Resident returns the grant's resident vector with key.
func (g *Grant) Resident(key string) (*ResidentVector, error) {
	for _, e := range g.resident {
		if e.key != key {
			continue
		}
		// A vector of another size under the key is another one's: kernels reading it would
		// fault the device (which poisons its context) or compute with the wrong data.
		var want uint64
		for _, r := range g.Plan.Resident {
			if r.Key == key {
				want = RoundAlloc(r.Bytes)
			}
		}
		if e.size != want {
			return nil, fmt.Errorf("gpu: resident vector %q holds %s, the plan needs %s: the key names two vectors", key, FormatBytes(e.size), FormatBytes(want))
		}
		return &ResidentVector{a: g.a, e: e}, nil
	}
	return nil, fmt.Errorf("gpu: plan has no resident vector %q", key)
}

// Release frees the arena, drops the resident references and returns the reservation. It is
// idempotent.
func (g *Grant) Release() {
	g.mu.Lock()
	if g.released {
		g.mu.Unlock()
		return
	}
	g.released = true
	arena := g.arena
	g.arena = 0
	g.mu.Unlock()
	a := g.a
	if arena != 0 {
		// Freed (or kept) before the reservation is returned, so that a grant admitted into
		// the space finds it free in the driver.
		a.spareMu.Lock()
		a.mu.Lock()
		// Kept while another grant's next partition may want it, and only within the limit
		// once this grant's reservation is returned.
		keep := a.spare == 0 && a.grants > 1 && a.reserved-g.reserved+g.Plan.Peak <= a.limitLocked()
		if keep {
			a.spare, a.spareSize = arena, g.Plan.Peak
		}
		a.mu.Unlock()
		if !keep {
			a.free(arena, g.Plan.Peak)
		}
		a.spareMu.Unlock()
	}
	var drop []*residentEntry
	a.mu.Lock()
	a.reserved -= g.reserved
	a.grants--
	last := a.grants == 0
	for _, e := range g.resident {
		e.refs--
		if e.refs == 0 && !e.evicting && !e.hasMem {
			// Reserved for this attempt but never allocated: nothing to keep.
			e.evicting = true
			drop = append(drop, e)
		}
	}
	a.broadcastLocked()
	a.mu.Unlock()
	if last {
		a.dropSpare() // nothing is running: give the memory back
	}
	for _, e := range drop {
		a.freeResident(e)
	}
}

// ResidentVector is a grant's handle on one resident vector.
type ResidentVector struct {
	a *AccountingAllocator
	e *residentEntry
}

// Key names the vector.
func (r *ResidentVector) Key() string { return r.e.key }

// Size is the device memory reserved for the vector (its bytes rounded to AllocGranularity).
// A loader that allocates through an Alloc/Free interface uses NewRegion(p, Size()).
func (r *ResidentVector) Size() uint64 { return r.e.size }

// ResidentLoader fills a resident vector at p and may return a host-side handle to keep with
// it (for example an NTT domain descriptor whose pointers lie in the vector); the handle lives
// exactly as long as the device copy.
type ResidentLoader func(ctx context.Context, p DevicePtr) (handle any, err error)

// Ensure returns the vector's device address and handle, allocating and filling it with load
// on first use; concurrent users wait for one load. A failed load leaves the vector empty for
// the next user. After an eviction the next Ensure loads again, so a handle must never be kept
// beyond the grant that obtained it.
func (r *ResidentVector) Ensure(ctx context.Context, load ResidentLoader) (DevicePtr, any, error) {
	select {
	case r.e.lock <- struct{}{}:
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	}
	defer func() { <-r.e.lock }()
	if r.e.loaded {
		return r.e.ptr, r.e.handle, nil
	}
	if r.e.ptr == 0 {
		p, err := r.a.alloc(r.e.size)
		if err != nil {
			return 0, nil, fmt.Errorf("resident %s: %w", r.e.key, err)
		}
		r.e.ptr = p
		r.a.mu.Lock()
		r.e.hasMem = true
		r.a.mu.Unlock()
	}
	h, err := load(ctx, r.e.ptr)
	if err != nil {
		return 0, nil, fmt.Errorf("loading resident %s: %w", r.e.key, err)
	}
	r.e.handle = h
	r.a.mu.Lock()
	r.e.loaded = true
	r.a.mu.Unlock()
	return r.e.ptr, h, nil
}
