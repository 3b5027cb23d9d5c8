package prover

import (
	"container/heap"
	"context"
	"sync"

	"github.com/snarkd/snarkd/gpu"
)

// gate admits partitions to synthesis and proving, at most slots at once over every request
// of the pipeline, best priority first: WinningPoSt, then WindowPoSt, then the rest; within a
// class the oldest job, then the lowest partition index. A WinningPoSt that arrives while seal
// partitions occupy every slot takes the next slot that frees, whatever queued before it.
type gate struct {
	mu      sync.Mutex
	slots   int
	used    int
	waiters gateHeap
	seq     uint64
}

func newGate(slots int) *gate { return &gate{slots: max(slots, 1)} }

// gateKey is a partition's place in the gate's queue: the GPU scheduler's own order.
type gateKey = gpu.Priority

type gateWaiter struct {
	key   gateKey
	seq   uint64
	ready chan struct{}
	idx   int
}

type gateHeap []*gateWaiter

func (h gateHeap) Len() int { return len(h) }
func (h gateHeap) Less(i, j int) bool {
	if h[i].key.Less(h[j].key) {
		return true
	}
	if h[j].key.Less(h[i].key) {
		return false
	}
	return h[i].seq < h[j].seq
}
func (h gateHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *gateHeap) Push(x any) {
	w := x.(*gateWaiter)
	w.idx = len(*h)
	*h = append(*h, w)
}
func (h *gateHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	w.idx = -1
	return w
}

// acquire waits for a slot; the caller must release it.
func (g *gate) acquire(ctx context.Context, key gateKey) error {
	g.mu.Lock()
	if g.used < g.slots && g.waiters.Len() == 0 {
		g.used++
		g.mu.Unlock()
		return nil
	}
	g.seq++
	w := &gateWaiter{key: key, seq: g.seq, ready: make(chan struct{})}
	heap.Push(&g.waiters, w)
	g.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if w.idx >= 0 {
			heap.Remove(&g.waiters, w.idx)
			return ctx.Err()
		}
		// Granted while cancelling: hand the slot on.
		g.used--
		g.grantLocked()
		return ctx.Err()
	}
}

func (g *gate) release() {
	g.mu.Lock()
	g.used--
	g.grantLocked()
	g.mu.Unlock()
}

func (g *gate) grantLocked() {
	for g.used < g.slots && g.waiters.Len() > 0 {
		w := heap.Pop(&g.waiters).(*gateWaiter)
		g.used++
		close(w.ready)
	}
}

// waiting is the number of partitions waiting for a slot.
func (g *gate) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiters.Len()
}
