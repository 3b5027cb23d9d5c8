package prover

import (
	"context"
	"sync"

	"github.com/snarkd/snarkd/priority"
)

// gate admits partitions to synthesis and proving, at most slots at once over every request
// of the pipeline, in priority order (priority.Key: WinningPoSt, then WindowPoSt, then the
// rest; within a class the oldest job, then the lowest partition index). A WinningPoSt that
// arrives while seal partitions occupy every slot takes the next slot that frees, whatever
// queued before it.
type gate struct {
	mu      sync.Mutex
	slots   int
	used    int
	waiters priority.Queue[chan struct{}]
}

func newGate(slots int) *gate { return &gate{slots: max(slots, 1)} }

// gateKey is a partition's place in the gate's queue: the GPU scheduler's own order.
type gateKey = priority.Key

// acquire waits for a slot; the caller must release it.
func (g *gate) acquire(ctx context.Context, key gateKey) error {
	g.mu.Lock()
	if g.used < g.slots && g.waiters.Len() == 0 {
		g.used++
		g.mu.Unlock()
		return nil
	}
	w := g.waiters.Push(key, make(chan struct{}))
	g.mu.Unlock()
	select {
	case <-w.Value:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.waiters.Remove(w) {
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
		g.used++
		close(g.waiters.Pop().Value)
	}
}

// waiting is the number of partitions waiting for a slot.
func (g *gate) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiters.Len()
}
