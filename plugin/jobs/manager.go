// Package jobs is the daemon's job manager: a priority queue of proof jobs (WinningPoSt before
// WindowPoSt before sealing proofs, oldest first), idempotent request IDs, per-job cancellation,
// progress events, and a journal that keeps every accepted job and result across restarts.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/plugin/journal"
	"github.com/snarkd/snarkd/priority"
	"github.com/snarkd/snarkd/rpcapi"
)

var log = logging.Logger("snarkd/jobs")

// Stage is a step of the proving pipeline reported through Report.
type Stage = rpcapi.EventType

// Report is how a Runner tells the manager where a job is.
type Report func(stage Stage, partition, partitions int, detail ...string)

// Output is what a Runner produced for one job.
type Output struct {
	Proof       []byte
	SRSLoadMs   uint64
	SynthesisMs uint64
	ProveMs     uint64
	VerifyMs    uint64
	// GPUs are the ordinals of the GPUs that proved the job (none on the CPU).
	GPUs []int
}

// Task is one job as the manager hands it to its Runner: the job's ID and submission time
// (the GPU scheduler names partitions by job and serves older jobs first), its request, and
// what validation decoded of it (Decode), so that it is not decoded again.
type Task struct {
	ID        rpcapi.JobID
	Submitted time.Time
	Request   rpcapi.ProofRequest
	Decoded   *Decoded
}

// Runner computes proofs. Supports answers nil or *rpcapi.ErrNotSupportedYet.
type Runner interface {
	Supports(kind rpcapi.ProofKind) error
	// Run proves t's request, reporting progress to report.
	Run(ctx context.Context, t Task, report Report) (Output, error)
}

// Config tunes the manager.
type Config struct {
	// Workers is how many jobs run at once; one more worker runs only WinningPoSt and
	// WindowPoSt jobs.
	Workers int
	// MaxPending bounds jobs queued or running; Submit answers ErrQueueFull beyond it.
	MaxPending int
	// Retention is how long final jobs (and delivered Lotus results) are kept.
	Retention time.Duration
	// RestartError is the message Lotus calls in flight at a restart fail with (code 101).
	RestartError string
	// Observer, if set, hears the jobs that start and become final in this process (metrics).
	Observer Observer
	// DrainLogEvery is how often Drain logs its progress (default 30 s).
	DrainLogEvery time.Duration
}

// Observer hears job transitions; its methods are called outside the manager's lock and must
// return quickly.
type Observer interface {
	// JobStarted: a worker took the job (Started and Timings.QueueWaitMs are set).
	JobStarted(job rpcapi.Job)
	// JobFinished: the job became final (done, failed or cancelled).
	JobFinished(job rpcapi.Job)
}

// Manager owns the queue and the workers. Create it with Open; stop it with Close.
type Manager struct {
	cfg    Config
	j      *journal.Journal
	runner Runner

	mu    sync.Mutex
	jobs  map[rpcapi.JobID]*entry
	byReq map[string]*entry
	queue priority.Queue[*entry]
	// decodedQueued counts queued entries that keep their decoded request (at most
	// MaxDecodedQueued).
	decodedQueued int
	wake          chan struct{}
	wakePoSt      chan struct{}
	pending       int
	closing       bool
	hooks         []func(rpcapi.Job)
	busy          map[rpcapi.JobID]bool
	// drain is set once StartDrain is called: workers take nothing more from the queue.
	drain *drainState
	// idle is closed (and replaced) whenever a job stops running, for Drain to wait on.
	idle chan struct{}

	events *broker
	stats  Stats

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// hookWG counts hook calls in flight; once hooksClosed (Close), no more start.
	hookMu      sync.Mutex
	hookWG      sync.WaitGroup
	hooksClosed bool
}

// Stats are cumulative counters since start, for /metrics and Status.
type Stats struct {
	Submitted map[rpcapi.ProofKind]uint64
	Completed map[rpcapi.ProofKind]uint64
	Failed    map[rpcapi.ProofKind]uint64
	Cancelled map[rpcapi.ProofKind]uint64
	Rejected  uint64
	ProofNs   map[rpcapi.ProofKind]uint64
}

type entry struct {
	rec journal.Record
	// q is the job's place in the queue while it is queued (nil before its first push).
	q *priority.Item[*entry]
	// decoded is what validation decoded at submission, handed to the runner once; nil for
	// deferred submissions and for jobs queued again at a restart (decoded when they run).
	decoded  *Decoded
	done     chan struct{}
	cancel   context.CancelFunc
	cancelBy bool // Cancel was called
	// handBack: a drain ran out of grace while the job ran; its interruption is not a verdict.
	handBack bool
}

// Open loads the journal and starts the workers. Jobs that were running or queued when the
// daemon stopped are queued again, except Lotus calls, which fail with code 101 for the miner.
func Open(j *journal.Journal, runner Runner, cfg Config) (*Manager, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = 1024
	}
	if cfg.RestartError == "" {
		cfg.RestartError = "worker restarted"
	}
	if cfg.DrainLogEvery <= 0 {
		cfg.DrainLogEvery = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		cfg: cfg, j: j, runner: runner,
		jobs: map[rpcapi.JobID]*entry{}, byReq: map[string]*entry{},
		wake: make(chan struct{}, 1), wakePoSt: make(chan struct{}, 1), busy: map[rpcapi.JobID]bool{},
		idle:   make(chan struct{}),
		events: newBroker(),
		stats: Stats{
			Submitted: map[rpcapi.ProofKind]uint64{}, Completed: map[rpcapi.ProofKind]uint64{},
			Failed: map[rpcapi.ProofKind]uint64{}, Cancelled: map[rpcapi.ProofKind]uint64{},
			ProofNs: map[rpcapi.ProofKind]uint64{},
		},
		ctx: ctx, cancel: cancel,
	}
	recs, err := j.All()
	if err != nil {
		cancel()
		return nil, err
	}
	sort.Slice(recs, func(a, b int) bool { return recs[a].Job.Submitted.Before(recs[b].Job.Submitted) })
	now := time.Now()
	for _, r := range recs {
		e := &entry{rec: r, done: make(chan struct{})}
		switch {
		case r.Job.State.Final():
			close(e.done)
		case r.Job.Origin == rpcapi.OriginLotus:
			// The miner's call tracker waits for this call; tell it to reschedule (Lotus does the same).
			e.rec.Job.State = rpcapi.JobFailed
			e.rec.Job.Error = cfg.RestartError
			e.rec.Job.ErrorCode = rpcapi.ErrTempWorkerRestart
			e.rec.Job.Finished = now
			e.rec.Job.Stage = ""
			if err := j.Update(e.rec, nil); err != nil {
				cancel()
				return nil, err
			}
			close(e.done)
			log.Infow("Lotus call in flight at restart; reporting code 101", "job", r.Job.ID, "call", r.Job.CallID)
		default:
			if r.Job.State == rpcapi.JobRunning {
				log.Infow("re-queueing job that was running at restart", "job", r.Job.ID)
			}
			e.rec.Job.State = rpcapi.JobQueued
			e.rec.Job.PartitionsDone = 0
			e.rec.Job.Stage = ""
			if err := j.Update(e.rec, nil); err != nil {
				cancel()
				return nil, err
			}
			m.push(e)
			m.pending++
		}
		m.jobs[r.Job.ID] = e
		if r.Job.RequestID != "" {
			m.byReq[r.Job.RequestID] = e
		}
	}
	// The journal's bindings decide which job a request ID names: a job superseded by a retry
	// or a redo keeps the ID in its record, and the clock (Submitted) is no proof of which came
	// last. A request ID without a binding (a journal repaired without them) keeps the newest.
	bound, err := j.RequestIDs()
	if err != nil {
		cancel()
		return nil, err
	}
	for reqID, id := range bound {
		if e, ok := m.jobs[id]; ok && e.rec.Job.RequestID == reqID {
			m.byReq[reqID] = e
		}
	}
	for i := 0; i < cfg.Workers; i++ {
		m.wg.Add(1)
		go m.worker(false)
	}
	// One more worker runs only PoSt jobs, so that a WinningPoSt or WindowPoSt never waits for
	// whole seal jobs to finish: inside the prover, partitions are admitted by priority.
	m.wg.Add(1)
	go m.worker(true)
	if cfg.Retention > 0 {
		m.wg.Add(1)
		go m.pruneLoop()
	}
	m.signal()
	return m, nil
}

// OnFinal registers a function called (in its own goroutine) for every job that becomes final,
// and at once for each final job already in the journal. Lotus delivery uses it. fn should not
// block for long: Close waits for the calls in flight, and makes no new ones.
func (m *Manager) OnFinal(fn func(rpcapi.Job)) {
	m.mu.Lock()
	m.hooks = append(m.hooks, fn)
	var final []rpcapi.Job
	for _, e := range m.jobs {
		if e.rec.Job.State.Final() {
			final = append(final, e.rec.Job)
		}
	}
	m.mu.Unlock()
	for _, job := range final {
		m.runHook(fn, job)
	}
}

// runHook calls fn(job) on a goroutine Close waits for; after Close it does nothing (a final job
// stays in the journal, and the next start calls the hooks for it again).
func (m *Manager) runHook(fn func(rpcapi.Job), job rpcapi.Job) {
	m.hookMu.Lock()
	defer m.hookMu.Unlock()
	if m.hooksClosed {
		return
	}
	m.hookWG.Add(1)
	go func() {
		defer m.hookWG.Done()
		fn(job)
	}()
}

// Close stops the workers. Running jobs are interrupted but stay "running" in the journal, so
// the next Open queues them again.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closing = true
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
	m.hookMu.Lock()
	m.hooksClosed = true
	m.hookMu.Unlock()
	m.hookWG.Wait()
	m.events.close()
}

func (m *Manager) signal() {
	// The PoSt worker has its own channel: were it to take the one wake-up meant for a seal
	// job, no general worker would start it.
	for _, ch := range []chan struct{}{m.wake, m.wakePoSt} {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// SubmitOpts describe where a submission comes from.
type SubmitOpts struct {
	Origin rpcapi.JobOrigin
	CallID *rpcapi.CallID
	// Deferred queues the request even when it is invalid or of a kind the runner does not
	// support: the error becomes the job's failure. Lotus calls need this, since the miner
	// expects a CallID at once and the verdict through Return*, as a lotus-worker gives it.
	Deferred bool
	// TestQuota bounds a test request (CheckTestQuota); nil leaves only Validate's bounds.
	TestQuota *TestQuota
}

// Submit validates, journals and queues a request. A known RequestID with the same content
// returns the existing job; with different content it fails with *rpcapi.ErrRequestConflict.
// The ID of a job that failed or was cancelled is free again: submitting it (with any content)
// queues a new job under it, as a client's retry after a failure expects (Curio's IDs name the
// sector, not the inputs), and the old job stays readable by its job ID until Retention prunes
// it. Through a front door that RedoesDone (the cuzk API), the ID of a done job is free for
// different content in the same way. SubmitResult.Replaces names the job whose ID was taken.
// A job still queued or running keeps its ID: different content under it is always a conflict.
func (m *Manager) Submit(req rpcapi.ProofRequest, opts SubmitOpts) (rpcapi.SubmitResult, error) {
	var dec *Decoded
	if !opts.Deferred {
		var err error
		if dec, err = Decode(&req); err != nil {
			m.reject()
			return rpcapi.SubmitResult{}, err
		}
		if err := CheckTestQuota(&req, opts.TestQuota); err != nil {
			m.reject()
			return rpcapi.SubmitResult{}, err
		}
		if err := m.runner.Supports(req.Kind); err != nil {
			m.reject()
			return rpcapi.SubmitResult{}, err
		}
	}
	hash, err := ContentHash(req)
	if err != nil {
		return rpcapi.SubmitResult{}, err
	}
	if opts.Origin == "" {
		opts.Origin = rpcapi.OriginNative
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return rpcapi.SubmitResult{}, &rpcapi.ErrShuttingDown{}
	}
	// retried is the finished job whose request ID this submission takes over: failed or
	// cancelled (a retry), or done with other content through a front door that RedoesDone.
	var retried *entry
	if req.RequestID != "" {
		if e, ok := m.byReq[req.RequestID]; ok {
			switch st := e.rec.Job.State; {
			case Retryable(st):
				retried = e
			case e.rec.Hash == hash:
				return rpcapi.SubmitResult{JobID: e.rec.Job.ID, State: st, Existing: true, QueuePosition: m.position(e)}, nil
			case st == rpcapi.JobDone && RedoesDone(opts.Origin):
				retried = e
			default:
				m.stats.Rejected++
				return rpcapi.SubmitResult{}, &rpcapi.ErrRequestConflict{RequestID: req.RequestID, JobID: e.rec.Job.ID, State: st}
			}
		}
	}
	if m.drain != nil {
		// An existing job's ID was answered above (that takes no work); anything new waits
		// for the next start or goes to another prover.
		m.stats.Rejected++
		return rpcapi.SubmitResult{}, &rpcapi.ErrDraining{Until: m.drain.until}
	}
	if m.pending >= m.cfg.MaxPending {
		m.stats.Rejected++
		return rpcapi.SubmitResult{}, &rpcapi.ErrQueueFull{Limit: m.cfg.MaxPending}
	}
	prio := rpcapi.DefaultPriority(req.Kind)
	if req.Priority != nil {
		prio = *req.Priority
	}
	job := rpcapi.Job{
		ID: rpcapi.JobID(uuid.New().String()), RequestID: req.RequestID, Kind: req.Kind,
		Priority: prio, Origin: opts.Origin, State: rpcapi.JobQueued, Partitions: Partitions(&req),
		Submitted: time.Now(), CallID: opts.CallID,
	}
	rec := journal.Record{Job: job, Hash: hash}
	var replaces rpcapi.JobID
	if retried != nil {
		replaces = retried.rec.Job.ID
	}
	// One transaction stores the new job and binds the request ID to it: after a crash the
	// journal has either the old binding and no new job, or both, and Open follows the binding.
	if _, ok, err := m.j.CreateReplacing(rec, req, replaces); err != nil {
		return rpcapi.SubmitResult{}, err
	} else if !ok {
		// The index in memory mirrors the journal; a mismatch means a bug, not a client error.
		return rpcapi.SubmitResult{}, fmt.Errorf("request ID %q in journal but not in memory", req.RequestID)
	}
	// The first jobs of a backlog keep what validation decoded (a 32 GiB C1 output decodes to
	// about 6 MB); later ones decode it again when they run.
	if dec != nil && m.decodedQueued >= MaxDecodedQueued {
		dec = nil
	}
	if dec != nil {
		m.decodedQueued++
	}
	e := &entry{rec: rec, decoded: dec, done: make(chan struct{})}
	m.jobs[job.ID] = e
	if req.RequestID != "" {
		m.byReq[req.RequestID] = e
	}
	m.push(e)
	m.pending++
	m.stats.Submitted[req.Kind]++
	switch {
	case retried == nil:
	case retried.rec.Job.State == rpcapi.JobDone:
		log.Infow("request ID of a done job submitted with new content: proving it anew; the done job is superseded",
			"request", req.RequestID, "origin", opts.Origin, "job", job.ID, "previous", retried.rec.Job.ID)
	default:
		log.Infow("request ID of a failed or cancelled job submitted again: proving it anew", "request", req.RequestID,
			"job", job.ID, "previous", retried.rec.Job.ID, "previous_state", retried.rec.Job.State, "previous_error", retried.rec.Job.Error)
	}
	m.events.publish(m.event(e, rpcapi.EventQueued, 0))
	m.signal()
	return rpcapi.SubmitResult{JobID: job.ID, State: rpcapi.JobQueued, QueuePosition: m.position(e), Replaces: replaces}, nil
}

func (m *Manager) reject() {
	m.mu.Lock()
	m.stats.Rejected++
	m.mu.Unlock()
}

// position counts queued jobs ahead of e; callers hold m.mu.
func (m *Manager) position(e *entry) int {
	if !e.queued() {
		return 0
	}
	return m.queue.Ahead(e.q)
}

// push queues e at its job's priority and submission time; callers hold m.mu.
func (m *Manager) push(e *entry) {
	e.q = m.queue.Push(priority.Key{Class: e.rec.Job.Priority, Submitted: e.rec.Job.Submitted.UnixNano()}, e)
}

// MaxDecodedQueued is how many queued jobs keep their decoded request for the runner; the rest
// decode it again when they run.
const MaxDecodedQueued = 16

// takeDecoded hands over e's decoded request (nil when it kept none); callers hold m.mu.
func (e *entry) takeDecoded(m *Manager) *Decoded {
	dec := e.decoded
	if dec != nil {
		e.decoded = nil
		m.decodedQueued--
	}
	return dec
}

// queued reports whether e waits in the queue.
func (e *entry) queued() bool { return e.q != nil && e.q.Queued() }

func (m *Manager) event(e *entry, typ rpcapi.EventType, partition int) rpcapi.JobEvent {
	now := time.Now()
	since := e.rec.Job.Submitted
	if !e.rec.Job.Started.IsZero() {
		since = e.rec.Job.Started
	}
	ev := rpcapi.JobEvent{
		JobID: e.rec.Job.ID, RequestID: e.rec.Job.RequestID, Kind: e.rec.Job.Kind, Type: typ,
		Partition: partition, Partitions: e.rec.Job.Partitions, Time: now,
		ElapsedMs: uint64(now.Sub(since).Milliseconds()),
	}
	if typ == rpcapi.EventFailed {
		ev.Error = e.rec.Job.Error
	}
	return ev
}

// worker runs queued jobs, best first, until the manager closes; a postOnly worker takes only
// jobs of a PoSt class.
func (m *Manager) worker(postOnly bool) {
	defer m.wg.Done()
	for {
		m.mu.Lock()
		var e *entry
		if top := m.queue.Peek(); !m.closing && m.drain == nil && top != nil && (!postOnly || top.Key().Class < rpcapi.PrioritySeal) {
			e = m.queue.Pop().Value
			// Busy from here, not from run: a drain must not miss a job between the two.
			m.busy[e.rec.Job.ID] = true
		}
		m.mu.Unlock()
		if e == nil {
			wake := m.wake
			if postOnly {
				wake = m.wakePoSt
			}
			select {
			case <-m.ctx.Done():
				return
			case <-wake:
				continue
			}
		}
		m.run(e)
		m.signal() // another worker may be waiting for the item we skipped past
	}
}

func (m *Manager) run(e *entry) {
	ctx, cancel := context.WithCancel(m.ctx)
	defer cancel()
	m.mu.Lock()
	e.cancel = cancel
	e.rec.Job.State = rpcapi.JobRunning
	e.rec.Job.Stage = rpcapi.EventStarted
	e.rec.Job.Started = time.Now()
	e.rec.Job.Timings.QueueWaitMs = uint64(e.rec.Job.Started.Sub(e.rec.Job.Submitted).Milliseconds())
	m.busy[e.rec.Job.ID] = true
	if e.cancelBy || e.handBack {
		cancel() // cancelled or handed back between leaving the queue and starting
	}
	rec := e.rec
	dec := e.takeDecoded(m)
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.busy, e.rec.Job.ID)
		close(m.idle)
		m.idle = make(chan struct{})
		m.mu.Unlock()
	}()
	if err := m.j.Update(rec, nil); err != nil {
		log.Errorw("journaling job start", "job", rec.Job.ID, "err", err)
	}
	m.events.publish(m.event(e, rpcapi.EventStarted, 0))
	if m.cfg.Observer != nil {
		m.cfg.Observer.JobStarted(rec.Job)
	}

	var (
		out    Output
		runErr error
	)
	req, err := m.j.Request(rec.Job.ID)
	if err == nil && dec == nil {
		// Deferred submissions were not validated yet; jobs queued again at a restart lost
		// what was decoded.
		dec, err = Decode(&req)
	}
	if err != nil {
		runErr = err
	} else {
		t := Task{ID: rec.Job.ID, Submitted: rec.Job.Submitted, Request: req, Decoded: dec}
		out, runErr = m.safeRun(ctx, t, func(stage Stage, partition, partitions int, detail ...string) {
			m.mu.Lock()
			if partitions > 0 {
				e.rec.Job.Partitions = partitions
			}
			if stage == rpcapi.EventVerifying || stage == rpcapi.EventAggregating || (stage == rpcapi.EventProving && partition > e.rec.Job.PartitionsDone) {
				e.rec.Job.PartitionsDone = partition
			}
			e.rec.Job.Stage = stage
			ev := m.event(e, stage, partition)
			ev.Detail = strings.Join(detail, "; ")
			m.mu.Unlock()
			m.events.publish(ev)
		})
	}

	m.mu.Lock()
	if e.handBack && !e.cancelBy && runErr != nil {
		m.handBackLocked(e) // unlocks
		return
	}
	if m.closing && !e.cancelBy && runErr != nil {
		// Interrupted by shutdown, not a verdict on the job: it stays "running" in the journal
		// and is re-queued at the next start. A proof that made it is still recorded below.
		m.mu.Unlock()
		return
	}
	job := &e.rec.Job
	job.Finished = time.Now()
	job.Stage = ""
	job.Timings.SynthesisMs, job.Timings.ProveMs, job.Timings.VerifyMs = out.SynthesisMs, out.ProveMs, out.VerifyMs
	job.Timings.SRSLoadMs, job.GPUs = out.SRSLoadMs, out.GPUs
	job.Timings.TotalMs = uint64(job.Finished.Sub(job.Submitted).Milliseconds())
	var proof []byte
	typ := rpcapi.EventDone
	switch {
	case e.cancelBy:
		job.State, job.Error, typ = rpcapi.JobCancelled, "cancelled", rpcapi.EventCancelled
		m.stats.Cancelled[job.Kind]++
	case runErr != nil:
		job.State, job.Error, typ = rpcapi.JobFailed, runErr.Error(), rpcapi.EventFailed
		m.stats.Failed[job.Kind]++
	default:
		job.State, proof = rpcapi.JobDone, out.Proof
		job.PartitionsDone = job.Partitions
		m.stats.Completed[job.Kind]++
		m.stats.ProofNs[job.Kind] += uint64(job.Finished.Sub(job.Started).Nanoseconds())
	}
	rec = e.rec
	m.pending--
	m.mu.Unlock()
	if err := m.j.Update(rec, proof); err != nil {
		log.Errorw("journaling job result", "job", rec.Job.ID, "err", err)
	}
	m.finish(e, typ)
}

// safeRun keeps a panicking prover from taking the daemon down with it.
func (m *Manager) safeRun(ctx context.Context, t Task, report Report) (out Output, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("prover panicked: %v", r)
			log.Errorw("prover panic", "job", t.ID, "kind", t.Request.Kind, "panic", r)
		}
	}()
	return m.runner.Run(ctx, t, report)
}

func (m *Manager) finish(e *entry, typ rpcapi.EventType) {
	m.mu.Lock()
	ev := m.event(e, typ, e.rec.Job.PartitionsDone)
	job := e.rec.Job
	hooks := append([]func(rpcapi.Job){}, m.hooks...)
	close(e.done)
	m.mu.Unlock()
	m.events.publish(ev)
	if m.cfg.Observer != nil {
		m.cfg.Observer.JobFinished(job)
	}
	for _, h := range hooks {
		m.runHook(h, job)
	}
}

// Cancel stops a job. It reports whether the job was running; a final job is left alone.
func (m *Manager) Cancel(id rpcapi.JobID) (bool, error) {
	m.mu.Lock()
	e, ok := m.jobs[id]
	if !ok {
		m.mu.Unlock()
		return false, &rpcapi.ErrJobNotFound{JobID: id}
	}
	switch {
	case e.rec.Job.State.Final():
		m.mu.Unlock()
		return false, nil
	case e.queued():
		m.queue.Remove(e.q)
		e.takeDecoded(m)
		e.cancelBy = true
		e.rec.Job.State, e.rec.Job.Error = rpcapi.JobCancelled, "cancelled"
		e.rec.Job.Finished = time.Now()
		m.stats.Cancelled[e.rec.Job.Kind]++
		m.pending--
		rec := e.rec
		m.mu.Unlock()
		if err := m.j.Update(rec, nil); err != nil {
			return false, err
		}
		m.finish(e, rpcapi.EventCancelled)
		return false, nil
	default:
		e.cancelBy = true
		if e.cancel != nil {
			e.cancel()
		}
		m.mu.Unlock()
		return true, nil
	}
}

// Get returns a job.
func (m *Manager) Get(id rpcapi.JobID) (rpcapi.Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.jobs[id]
	if !ok {
		return rpcapi.Job{}, &rpcapi.ErrJobNotFound{JobID: id}
	}
	return e.rec.Job, nil
}

// Await waits until the job is final and returns it with its proof.
func (m *Manager) Await(ctx context.Context, id rpcapi.JobID) (rpcapi.JobResult, error) {
	m.mu.Lock()
	e, ok := m.jobs[id]
	m.mu.Unlock()
	if !ok {
		return rpcapi.JobResult{}, &rpcapi.ErrJobNotFound{JobID: id}
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		return rpcapi.JobResult{}, fmt.Errorf("awaiting job %s: %w", id, ctx.Err())
	case <-m.ctx.Done():
		return rpcapi.JobResult{}, &rpcapi.ErrShuttingDown{}
	}
	job, err := m.Get(id)
	if err != nil {
		return rpcapi.JobResult{}, err
	}
	res := rpcapi.JobResult{Job: job}
	if job.State == rpcapi.JobDone {
		if res.Proof, err = m.j.Proof(id); err != nil {
			return res, fmt.Errorf("reading proof of job %s: %w", id, err)
		}
	}
	return res, nil
}

// Jobs lists jobs matching f, newest first.
func (m *Manager) Jobs(f rpcapi.JobFilter) []rpcapi.Job {
	m.mu.Lock()
	out := make([]rpcapi.Job, 0, len(m.jobs))
	for _, e := range m.jobs {
		if Match(f, e.rec.Job.ID, e.rec.Job.Kind, e.rec.Job.State) {
			out = append(out, e.rec.Job)
		}
	}
	m.mu.Unlock()
	sort.Slice(out, func(a, b int) bool { return out[a].Submitted.After(out[b].Submitted) })
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Match applies a filter to one job.
func Match(f rpcapi.JobFilter, id rpcapi.JobID, kind rpcapi.ProofKind, state rpcapi.JobState) bool {
	if len(f.JobIDs) > 0 && !contains(f.JobIDs, id) {
		return false
	}
	if len(f.Kinds) > 0 && !contains(f.Kinds, kind) {
		return false
	}
	if len(f.States) > 0 && !contains(f.States, state) {
		return false
	}
	return true
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Undelivered counts the final Lotus calls whose result the miner has not taken yet (all of
// them: Jobs lists at most a page).
func (m *Manager) Undelivered() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, e := range m.jobs {
		j := &e.rec.Job
		if j.State.Final() && j.Origin == rpcapi.OriginLotus && j.CallID != nil && !j.Delivered {
			n++
		}
	}
	return n
}

// MarkDelivered records that a Lotus job's result reached the miner.
func (m *Manager) MarkDelivered(id rpcapi.JobID) error {
	m.mu.Lock()
	e, ok := m.jobs[id]
	if !ok {
		m.mu.Unlock()
		return &rpcapi.ErrJobNotFound{JobID: id}
	}
	e.rec.Job.Delivered = true
	rec := e.rec
	m.mu.Unlock()
	return m.j.Update(rec, nil)
}

// Proof returns a finished job's proof from the journal.
func (m *Manager) Proof(id rpcapi.JobID) ([]byte, error) { return m.j.Proof(id) }

// Subscribe streams events matching f until ctx ends.
func (m *Manager) Subscribe(ctx context.Context, f rpcapi.JobFilter) <-chan rpcapi.JobEvent {
	return m.events.subscribe(ctx, f)
}

// Snapshot is the queue's state for Status and /metrics.
type Snapshot struct {
	Queued, Running map[rpcapi.ProofKind]int
	RunningIDs      []rpcapi.JobID
	LotusPending    int
	Stats           Stats
	Workers         int
	// EventsDropped counts events a slow Events subscriber missed.
	EventsDropped uint64
	// Drain is the drain in progress (StartDrain), nil when none.
	Drain *rpcapi.DrainStatus
}

// Snapshot copies the counters.
func (m *Manager) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Snapshot{Queued: map[rpcapi.ProofKind]int{}, Running: map[rpcapi.ProofKind]int{}, Workers: m.cfg.Workers}
	for _, e := range m.jobs {
		switch e.rec.Job.State {
		case rpcapi.JobQueued:
			s.Queued[e.rec.Job.Kind]++
		case rpcapi.JobRunning:
			s.Running[e.rec.Job.Kind]++
		}
		if e.rec.Job.Origin == rpcapi.OriginLotus && !e.rec.Job.State.Final() {
			s.LotusPending++
		}
	}
	for id := range m.busy {
		s.RunningIDs = append(s.RunningIDs, id)
	}
	cp := func(in map[rpcapi.ProofKind]uint64) map[rpcapi.ProofKind]uint64 {
		out := make(map[rpcapi.ProofKind]uint64, len(in))
		for k, v := range in {
			out[k] = v
		}
		return out
	}
	s.EventsDropped = m.events.droppedCount()
	s.Drain = m.drainStatusLocked()
	s.Stats = Stats{Submitted: cp(m.stats.Submitted), Completed: cp(m.stats.Completed), Failed: cp(m.stats.Failed),
		Cancelled: cp(m.stats.Cancelled), Rejected: m.stats.Rejected, ProofNs: cp(m.stats.ProofNs)}
	return s
}

// WaitQuiet blocks until no Lotus job is queued or running.
func (m *Manager) WaitQuiet(ctx context.Context) error {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		if m.Snapshot().LotusPending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (m *Manager) pruneLoop() {
	defer m.wg.Done()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
			m.prune(time.Now().Add(-m.cfg.Retention))
		}
	}
}

// prune drops final jobs finished before cutoff; Lotus results are kept until delivered
// (synchronous Lotus calls, without a CallID, have nothing to deliver).
func (m *Manager) prune(cutoff time.Time) {
	m.mu.Lock()
	var drop []*entry
	for _, e := range m.jobs {
		j := e.rec.Job
		if j.State.Final() && j.Finished.Before(cutoff) && (j.Origin != rpcapi.OriginLotus || j.Delivered || j.CallID == nil) {
			drop = append(drop, e)
		}
	}
	for _, e := range drop {
		delete(m.jobs, e.rec.Job.ID)
		if m.byReq[e.rec.Job.RequestID] == e {
			delete(m.byReq, e.rec.Job.RequestID)
		}
	}
	m.mu.Unlock()
	for _, e := range drop {
		if err := m.j.Delete(e.rec.Job.ID); err != nil {
			log.Warnw("pruning job", "job", e.rec.Job.ID, "err", err)
		}
	}
}

// Retryable reports whether a job in state st gives its request ID up to a new submission:
// it failed or was cancelled.
func Retryable(st rpcapi.JobState) bool {
	return st == rpcapi.JobFailed || st == rpcapi.JobCancelled
}

// ErrClosed is returned by operations after Close.
var ErrClosed = errors.New("job manager closed")

// Supports asks the runner whether kind can be proved.
func (m *Manager) Supports(kind rpcapi.ProofKind) error { return m.runner.Supports(kind) }
