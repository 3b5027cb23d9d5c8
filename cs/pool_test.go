package cs

import (
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// The pool hands back a vector of a fitting size, keeps at most poolKeep (the largest), never
// hands out a vector far larger than asked, and lets everything go when drained.
func TestVectorPool(t *testing.T) {
	var p vectorPool
	big := make([]fr.Element, 10, 5000)
	p.put(big)
	if v := p.get(10, 100); cap(v) == 5000 {
		t.Fatal("a vector 50 times too large was handed out")
	}
	if v := p.get(3000, 3000); &v[0] != &big[:1][0] || len(v) != 3000 {
		t.Fatalf("got a fresh vector (len %d, cap %d) instead of the free one", len(v), cap(v))
	}
	for i := range poolKeep + 4 {
		p.put(make([]fr.Element, 0, 100+i))
	}
	if len(p.free) != poolKeep {
		t.Fatalf("%d free vectors kept, want %d", len(p.free), poolKeep)
	}
	for _, v := range p.free {
		if cap(v) < 104 {
			t.Fatalf("kept a vector of %d while larger ones were let go", cap(v))
		}
	}
	p.drain()
	if len(p.free) != 0 {
		t.Fatalf("%d vectors kept after drain", len(p.free))
	}
	p.timer.Stop()
}

// TestVectorReleaseHook: every vector a pool lets go (over its bound, or drained) reaches the
// release hooks once; a removed hook hears nothing more.
func TestVectorReleaseHook(t *testing.T) {
	var mu sync.Mutex
	gone := map[*fr.Element]int{}
	remove := OnVectorRelease(func(v []fr.Element) {
		mu.Lock()
		gone[&v[:1][0]]++
		mu.Unlock()
	})
	var p vectorPool
	var all [][]fr.Element
	for i := range poolKeep + 3 {
		v := make([]fr.Element, 0, 100+i)
		all = append(all, v)
		p.put(v)
	}
	mu.Lock()
	if len(gone) != 3 {
		t.Fatalf("%d vectors reported let go over the bound, want 3", len(gone))
	}
	for i := range 3 {
		if gone[&all[i][:1][0]] != 1 {
			t.Fatalf("the smallest vector %d was not reported once", i)
		}
	}
	mu.Unlock()
	p.drain()
	mu.Lock()
	if len(gone) != len(all) {
		t.Fatalf("%d of %d vectors reported after drain", len(gone), len(all))
	}
	for _, n := range gone {
		if n != 1 {
			t.Fatal("a vector was reported twice")
		}
	}
	mu.Unlock()
	remove()
	p.put(make([]fr.Element, 0, 10))
	p.drain()
	p.timer.Stop()
	if len(gone) != len(all) {
		t.Fatal("a removed hook was called")
	}
}
