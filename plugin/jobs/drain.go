package jobs

import (
	"context"
	"time"

	"github.com/snarkd/snarkd/rpcapi"
)

// handBackWait bounds how long Drain waits for the jobs it handed back to stop: the prover
// stops at its next context check, but a partition on the GPU finishes its kernels first.
// After it, Close leaves a job that still runs "running" in the journal, which the next start
// treats the same way.
const handBackWait = time.Minute

// drainState is a drain in progress; the manager's lock guards it.
type drainState struct {
	since, until time.Time
	skipped      bool
	// skip is closed by SkipDrain: Drain stops waiting for running jobs.
	skip chan struct{}
}

// DrainReport is what Drain did.
type DrainReport struct {
	// Finished counts the jobs that finished (done, failed or cancelled) while Drain waited.
	Finished int
	// Requeued counts native and cuzk jobs handed back to the queue (proved after the next
	// start), Restarted the Lotus calls failed with code 101.
	Requeued, Restarted int
	// Skipped: SkipDrain cut the grace short.
	Skipped bool
	// Waited is how long Drain waited for running jobs.
	Waited time.Duration
}

// StartDrain makes the manager stop taking work, for a daemon that is about to stop: Submit
// refuses anything new with *rpcapi.ErrDraining (saying until when), workers start no more
// queued jobs, which stay queued in the journal for the next start, and queued Lotus calls fail
// at once with code 101 (Config.RestartError), as the next start would fail them, so that the
// miner reschedules them now rather than after the grace. Running jobs go on; Drain waits for
// them. until is when the grace ends. It returns at once; later calls change nothing.
func (m *Manager) StartDrain(until time.Time) {
	m.mu.Lock()
	if m.drain != nil {
		m.mu.Unlock()
		return
	}
	m.drain = &drainState{since: time.Now(), until: until, skip: make(chan struct{})}
	var lotus []*entry
	for it := range m.queue.All() {
		if it.Value.rec.Job.Origin == rpcapi.OriginLotus {
			lotus = append(lotus, it.Value)
		}
	}
	for _, e := range lotus {
		m.queue.Remove(e.q)
		e.takeDecoded(m)
	}
	running, queued := len(m.busy), m.queue.Len()
	m.mu.Unlock()
	log.Infow("draining: taking no new work; running jobs may finish, queued jobs stay in the journal for the next start",
		"running", running, "queued", queued, "lotus_calls_handed_back", len(lotus), "grace", time.Until(until).Round(time.Millisecond))
	for _, e := range lotus {
		m.failRestarted(e)
	}
}

// SkipDrain ends Drain's wait for running jobs now (a second stop request).
func (m *Manager) SkipDrain() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.drain == nil || m.drain.skipped {
		return
	}
	m.drain.skipped = true
	m.drain.until = time.Now()
	close(m.drain.skip)
}

// DrainStatus reports the drain in progress, nil when the manager is not draining.
func (m *Manager) DrainStatus() *rpcapi.DrainStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.drainStatusLocked()
}

func (m *Manager) drainStatusLocked() *rpcapi.DrainStatus {
	if m.drain == nil {
		return nil
	}
	return &rpcapi.DrainStatus{Since: m.drain.since, Until: m.drain.until, Skipped: m.drain.skipped,
		Running: len(m.busy), Queued: m.queue.Len()}
}

// Drain lets the running jobs finish until ctx ends (its deadline is the grace) or SkipDrain
// is called, logging every Config.DrainLogEvery how many still run and how much grace is left;
// then it hands back what still runs: native and cuzk jobs are queued again in the journal, so
// that the next start proves them, and Lotus calls fail with code 101 (Config.RestartError)
// and go to the OnFinal hooks, which report them to the miner. It calls StartDrain first
// (until: ctx's deadline) unless that was done. It returns once the handed-back jobs have
// stopped, or after handBackWait. The manager takes no more work afterwards; Close it.
func (m *Manager) Drain(ctx context.Context) DrainReport {
	until, _ := ctx.Deadline()
	m.StartDrain(until)
	start := time.Now()
	tick := time.NewTicker(m.cfg.DrainLogEvery)
	defer tick.Stop()
	var rep DrainReport
	m.mu.Lock()
	skip := m.drain.skip
	before := len(m.busy)
	m.mu.Unlock()
wait:
	for {
		m.mu.Lock()
		running, queued, idle, until := len(m.busy), m.queue.Len(), m.idle, m.drain.until
		m.mu.Unlock()
		if running == 0 {
			break
		}
		select {
		case <-idle:
		case <-tick.C:
			log.Infow("draining: waiting for running jobs", "running", running, "queued", queued,
				"grace_left", max(time.Until(until), 0).Round(time.Second))
		case <-skip:
			log.Warnw("draining: grace skipped by a second stop request; handing back the running jobs", "running", running)
			break wait
		case <-ctx.Done():
			log.Warnw("draining: grace over; handing back the running jobs", "running", running, "waited", time.Since(start).Round(time.Second))
			break wait
		}
	}
	rep.Waited = time.Since(start)
	m.mu.Lock()
	rep.Skipped = m.drain.skipped
	var back []*entry
	for id := range m.busy {
		if e := m.jobs[id]; e != nil {
			e.handBack = true
			if e.cancel != nil {
				e.cancel()
			}
			back = append(back, e)
		}
	}
	rep.Finished = max(before-len(back), 0)
	m.mu.Unlock()
	for _, e := range back {
		if e.rec.Job.Origin == rpcapi.OriginLotus {
			rep.Restarted++
		} else {
			rep.Requeued++
		}
	}
	if len(back) > 0 {
		m.waitIdle(handBackWait)
	}
	log.Infow("drained", "finished", rep.Finished, "requeued", rep.Requeued, "lotus_restarted", rep.Restarted,
		"waited", rep.Waited.Round(time.Millisecond), "skipped", rep.Skipped)
	return rep
}

// waitIdle waits up to d for no job to run.
func (m *Manager) waitIdle(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		m.mu.Lock()
		running, idle := len(m.busy), m.idle
		m.mu.Unlock()
		if running == 0 {
			return
		}
		select {
		case <-idle:
		case <-t.C:
			log.Warnw("handed-back jobs still running; they stay journaled as running and are handed back at the next start",
				"running", running, "waited", d)
			return
		}
	}
}

// handBackLocked records a job interrupted by Drain: a native or cuzk job is queued again (in
// the journal for the next start, and in memory so that Status and Jobs show it queued;
// workers take nothing while draining), a Lotus call fails with code 101. Callers hold m.mu;
// it unlocks.
func (m *Manager) handBackLocked(e *entry) {
	if e.rec.Job.Origin == rpcapi.OriginLotus {
		m.mu.Unlock()
		log.Infow("handing back a Lotus call at stop; reporting code 101", "job", e.rec.Job.ID, "call", e.rec.Job.CallID)
		m.failRestarted(e)
		return
	}
	job := &e.rec.Job
	job.State, job.Stage, job.PartitionsDone = rpcapi.JobQueued, "", 0
	m.push(e)
	rec := e.rec
	ev := m.event(e, rpcapi.EventQueued, 0)
	ev.Detail = "handed back: the daemon is stopping; it is proved after the next start"
	m.mu.Unlock()
	log.Infow("handing back a running job at stop; queued again for the next start", "job", rec.Job.ID, "kind", rec.Job.Kind)
	if err := m.j.Update(rec, nil); err != nil {
		// The journal still says running, which the next start re-queues too.
		log.Errorw("journaling a handed-back job", "job", rec.Job.ID, "err", err)
	}
	m.events.publish(ev)
}

// failRestarted fails a Lotus call that this daemon will not prove, as Open fails the calls in
// flight at a restart: code 101 and Config.RestartError, which the miner reschedules.
func (m *Manager) failRestarted(e *entry) {
	m.mu.Lock()
	job := &e.rec.Job
	job.State, job.Error, job.ErrorCode = rpcapi.JobFailed, m.cfg.RestartError, rpcapi.ErrTempWorkerRestart
	job.Finished, job.Stage = time.Now(), ""
	m.pending--
	rec := e.rec
	m.mu.Unlock()
	if err := m.j.Update(rec, nil); err != nil {
		log.Errorw("journaling a Lotus call handed back at stop", "job", rec.Job.ID, "err", err)
	}
	m.finish(e, rpcapi.EventFailed)
}
