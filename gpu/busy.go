package gpu

import (
	"context"
	"sync"
	"time"
)

// BusyWindow is the span of the recent figures in DeviceStatus: the busy fraction and the
// partitions' average times.
const BusyWindow = time.Minute

// PartitionTimes is where a partition's time in the scheduler went, over all its attempts.
type PartitionTimes struct {
	// Queued is the time in the queue until a worker took the partition.
	Queued time.Duration `json:"queued"`
	// Memory is the time waiting for admission (device memory), on any device.
	Memory time.Duration `json:"memory"`
	// KernelWait is the time waiting for the device's kernel lock: other partitions' kernels.
	KernelWait time.Duration `json:"kernel_wait"`
	// Kernels is the time holding the kernel lock, which is the device's busy time.
	Kernels time.Duration `json:"kernels"`
	// Run is from the first admission to the end: uploads, host work in between, the kernel
	// waits and the kernels, and after an out-of-memory the failed attempts and the admission
	// waits of the retries (also in Memory).
	Run time.Duration `json:"run"`
}

func (t *PartitionTimes) add(o PartitionTimes) {
	t.Queued += o.Queued
	t.Memory += o.Memory
	t.KernelWait += o.KernelWait
	t.Kernels += o.Kernels
	t.Run += o.Run
}

func (t PartitionTimes) div(n int) PartitionTimes {
	if n <= 0 {
		return PartitionTimes{}
	}
	d := time.Duration(n)
	return PartitionTimes{Queued: t.Queued / d, Memory: t.Memory / d, KernelWait: t.KernelWait / d,
		Kernels: t.Kernels / d, Run: t.Run / d}
}

// BusyStats is how busy a device's kernels kept it: the time its kernel lock was held.
type BusyStats struct {
	// Seconds is the busy time since the scheduler started.
	Seconds float64 `json:"seconds"`
	// Recent is the busy fraction of the last BusyWindow (of the time since start when shorter).
	Recent float64 `json:"recent"`
	// Partitions counts the partitions that finished in the last BusyWindow, and Mean is their
	// average PartitionTimes: where they waited.
	Partitions int            `json:"partitions"`
	Mean       PartitionTimes `json:"mean"`
}

type interval struct{ start, end time.Time }

type finished struct {
	at time.Time
	t  PartitionTimes
}

// kernelLock serializes a device's kernels and keeps the time they held it.
type kernelLock struct {
	ch      chan struct{}
	started time.Time

	mu     sync.Mutex
	total  time.Duration
	since  time.Time  // the current hold's start; zero while free
	holds  []interval // holds that ended within BusyWindow
	recent []finished // partitions that finished within BusyWindow
}

func newKernelLock() *kernelLock {
	return &kernelLock{ch: make(chan struct{}, 1), started: time.Now()}
}

// acquire waits for the lock and returns how long it waited.
func (k *kernelLock) acquire(ctx context.Context) (time.Duration, error) {
	t0 := time.Now()
	select {
	case k.ch <- struct{}{}:
	case <-ctx.Done():
		return time.Since(t0), ctx.Err()
	}
	now := time.Now()
	k.mu.Lock()
	k.since = now
	k.mu.Unlock()
	return now.Sub(t0), nil
}

// release gives the lock back and returns how long it was held.
func (k *kernelLock) release() time.Duration {
	now := time.Now()
	k.mu.Lock()
	held := now.Sub(k.since)
	k.total += held
	k.holds = append(k.holds, interval{k.since, now})
	k.since = time.Time{}
	k.pruneLocked(now)
	k.mu.Unlock()
	<-k.ch
	return held
}

// finished records a partition's times for the recent averages.
func (k *kernelLock) finished(t PartitionTimes) {
	now := time.Now()
	k.mu.Lock()
	k.recent = append(k.recent, finished{now, t})
	k.pruneLocked(now)
	k.mu.Unlock()
}

func (k *kernelLock) pruneLocked(now time.Time) {
	cut := now.Add(-BusyWindow)
	i := 0
	for i < len(k.holds) && k.holds[i].end.Before(cut) {
		i++
	}
	k.holds = k.holds[i:]
	j := 0
	for j < len(k.recent) && k.recent[j].at.Before(cut) {
		j++
	}
	k.recent = k.recent[j:]
}

func (k *kernelLock) stats() BusyStats {
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pruneLocked(now)
	from := now.Add(-BusyWindow)
	if k.started.After(from) {
		from = k.started
	}
	total := k.total
	var busy time.Duration
	overlap := func(s, e time.Time) {
		if s.Before(from) {
			s = from
		}
		if e.After(s) {
			busy += e.Sub(s)
		}
	}
	for _, h := range k.holds {
		overlap(h.start, h.end)
	}
	if !k.since.IsZero() {
		total += now.Sub(k.since)
		overlap(k.since, now)
	}
	st := BusyStats{Seconds: total.Seconds(), Partitions: len(k.recent)}
	if span := now.Sub(from); span > 0 {
		st.Recent = min(float64(busy)/float64(span), 1)
	}
	var sum PartitionTimes
	for _, f := range k.recent {
		sum.add(f.t)
	}
	st.Mean = sum.div(len(k.recent))
	return st
}
