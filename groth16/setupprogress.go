package groth16

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// SetupStep names a step of a Groth16 setup, as a SetupTracker reports it.
type SetupStep string

// The setup's steps, in order. A caller that does more around the setup (checking, writing
// files) may add steps of its own through SetupTracker.Begin.
const (
	// SetupSynthesis records the blank circuit's constraints (not countable: the circuit does
	// not say how many it has until it is done).
	SetupSynthesis SetupStep = "circuit synthesis"
	// SetupEvaluation evaluates the QAP polynomials at τ: the Lagrange basis over the domain,
	// then every term of the A, B and C matrices (counted in matrix rows).
	SetupEvaluation SetupStep = "QAP evaluation"
	// SetupG1 computes the G1 queries IC, L, A, B and H (counted in points).
	SetupG1 SetupStep = "G1 queries"
	// SetupG2 computes the G2 query B (counted in points).
	SetupG2 SetupStep = "G2 query"
)

// SetupProgress is where a setup stands: its current step, how much of the step's countable
// work is done (Total 0: the step is not countable), and when the step and the whole setup
// began.
type SetupProgress struct {
	Step        SetupStep
	Done, Total int64
	StepStarted time.Time
	Started     time.Time
}

// SetupStepTime is how long one finished step took.
type SetupStepTime struct {
	Step SetupStep
	Took time.Duration
}

// SetupTracker follows a setup for a progress display: the setup reports its steps and counts
// into it, and the display polls Progress from another goroutine (a minutes-long setup has no
// natural points at which to call back, and polling keeps the display's pace its own). The
// zero value is ready to use; a nil *SetupTracker ignores every call.
type SetupTracker struct {
	// OnStep, if set before the setup starts, is called (outside the tracker's lock) each time
	// a step begins, so that a display shows every step however short, not only those its
	// polling happens to catch.
	OnStep func(SetupProgress)

	mu      sync.Mutex
	started time.Time
	cur     SetupProgress
	steps   []SetupStepTime
	done    atomic.Int64
}

type setupTrackerKey struct{}

// WithSetupTracker returns ctx carrying t: the setups run with that context report to it.
func WithSetupTracker(ctx context.Context, t *SetupTracker) context.Context {
	return context.WithValue(ctx, setupTrackerKey{}, t)
}

// setupTrackerFrom is ctx's tracker, nil when it carries none.
func setupTrackerFrom(ctx context.Context) *SetupTracker {
	t, _ := ctx.Value(setupTrackerKey{}).(*SetupTracker)
	return t
}

// Begin ends the current step (if any) and starts step, whose countable work is total units
// (0: not countable).
func (t *SetupTracker) Begin(step SetupStep, total int64) {
	if t == nil {
		return
	}
	now := time.Now()
	t.mu.Lock()
	t.endLocked(now)
	if t.started.IsZero() {
		t.started = now
	}
	t.done.Store(0)
	t.cur = SetupProgress{Step: step, Total: total, StepStarted: now, Started: t.started}
	cur := t.cur
	t.mu.Unlock()
	if t.OnStep != nil {
		t.OnStep(cur)
	}
}

// Add counts n units of the current step's work as done.
func (t *SetupTracker) Add(n int64) {
	if t == nil {
		return
	}
	t.done.Add(n)
}

// End ends the current step.
func (t *SetupTracker) End() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLocked(time.Now())
}

func (t *SetupTracker) endLocked(now time.Time) {
	if t.cur.Step == "" {
		return
	}
	t.steps = append(t.steps, SetupStepTime{Step: t.cur.Step, Took: now.Sub(t.cur.StepStarted)})
	t.cur = SetupProgress{Started: t.started}
}

// Progress is the current step and its counts (Step "" between steps and after the last).
func (t *SetupTracker) Progress() SetupProgress {
	if t == nil {
		return SetupProgress{}
	}
	t.mu.Lock()
	p := t.cur
	t.mu.Unlock()
	p.Done = min(t.done.Load(), p.Total)
	return p
}

// Steps are the finished steps with their times, in order.
func (t *SetupTracker) Steps() []SetupStepTime {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]SetupStepTime(nil), t.steps...)
}
