package prover

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestGateOrder fills the gate, queues waiters of every class, and checks that slots are handed
// out by class, then job age, then partition index, whatever the arrival order.
func TestGateOrder(t *testing.T) {
	g := newGate(1)
	ctx := context.Background()
	if err := g.acquire(ctx, gateKey{Class: 2, JobID: "running"}); err != nil {
		t.Fatal(err)
	}
	old, young := int64(100), int64(200)
	keys := []gateKey{
		{Class: 2, Submitted: young, JobID: "seal-b", Index: 0},
		{Class: 2, Submitted: old, JobID: "seal-a", Index: 1},
		{Class: 1, Submitted: young, JobID: "window", Index: 0},
		{Class: 2, Submitted: old, JobID: "seal-a", Index: 0},
		{Class: 0, Submitted: young, JobID: "winning", Index: 0},
	}
	want := []string{"winning/0", "window/0", "seal-a/0", "seal-a/1", "seal-b/0"}
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.acquire(ctx, k); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			got = append(got, k.JobID+"/"+string(rune('0'+k.Index)))
			mu.Unlock()
			g.release()
		}()
	}
	for g.waiting() < len(keys) {
		time.Sleep(time.Millisecond)
	}
	g.release()
	wg.Wait()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

// TestGateCancel: a waiter whose context ends leaves the queue and the slot count stays right.
func TestGateCancel(t *testing.T) {
	g := newGate(1)
	if err := g.acquire(context.Background(), gateKey{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.acquire(ctx, gateKey{Class: 0}) }()
	for g.waiting() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("cancelled acquire succeeded")
	}
	g.release()
	if err := g.acquire(context.Background(), gateKey{}); err != nil {
		t.Fatal(err)
	}
	if g.used != 1 || g.waiting() != 0 {
		t.Fatalf("used %d, waiting %d", g.used, g.waiting())
	}
}
