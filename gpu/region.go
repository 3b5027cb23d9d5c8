package gpu

import (
	"fmt"
	"sort"
	"sync"
)

// RegionAlign is the alignment of sub-allocations, cudaMalloc's own.
const RegionAlign = 256

// Region hands out sub-allocations of device memory that is already allocated and accounted
// (a plan's arena buffer or a resident vector), so that kernel bindings which allocate their
// own scratch through an Alloc/Free interface stay inside what admission granted. Running out
// is a planning error (ErrOverReservation), not an out-of-memory: retrying a smaller plan would
// not help.
type Region struct {
	base DevicePtr
	size uint64

	mu    sync.Mutex
	free  []span // sorted by offset, coalesced
	used  map[DevicePtr]uint64
	inUse uint64
	peak  uint64
}

type span struct{ off, size uint64 }

// NewRegion manages [base, base+size).
func NewRegion(base DevicePtr, size uint64) *Region {
	return &Region{base: base, size: size, free: []span{{0, size}}, used: map[DevicePtr]uint64{}}
}

// Alloc returns bytes (rounded up to RegionAlign) from the region, first fit.
func (r *Region) Alloc(bytes uint64) (DevicePtr, error) {
	n := (max(bytes, 1) + RegionAlign - 1) &^ (RegionAlign - 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, s := range r.free {
		if s.size < n {
			continue
		}
		if s.size == n {
			r.free = append(r.free[:i], r.free[i+1:]...)
		} else {
			r.free[i] = span{s.off + n, s.size - n}
		}
		p := r.base + DevicePtr(s.off)
		r.used[p] = n
		r.inUse += n
		r.peak = max(r.peak, r.inUse)
		return p, nil
	}
	return 0, fmt.Errorf("%w: %s more in a %s region with %s in use", ErrOverReservation,
		FormatBytes(n), FormatBytes(r.size), FormatBytes(r.inUse))
}

// Free returns a sub-allocation to the region.
func (r *Region) Free(p DevicePtr) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.used[p]
	if !ok {
		return fmt.Errorf("gpu: freeing %#x, which this region did not hand out", p)
	}
	delete(r.used, p)
	r.inUse -= n
	off := uint64(p - r.base)
	i := sort.Search(len(r.free), func(i int) bool { return r.free[i].off > off })
	r.free = append(r.free, span{})
	copy(r.free[i+1:], r.free[i:])
	r.free[i] = span{off, n}
	// Coalesce with the neighbours.
	if i+1 < len(r.free) && r.free[i].off+r.free[i].size == r.free[i+1].off {
		r.free[i].size += r.free[i+1].size
		r.free = append(r.free[:i+1], r.free[i+2:]...)
	}
	if i > 0 && r.free[i-1].off+r.free[i-1].size == r.free[i].off {
		r.free[i-1].size += r.free[i].size
		r.free = append(r.free[:i], r.free[i+1:]...)
	}
	return nil
}

// InUse returns the bytes handed out and not freed.
func (r *Region) InUse() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inUse
}

// Peak returns the most bytes handed out at once.
func (r *Region) Peak() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak
}
