package gpu

import (
	"fmt"
	"sort"
	"sync"
)

// PinnedStats counts what a pinned pool did.
type PinnedStats struct {
	Budget        uint64 `json:"budget"`
	Held          uint64 `json:"held"`   // page-locked bytes allocated (in use + cached)
	InUse         uint64 `json:"in_use"` // whole buffers handed out and not yet released
	Allocs        int    `json:"allocs"`
	Reuses        int    `json:"reuses"`
	Fallbacks     int    `json:"fallbacks"`
	FallbackBytes uint64 `json:"fallback_bytes"`
}

// PinnedPool hands out page-locked host buffers for uploads within a budget, caching released
// buffers because cudaHostAlloc is slow and serializes the driver. When the budget is spent,
// Acquire says so and the caller uploads from pageable memory; the fallback is counted and
// reported to OnFallback (a metric hook).
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
}

// DefaultPinnedBudget is a quarter of physical memory (4 GiB where that is unknown).
func DefaultPinnedBudget() uint64 {
	if ram := physicalMemory(); ram > 0 {
		return ram / 4
	}
	return 4 << 30
}

// NewPinnedPool returns a pool that allocates through dev; budget zero means
// DefaultPinnedBudget.
func NewPinnedPool(dev Device, budget uint64) *PinnedPool {
	if budget == 0 {
		budget = DefaultPinnedBudget()
	}
	return &PinnedPool{dev: dev, budget: budget, inUse: map[uintptr]HostMem{}}
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
		p.inUse[m.handle] = m
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
		p.fallback(size)
		return HostMem{}, false
	}
	m, err := p.dev.HostAlloc(size)
	if err != nil {
		log.Warnw("pinned host allocation failed; uploading from pageable memory", "bytes", FormatBytes(size), "err", err)
		p.mu.Lock()
		p.held -= size
		p.mu.Unlock()
		p.fallback(size)
		return HostMem{}, false
	}
	p.mu.Lock()
	p.inUse[m.handle] = m
	p.stats.Allocs++
	p.mu.Unlock()
	return m, true
}

func (p *PinnedPool) fallback(size uint64) {
	p.mu.Lock()
	p.stats.Fallbacks++
	p.stats.FallbackBytes += size
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
	orig, ok := p.inUse[m.handle]
	if !ok {
		return fmt.Errorf("gpu: releasing a pinned buffer the pool did not hand out")
	}
	delete(p.inUse, m.handle)
	p.cached = append(p.cached, orig)
	return nil
}

// Trim frees every cached buffer; buffers in use are untouched.
func (p *PinnedPool) Trim() {
	p.mu.Lock()
	drop := p.cached
	p.cached = nil
	for _, m := range drop {
		p.held -= m.Size
	}
	p.mu.Unlock()
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
	s.Budget, s.Held = p.budget, p.held
	for _, m := range p.inUse {
		s.InUse += m.Size
	}
	return s
}
