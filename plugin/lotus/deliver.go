package lotus

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/rpcapi"
)

// Deliverer sends finished Lotus jobs back to the miner through ReturnSealCommit2 or
// ReturnProveReplicaUpdate2, retrying with exponential backoff until the miner accepts or says
// the result was already reported. Undelivered results stay in the journal; the next start
// delivers them.
type Deliverer struct {
	jobs     *jobs.Manager
	miner    func(ctx context.Context) (rpcapi.Miner, error)
	name     string
	min, max time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	inflight map[rpcapi.JobID]bool
	attempts uint64
	done     uint64
}

// NewDeliverer delivers through the miner returned by miner (which waits for a connection).
func NewDeliverer(m *jobs.Manager, miner func(ctx context.Context) (rpcapi.Miner, error), name string, min, max time.Duration) *Deliverer {
	ctx, cancel := context.WithCancel(context.Background())
	return &Deliverer{jobs: m, miner: miner, name: name, min: min, max: max, ctx: ctx, cancel: cancel, inflight: map[rpcapi.JobID]bool{}}
}

// OnFinal is the job manager hook: it starts delivery of a final, undelivered Lotus job.
func (d *Deliverer) OnFinal(job rpcapi.Job) {
	if job.Origin != rpcapi.OriginLotus || job.Delivered || job.CallID == nil || !job.State.Final() {
		return
	}
	d.mu.Lock()
	if d.inflight[job.ID] || d.ctx.Err() != nil {
		d.mu.Unlock()
		return
	}
	d.inflight[job.ID] = true
	d.wg.Add(1)
	d.mu.Unlock()
	go func() {
		defer d.wg.Done()
		defer func() {
			d.mu.Lock()
			delete(d.inflight, job.ID)
			d.mu.Unlock()
		}()
		d.deliver(job)
	}()
}

// Pending is the number of results waiting for the miner.
func (d *Deliverer) Pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.inflight)
}

// Counts returns delivery attempts and successes since start.
func (d *Deliverer) Counts() (attempts, delivered uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.attempts, d.done
}

// Close stops delivering; what was not delivered stays journaled.
func (d *Deliverer) Close() {
	d.cancel()
	d.wg.Wait()
}

// callError renders a failed job as Lotus would: the error with the worker's name appended,
// code 0 unless the job carries a code (101 after a restart).
func (d *Deliverer) callError(job rpcapi.Job) *rpcapi.CallError {
	if job.State == rpcapi.JobDone {
		return nil
	}
	msg := job.Error
	if job.ErrorCode == rpcapi.ErrUnknown {
		msg = fmt.Sprintf("%s [name: %s]", job.Error, d.name)
	}
	return &rpcapi.CallError{Code: job.ErrorCode, Message: msg}
}

// alreadyReported recognises the miner's answers to a duplicate return (manager_calltracker.go).
func alreadyReported(err error) bool {
	s := err.Error()
	return strings.Contains(s, "already reported") || strings.Contains(s, "already has a response")
}

func (d *Deliverer) deliver(job rpcapi.Job) {
	var proof []byte
	if job.State == rpcapi.JobDone {
		var err error
		if proof, err = d.jobs.Proof(job.ID); err != nil || proof == nil {
			log.Errorw("finished job has no proof in the journal; reporting failure", "job", job.ID, "err", err)
			job.State, job.Error = rpcapi.JobFailed, "proof lost from the journal"
		}
	}
	cerr := d.callError(job)
	wait := d.min
	for {
		err := d.try(job, proof, cerr)
		d.mu.Lock()
		d.attempts++
		d.mu.Unlock()
		if err == nil || alreadyReported(err) {
			if err != nil {
				log.Infow("miner already had the result", "call", job.CallID.String(), "answer", err)
			}
			if err := d.jobs.MarkDelivered(job.ID); err != nil {
				log.Errorw("recording delivery", "job", job.ID, "err", err)
			}
			d.mu.Lock()
			d.done++
			d.mu.Unlock()
			log.Infow("result delivered to miner", "call", job.CallID.String(), "job", job.ID, "state", job.State)
			return
		}
		if d.ctx.Err() != nil {
			return
		}
		log.Warnw("delivering result to miner failed; will retry", "call", job.CallID.String(), "in", wait, "err", err)
		select {
		case <-d.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, d.max)
	}
}

func (d *Deliverer) try(job rpcapi.Job, proof []byte, cerr *rpcapi.CallError) error {
	ctx, cancel := context.WithTimeout(d.ctx, 5*time.Minute)
	defer cancel()
	miner, err := d.miner(ctx)
	if err != nil {
		return fmt.Errorf("no miner connected: %w", err)
	}
	switch job.Kind {
	case rpcapi.KindPoRepC2:
		return miner.ReturnSealCommit2(ctx, *job.CallID, proof, cerr)
	case rpcapi.KindSnapProve:
		return miner.ReturnProveReplicaUpdate2(ctx, *job.CallID, proof, cerr)
	}
	return fmt.Errorf("no Return method for proof kind %s", job.Kind)
}
