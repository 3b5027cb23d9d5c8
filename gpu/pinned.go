package gpu

import (
	"fmt"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/snarkd/snarkd/internal/memlimit"
)

// PinnedStats counts what a pinned pool did.
type PinnedStats struct {
	Budget        uint64 `json:"budget"`
	Held          uint64 `json:"held"`   // page-locked bytes: upload buffers (in use + cached), Registered
	InUse         uint64 `json:"in_use"` // whole buffers handed out and not yet released
	Allocs        int    `json:"allocs"`
	Reuses        int    `json:"reuses"`
	Fallbacks     int    `json:"fallbacks"`
	FallbackBytes uint64 `json:"fallback_bytes"`
	// Registered is host memory page-locked in place for streaming (PinHost), part of Held.
	Registered uint64 `json:"registered"`
	Pins       int    `json:"pins"`        // registrations made
	PinsInUse  int    `json:"pins_in_use"` // registered vectors partitions stream from now
	// PinFallbacks counts PinHost calls that left a vector in pageable memory.
	PinFallbacks     int    `json:"pin_fallbacks"`
	PinFallbackBytes uint64 `json:"pin_fallback_bytes"`
}

// PinnedPool hands out page-locked host buffers for uploads within a budget, caching released
// buffers because cudaHostAlloc is slow and serializes the driver. When the budget is spent,
// Acquire says so and the caller uploads from pageable memory; the fallback is counted and
// reported to OnFallback (a metric hook). Within the same budget it page-locks in place the
// host vectors that partitions stream from (PinHost: SRS points not resident in VRAM).
type PinnedPool struct {
	dev    Device
	budget uint64
	// OnFallback, when set before use, is called for every upload that falls back to pageable
	// memory, with its size.
	OnFallback func(bytes uint64)

	mu     sync.Mutex
	held   uint64
	inUse  map[uintptr]HostMem
	cached []HostMem
	stats  PinnedStats
	// pins are the vectors registered by PinHost, by address; unpinnable remembers the
	// addresses whose registration failed (tried once until Trim or Forget), warned those
	// already logged as not fitting the budget.
	pins       map[uintptr]*hostPin
	pinned     uint64
	reserve    uint64
	unpinnable map[uintptr]bool
	warned     map[uintptr]bool
}

// hostPin is one vector registered by PinHost. It stays in the books, and in pins, until its
// unregistration has returned, so that a PinHost racing an expiry waits instead of registering
// memory that is still registered.
type hostPin struct {
	key    uintptr
	mem    HostMem
	refs   int
	used   time.Time // last release
	forget bool      // unregister at the last release
	// ready is closed once a registration or unregistration in progress finished; nil when
	// none is.
	ready chan struct{}
}

// DefaultPinnedBudget is half of the memory this process may use (memlimit.Available: RAM, or
// the cgroup's limit when lower; 4 GiB where that is unknown). Most of it goes to SRS vectors
// locked in place, which occupy that memory whether locked or not; the upload staging itself
// stays within a few rings of 64 MiB buffers per worker.
func DefaultPinnedBudget() uint64 {
	if ram, err := memlimit.Available(); err == nil && ram > 0 {
		return ram / 2
	}
	return 4 << 30
}

// NewPinnedPool returns a pool that allocates through dev; budget zero means
// DefaultPinnedBudget.
func NewPinnedPool(dev Device, budget uint64) *PinnedPool {
	if budget == 0 {
		budget = DefaultPinnedBudget()
	}
	return &PinnedPool{dev: dev, budget: budget, inUse: map[uintptr]HostMem{}, reserve: 2 << 30,
		pins: map[uintptr]*hostPin{}, unpinnable: map[uintptr]bool{}, warned: map[uintptr]bool{}}
}

// StagingChunk is the unit in which a staged upload goes through page-locked memory: the host
// copy of one chunk overlaps the DMA of the one before, and it is large enough that the
// per-copy overhead (an event, a launch) is lost in the transfer.
const StagingChunk = 64 << 20

// StagingRing is the number of staging chunks one upload cycles through, so that pinned memory
// per upload stays bounded however large the vector.
const StagingRing = 4

// stagingReserve is the part of the budget that PinHost leaves to upload staging.
func (p *PinnedPool) stagingReserve() uint64 { return min(p.budget/2, p.reserve) }

// reserveForWorkers sizes the staging reserve for n partition workers: each can have about six
// staged uploads in flight, of at most StagingRing chunks each.
func (p *PinnedPool) reserveForWorkers(n int) {
	p.mu.Lock()
	p.reserve = max(2<<30, uint64(n)*6*uint64(StagingRing*StagingChunk))
	p.mu.Unlock()
}

// PinHost page-locks b in place, a host vector that partitions stream to the device (SRS
// points), so that its copies run at full PCIe speed instead of through the driver's pageable
// staging (a quarter of the speed). The registration is kept across partitions until it has
// been idle long enough (UnpinIdleSince) or Trim. Pins stay within the budget less a reserve
// for upload staging. ok = false when b does not fit or cannot be registered (tried once): it
// then streams from pageable memory (counted, logged once). Call release once the partition no
// longer copies from b; the pool keeps b referenced while it is registered.
func (p *PinnedPool) PinHost(b []byte) (release func(), ok bool) { return p.pin(b, false) }

// TryPin is PinHost for a vector that has another way up (a staged upload): a vector that does
// not fit the budget, or cannot be registered, is neither counted as a fallback nor logged.
func (p *PinnedPool) TryPin(b []byte) (release func(), ok bool) { return p.pin(b, true) }

func (p *PinnedPool) pin(b []byte, quiet bool) (release func(), ok bool) {
	noop := func() {}
	if len(b) == 0 {
		return noop, false
	}
	key, size := uintptr(unsafe.Pointer(&b[0])), uint64(len(b))
	p.mu.Lock()
	e := p.pinsEntryLocked(key)
	if e != nil && e.mem.Size >= size {
		e.refs++
		p.mu.Unlock()
		return p.releaser(e), true
	}
	if e != nil || p.unpinnable[key] {
		// A longer view of a registered vector, or one that failed to register.
		p.mu.Unlock()
		if !quiet {
			p.Fallback(size, true)
		}
		return noop, false
	}
	// Make room among the cached staging buffers. Pins are not traded for one another: two
	// vectors that every partition streams would register gigabytes per partition; an idle one
	// gives its room back when it expires (UnpinIdleSince).
	var free []HostMem
	limit := p.budget - p.stagingReserve()
	for size <= limit && p.pinned+size <= limit && p.held+size > p.budget && len(p.cached) > 0 {
		free = append(free, p.cached[0])
		p.held -= p.cached[0].Size
		p.cached = p.cached[1:]
	}
	fits := p.pinned+size <= limit && p.held+size <= p.budget
	if fits {
		e = &hostPin{key: key, refs: 1, ready: make(chan struct{})}
		p.pins[key] = e
		p.pinned += size
		p.held += size
	}
	warn := !fits && !quiet && !p.warned[key]
	if warn {
		p.warned[key] = true
	}
	p.mu.Unlock()
	p.freeAll(free)
	if !fits {
		if warn {
			log.Warnw("host vector streams from pageable memory: the pinned budget cannot hold it",
				"bytes", FormatBytes(size), "budget", FormatBytes(p.budget), "pinned", FormatBytes(p.Stats().Registered),
				"staging_reserve", FormatBytes(p.stagingReserve()))
		}
		if !quiet {
			p.Fallback(size, true)
		}
		return noop, false
	}
	t0 := time.Now()
	m, err := p.dev.HostRegister(b)
	p.mu.Lock()
	close(e.ready)
	e.ready = nil
	if err != nil {
		delete(p.pins, key)
		p.pinned -= size
		p.held -= size
		p.unpinnable[key] = true
		p.mu.Unlock()
		if quiet {
			log.Debugw("page-locking a host vector failed; it is staged", "bytes", FormatBytes(size), "err", err)
		} else {
			log.Warnw("host vector streams from pageable memory: page-locking it failed", "bytes", FormatBytes(size), "err", err)
			p.Fallback(size, true)
		}
		return noop, false
	}
	e.mem = m
	p.stats.Pins++
	p.mu.Unlock()
	log.Debugw("page-locked host vector", "bytes", FormatBytes(size), "took", time.Since(t0).Round(time.Millisecond))
	return p.releaser(e), true
}

// Room is how many bytes PinHost could register now, counting b's own registration (if b is
// registered) as room, and cached staging buffers as room since PinHost drops them: a caller
// checks it before allocating a vector only worth having pinned.
func (p *PinnedPool) Room(b []byte) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var own, cached uint64
	if len(b) > 0 {
		if e := p.pins[uintptr(unsafe.Pointer(&b[0]))]; e != nil && e.ready == nil {
			own = e.mem.Size
		}
	}
	for _, c := range p.cached {
		cached += c.Size
	}
	left := func(limit, used uint64) uint64 {
		if used >= limit {
			return 0
		}
		return limit - used
	}
	return min(left(p.budget-p.stagingReserve(), p.pinned-own), left(p.budget, p.held-cached-own))
}

// pinsEntryLocked returns the registered pin at key, waiting out a registration or
// unregistration in progress; nil when there is none. Called and returns with the lock held.
func (p *PinnedPool) pinsEntryLocked(key uintptr) *hostPin {
	for {
		e := p.pins[key]
		if e == nil || e.ready == nil {
			return e
		}
		ch := e.ready
		p.mu.Unlock()
		<-ch
		p.mu.Lock()
	}
}

// Forget drops b's registration, or marks it to go at its last release when a partition still
// streams from it: the parameters b belongs to left the cache, and the pool must not keep them
// alive and locked.
func (p *PinnedPool) Forget(b []byte) {
	if len(b) == 0 {
		return
	}
	key := uintptr(unsafe.Pointer(&b[0]))
	p.mu.Lock()
	e := p.pinsEntryLocked(key)
	delete(p.unpinnable, key)
	delete(p.warned, key)
	var unpin []*hostPin
	if e != nil {
		if e.refs > 0 {
			e.forget = true
		} else {
			unpin = p.beginUnpinLocked(unpin, e)
		}
	}
	p.mu.Unlock()
	p.finishUnpin(unpin)
}

// releaser returns PinHost's release for e (idempotent).
func (p *PinnedPool) releaser(e *hostPin) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			var unpin []*hostPin
			p.mu.Lock()
			e.refs--
			e.used = time.Now()
			if e.refs == 0 && e.forget {
				unpin = p.beginUnpinLocked(unpin, e)
			}
			p.mu.Unlock()
			p.finishUnpin(unpin)
		})
	}
}

// beginUnpinLocked marks the idle pin e as unregistering and appends it to es; finishUnpin
// then unregisters it outside the lock and takes it off the books.
func (p *PinnedPool) beginUnpinLocked(es []*hostPin, e *hostPin) []*hostPin {
	e.ready = make(chan struct{})
	return append(es, e)
}

func (p *PinnedPool) finishUnpin(es []*hostPin) {
	for _, e := range es {
		if err := p.dev.HostUnregister(e.mem); err != nil {
			log.Errorw("unregistering pinned host memory", "err", err)
		}
		p.mu.Lock()
		delete(p.pins, e.key)
		p.pinned -= e.mem.Size
		p.held -= e.mem.Size
		close(e.ready)
		e.ready = nil
		p.mu.Unlock()
	}
}

// Acquire returns a page-locked buffer of at least size bytes (Size is set to size), or
// ok = false when the budget cannot hold it: the caller then uploads from pageable memory.
func (p *PinnedPool) Acquire(size uint64) (HostMem, bool) {
	p.mu.Lock()
	// Best fit among cached buffers no more than twice the size, so large buffers are not
	// pinned down by small requests.
	best := -1
	for i, c := range p.cached {
		if c.Size >= size && c.Size <= 2*size && (best < 0 || c.Size < p.cached[best].Size) {
			best = i
		}
	}
	if best >= 0 {
		m := p.cached[best]
		p.cached = append(p.cached[:best], p.cached[best+1:]...)
		p.inUse[m.Handle] = m
		p.stats.Reuses++
		p.mu.Unlock()
		m.Size = size
		if m.Bytes != nil {
			m.Bytes = m.Bytes[:size]
		}
		return m, true
	}
	// Make room by dropping cached buffers, smallest first.
	var drop []HostMem
	sort.Slice(p.cached, func(i, j int) bool { return p.cached[i].Size < p.cached[j].Size })
	for p.held+size > p.budget && len(p.cached) > 0 {
		drop = append(drop, p.cached[0])
		p.held -= p.cached[0].Size
		p.cached = p.cached[1:]
	}
	fits := p.held+size <= p.budget
	if fits {
		p.held += size
	}
	p.mu.Unlock()
	p.freeAll(drop)
	if !fits {
		p.Fallback(size, false)
		return HostMem{}, false
	}
	m, err := p.dev.HostAlloc(size)
	if err != nil {
		log.Warnw("pinned host allocation failed; uploading from pageable memory", "bytes", FormatBytes(size), "err", err)
		p.mu.Lock()
		p.held -= size
		p.mu.Unlock()
		p.Fallback(size, false)
		return HostMem{}, false
	}
	p.mu.Lock()
	p.inUse[m.Handle] = m
	p.stats.Allocs++
	p.mu.Unlock()
	return m, true
}

// Fallback counts an upload (pin false) or a streamed vector (pin true) left in pageable
// memory and reports it to OnFallback.
func (p *PinnedPool) Fallback(size uint64, pin bool) {
	p.mu.Lock()
	if pin {
		p.stats.PinFallbacks++
		p.stats.PinFallbackBytes += size
	} else {
		p.stats.Fallbacks++
		p.stats.FallbackBytes += size
	}
	hook := p.OnFallback
	p.mu.Unlock()
	if hook != nil {
		hook(size)
	}
}

// Release returns a buffer from Acquire to the pool.
func (p *PinnedPool) Release(m HostMem) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	orig, ok := p.inUse[m.Handle]
	if !ok {
		return fmt.Errorf("gpu: releasing a pinned buffer the pool did not hand out")
	}
	delete(p.inUse, m.Handle)
	p.cached = append(p.cached, orig)
	return nil
}

// UnpinIdleSince unregisters the pins no partition has used since t and returns their bytes.
func (p *PinnedPool) UnpinIdleSince(t time.Time) uint64 {
	p.mu.Lock()
	var unpin []*hostPin
	var bytes uint64
	for _, e := range p.pins {
		if e.refs == 0 && e.ready == nil && e.used.Before(t) {
			unpin = p.beginUnpinLocked(unpin, e)
			bytes += e.mem.Size
		}
	}
	if len(unpin) > 0 {
		// Room comes back: vectors that did not fit may now, and say so again if not.
		clear(p.warned)
	}
	p.mu.Unlock()
	p.finishUnpin(unpin)
	return bytes
}

// Trim frees every cached buffer and unregisters every idle pin; buffers and pins in use are
// untouched.
func (p *PinnedPool) Trim() {
	p.mu.Lock()
	drop := p.cached
	p.cached = nil
	for _, m := range drop {
		p.held -= m.Size
	}
	clear(p.unpinnable)
	p.mu.Unlock()
	p.UnpinIdleSince(time.Now().Add(time.Hour))
	p.freeAll(drop)
}

func (p *PinnedPool) freeAll(ms []HostMem) {
	for _, m := range ms {
		if err := p.dev.HostFree(m); err != nil {
			log.Errorw("freeing pinned host memory", "err", err)
		}
	}
}

// Stats returns a snapshot of the pool's counters.
func (p *PinnedPool) Stats() PinnedStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Budget, s.Held, s.Registered = p.budget, p.held, p.pinned
	for _, e := range p.pins {
		if e.refs > 0 {
			s.PinsInUse++
		}
	}
	for _, m := range p.inUse {
		s.InUse += m.Size
	}
	return s
}
