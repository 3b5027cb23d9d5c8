package lotus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/ipfs/go-cid"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/commcid"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/plugin/journal"
	"github.com/snarkd/snarkd/rpcapi"
)

// failRunner fails every job as a prover without the kind's circuit would.
type failRunner struct{}

func (failRunner) Supports(k rpcapi.ProofKind) error { return nil }
func (failRunner) Run(context.Context, jobs.Task, jobs.Report) (jobs.Output, error) {
	return jobs.Output{}, &rpcapi.ErrNotSupportedYet{Kind: rpcapi.KindPoRepC2, Reason: "no circuit"}
}

// fakeMiner answers Return* with scripted errors.
type fakeMiner struct {
	rpcapi.Miner
	mu      sync.Mutex
	answers []error // consumed one per call; nil when exhausted
	got     []rpcapi.CallError
	calls   int
	done    chan struct{}
}

func (f *fakeMiner) ReturnSealCommit2(_ context.Context, c rpcapi.CallID, p rpcapi.Proof, e *rpcapi.CallError) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	var err error
	if len(f.answers) > 0 {
		err, f.answers = f.answers[0], f.answers[1:]
	}
	if e != nil {
		f.got = append(f.got, *e)
	}
	if err == nil || err.Error() == "result for call x already reported" {
		close(f.done)
	}
	return err
}

func TestDelivererRetriesUntilAccepted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []error
		calls   int
	}{
		{"accepted at once", nil, 1},
		{"miner down twice", []error{errors.New("connection refused"), errors.New("connection refused")}, 3},
		{"already reported", []error{errors.New("timeout"), errors.New("result for call x already reported")}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := journal.Open(filepath.Join(t.TempDir(), "j.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			m, err := jobs.Open(j, failRunner{}, jobs.Config{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			miner := &fakeMiner{answers: tc.answers, done: make(chan struct{})}
			d := NewDeliverer(m, func(context.Context) (rpcapi.Miner, error) { return miner, nil }, "w1", time.Millisecond, 4*time.Millisecond)
			defer d.Close()
			m.OnFinal(d.OnFinal)
			w := NewWorkerAPI(m, "w1", nil, nil)
			call, err := w.SealCommit2(context.Background(), rpcapi.SectorRef{ID: abi.SectorID{Miner: 1000, Number: 9}, ProofType: 8}, []byte(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-miner.done:
			case <-time.After(time.Minute):
				t.Fatal("never delivered")
			}
			job := waitDelivered(t, m, call)
			miner.mu.Lock()
			defer miner.mu.Unlock()
			if miner.calls != tc.calls {
				t.Fatalf("%d Return calls, want %d", miner.calls, tc.calls)
			}
			want := fmt.Sprintf("%s [name: w1]", job.Error)
			if miner.got[0].Code != rpcapi.ErrUnknown || miner.got[0].Message != want {
				t.Fatalf("CallError %+v, want code 0 %q", miner.got[0], want)
			}
		})
	}
}

func waitDelivered(t *testing.T, m *jobs.Manager, call rpcapi.CallID) rpcapi.Job {
	t.Helper()
	for i := 0; i < 2000; i++ {
		for _, j := range m.Jobs(rpcapi.JobFilter{}) {
			if j.CallID != nil && *j.CallID == call && j.Delivered {
				return j
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("job not marked delivered")
	return rpcapi.Job{}
}

func TestWorkerURL(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
		err  bool
	}{
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 9810}, "http://10.0.0.5:9810/rpc/v0", false},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 1}, "http://[::1]:1/rpc/v0", false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 1}, "", true},
	} {
		got, err := WorkerURL(tc.addr)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%v: %q %v", tc.addr, got, err)
		}
	}
}

func TestUpdateCommitments(t *testing.T) {
	var d c1.Domain
	d[0] = 9
	sealed, _ := commcid.SealedCID(d)
	unsealed, _ := commcid.UnsealedCID(d)
	names := [3]string{"sectorKey", "newSealed", "newUnsealed"}
	comms, err := UpdateCommitments(sealed, sealed, unsealed, names)
	if err != nil || len(comms) != 3 || comms[2][0] != 9 {
		t.Fatalf("%x %v", comms, err)
	}
	for _, tc := range []struct {
		args  [3]cid.Cid
		field string
	}{
		{[3]cid.Cid{cid.Undef, sealed, unsealed}, "sectorKey"},
		{[3]cid.Cid{sealed, unsealed, unsealed}, "newSealed"}, // an unsealed CID where a sealed one goes
		{[3]cid.Cid{sealed, sealed, sealed}, "newUnsealed"},
		{[3]cid.Cid{sealed, cid.MustParse("bafy2bzacea3wsdh6y3a36tb3skempjoxqpuyompjbmfeyf34fi3uy6uue42v4"), unsealed}, "newSealed"},
	} {
		_, err := UpdateCommitments(tc.args[0], tc.args[1], tc.args[2], names)
		var bad *rpcapi.ErrBadRequest
		if !errors.As(err, &bad) || bad.Field != tc.field {
			t.Errorf("%v: error %v, want a bad request naming %s", tc.args, err, tc.field)
		}
	}
}
