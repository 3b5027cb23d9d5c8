package priority

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestKeyOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   Key
		aFirst bool
	}{
		{"class first", Key{Class: WinningPoSt, Submitted: 9}, Key{Class: Seal, Submitted: 1}, true},
		{"older job", Key{Class: Seal, Submitted: 1}, Key{Class: Seal, Submitted: 2}, true},
		{"job ID", Key{Class: Seal, Submitted: 1, JobID: "a"}, Key{Class: Seal, Submitted: 1, JobID: "b"}, true},
		{"partition", Key{Class: Seal, JobID: "a", Index: 3}, Key{Class: Seal, JobID: "a", Index: 1}, false},
		{"equal", Key{Class: Seal}, Key{Class: Seal}, false},
	} {
		if got := tc.a.Less(tc.b); got != tc.aFirst {
			t.Errorf("%s: %+v before %+v = %v", tc.name, tc.a, tc.b, got)
		}
	}
}

// TestQueueOrder: pops come best key first, equal keys in first-push order, also for items
// removed and pushed back; Ahead counts what a pop would serve first.
func TestQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q Queue[int]
	type entry struct {
		key Key
		n   int
	}
	var want []entry
	var queued []*Item[int]
	for n := range 500 {
		k := Key{Class: Class(rng.IntN(3)), Submitted: int64(rng.IntN(5)), Index: rng.IntN(3)}
		want = append(want, entry{k, n})
		queued = append(queued, q.Push(k, n))
	}
	// Take a third out and put them back: they keep their places.
	for i := 0; i < len(queued); i += 3 {
		if !q.Remove(queued[i]) || queued[i].Queued() || q.Remove(queued[i]) {
			t.Fatal("remove")
		}
	}
	for i := 0; i < len(queued); i += 3 {
		q.Requeue(queued[i])
	}
	slices.SortStableFunc(want, func(a, b entry) int {
		switch {
		case a.key.Less(b.key):
			return -1
		case b.key.Less(a.key):
			return 1
		}
		return 0
	})
	if got := q.Ahead(queued[want[7].n]); got != 7 {
		t.Fatalf("Ahead = %d, want 7", got)
	}
	for i, w := range want {
		if p := q.Peek(); p == nil || p.Value != w.n {
			t.Fatalf("peek %d: %v, want %d", i, p, w.n)
		}
		if it := q.Pop(); it.Value != w.n || it.Key() != w.key {
			t.Fatalf("pop %d: %d, want %d", i, it.Value, w.n)
		}
	}
	if q.Pop() != nil || q.Peek() != nil || q.Len() != 0 {
		t.Fatal("queue not empty")
	}
}
