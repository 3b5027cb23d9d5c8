package prover

import (
	"context"
	"sync"
	"time"
)

// Usage records what one request used while it was proved: the parameter sets it holds (so
// that the cache neither drops them for its memory limit nor counts them idle), how long it
// waited for parameters to load, and the GPUs that proved its partitions. The job runner puts
// one in the request's context with WithUsage and calls Release when the proof is done.
type Usage struct {
	mu       sync.Mutex
	held     []heldParams
	load     time.Duration
	devices  []int
	released bool
}

type heldParams struct {
	cache *ParamCache
	entry *paramEntry
}

type usageKey struct{}

// WithUsage returns ctx carrying a new Usage for the request it proves.
func WithUsage(ctx context.Context) (context.Context, *Usage) {
	u := &Usage{}
	return context.WithValue(ctx, usageKey{}, u), u
}

// WithoutUsage returns ctx without its Usage (work done on behalf of no request).
func WithoutUsage(ctx context.Context) context.Context {
	return context.WithValue(ctx, usageKey{}, (*Usage)(nil))
}

// UsageFrom returns ctx's Usage, nil when it has none. A nil *Usage ignores every call.
func UsageFrom(ctx context.Context) *Usage {
	u, _ := ctx.Value(usageKey{}).(*Usage)
	return u
}

// NoteDevice records that a GPU proved (part of) the request of ctx: GPU backends call it with
// the ordinal of the device a partition ran on. It does nothing when ctx carries no Usage.
func NoteDevice(ctx context.Context, ordinal int) {
	UsageFrom(ctx).NoteDevice(ordinal)
}

// NoteDevice records a GPU ordinal (once, in first-use order).
func (u *Usage) NoteDevice(ordinal int) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, d := range u.devices {
		if d == ordinal {
			return
		}
	}
	u.devices = append(u.devices, ordinal)
}

// Devices are the GPU ordinals that proved the request, in first-use order; empty when no GPU
// backend reported one (the CPU proved it).
func (u *Usage) Devices() []int {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]int(nil), u.devices...)
}

// SRSLoad is how long the request waited for its parameters to be read and checked (0 when
// they were in memory).
func (u *Usage) SRSLoad() time.Duration {
	if u == nil {
		return 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.load
}

func (u *Usage) addLoad(d time.Duration) {
	if u == nil {
		return
	}
	u.mu.Lock()
	u.load += d
	u.mu.Unlock()
}

// hold records that the request holds e; false when it already does or has been released.
// The cache calls it with its own lock held (lock order: cache, then usage).
func (u *Usage) hold(c *ParamCache, e *paramEntry) bool {
	if u == nil {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.released {
		return false
	}
	for _, h := range u.held {
		if h.entry == e {
			return false
		}
	}
	u.held = append(u.held, heldParams{cache: c, entry: e})
	return true
}

// Release lets go of the parameters the request held. Later calls do nothing.
func (u *Usage) Release() {
	if u == nil {
		return
	}
	u.mu.Lock()
	held := u.held
	u.held, u.released = nil, true
	u.mu.Unlock()
	for _, h := range held {
		h.cache.release(h.entry)
	}
}
