package jobs

import (
	"context"
	"sync"

	"github.com/snarkd/snarkd/rpcapi"
)

// subBuffer is each subscriber's backlog; go-jsonrpc channels have no backpressure, so a
// subscriber that falls this far behind loses events (counted) rather than stalling provers.
const subBuffer = 1024

type broker struct {
	mu      sync.Mutex
	subs    map[*sub]struct{}
	closed  bool
	dropped uint64
}

type sub struct {
	ch     chan rpcapi.JobEvent
	filter rpcapi.JobFilter
}

func newBroker() *broker { return &broker{subs: map[*sub]struct{}{}} }

func (b *broker) subscribe(ctx context.Context, f rpcapi.JobFilter) <-chan rpcapi.JobEvent {
	s := &sub{ch: make(chan rpcapi.JobEvent, subBuffer), filter: f}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		close(s.ch)
		return s.ch
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	go func() {
		<-ctx.Done()
		b.mu.Lock()
		if _, ok := b.subs[s]; ok {
			delete(b.subs, s)
			close(s.ch)
		}
		b.mu.Unlock()
	}()
	return s.ch
}

func (b *broker) publish(ev rpcapi.JobEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		// Events are filtered by job and kind; a state filter has no meaning for a stream.
		if !Match(rpcapi.JobFilter{JobIDs: s.filter.JobIDs, Kinds: s.filter.Kinds}, ev.JobID, ev.Kind, "") {
			continue
		}
		select {
		case s.ch <- ev:
		default:
			b.dropped++
		}
	}
}

func (b *broker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		delete(b.subs, s)
		close(s.ch)
	}
}

func (b *broker) droppedCount() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}
