// Package priority is the one order in which snarkd serves work: the job queue, the pipeline's
// synthesis slots and the GPU scheduler all rank by a Key (class, then the oldest job, then
// the job ID, then the partition index) and break ties in arrival order, with one Queue.
package priority

import (
	"container/heap"
	"iter"
)

// Class is a priority class: lower is served first. Deadline-bound proofs come before bulk
// ones (a WinningPoSt must land within its epoch; a WindowPoSt within its deadline).
type Class int

// The classes, from the deadline-bound to the bulk.
const (
	WinningPoSt Class = 0
	WindowPoSt  Class = 1
	Seal        Class = 2 // PoRep C2, SnapDeals and test proofs
)

func (c Class) String() string {
	switch c {
	case WinningPoSt:
		return "winning-post"
	case WindowPoSt:
		return "window-post"
	case Seal:
		return "seal"
	}
	return "unknown"
}

// Key is a unit of work's place in line: its class, then its job's submission time (Unix
// nanoseconds; zero sorts first), then the job ID, then the partition index.
type Key struct {
	Class     Class
	Submitted int64
	JobID     string
	Index     int
}

// Less reports whether k is served before o.
func (k Key) Less(o Key) bool {
	if k.Class != o.Class {
		return k.Class < o.Class
	}
	if k.Submitted != o.Submitted {
		return k.Submitted < o.Submitted
	}
	if k.JobID != o.JobID {
		return k.JobID < o.JobID
	}
	return k.Index < o.Index
}

// Queue holds values best Key first, equal keys in the order they were first pushed. Items can
// be removed from anywhere and pushed back. Not safe for concurrent use: the owner's lock
// guards it.
type Queue[T any] struct {
	h   items[T]
	seq uint64
}

// Item is one value's entry in a Queue.
type Item[T any] struct {
	Value T
	key   Key
	seq   uint64
	index int // in the heap; -1 while not queued
}

// Key is the item's place in line.
func (it *Item[T]) Key() Key { return it.key }

// Queued reports whether the item is in its queue.
func (it *Item[T]) Queued() bool { return it.index >= 0 }

// Before reports whether it is served before o: by key, then by first push.
func (it *Item[T]) Before(o *Item[T]) bool {
	if it.key != o.key {
		return it.key.Less(o.key)
	}
	return it.seq < o.seq
}

// Push queues v at key and returns its item.
func (q *Queue[T]) Push(key Key, v T) *Item[T] {
	it := &Item[T]{Value: v, key: key, index: -1}
	q.Requeue(it)
	return it
}

// Requeue puts back an item taken out of q (Pop or Remove); among equal keys it keeps the place
// of its first push. Requeueing a queued item does nothing.
func (q *Queue[T]) Requeue(it *Item[T]) {
	if it.index >= 0 {
		return
	}
	if it.seq == 0 {
		q.seq++
		it.seq = q.seq
	}
	heap.Push(&q.h, it)
}

// Peek returns the best item, or nil when q is empty.
func (q *Queue[T]) Peek() *Item[T] {
	if len(q.h) == 0 {
		return nil
	}
	return q.h[0]
}

// Pop removes and returns the best item, or nil when q is empty.
func (q *Queue[T]) Pop() *Item[T] {
	if len(q.h) == 0 {
		return nil
	}
	return heap.Pop(&q.h).(*Item[T])
}

// Remove takes it out of q; false when it was not queued.
func (q *Queue[T]) Remove(it *Item[T]) bool {
	if it.index < 0 || it.index >= len(q.h) || q.h[it.index] != it {
		return false
	}
	heap.Remove(&q.h, it.index)
	return true
}

// Len is the number of queued items.
func (q *Queue[T]) Len() int { return len(q.h) }

// All yields the queued items in no particular order; q must not change meanwhile.
func (q *Queue[T]) All() iter.Seq[*Item[T]] {
	return func(yield func(*Item[T]) bool) {
		for _, it := range q.h {
			if !yield(it) {
				return
			}
		}
	}
}

// Ahead counts the queued items served before it.
func (q *Queue[T]) Ahead(it *Item[T]) int {
	n := 0
	for _, o := range q.h {
		if o != it && o.Before(it) {
			n++
		}
	}
	return n
}

type items[T any] []*Item[T]

func (h items[T]) Len() int           { return len(h) }
func (h items[T]) Less(i, j int) bool { return h[i].Before(h[j]) }
func (h items[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *items[T]) Push(x any) {
	it := x.(*Item[T])
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *items[T]) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	it.index = -1
	*h = old[:len(old)-1]
	return it
}
