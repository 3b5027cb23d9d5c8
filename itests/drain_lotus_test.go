package itests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/plugin/lotus"
	"github.com/snarkd/snarkd/rpcapi"
)

// drainProveBound bounds the waits that include a 2KiB C2 (parameter load, synthesis, proving)
// on the CPU backend: seconds on an idle machine, much longer on a loaded CI runner. It only
// keeps a broken drain from hanging the run; nothing asserts on how long proving takes.
const drainProveBound = 10 * time.Minute

// TestDrainLotusC2 stops a daemon that a lotus-miner attached while it proves a SealCommit2
// call (a Go-sealed 2KiB sector, devnet parameters shared with TestPoRepC2EndToEnd): with the
// default grace the C2 finishes and the miner gets a proof that verifies; with a grace much
// shorter than the C2 the call is handed back and the miner gets code 101 with the restart
// message, so that it reschedules the sector at once. Both daemons exit 0.
func TestDrainLotusC2(t *testing.T) {
	if testing.Short() {
		// Needs the 2KiB PoRep parameters: minutes to generate on a small machine.
		t.Skip("PoRep parameters take minutes to generate")
	}
	p := porepProofType(t)
	bin := buildDaemon(t)
	dir := devnetParams(t, bin, p.Name)

	t.Run("grace lets the C2 finish", func(t *testing.T) {
		// No SNARKD_JOBS_DRAIN_GRACE: the default grace, made for a 32GiB C2 on a GPU.
		const miner, sector = 1000, 31
		phase1 := encodeC1(t, sealedC1(t, p, miner, sector, 31))
		m, d, call := startLotusC2(t, bin, dir, nil, p, miner, sector, phase1)
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// While the C2 runs on in the grace the miner's next call is refused, not queued: the
		// daemon would only hand it back at exit.
		api := d.client(t, false)
		waitFor(t, "draining in Status", func() bool {
			st, err := api.Status(context.Background())
			return err == nil && st.Draining != nil
		})
		w, _ := m.worker()
		if c, err := w.API.SealCommit2(context.Background(), rpcapi.SectorRef{ID: abi.SectorID{Miner: miner, Number: sector + 1}, ProofType: p.Proof}, phase1); err == nil || !strings.Contains(err.Error(), "draining") {
			t.Fatalf("SealCommit2 while draining: call %v, err %v; want the draining error", c, err)
		}
		ret := returnWithin(t, m, drainProveBound)
		if ret.Method != "Filecoin.ReturnSealCommit2" || ret.CallID != call || ret.Err != nil {
			t.Fatalf("return %s for %v: err %+v (call %v); want the proof", ret.Method, ret.CallID, ret.Err, call)
		}
		verifyPoRep(t, dir, p, phase1, miner, sector, ret.Proof)
		if err := d.exited(t, 2*time.Minute); err != nil {
			t.Fatalf("daemon exit: %v, want status 0", err)
		}
		requireLog(t, d, `"msg":"drained"`, `"lotus_restarted":0`)
	})

	t.Run("short grace hands the C2 back", func(t *testing.T) {
		// 200ms is far shorter than a 2KiB C2 even on an idle machine: the signal lands while
		// the job loads its parameters or proves (a fresh daemon loads them for its first C2).
		const miner, sector = 1000, 32
		phase1 := encodeC1(t, sealedC1(t, p, miner, sector, 32))
		m, d, call := startLotusC2(t, bin, dir, []string{"SNARKD_JOBS_DRAIN_GRACE=200ms"}, p, miner, sector, phase1)
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		ret := returnWithin(t, m, drainProveBound)
		want := lotus.RestartMessage("itest-worker") // SNARKD_LOTUS_WORKER_NAME in lotusEnv
		if ret.Method != "Filecoin.ReturnSealCommit2" || ret.CallID != call || ret.Proof != nil || ret.Err == nil ||
			ret.Err.Code != rpcapi.ErrTempWorkerRestart || ret.Err.Message != want {
			t.Fatalf("return %s for %v: proof %d bytes, err %+v (call %v); want code %d %q",
				ret.Method, ret.CallID, len(ret.Proof), ret.Err, call, rpcapi.ErrTempWorkerRestart, want)
		}
		if err := d.exited(t, 2*time.Minute); err != nil {
			t.Fatalf("daemon exit: %v, want status 0", err)
		}
		requireLog(t, d, "handing back a Lotus call at stop")
	})
}

// startLotusC2 starts a daemon attached to a fresh miner stand-in, sends it phase1 as the
// miner's SealCommit2 and returns once the job runs, so that a signal sent next lands during
// the C2 rather than before it starts.
func startLotusC2(t *testing.T, bin, dir string, env []string, p *prooftypes.SealProof, miner abi.ActorID, sector abi.SectorNumber, phase1 []byte) (*standIn, *daemon, rpcapi.CallID) {
	t.Helper()
	m := newStandIn(t, 100*time.Millisecond)
	env = append(append([]string{"FIL_PROOFS_PARAMETER_CACHE=" + dir}, lotusEnv...), env...)
	d := startDaemon(t, bin, t.TempDir(), env, "--miner-api-info", m.apiInfo())
	api := d.client(t, false)
	waitFor(t, "WorkerConnect", func() bool { _, ok := m.worker(); return ok })
	w, _ := m.worker()
	call, err := w.API.SealCommit2(context.Background(), rpcapi.SectorRef{ID: abi.SectorID{Miner: miner, Number: sector}, ProofType: p.Proof}, phase1)
	if err != nil {
		t.Fatal(err)
	}
	// The Lotus call's job is the daemon's only C2 job; its request ID names the call.
	var job rpcapi.Job
	waitFor(t, "the SealCommit2 job to run", func() bool {
		jobs, err := api.Jobs(context.Background(), rpcapi.JobFilter{Kinds: []rpcapi.ProofKind{rpcapi.KindPoRepC2}})
		if err != nil || len(jobs) != 1 {
			return false
		}
		job = jobs[0]
		if job.State.Final() {
			t.Fatalf("the SealCommit2 job ended before the stop: %s %s", job.State, job.Error)
		}
		return job.State == rpcapi.JobRunning
	})
	if job.RequestID != "lotus:"+call.String() {
		t.Fatalf("running C2 job %s has request ID %q, want the call %v", job.ID, job.RequestID, call)
	}
	t.Logf("SealCommit2 job %s running (stage %s); sending SIGTERM", job.ID, job.Stage)
	return m, d, call
}

// returnWithin waits for the worker's next Return* call.
func returnWithin(t *testing.T, m *standIn, bound time.Duration) recordedReturn {
	t.Helper()
	select {
	case r := <-m.retCh:
		return r
	case <-time.After(bound):
		t.Fatalf("the miner stand-in got no Return* call within %s", bound)
		return recordedReturn{}
	}
}

// requireLog fails unless one line of the daemon's log holds all of parts.
func requireLog(t *testing.T, d *daemon, parts ...string) {
	t.Helper()
	log, err := os.ReadFile(filepath.Join(d.repo, "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
lines:
	for _, line := range strings.Split(string(log), "\n") {
		for _, s := range parts {
			if !strings.Contains(line, s) {
				continue lines
			}
		}
		return
	}
	t.Fatalf("no log line with %q; log:\n%s", parts, log)
}
