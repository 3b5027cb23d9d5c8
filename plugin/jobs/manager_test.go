package jobs

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/plugin/journal"
	"github.com/snarkd/snarkd/rpcapi"
)

// gateRunner proves nothing real: each job blocks until the test releases it, so that queue
// order can be observed without timing assumptions.
type gateRunner struct {
	mu      sync.Mutex
	started []uint64 // Test.Seed of each job, in start order
	startCh chan uint64
	release chan struct{}
	fail    map[uint64]error
	panicOn uint64
}

func newGateRunner() *gateRunner {
	return &gateRunner{startCh: make(chan uint64, 100), release: make(chan struct{}), fail: map[uint64]error{}}
}

func (g *gateRunner) Supports(k rpcapi.ProofKind) error {
	if k != rpcapi.KindTest {
		return &rpcapi.ErrNotSupportedYet{Kind: k, Reason: "no circuit"}
	}
	return nil
}

func (g *gateRunner) Run(ctx context.Context, t Task, report Report) (Output, error) {
	req := t.Request
	seed := req.Test.Seed
	g.mu.Lock()
	g.started = append(g.started, seed)
	err := g.fail[seed]
	g.mu.Unlock()
	g.startCh <- seed
	if seed == g.panicOn && seed != 0 {
		panic("boom")
	}
	report(rpcapi.EventSynthesizing, 0, 1)
	select {
	case <-g.release:
	case <-ctx.Done():
		return Output{}, ctx.Err()
	}
	report(rpcapi.EventProving, 1, 1)
	if err != nil {
		return Output{}, err
	}
	return Output{Proof: []byte(fmt.Sprintf("proof-%d", seed))}, nil
}

func testReq(id string, seed uint64) rpcapi.ProofRequest {
	return rpcapi.ProofRequest{RequestID: id, Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 16, Seed: seed}}
}

func open(t *testing.T, path string, r Runner, cfg Config) *Manager {
	t.Helper()
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Open(j, r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); j.Close() })
	return m
}

// openManual is open for a test that closes the manager itself (the journal closes at cleanup).
func openManual(t *testing.T, path string, r Runner, cfg Config) *Manager {
	t.Helper()
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	m, err := Open(j, r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func waitStart(t *testing.T, g *gateRunner) uint64 {
	t.Helper()
	select {
	case s := <-g.startCh:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("no job started")
		return 0
	}
}

// TestPriorityOrder: with the one general worker busy, seal jobs queue; a WindowPoSt starts at
// once on the PoSt-only worker; a WinningPoSt submitted next is first in the queue and starts
// as soon as either worker frees; the seal jobs then run in submission order.
func TestPriorityOrder(t *testing.T) {
	g := newGateRunner()
	m := open(t, filepath.Join(t.TempDir(), "j.db"), g, Config{Workers: 1})
	if _, err := m.Submit(testReq("blocker", 1), SubmitOpts{}); err != nil {
		t.Fatal(err)
	}
	waitStart(t, g)
	for i := uint64(2); i <= 4; i++ {
		if _, err := m.Submit(testReq(fmt.Sprint("seal", i), i), SubmitOpts{}); err != nil {
			t.Fatal(err)
		}
	}
	window, winning := rpcapi.PriorityWindowPoSt, rpcapi.PriorityWinningPoSt
	w := testReq("window", 5)
	w.Priority = &window
	if _, err := m.Submit(w, SubmitOpts{}); err != nil {
		t.Fatal(err)
	}
	if got := waitStart(t, g); got != 5 {
		t.Fatalf("started seed %d while the general worker was busy, want the WindowPoSt (5)", got)
	}
	win := testReq("winning", 6)
	win.Priority = &winning
	res, err := m.Submit(win, SubmitOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if res.QueuePosition != 0 {
		t.Fatalf("winning job queue position %d, want 0", res.QueuePosition)
	}
	g.release <- struct{}{} // the blocker or the WindowPoSt ends
	if got := waitStart(t, g); got != 6 {
		t.Fatalf("started seed %d, want the WinningPoSt (6)", got)
	}
	// Finish jobs one at a time; the seal jobs must start in submission order.
	var seals []uint64
	for len(seals) < 3 {
		g.release <- struct{}{}
		select {
		case s := <-g.startCh:
			seals = append(seals, s)
		case <-time.After(200 * time.Millisecond): // the PoSt worker freed: no seal starts on it
		}
	}
	if seals[0] != 2 || seals[1] != 3 || seals[2] != 4 {
		t.Fatalf("seal jobs started in order %v, want [2 3 4]", seals)
	}
	g.release <- struct{}{}
}

func TestIdempotentRequestIDs(t *testing.T) {
	g := newGateRunner()
	m := open(t, filepath.Join(t.TempDir(), "j.db"), g, Config{Workers: 1})
	a, err := m.Submit(testReq("same", 1), SubmitOpts{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Submit(testReq("same", 1), SubmitOpts{})
	if err != nil || b.JobID != a.JobID || !b.Existing {
		t.Fatalf("resubmission: %+v %v", b, err)
	}
	_, err = m.Submit(testReq("same", 2), SubmitOpts{})
	var conflict *rpcapi.ErrRequestConflict
	if !errors.As(err, &conflict) || conflict.JobID != a.JobID {
		t.Fatalf("conflicting content: %v", err)
	}
	waitStart(t, g)
	g.release <- struct{}{}
	res, err := m.Await(context.Background(), a.JobID)
	if err != nil || res.State != rpcapi.JobDone || string(res.Proof) != "proof-1" {
		t.Fatalf("await: %+v %v", res, err)
	}
	if n := len(m.Jobs(rpcapi.JobFilter{})); n != 1 {
		t.Fatalf("%d jobs, want 1", n)
	}
}

func TestBadRequestsAndLimits(t *testing.T) {
	g := newGateRunner()
	m := open(t, filepath.Join(t.TempDir(), "j.db"), g, Config{Workers: 1, MaxPending: 2})
	for _, tc := range []struct {
		req   rpcapi.ProofRequest
		field string
	}{
		{rpcapi.ProofRequest{Kind: "groth17"}, "Kind"},
		{rpcapi.ProofRequest{}, "Kind"},
		{rpcapi.ProofRequest{Kind: rpcapi.KindTest}, "Test"},
		{rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{}}, "Test.Constraints"},
		{rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 3}}, "Test.Constraints"},
		{rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 1 << 12, Partitions: 17}}, "Test.Partitions"},
		{rpcapi.ProofRequest{Kind: rpcapi.KindPoRepC2, RegisteredProof: 99, Phase1Out: []byte("{}")}, "RegisteredProof"},
		{rpcapi.ProofRequest{Kind: rpcapi.KindPoRepC2, RegisteredProof: 8, SectorSize: 2048, Phase1Out: []byte("{}")}, "SectorSize"},
		{rpcapi.ProofRequest{Kind: rpcapi.KindPoRepC2, RegisteredProof: 8, Phase1Out: []byte("nope")}, "Phase1Out"},
		{rpcapi.ProofRequest{Kind: rpcapi.KindPoRepC2, RegisteredProof: 8, Phase1Out: []byte("{}")}, "Phase1Out"},
		{rpcapi.ProofRequest{Kind: rpcapi.KindWinningPoSt, RegisteredProof: 13, Randomness: make([]byte, 32), VanillaProofs: [][]byte{{1}}}, "RegisteredProof"},
		{rpcapi.ProofRequest{Kind: rpcapi.KindWindowPoSt, RegisteredProof: 13, Randomness: make([]byte, 31), VanillaProofs: [][]byte{{1}}}, "Randomness"},
		{rpcapi.ProofRequest{Kind: rpcapi.KindSnapProve, RegisteredProof: 3, CommROld: make([]byte, 32), CommRNew: make([]byte, 32), CommDNew: make([]byte, 3), VanillaProofs: [][]byte{{1}}}, "CommDNew"},
	} {
		_, err := m.Submit(tc.req, SubmitOpts{})
		var br *rpcapi.ErrBadRequest
		if !errors.As(err, &br) || br.Field != tc.field {
			t.Errorf("%+v: err %v, want bad %s", tc.req, err, tc.field)
		}
	}
	// A well-formed Filecoin request (a Go-sealed sector's C1 output) reaches the runner, and
	// one this runner refuses is not queued.
	phase1 := randomC1(t)
	_, err := m.Submit(rpcapi.ProofRequest{Kind: rpcapi.KindPoRepC2, RegisteredProof: int64(abi.RegisteredSealProof_StackedDrg2KiBV1_1), Phase1Out: phase1}, SubmitOpts{})
	var ns *rpcapi.ErrNotSupportedYet
	if !errors.As(err, &ns) || ns.Kind != rpcapi.KindPoRepC2 {
		t.Fatalf("porep: %v", err)
	}
	// Queue limit.
	for i := uint64(1); i <= 2; i++ {
		if _, err := m.Submit(testReq(fmt.Sprint(i), i), SubmitOpts{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = m.Submit(testReq("3", 3), SubmitOpts{})
	var full *rpcapi.ErrQueueFull
	if !errors.As(err, &full) || full.Limit != 2 {
		t.Fatalf("full queue: %v", err)
	}
	if m.Snapshot().Stats.Rejected == 0 {
		t.Fatal("rejections not counted")
	}
}

func TestCancel(t *testing.T) {
	g := newGateRunner()
	m := open(t, filepath.Join(t.TempDir(), "j.db"), g, Config{Workers: 1})
	run, _ := m.Submit(testReq("run", 1), SubmitOpts{})
	waitStart(t, g)
	queued, _ := m.Submit(testReq("queued", 2), SubmitOpts{})
	if was, err := m.Cancel(queued.JobID); err != nil || was {
		t.Fatalf("cancel queued: %v %v", was, err)
	}
	if was, err := m.Cancel(run.JobID); err != nil || !was {
		t.Fatalf("cancel running: %v %v", was, err)
	}
	for _, id := range []rpcapi.JobID{run.JobID, queued.JobID} {
		res, err := m.Await(context.Background(), id)
		if err != nil || res.State != rpcapi.JobCancelled || res.Proof != nil {
			t.Fatalf("%s: %+v %v", id, res.Job, err)
		}
	}
	if _, err := m.Cancel("nope"); !errors.As(err, new(*rpcapi.ErrJobNotFound)) {
		t.Fatalf("unknown job: %v", err)
	}
	// The worker is free again: a new job runs.
	next, _ := m.Submit(testReq("next", 3), SubmitOpts{})
	if s := waitStart(t, g); s != 3 {
		t.Fatalf("started %d", s)
	}
	g.release <- struct{}{}
	if res, err := m.Await(context.Background(), next.JobID); err != nil || res.State != rpcapi.JobDone {
		t.Fatalf("next: %+v %v", res, err)
	}
}

func TestFailureAndPanic(t *testing.T) {
	g := newGateRunner()
	g.fail[1] = errors.New("synthesis failed: constraint 7 unsatisfied")
	g.panicOn = 2
	m := open(t, filepath.Join(t.TempDir(), "j.db"), g, Config{Workers: 1})
	a, _ := m.Submit(testReq("a", 1), SubmitOpts{})
	b, _ := m.Submit(testReq("b", 2), SubmitOpts{})
	waitStart(t, g)
	g.release <- struct{}{}
	ra, _ := m.Await(context.Background(), a.JobID)
	if ra.State != rpcapi.JobFailed || ra.Error != "synthesis failed: constraint 7 unsatisfied" {
		t.Fatalf("a: %+v", ra.Job)
	}
	waitStart(t, g)
	rb, _ := m.Await(context.Background(), b.JobID)
	if rb.State != rpcapi.JobFailed || rb.Error != "prover panicked: boom" {
		t.Fatalf("b: %+v", rb.Job)
	}
}

func TestRestartRecovery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	g := newGateRunner()
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Open(j, g, Config{Workers: 1, RestartError: "worker [name: test] restarted"})
	if err != nil {
		t.Fatal(err)
	}
	done, _ := m.Submit(testReq("done", 1), SubmitOpts{})
	waitStart(t, g)
	g.release <- struct{}{}
	if _, err := m.Await(context.Background(), done.JobID); err != nil {
		t.Fatal(err)
	}
	running, _ := m.Submit(testReq("running", 2), SubmitOpts{})
	waitStart(t, g)
	queued, _ := m.Submit(testReq("queued", 3), SubmitOpts{})
	call := &rpcapi.CallID{}
	lotus, _ := m.Submit(testReq("lotus", 4), SubmitOpts{Origin: rpcapi.OriginLotus, CallID: call})
	m.Close()
	j.Close()

	g2 := newGateRunner()
	m2 := open(t, path, g2, Config{Workers: 1, RestartError: "worker [name: test] restarted"})
	var finals []rpcapi.Job
	var fmu sync.Mutex
	got := make(chan struct{}, 10)
	m2.OnFinal(func(j rpcapi.Job) {
		fmu.Lock()
		finals = append(finals, j)
		fmu.Unlock()
		got <- struct{}{}
	})
	// The done job keeps its proof; the Lotus call fails with 101; native jobs run again in order.
	res, err := m2.Await(context.Background(), done.JobID)
	if err != nil || string(res.Proof) != "proof-1" {
		t.Fatalf("done job after restart: %+v %v", res, err)
	}
	lr, _ := m2.Await(context.Background(), lotus.JobID)
	if lr.State != rpcapi.JobFailed || lr.ErrorCode != rpcapi.ErrTempWorkerRestart || lr.Error != "worker [name: test] restarted" {
		t.Fatalf("lotus job after restart: %+v", lr.Job)
	}
	for _, want := range []uint64{2, 3} {
		if s := waitStart(t, g2); s != want {
			t.Fatalf("restarted seed %d, want %d", s, want)
		}
		g2.release <- struct{}{}
	}
	for _, id := range []rpcapi.JobID{running.JobID, queued.JobID} {
		if r, err := m2.Await(context.Background(), id); err != nil || r.State != rpcapi.JobDone {
			t.Fatalf("%s: %+v %v", id, r.Job, err)
		}
	}
	for i := 0; i < 4; i++ {
		<-got
	}
	fmu.Lock()
	defer fmu.Unlock()
	if len(finals) != 4 {
		t.Fatalf("%d final hooks, want 4", len(finals))
	}
}

func TestEvents(t *testing.T) {
	g := newGateRunner()
	m := open(t, filepath.Join(t.TempDir(), "j.db"), g, Config{Workers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := m.Subscribe(ctx, rpcapi.JobFilter{Kinds: []rpcapi.ProofKind{rpcapi.KindTest}})
	res, _ := m.Submit(testReq("e", 1), SubmitOpts{})
	waitStart(t, g)
	g.release <- struct{}{}
	var types []rpcapi.EventType
	for ev := range ch {
		if ev.JobID != res.JobID {
			t.Fatalf("foreign event %+v", ev)
		}
		types = append(types, ev.Type)
		if ev.Type == rpcapi.EventDone {
			break
		}
	}
	want := []rpcapi.EventType{"queued", "started", "synthesizing", "proving", "done"}
	if fmt.Sprint(types) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", types, want)
	}
}

func TestPrune(t *testing.T) {
	g := newGateRunner()
	m := open(t, filepath.Join(t.TempDir(), "j.db"), g, Config{Workers: 1})
	a, _ := m.Submit(testReq("a", 1), SubmitOpts{})
	l, _ := m.Submit(testReq("l", 2), SubmitOpts{Origin: rpcapi.OriginLotus, CallID: &rpcapi.CallID{}})
	// A synchronous Lotus call (PoSt) has no CallID: its answer went back on the call.
	s, _ := m.Submit(testReq("s", 3), SubmitOpts{Origin: rpcapi.OriginLotus})
	for i := 0; i < 3; i++ {
		waitStart(t, g)
		g.release <- struct{}{}
	}
	m.Await(context.Background(), a.JobID)
	m.Await(context.Background(), l.JobID)
	m.Await(context.Background(), s.JobID)
	m.prune(time.Now().Add(time.Hour))
	if _, err := m.Get(a.JobID); err == nil {
		t.Fatal("final native job not pruned")
	}
	if _, err := m.Get(s.JobID); err == nil {
		t.Fatal("final synchronous Lotus job not pruned")
	}
	if _, err := m.Get(l.JobID); err != nil {
		t.Fatal("undelivered Lotus result pruned")
	}
	if err := m.MarkDelivered(l.JobID); err != nil {
		t.Fatal(err)
	}
	m.prune(time.Now().Add(time.Hour))
	if _, err := m.Get(l.JobID); err == nil {
		t.Fatal("delivered Lotus job not pruned")
	}
	// A pruned request ID can be used again.
	if r, err := m.Submit(testReq("a", 9), SubmitOpts{}); err != nil || r.Existing {
		t.Fatalf("reuse after prune: %+v %v", r, err)
	}
}

func TestSlowSubscriberDropsInsteadOfBlocking(t *testing.T) {
	b := newBroker()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := b.subscribe(ctx, rpcapi.JobFilter{})
	for i := 0; i < subBuffer+10; i++ {
		b.publish(rpcapi.JobEvent{JobID: "j", Type: rpcapi.EventProving, Partition: i})
	}
	if got := b.droppedCount(); got != 10 {
		t.Fatalf("dropped %d, want 10", got)
	}
	if ev := <-ch; ev.Partition != 0 {
		t.Fatalf("first event %+v", ev)
	}
	cancel()
	for range ch { // closed once the subscriber's context ends
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestRetryAfterFailure: the request ID of a failed or cancelled job is free again, so a
// client's retry (Curio resends the same ID after a failure) is proved anew; the old job stays
// readable by its job ID, and the binding survives a restart.
func TestRetryAfterFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		// end brings job "r" (seed 1) to its final state.
		end       func(t *testing.T, m *Manager, g *gateRunner, id rpcapi.JobID)
		state     rpcapi.JobState
		retrySeed uint64 // content of the retry: 1 is the same request
	}{
		{"failed, same content", func(t *testing.T, m *Manager, g *gateRunner, id rpcapi.JobID) {
			waitStart(t, g)
			g.release <- struct{}{}
		}, rpcapi.JobFailed, 1},
		{"failed, new content", func(t *testing.T, m *Manager, g *gateRunner, id rpcapi.JobID) {
			waitStart(t, g)
			g.release <- struct{}{}
		}, rpcapi.JobFailed, 2},
		{"cancelled while running", func(t *testing.T, m *Manager, g *gateRunner, id rpcapi.JobID) {
			waitStart(t, g)
			if running, err := m.Cancel(id); err != nil || !running {
				t.Fatalf("Cancel = %v, %v", running, err)
			}
		}, rpcapi.JobCancelled, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j.db")
			g := newGateRunner()
			g.fail[1] = errors.New("parameters for StackedDrgWinning2KiBV1 not found")
			j, err := journal.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Open(j, g, Config{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			first, err := m.Submit(testReq("r", 1), SubmitOpts{})
			if err != nil {
				t.Fatal(err)
			}
			tc.end(t, m, g, first.JobID)
			res, err := m.Await(context.Background(), first.JobID)
			if err != nil || res.State != tc.state {
				t.Fatalf("first job: %+v %v; want %s", res.Job, err, tc.state)
			}
			delete(g.fail, 1) // the cause is fixed
			retry, err := m.Submit(testReq("r", tc.retrySeed), SubmitOpts{})
			if err != nil {
				t.Fatalf("retry refused: %v", err)
			}
			if retry.Existing || retry.JobID == first.JobID || retry.State != rpcapi.JobQueued {
				t.Fatalf("retry answered %+v; want a new queued job", retry)
			}
			// While the retry is pending, the ID names it: the same content joins it, other
			// content conflicts with it.
			again, err := m.Submit(testReq("r", tc.retrySeed), SubmitOpts{})
			if err != nil || again.JobID != retry.JobID || !again.Existing {
				t.Fatalf("resubmitting the retry: %+v %v", again, err)
			}
			var conflict *rpcapi.ErrRequestConflict
			if _, err := m.Submit(testReq("r", tc.retrySeed+10), SubmitOpts{}); !errors.As(err, &conflict) || conflict.JobID != retry.JobID {
				t.Fatalf("other content while the retry is pending: %v", err)
			}
			if got := waitStart(t, g); got != tc.retrySeed {
				t.Fatalf("started seed %d, want the retry's %d", got, tc.retrySeed)
			}
			g.release <- struct{}{}
			done, err := m.Await(context.Background(), retry.JobID)
			if err != nil || done.State != rpcapi.JobDone || string(done.Proof) != fmt.Sprint("proof-", tc.retrySeed) {
				t.Fatalf("retry: %+v %v", done, err)
			}
			if old, err := m.Get(first.JobID); err != nil || old.State != tc.state {
				t.Fatalf("old job after the retry: %+v %v", old, err)
			}
			m.Close()

			// After a restart the ID still names the retry, which is done.
			m2, err := Open(j, g, Config{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { m2.Close(); j.Close() }()
			res2, err := m2.Submit(testReq("r", tc.retrySeed), SubmitOpts{})
			if err != nil || res2.JobID != retry.JobID || !res2.Existing || res2.State != rpcapi.JobDone {
				t.Fatalf("after restart: %+v %v; want the retry %s", res2, err, retry.JobID)
			}
			if old, err := m2.Get(first.JobID); err != nil || old.State != tc.state {
				t.Fatalf("old job after restart: %+v %v", old, err)
			}
		})
	}
}

// TestRequestIDBoundToContent: the request ID of a job that is done stays bound to its content
// while the job is retained: other content is refused with the typed conflict naming the job,
// before and after a restart, and queues nothing.
func TestRequestIDBoundToContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	g := newGateRunner()
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	m, err := Open(j, g, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	first, err := m.Submit(testReq("r", 1), SubmitOpts{})
	if err != nil {
		t.Fatal(err)
	}
	waitStart(t, g)
	g.release <- struct{}{}
	if res, err := m.Await(context.Background(), first.JobID); err != nil || res.State != rpcapi.JobDone {
		t.Fatalf("first job: %+v %v; want done", res.Job, err)
	}
	check := func(m *Manager, when string) {
		t.Helper()
		var conflict *rpcapi.ErrRequestConflict
		res, err := m.Submit(testReq("r", 2), SubmitOpts{})
		if !errors.As(err, &conflict) || conflict.JobID != first.JobID || conflict.RequestID != "r" {
			t.Fatalf("%s: other content under the ID of a done job: %+v %v; want ErrRequestConflict naming %s", when, res, err, first.JobID)
		}
		if js := m.Jobs(rpcapi.JobFilter{}); len(js) != 1 {
			t.Fatalf("%s: %d jobs after the refusal, want 1", when, len(js))
		}
	}
	check(m, "before restart")
	m.Close()
	m2, err := Open(j, g, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	check(m2, "after restart")
}

// outputRunner answers every job at once with a fixed output.
type outputRunner struct{ out Output }

func (outputRunner) Supports(rpcapi.ProofKind) error { return nil }

func (r outputRunner) Run(context.Context, Task, Report) (Output, error) {
	return r.out, nil
}

// TestOutputRecorded: the parameter load time and the GPUs a runner reports end up in the job.
func TestOutputRecorded(t *testing.T) {
	r := outputRunner{Output{Proof: []byte("p"), SRSLoadMs: 1234, SynthesisMs: 5, ProveMs: 6, GPUs: []int{1, 0}}}
	m := open(t, filepath.Join(t.TempDir(), "j.db"), r, Config{Workers: 1})
	res, err := m.Submit(testReq("o", 1), SubmitOpts{})
	if err != nil {
		t.Fatal(err)
	}
	done, err := m.Await(context.Background(), res.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if done.Timings.SRSLoadMs != 1234 || done.Timings.SynthesisMs != 5 || len(done.GPUs) != 2 || done.GPUs[0] != 1 {
		t.Fatalf("job %+v", done.Job)
	}
}

// TestSealJobStartsWithIdlePoStWorker: a wake-up taken by the idle PoSt-only worker must not
// leave a seal job waiting while the general worker sleeps (it did about half of the time).
func TestSealJobStartsWithIdlePoStWorker(t *testing.T) {
	for i := range 40 {
		g := newGateRunner()
		m := open(t, filepath.Join(t.TempDir(), fmt.Sprintf("j%d.db", i)), g, Config{Workers: 1})
		if _, err := m.Submit(testReq("seal", 1), SubmitOpts{}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-g.startCh:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the seal job never started", i)
		}
		g.release <- struct{}{}
	}
}

// TestHooksOwned: Close waits for the final-job hooks in flight, and calls none after it.
func TestHooksOwned(t *testing.T) {
	g := newGateRunner()
	m := openManual(t, filepath.Join(t.TempDir(), "j.db"), g, Config{Workers: 1})
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	var returned atomic.Bool
	m.OnFinal(func(rpcapi.Job) {
		calls.Add(1)
		entered <- struct{}{}
		<-release
		returned.Store(true)
	})
	res, _ := m.Submit(testReq("hooked", 1), SubmitOpts{})
	waitStart(t, g)
	g.release <- struct{}{}
	if _, err := m.Await(context.Background(), res.JobID); err != nil {
		t.Fatal(err)
	}
	<-entered
	closed := make(chan struct{})
	go func() { m.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a hook was running")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-closed
	if !returned.Load() {
		t.Fatal("Close returned before the hook did")
	}
	m.runHook(func(rpcapi.Job) { calls.Add(1) }, rpcapi.Job{})
	m.hookWG.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d hook calls, want 1 (none after Close)", n)
	}
}

// decodedRunner records, per job, whether Run got the request's C1 output decoded.
type decodedRunner struct {
	mu   sync.Mutex
	got  map[string]*Decoded
	hold chan struct{} // when set, Run waits for it (jobs stay queued behind the first)
}

func (*decodedRunner) Supports(rpcapi.ProofKind) error { return nil }

func (r *decodedRunner) Run(ctx context.Context, t Task, _ Report) (Output, error) {
	req, dec := t.Request, t.Decoded
	if r.hold != nil {
		select {
		case <-r.hold:
		case <-ctx.Done():
			return Output{}, ctx.Err()
		}
	}
	r.mu.Lock()
	r.got[req.RequestID] = dec
	r.mu.Unlock()
	return Output{Proof: []byte("p")}, nil
}

// TestRunnerGetsDecodedC1: a PoRep C2's C1 output reaches the runner decoded, whether it was
// decoded at submission, at run time (a deferred submission) or again after a restart, and
// equal to decoding the request's bytes.
func TestRunnerGetsDecodedC1(t *testing.T) {
	phase1 := randomC1(t)
	req := func(id string) rpcapi.ProofRequest {
		return rpcapi.ProofRequest{RequestID: id, Kind: rpcapi.KindPoRepC2,
			RegisteredProof: int64(abi.RegisteredSealProof_StackedDrg2KiBV1_1), Phase1Out: phase1}
	}
	path := filepath.Join(t.TempDir(), "j.db")
	// The first manager never runs its jobs: they are journaled, then queued again by the next.
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	held := &decodedRunner{got: map[string]*Decoded{}, hold: make(chan struct{})}
	m, err := Open(j, held, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"blocker", "restarted"} {
		if _, err := m.Submit(req(id), SubmitOpts{}); err != nil {
			t.Fatal(err)
		}
	}
	m.Close()
	j.Close()

	// "blocker" was running at the restart; "restarted" waited in the queue behind it.
	r := &decodedRunner{got: map[string]*Decoded{}}
	m2 := open(t, path, r, Config{Workers: 1})
	ids := []string{"restarted", "submitted", "deferred"}
	for _, id := range ids {
		res, err := m2.Submit(req(id), SubmitOpts{Deferred: id == "deferred"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Existing != (id == "restarted") {
			t.Fatalf("%s: existing job %v", id, res.Existing)
		}
		if _, err := m2.Await(context.Background(), res.JobID); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	want, _, err := c1.Decode(phase1)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		dec := r.got[id]
		if dec == nil || dec.C1 == nil || dec.SealProof == nil || dec.SealProof.Name != "StackedDrg2KiBV1_1" {
			t.Fatalf("%s: runner got %+v, want the decoded C1 output", id, dec)
		}
		if !reflect.DeepEqual(dec.C1, want) {
			t.Fatalf("%s: decoded C1 output differs from decoding the request", id)
		}
	}
}

// TestValidateFields: a front door that decoded the C1 output itself skips that decode, and
// every other check still holds.
func TestValidateFields(t *testing.T) {
	req := rpcapi.ProofRequest{Kind: rpcapi.KindPoRepC2, RegisteredProof: int64(abi.RegisteredSealProof_StackedDrg2KiBV1_1), Phase1Out: []byte("{}")}
	if err := ValidateFields(&req); err != nil {
		t.Fatalf("fields only: %v", err)
	}
	var br *rpcapi.ErrBadRequest
	if err := Validate(&req); !errors.As(err, &br) || br.Field != "Phase1Out" {
		t.Fatalf("full validation of an empty C1 output: %v", err)
	}
	req.SectorSize = 1 << 30
	if err := ValidateFields(&req); !errors.As(err, &br) || br.Field != "SectorSize" {
		t.Fatalf("fields only, wrong sector size: %v", err)
	}
}

// randomC1 is the C1 output JSON of a sector sealed by snarkd's own sealer (2KiB, miner 1000).
func randomC1(t *testing.T) []byte {
	t.Helper()
	o, err := sealer.RandomC1(context.Background(), must(prooftypes.LookupName("StackedDrg2KiBV1_1")), 1000, 1, mrand.NewChaCha8([32]byte{1}))
	if err != nil {
		t.Fatal(err)
	}
	phase1, err := o.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return phase1
}

// TestDecodedQueuedBounded: at most MaxDecodedQueued queued jobs keep their decoded request (the
// rest decode it when they run), and a cancelled queued job lets its go.
func TestDecodedQueuedBounded(t *testing.T) {
	phase1 := randomC1(t)
	r := &decodedRunner{got: map[string]*Decoded{}, hold: make(chan struct{})}
	m := open(t, filepath.Join(t.TempDir(), "j.db"), r, Config{Workers: 1, MaxPending: 64})
	var ids []rpcapi.JobID
	for i := range MaxDecodedQueued + 3 {
		res, err := m.Submit(rpcapi.ProofRequest{RequestID: fmt.Sprint(i), Kind: rpcapi.KindPoRepC2,
			RegisteredProof: int64(abi.RegisteredSealProof_StackedDrg2KiBV1_1), Phase1Out: phase1}, SubmitOpts{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.JobID)
	}
	held := func() int {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.decodedQueued
	}
	if n := held(); n > MaxDecodedQueued || n < MaxDecodedQueued-1 {
		t.Fatalf("%d queued jobs keep their decoded request, want at most %d", n, MaxDecodedQueued)
	}
	// Cancel every job but the first (running or about to): none keeps anything.
	for _, id := range ids[1:] {
		if _, err := m.Cancel(id); err != nil {
			t.Fatal(err)
		}
	}
	close(r.hold)
	if _, err := m.Await(context.Background(), ids[0]); err != nil {
		t.Fatal(err)
	}
	if n := held(); n != 0 {
		t.Fatalf("%d cancelled jobs still keep their decoded request", n)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if dec := r.got["0"]; dec == nil || dec.C1 == nil {
		t.Fatalf("the job that ran got %+v", dec)
	}
}
