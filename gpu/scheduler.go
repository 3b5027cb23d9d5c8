package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snarkd/snarkd/priority"
)

// Partition is one unit of GPU work: one Groth16 circuit instance of a job.
type Partition struct {
	JobID string
	// Kind is the job's proof kind as the API names it (logs, status and metrics only);
	// Class is its priority class, which orders the queue.
	Kind      string
	Class     priority.Class
	Submitted time.Time // when the job was accepted; older jobs go first
	Index     int
	Shape     Shape
	// OnEvent, if set, receives this partition's events (the job's event log).
	OnEvent func(Event)
}

// Key is the partition's place in the queue. A zero Submitted sorts first in its class.
func (p *Partition) Key() priority.Key {
	var at int64
	if !p.Submitted.IsZero() {
		at = p.Submitted.UnixNano()
	}
	return priority.Key{Class: p.Class, Submitted: at, JobID: p.JobID, Index: p.Index}
}

// EventType names a scheduler event.
type EventType string

// Events of a partition's life.
const (
	EventQueued      EventType = "queued"
	EventAdmitted    EventType = "admitted"     // Tier, Bytes: the plan granted
	EventAllocFailed EventType = "alloc-failed" // the plan hit out-of-memory; a smaller one follows
	EventDone        EventType = "done"
	EventFailed      EventType = "failed"
)

// Event reports a step of a partition. Seq orders events across the scheduler.
type Event struct {
	Type        EventType
	Seq         uint64
	JobID       string
	Kind        string
	Index       int
	Device      int
	Worker      int
	Tier        Tier
	SRSResident bool
	CompactNTT  bool
	Bytes       uint64
	Attempt     int
	// Waited is the time from queueing to this admission (admitted events).
	Waited time.Duration
	// Times is where the partition's time went (done events).
	Times PartitionTimes
	Err   error
}

// Metrics receives the scheduler's measurements; plugin/ adapts it to its metrics registry.
type Metrics interface {
	// PlanGranted counts a plan granted to a partition attempt.
	PlanGranted(device int, kind string, tier Tier, srsResident bool, bytes uint64)
	// AllocFailed counts an out-of-memory that admission did not predict.
	AllocFailed(device int, tier Tier)
	// PinnedFallback counts an upload, or an MSM streaming its SRS points, that used pageable
	// memory because the pinned pool was spent.
	PinnedFallback(bytes uint64)
	// PartitionDone records where a proved partition's time went.
	PartitionDone(device int, kind string, t PartitionTimes)
}

// WorkFunc proves one partition on the device of run with run's plan. It must be restartable:
// after an out-of-memory error it is called again with a smaller plan.
type WorkFunc func(ctx context.Context, run *Run) error

// Config configures a Scheduler.
type Config struct {
	Devices []Device
	// WorkersPerDevice defaults to 2.
	WorkersPerDevice int
	Allocator        AllocatorConfig
	// PinnedBudget bounds page-locked upload buffers and SRS vectors locked in place for
	// streaming; zero means DefaultPinnedBudget.
	PinnedBudget uint64
	// SRSResidency lets plans keep SRS point vectors in VRAM where they fit beside every
	// worker's full plan.
	SRSResidency bool
	Sizer        Sizer
	// ResidentTTL evicts resident vectors no partition has used for this long, so an idle
	// daemon gives its VRAM back; zero means five minutes, negative never.
	ResidentTTL time.Duration
	// MaxOOMRetries bounds unexpected out-of-memory retries per partition; zero means 8.
	MaxOOMRetries int
	Metrics       Metrics
	// OnEvent, if set, receives every partition's events.
	OnEvent func(Event)
	// PlanFilter, if set, narrows the candidate plans of each partition (benchmarks and tests
	// use it to measure one tier); it must leave at least one plan.
	PlanFilter func([]Plan) []Plan
}

// Result describes how a partition ran.
type Result struct {
	Device   int
	Worker   int
	Plan     Plan
	Attempts int
	OOMs     int
	// Times is where the partition's time went: queue, memory, kernel lock.
	Times PartitionTimes
}

// Scheduler runs partitions on GPUs: one queue ordered by Priority, N workers per device,
// each partition pinned to the device of the worker that took it, admission through that
// device's AccountingAllocator and kernels serialized by a per-device lock.
type Scheduler struct {
	cfg     Config
	planner Planner
	devs    []*devState
	pinned  *PinnedPool
	onClose []func() // run by Close (OnClose)
	seq     atomic.Uint64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	qmu    sync.Mutex
	qcond  *sync.Cond
	queue  priority.Queue[*item]
	closed bool
}

type devState struct {
	index   int // position in Config.Devices
	ordinal int
	dev     Device
	alloc   *AccountingAllocator
	kernel  *kernelLock

	mu      sync.Mutex
	workers []WorkerStatus
	tiers   map[string]int
}

// NewScheduler starts a scheduler with its workers.
func NewScheduler(cfg Config) (*Scheduler, error) {
	if len(cfg.Devices) == 0 {
		return nil, errors.New("gpu: scheduler needs at least one device")
	}
	if cfg.WorkersPerDevice <= 0 {
		cfg.WorkersPerDevice = 2
	}
	if cfg.MaxOOMRetries <= 0 {
		cfg.MaxOOMRetries = 8
	}
	s := &Scheduler{cfg: cfg, planner: Planner{Sizer: cfg.Sizer}}
	s.qcond = sync.NewCond(&s.qmu)
	for i, d := range cfg.Devices {
		a, err := NewAccountingAllocator(d, cfg.Allocator)
		if err != nil {
			return nil, err
		}
		ds := &devState{index: i, ordinal: a.ordinal, dev: d, alloc: a, kernel: newKernelLock(),
			workers: make([]WorkerStatus, cfg.WorkersPerDevice), tiers: map[string]int{}}
		for w := range ds.workers {
			ds.workers[w].ID = w
		}
		if ds.ordinal != i {
			log.Debugw("device ordinal differs from its position", "ordinal", ds.ordinal, "position", i)
		}
		s.devs = append(s.devs, ds)
	}
	s.pinned = NewPinnedPool(cfg.Devices[0], cfg.PinnedBudget)
	s.pinned.reserveForWorkers(len(cfg.Devices) * cfg.WorkersPerDevice)
	if cfg.Metrics != nil {
		s.pinned.OnFallback = cfg.Metrics.PinnedFallback
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if cfg.ResidentTTL == 0 {
		s.cfg.ResidentTTL = 5 * time.Minute
	}
	if s.cfg.ResidentTTL > 0 {
		s.wg.Add(1)
		go s.expireResident()
	}
	for _, d := range s.devs {
		for w := range cfg.WorkersPerDevice {
			s.wg.Add(1)
			go s.worker(d, w)
		}
	}
	return s, nil
}

// expireResident evicts resident vectors, and unpins streamed host vectors, idle for
// ResidentTTL until Close.
func (s *Scheduler) expireResident() {
	defer s.wg.Done()
	tick := time.NewTicker(max(s.cfg.ResidentTTL/4, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-tick.C:
			for _, d := range s.devs {
				if n := d.alloc.EvictUnusedSince(now.Add(-s.cfg.ResidentTTL), false); n > 0 {
					log.Infow("evicted idle resident vectors", "device", d.ordinal, "bytes", FormatBytes(n))
				}
			}
			if n := s.pinned.UnpinIdleSince(now.Add(-s.cfg.ResidentTTL)); n > 0 {
				log.Infow("unpinned idle streamed SRS vectors", "bytes", FormatBytes(n))
			}
		}
	}
}

// Devices is the number of devices the scheduler runs partitions on.
func (s *Scheduler) Devices() int { return len(s.devs) }

// Workers is the number of partition workers over all devices.
func (s *Scheduler) Workers() int { return len(s.devs) * s.cfg.WorkersPerDevice }

// Pinned returns the scheduler's pinned host pool.
func (s *Scheduler) Pinned() *PinnedPool { return s.pinned }

// Allocator returns the allocator of the i-th configured device.
func (s *Scheduler) Allocator(i int) *AccountingAllocator { return s.devs[i].alloc }

// Close fails queued partitions, cancels running ones and waits for the workers to stop, then
// evicts resident vectors, frees cached pinned memory and unregisters pinned SRS vectors.
func (s *Scheduler) Close() error {
	s.qmu.Lock()
	if s.closed {
		s.qmu.Unlock()
		return nil
	}
	s.closed = true
	var pending []*item
	for q := s.queue.Pop(); q != nil; q = s.queue.Pop() {
		// Items a worker waits for are finished by that worker once Close cancels it.
		if it := q.Value; it.waitingOn < 0 {
			pending = append(pending, it)
		}
	}
	s.qcond.Broadcast()
	s.qmu.Unlock()
	for _, it := range pending {
		it.finish(Result{}, errClosed)
	}
	s.cancel()
	s.wg.Wait()
	for _, d := range s.devs {
		d.alloc.EvictIdle()
	}
	s.qmu.Lock()
	hooks := s.onClose
	s.onClose = nil
	s.qmu.Unlock()
	for _, fn := range hooks {
		fn()
	}
	s.pinned.Trim()
	return nil
}

// OnClose registers fn to run when the scheduler closes, after its workers stopped (a prover
// built on it removes its hooks there).
func (s *Scheduler) OnClose(fn func()) {
	s.qmu.Lock()
	s.onClose = append(s.onClose, fn)
	s.qmu.Unlock()
}

type item struct {
	ctx      context.Context
	p        *Partition
	work     WorkFunc
	seq      uint64 // the queued event's
	queuedAt time.Time
	// q is the item's queue entry (its key; queued while in the scheduler's queue).
	q *priority.Item[*item]
	// waitingOn is the index of the device whose worker waits for memory for this item while
	// it stays in the heap, so that an idle worker of another device can take it over; -1
	// when no worker holds it. Guarded by the queue lock.
	waitingOn   int
	stealCancel context.CancelFunc
	firstPop    uint64
	firstPopAt  time.Time // when firstPop was taken
	// unfit marks the devices this partition can never fit (guarded by the queue lock).
	unfit map[int]bool
	// announced is closed once the queued event is out; workers wait for it so that one
	// partition's events are never delivered concurrently or out of order.
	announced chan struct{}

	done chan struct{}
	res  Result
	err  error
}

func (it *item) finish(res Result, err error) {
	it.res, it.err = res, err
	close(it.done)
}

func (s *Scheduler) emit(p *Partition, ev Event) {
	ev.JobID, ev.Kind, ev.Index = p.JobID, p.Kind, p.Index
	if ev.Seq == 0 {
		ev.Seq = s.seq.Add(1)
	}
	if s.cfg.OnEvent != nil {
		s.cfg.OnEvent(ev)
	}
	if p.OnEvent != nil {
		p.OnEvent(ev)
	}
}

// Prove queues p and waits until a worker has run work for it. Cancelling ctx removes a
// queued partition and cancels a running one.
func (s *Scheduler) Prove(ctx context.Context, p Partition, work WorkFunc) (Result, error) {
	if work == nil {
		return Result{}, errors.New("gpu: Prove needs a work function")
	}
	it := &item{ctx: ctx, p: &p, work: work, done: make(chan struct{}),
		announced: make(chan struct{}), waitingOn: -1, queuedAt: time.Now()}
	s.qmu.Lock()
	if s.closed {
		s.qmu.Unlock()
		return Result{}, errClosed
	}
	// The sequence number is taken under the queue lock, so events order pushes and pops.
	it.seq = s.seq.Add(1)
	it.q = s.queue.Push(p.Key(), it)
	s.qcond.Signal()
	s.qmu.Unlock()
	s.emit(&p, Event{Type: EventQueued, Seq: it.seq, Device: -1, Worker: -1})
	close(it.announced)

	select {
	case <-it.done:
		return it.res, it.err
	case <-ctx.Done():
	}
	s.qmu.Lock()
	if it.q.Queued() && it.waitingOn < 0 {
		s.queue.Remove(it.q)
		s.qmu.Unlock()
		return Result{}, ctx.Err()
	}
	s.qmu.Unlock()
	// A worker holds it (running, or waiting for memory); its context is ctx, so it stops
	// promptly.
	<-it.done
	return it.res, it.err
}

// popped is a partition a worker took: with a grant already made when it was taken over from
// another device's waiting worker.
type popped struct {
	it    *item
	seq   uint64
	grant *Grant
	idx   int
	plans []Plan
}

// pop takes the best partition for device d, or returns nil once the scheduler is closed.
// Partitions another device's worker waits for are taken over only if d can admit them at
// once, so two starved devices never pass one back and forth. The sequence number is taken
// under the queue lock so that events order pushes and pops.
func (s *Scheduler) pop(d *devState) *popped {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	for {
		if s.closed {
			return nil
		}
		var best *item
		var waiting []*item
		for q := range s.queue.All() {
			switch it := q.Value; {
			case it.unfit[d.index]:
			case it.waitingOn < 0:
				if best == nil || q.Before(best.q) {
					best = it
				}
			case it.waitingOn != d.index:
				waiting = append(waiting, it)
			}
		}
		sort.Slice(waiting, func(i, j int) bool { return waiting[i].q.Before(waiting[j].q) })
		for _, it := range waiting {
			if best != nil && best.q.Before(it.q) {
				break
			}
			plans := s.candidates(d, it.p)
			g, idx, ok := d.alloc.TryAdmit(it.q.Key(), plans)
			if !ok {
				continue
			}
			s.queue.Remove(it.q)
			it.waitingOn = -1
			it.stealCancel()
			it.stealCancel = nil
			log.Debugw("partition taken over by another device",
				"job", it.p.JobID, "partition", it.p.Index, "device", d.ordinal)
			return &popped{it: it, seq: it.firstPop, grant: g, idx: idx, plans: plans}
		}
		if best != nil {
			s.queue.Remove(best.q)
			seq := s.seq.Add(1)
			if best.firstPop == 0 {
				best.firstPop, best.firstPopAt = seq, time.Now()
			}
			return &popped{it: best, seq: best.firstPop}
		}
		s.qcond.Wait()
	}
}

// waitStealable waits for memory on d with the partition back in the queue, where an idle
// worker of another device may take it over. stolen reports that one did: the partition is
// no longer this worker's.
func (s *Scheduler) waitStealable(ctx context.Context, d *devState, it *item, plans []Plan) (g *Grant, idx int, stolen bool, err error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.qmu.Lock()
	if s.closed {
		s.qmu.Unlock()
		return nil, 0, false, errClosed
	}
	it.waitingOn, it.stealCancel = d.index, cancel
	s.queue.Requeue(it.q)
	s.qcond.Broadcast()
	s.qmu.Unlock()

	g, idx, err = d.alloc.Admit(wctx, it.q.Key(), plans)

	s.qmu.Lock()
	owned := it.waitingOn == d.index
	if owned {
		s.queue.Remove(it.q)
		it.waitingOn, it.stealCancel = -1, nil
	}
	s.qmu.Unlock()
	if !owned {
		if g != nil {
			g.Release()
		}
		return nil, 0, true, nil
	}
	return g, idx, false, err
}

// requeueUnfit puts back a partition that can never fit device d, for the other devices; it
// reports false when no device is left to try.
func (s *Scheduler) requeueUnfit(it *item, d *devState) bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if it.unfit == nil {
		it.unfit = map[int]bool{}
	}
	it.unfit[d.index] = true
	if s.closed || len(it.unfit) == len(s.devs) {
		return false
	}
	s.queue.Requeue(it.q)
	s.qcond.Broadcast()
	return true
}

func (s *Scheduler) worker(d *devState, w int) {
	defer s.wg.Done()
	for {
		pp := s.pop(d)
		if pp == nil {
			return
		}
		it := pp.it
		<-it.announced
		ctx, cancel := context.WithCancel(it.ctx)
		stop := context.AfterFunc(s.ctx, cancel)
		res, stolen, err := s.run(ctx, d, w, pp)
		stop()
		cancel()
		d.setWorker(w, WorkerStatus{ID: w})
		if !stolen {
			it.finish(res, err)
		}
	}
}

// GathersOnDevice reports whether the best plan a partition of shape may get on some device
// (its first candidate, plan filter included) has scalar buffers and the density tables, with
// which the device gathers the A and B scalars. The prover gathers them on the host before
// admission otherwise, while other partitions run, rather than in the admitted run.
func (s *Scheduler) GathersOnDevice(shape Shape) bool { return s.bestHas(shape, DensityBuffer) }

// ProductsOnDevice reports whether a partition of shape (with its Circuit set) would compute
// a, b and c on the device, from the witness and the resident matrices: its best plan on some
// device has the products buffer. Otherwise the host computes them before admission.
func (s *Scheduler) ProductsOnDevice(shape Shape) bool {
	return shape.Circuit != "" && s.bestHas(shape, ProductsBuffer)
}

// bestHas reports whether the best plan of shape on some device has scalar buffers and the
// named buffer.
func (s *Scheduler) bestHas(shape Shape, buffer string) bool {
	for _, d := range s.devs {
		plans := s.candidates(d, &Partition{Shape: shape})
		if len(plans) == 0 || !plans[0].ScalarBuffers {
			continue
		}
		if _, ok := plans[0].Buffer(buffer); ok {
			return true
		}
	}
	return false
}

// plannerFor returns the planner for p on d and whether p may keep its SRS in VRAM there:
// only when the SRS and the NTT tables fit beside every worker's full resident arena, so
// residency never starves plans. Wide MSM chunks (a faster but about twice as large full
// resident arena) are used where that still holds for every worker.
func (s *Scheduler) plannerFor(d *devState, p *Partition) (Planner, bool) {
	pl := s.planner
	if !s.cfg.SRSResidency || p.Shape.SRSKey == "" {
		return pl, false
	}
	for _, wide := range []bool{true, false} {
		pl.WideChunks = wide
		full := pl.Plan(p.Shape, TierFull, true)
		need := uint64(s.cfg.WorkersPerDevice) * full.Peak
		for _, r := range full.Resident {
			need += RoundAlloc(r.Bytes)
		}
		if need <= d.alloc.Limit() {
			return pl, true
		}
	}
	pl.WideChunks = false
	return pl, false
}

// candidates are the plans admission may grant p on d, best first.
func (s *Scheduler) candidates(d *devState, p *Partition) []Plan {
	pl, resident := s.plannerFor(d, p)
	plans := pl.Candidates(p.Shape, resident)
	if s.cfg.PlanFilter == nil {
		return s.leaveRoomForWorkers(d, pl, p.Shape, plans)
	}
	// The filter sees every tier, including those Candidates drops for not being smaller.
	if f := s.cfg.PlanFilter(pl.Plans(p.Shape)); len(f) > 0 {
		return f
	}
	return plans
}

// leaveRoomForWorkers drops a streamed full plan that would leave the device's other workers
// less than a partial plan each: admission is greedy, and on a 24 GiB card the first worker's
// full plan (20.0 GiB for a PoRep partition) left the second nothing, 2.58 s per partition on
// the H200, against 2.24 s for two partial plans side by side. Like SRS residency, it is
// decided on the device's limit, so cards with room for both keep the full plan.
func (s *Scheduler) leaveRoomForWorkers(d *devState, pl Planner, shape Shape, plans []Plan) []Plan {
	others := uint64(s.cfg.WorkersPerDevice - 1)
	if others == 0 {
		return plans
	}
	partial := pl.Plan(shape, TierPartial, false).Peak
	limit := d.alloc.Limit()
	out := plans[:0:0]
	for _, p := range plans {
		if p.Tier == TierFull && !p.SRSResident && p.Need()+others*partial > limit {
			continue
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return plans
	}
	return out
}

// planEvent is an event about plan, granted to worker w of d, on attempt.
func planEvent(t EventType, d *devState, w int, plan Plan, attempt int) Event {
	return Event{Type: t, Device: d.ordinal, Worker: w, Tier: plan.Tier, SRSResident: plan.SRSResident,
		CompactNTT: plan.CompactNTT, Bytes: plan.Need(), Attempt: attempt}
}

// run proves one partition on d. stolen reports that the partition is no longer this
// worker's: another device's worker took it over while it waited for memory, or it went back
// to the queue because it can never fit d; the caller then leaves it alone.
func (s *Scheduler) run(ctx context.Context, d *devState, w int, pp *popped) (res Result, stolen bool, err error) {
	it, p := pp.it, pp.it.p
	res = Result{Device: d.ordinal, Worker: w}
	// Queued ends when a worker first took the partition; from then on it waited for memory,
	// here or (taken over, or passed on as unfit) on another device.
	res.Times.Queued = it.firstPopAt.Sub(it.queuedAt)
	res.Times.Memory = time.Since(it.firstPopAt)
	var admitted time.Time
	plans := pp.plans
	if plans == nil {
		plans = s.candidates(d, p)
	}
	first := true
	for {
		res.Attempts++
		var g *Grant
		var idx int
		tAdmit := time.Now()
		switch {
		case first && pp.grant != nil:
			g, idx = pp.grant, pp.idx
		case first && len(s.devs) > 1:
			var ok bool
			if g, idx, ok = d.alloc.TryAdmit(it.q.Key(), plans); !ok {
				d.setWorker(w, busy(w, p))
				if g, idx, stolen, err = s.waitStealable(ctx, d, it, plans); stolen {
					return res, true, nil
				}
			}
		default:
			g, idx, err = d.alloc.Admit(ctx, it.q.Key(), plans)
		}
		var fit *FitError
		if err != nil && first && errors.As(err, &fit) && s.requeueUnfit(it, d) {
			log.Infow("partition cannot fit this device; left to the others", "device", d.ordinal,
				"job", p.JobID, "partition", p.Index, "err", err)
			return res, true, nil
		}
		if err != nil {
			err = fmt.Errorf("admitting %s partition %d of job %s on gpu %d: %w",
				p.Kind, p.Index, p.JobID, d.ordinal, err)
			s.emit(p, Event{Type: EventFailed, Device: d.ordinal, Worker: w, Attempt: res.Attempts, Err: err})
			return res, false, err
		}
		res.Times.Memory += time.Since(tAdmit)
		if admitted.IsZero() {
			admitted = time.Now()
		}
		plan := g.Plan
		res.Plan = plan
		ev := planEvent(EventAdmitted, d, w, plan, res.Attempts)
		ev.Waited = time.Since(it.queuedAt)
		if first {
			// The first admission carries the first pop's sequence number: tests check queue
			// order by it.
			ev.Seq, first = pp.seq, false
		}
		s.emit(p, ev)
		if s.cfg.Metrics != nil {
			s.cfg.Metrics.PlanGranted(d.ordinal, p.Kind, plan.Tier, plan.SRSResident, plan.Need())
		}
		d.grant(w, p, plan)

		err = g.Prepare()
		if err == nil {
			run := &Run{Partition: p, Device: d.dev, Ordinal: d.ordinal, Plan: plan,
				Attempt: res.Attempts, Pinned: s.pinned, grant: g, kernel: d.kernel}
			err = callWork(ctx, it.work, run)
			if run.releaseHold() {
				log.Warnw("work function returned holding the kernel lock; released it", "device", d.ordinal,
					"job", p.JobID, "partition", p.Index)
			}
			res.Times.KernelWait += run.kernelWait
			res.Times.Kernels += run.kernelHeld
		}
		g.Release()
		d.setWorker(w, busy(w, p))
		if err == nil {
			res.Times.Run = time.Since(admitted)
			d.kernel.finished(res.Times)
			if s.cfg.Metrics != nil {
				s.cfg.Metrics.PartitionDone(d.ordinal, p.Kind, res.Times)
			}
			ev := planEvent(EventDone, d, w, plan, res.Attempts)
			ev.Times = res.Times
			s.emit(p, ev)
			return res, false, nil
		}
		if !IsOutOfMemory(err) || ctx.Err() != nil {
			if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
				// Cancelled while failing: the caller must see the cancellation.
				err = fmt.Errorf("%w: %w", cerr, err)
			}
			err = fmt.Errorf("%s partition %d of job %s on gpu %d: %w", p.Kind, p.Index, p.JobID, d.ordinal, err)
			s.emit(p, Event{Type: EventFailed, Device: d.ordinal, Worker: w, Tier: plan.Tier,
				Attempt: res.Attempts, Err: err})
			return res, false, err
		}
		res.OOMs++
		log.Warnw("unexpected gpu out-of-memory; retrying with a smaller plan", "device", d.ordinal,
			"job", p.JobID, "partition", p.Index, "plan", plan.String(), "err", err)
		d.alloc.NoteOutOfMemory()
		if s.cfg.Metrics != nil {
			s.cfg.Metrics.AllocFailed(d.ordinal, plan.Tier)
		}
		ev = planEvent(EventAllocFailed, d, w, plan, res.Attempts)
		ev.Err = err
		s.emit(p, ev)
		if res.OOMs > s.cfg.MaxOOMRetries {
			err = fmt.Errorf("%s partition %d of job %s on gpu %d: giving up after %d out-of-memory retries: %w",
				p.Kind, p.Index, p.JobID, d.ordinal, res.OOMs-1, err)
			s.emit(p, Event{Type: EventFailed, Device: d.ordinal, Worker: w, Tier: plan.Tier,
				Attempt: res.Attempts, Err: err})
			return res, false, err
		}
		if idx+1 < len(plans) {
			plans = plans[idx+1:]
		} else {
			plans = plans[len(plans)-1:]
		}
	}
}

// callWork runs a WorkFunc, turning a panic into an error so that one bad partition cannot
// take the daemon down; the grant is released by the caller either way.
func callWork(ctx context.Context, work WorkFunc, run *Run) (err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Errorw("gpu partition work panicked", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("gpu: partition work panicked: %v", r)
		}
	}()
	return work(ctx, run)
}

func busy(w int, p *Partition) WorkerStatus {
	return WorkerStatus{ID: w, Busy: true, JobID: p.JobID, Kind: p.Kind, Index: p.Index}
}

func (d *devState) grant(w int, p *Partition, plan Plan) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.workers[w] = WorkerStatus{ID: w, Busy: true, JobID: p.JobID, Kind: p.Kind, Index: p.Index,
		Tier: plan.Tier.String(), SRSResident: plan.SRSResident, CompactNTT: plan.CompactNTT, Bytes: plan.Need()}
	d.tiers[plan.Tier.String()]++
}

func (d *devState) setWorker(w int, st WorkerStatus) {
	d.mu.Lock()
	d.workers[w] = st
	d.mu.Unlock()
}

// Run is what a WorkFunc gets: the partition, its device and the granted plan's memory.
type Run struct {
	Partition *Partition
	Device    Device
	Ordinal   int
	Plan      Plan
	// Attempt counts from 1; it grows after each out-of-memory retry.
	Attempt int
	Pinned  *PinnedPool
	grant   *Grant
	kernel  *kernelLock
	held    bool // HoldKernels holds the kernel lock for this run
	// kernelWait and kernelHeld add up this run's waits for the kernel lock and its holds.
	kernelWait, kernelHeld time.Duration
}

// Buffer returns the device address and size of one of the plan's arena buffers.
func (r *Run) Buffer(name string) (DevicePtr, uint64, error) { return r.grant.Buffer(name) }

// Memory returns a Region over one of the plan's arena buffers, for kernel bindings that
// allocate their own scratch (an NTT domain's tables, MSM workspace).
func (r *Run) Memory(name string) (*Region, error) {
	p, size, err := r.grant.Buffer(name)
	if err != nil {
		return nil, err
	}
	return NewRegion(p, size), nil
}

// Resident returns one of the plan's resident vectors (NTT tables, SRS points).
func (r *Run) Resident(key string) (*ResidentVector, error) { return r.grant.Resident(key) }

// Kernel runs fn under the device's kernel lock. Hold it only around kernel work: uploads and
// CPU work of one partition overlap another's kernels.
func (r *Run) Kernel(ctx context.Context, name string, fn func() error) error {
	if r.held {
		return r.Device.Launch(ctx, name, fn)
	}
	waited, err := r.kernel.acquire(ctx)
	r.kernelWait += waited
	if err != nil {
		return err
	}
	defer func() { r.kernelHeld += r.kernel.release() }()
	return r.Device.Launch(ctx, name, fn)
}

// HoldKernels takes the device's kernel lock until release is called, or the work function
// returns (release is idempotent; while held, another HoldKernels returns a release that does
// nothing); this run's Kernel calls in between do not queue for it again. For a partition whose inputs
// are all on the device: its kernels then run as one block while the other workers upload,
// instead of alternating with theirs kernel by kernel, which keeps the workers in step and
// makes them upload at the same time, the device idle. A Run is used by one goroutine.
func (r *Run) HoldKernels(ctx context.Context) (release func(), err error) {
	if r.held {
		return func() {}, nil
	}
	waited, err := r.kernel.acquire(ctx)
	r.kernelWait += waited
	if err != nil {
		return nil, err
	}
	r.held = true
	released := false
	return func() {
		if !released {
			released = true
			r.releaseHold()
		}
	}, nil
}

// releaseHold gives back the lock HoldKernels took, if it is still held. The scheduler calls it
// after every work function, so one that returns (or panics) holding the lock cannot stop the
// device's other workers for good.
func (r *Run) releaseHold() bool {
	if !r.held {
		return false
	}
	r.held = false
	r.kernelHeld += r.kernel.release()
	return true
}

// Upload copies src into device memory at dst.
func (r *Run) Upload(ctx context.Context, dst DevicePtr, src HostMem) error {
	return r.Device.CopyToDevice(ctx, dst, src)
}

// UploadAsync starts copying src into device memory at dst on the device's copy stream. src
// must stay unchanged until the Pending's Wait returned, and a kernel that reads dst must Wait
// first: the kernels run on streams that are not ordered with the copy stream.
func (r *Run) UploadAsync(ctx context.Context, dst DevicePtr, src HostMem) (Pending, error) {
	return r.Device.CopyToDeviceAsync(ctx, dst, src)
}

// Status is a snapshot for `snarkd status`.
type Status struct {
	// Queued counts partitions in the queue; with several devices that includes those a worker
	// waits for memory for (DeviceStatus.Memory.Waiting counts every waiting partition).
	Queued  int            `json:"queued"`
	Devices []DeviceStatus `json:"devices"`
	Pinned  PinnedStats    `json:"pinned"`
}

// DeviceStatus is one device's reservations, tiers and workers.
type DeviceStatus struct {
	Info    DeviceInfo     `json:"info"`
	Memory  AllocatorStats `json:"memory"`
	Workers []WorkerStatus `json:"workers"`
	// Tiers counts the plans granted per tier since start.
	Tiers map[string]int `json:"tiers"`
	// Busy is the time the device's kernels ran, and where recent partitions waited.
	Busy BusyStats `json:"busy"`
}

// WorkerStatus is what one worker is doing.
type WorkerStatus struct {
	ID          int    `json:"id"`
	Busy        bool   `json:"busy"`
	JobID       string `json:"job_id,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Index       int    `json:"index"`
	Tier        string `json:"tier,omitempty"`
	SRSResident bool   `json:"srs_resident,omitempty"`
	CompactNTT  bool   `json:"compact_ntt,omitempty"`
	Bytes       uint64 `json:"bytes,omitempty"`
}

// Status reports the queue, each device's books, workers and tiers, and the pinned pool.
func (s *Scheduler) Status() Status {
	s.qmu.Lock()
	st := Status{Queued: s.queue.Len()}
	s.qmu.Unlock()
	for _, d := range s.devs {
		d.mu.Lock()
		ds := DeviceStatus{Info: d.dev.Info(), Memory: d.alloc.Stats(),
			Workers: append([]WorkerStatus(nil), d.workers...), Tiers: map[string]int{}, Busy: d.kernel.stats()}
		for k, v := range d.tiers {
			ds.Tiers[k] = v
		}
		d.mu.Unlock()
		st.Devices = append(st.Devices, ds)
	}
	st.Pinned = s.pinned.Stats()
	return st
}
