package cs

import (
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// vectorPool keeps the vectors of finished assignments of one compiled circuit for its next
// partitions. Reused memory is already mapped; fresh vectors are not: a 32 GiB PoRep
// partition's aux, a, b and c are 17 GB, and faulting them in took longer than computing them
// (≈ 3 s of the 4.3 s witness-and-products time on the H200 host's 16 cores).
type vectorPool struct {
	mu    sync.Mutex
	free  [][]fr.Element
	timer *time.Timer
}

const (
	// poolKeep bounds the free vectors a pool holds: four partitions' aux, a, b and c. The
	// prover's pipeline never has more partitions synthesized and unproved than its backend's
	// concurrency, so the pool holds no more than a busy pipeline already held.
	poolKeep = 16
	// poolIdle is how long free vectors outlive the last partition before they are let go.
	poolIdle = time.Minute
)

// get returns a vector of length n and capacity at least c, reused when one of a close size is
// free (its contents are then undefined), else fresh.
func (p *vectorPool) get(n, c int) []fr.Element {
	c = max(n, c)
	p.mu.Lock()
	best := -1
	for i, v := range p.free {
		if cap(v) >= c && cap(v) <= 2*c+1024 && (best < 0 || cap(v) < cap(p.free[best])) {
			best = i
		}
	}
	var v []fr.Element
	if best >= 0 {
		v = p.free[best]
		p.free[best] = p.free[len(p.free)-1]
		p.free[len(p.free)-1] = nil
		p.free = p.free[:len(p.free)-1]
	}
	p.mu.Unlock()
	if v == nil {
		return make([]fr.Element, n, c)
	}
	return v[:n]
}

// put keeps vectors for reuse (at most poolKeep, the largest) and lets them all go after
// poolIdle without use.
func (p *vectorPool) put(vs ...[]fr.Element) {
	var gone [][]fr.Element
	defer func() { released(gone) }()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, v := range vs {
		if cap(v) == 0 {
			continue
		}
		if len(p.free) < poolKeep {
			p.free = append(p.free, v)
			continue
		}
		small := 0
		for i, f := range p.free {
			if cap(f) < cap(p.free[small]) {
				small = i
			}
		}
		if cap(v) > cap(p.free[small]) {
			v, p.free[small] = p.free[small], v
		}
		gone = append(gone, v)
	}
	if p.timer == nil {
		p.timer = time.AfterFunc(poolIdle, p.drain)
	} else {
		p.timer.Reset(poolIdle)
	}
}

// drain lets every free vector go and returns the memory to the system.
func (p *vectorPool) drain() {
	if p.release() > 0 {
		debug.FreeOSMemory()
	}
}

// release lets every free vector go and returns how many there were.
func (p *vectorPool) release() int {
	p.mu.Lock()
	gone := slices.Clone(p.free)
	clear(p.free)
	p.free = p.free[:0]
	p.mu.Unlock()
	released(gone)
	return len(gone)
}

// releaseHooks are told of every pooled vector a pool lets go (OnVectorRelease).
var releaseHooks struct {
	mu   sync.Mutex
	next int
	fns  map[int]func([]fr.Element)
}

// OnVectorRelease registers fn, called with every vector a compiled circuit's pool lets go, so
// that a device layer that page-locked a recycled vector in place can unregister it before it
// is freed. The returned function removes fn.
func OnVectorRelease(fn func(v []fr.Element)) (remove func()) {
	releaseHooks.mu.Lock()
	defer releaseHooks.mu.Unlock()
	if releaseHooks.fns == nil {
		releaseHooks.fns = map[int]func([]fr.Element){}
	}
	id := releaseHooks.next
	releaseHooks.next++
	releaseHooks.fns[id] = fn
	return func() {
		releaseHooks.mu.Lock()
		delete(releaseHooks.fns, id)
		releaseHooks.mu.Unlock()
	}
}

// released tells the hooks of vectors let go.
func released(vs [][]fr.Element) {
	if len(vs) == 0 {
		return
	}
	releaseHooks.mu.Lock()
	fns := make([]func([]fr.Element), 0, len(releaseHooks.fns))
	for _, fn := range releaseHooks.fns {
		fns = append(fns, fn)
	}
	releaseHooks.mu.Unlock()
	for _, v := range vs {
		for _, fn := range fns {
			fn(v)
		}
	}
}

// ReleaseVectors lets go of the vectors kept for this circuit's next partitions (call it when
// the circuit is dropped: they are not counted with it). Vectors of partitions still proving
// come back later and go after the pool's idle time.
func (c *Compiled) ReleaseVectors() { c.vectors.release() }

// Recycles reports whether pa's vectors go back to a compiled circuit's pool when its proof is
// done (Recycle): the same memory then serves later partitions, so registering it with a device
// once pays off.
func (p *ProvingAssignment) Recycles() bool { return p.pool != nil }

// Recycle hands the vectors of pa, an assignment whose proof is done, back to the compiled
// circuit it was completed from, for the next partition; pa is emptied. It does nothing for an
// assignment from full synthesis.
func (p *ProvingAssignment) Recycle() {
	if p.pool == nil {
		return
	}
	p.pool.put(p.A, p.B, p.C, p.Aux)
	p.A, p.B, p.C, p.Aux, p.pool = nil, nil, nil, nil, nil
}
