package cuzk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/plugin"
	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestHandlerEngineTooLarge: a request the native API refuses for its size (HTTP 413) reaches a
// gRPC client as ResourceExhausted naming the setting, not as an internal error.
func TestHandlerEngineTooLarge(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("in-process request without the token: %q", r.Header.Get("Authorization"))
		}
		w.WriteHeader(http.StatusRequestEntityTooLarge)
	})
	e, err := NewHandlerEngine(h, "tok")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	_, err = e.Submit(ctx, rpcapi.ProofRequest{Kind: rpcapi.KindTest})
	wantCode(t, grpcError(ctx, err), codes.ResourceExhausted, "API.MaxRequestBytes")
	if _, err := e.Metrics(ctx); err == nil {
		t.Fatal("Metrics of a failing handler succeeded")
	}
}

func TestRecoverPanic(t *testing.T) {
	_, err := recoverPanic(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/cuzk.v1.ProvingEngine/Prove"},
		func(context.Context, any) (any, error) { panic("decoder bug") })
	wantCode(t, err, codes.Internal, "decoder bug")
}

// TestStartDaemon runs the service the way `snarkd run --cuzk-listen` does: on a real daemon,
// reached in process; PreloadSRS, EvictSRS and GetStatus work on the daemon's parameter cache,
// and AwaitProof reports the parameter load a proof paid.
func TestStartDaemon(t *testing.T) {
	repo := t.TempDir()
	d, err := plugin.Open(config.Default(), plugin.Options{Repo: repo, BackendName: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv, err := StartDaemon(config.Cuzk{ListenAddress: "unix://" + filepath.Join(repo, "cuzk.sock"), MaxMessageBytes: config.MinCuzkMessageBytes}, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	c, conn, err := cuzktest.Dial(srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx := context.Background()
	res, err := c.Prove(ctx, &pb.ProveRequest{Submit: testReq("daemon-1", testN, 9, pb.Priority_NORMAL)})
	if err != nil || res.Result.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("Prove: %v %v", res, err)
	}
	verifyTest(t, res.Result.Proof, testN, 9)
	if res.Result.SrsLoadMs == 0 {
		t.Errorf("srs_load_ms = 0 for a proof that generated its parameters")
	}
	m, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{})
	if err != nil || !strings.Contains(m.PrometheusText, `snarkd_jobs_completed_total{kind="test"} 1`) {
		t.Fatalf("GetMetrics: %v\n%s", err, m.GetPrometheusText())
	}

	name := fmt.Sprintf("test-%d-9", testN)
	st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil || len(st.LoadedSrs) != 1 || st.LoadedSrs[0].CircuitId != name || st.LoadedSrs[0].Tier != pb.SRSStatus_HOT {
		t.Fatalf("GetStatus: %v %v", st, err)
	}
	size := st.LoadedSrs[0].SizeBytes
	if want := d.Params().Loaded()[0].Bytes; size == 0 || size != want {
		t.Fatalf("loaded_srs size %d, want the cache's %d", size, want)
	}
	pre, err := c.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: name})
	if err != nil || !pre.AlreadyLoaded {
		t.Fatalf("PreloadSRS of loaded parameters: %v %v", pre, err)
	}
	_, err = c.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "porep-32g"})
	wantCode(t, err, codes.FailedPrecondition, "parameters for StackedDrg32GiBV1_1 not found")
	ev, err := c.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: name})
	if err != nil || !ev.WasLoaded || ev.FreedBytes != size {
		t.Fatalf("EvictSRS: %v %v; want %d bytes freed", ev, err, size)
	}
	if st, err := c.GetStatus(ctx, &pb.GetStatusRequest{}); err != nil || len(st.LoadedSrs) != 0 {
		t.Fatalf("GetStatus after EvictSRS: %v %v", st, err)
	}
	// The next proof loads the parameters again (from the repo, where the first one wrote them).
	res, err = c.Prove(ctx, &pb.ProveRequest{Submit: testReq("daemon-2", testN, 9, pb.Priority_NORMAL)})
	if err != nil || res.Result.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("Prove after EvictSRS: %v %v", res, err)
	}
	if st, err := c.GetStatus(ctx, &pb.GetStatusRequest{}); err != nil || len(st.LoadedSrs) != 1 || st.LoadedSrs[0].SizeBytes != size {
		t.Fatalf("GetStatus after the reload: %v %v", st, err)
	}

	// The daemon's native API keeps a done job's request ID bound to its content; the cuzk
	// service (its context marked as the cuzk front door) proves new content under it.
	other := rpcapi.ProofRequest{RequestID: "daemon-2", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: testN, Seed: 10}}
	if _, err := d.Prover().Submit(ctx, other); !errors.As(err, new(*rpcapi.ErrRequestConflict)) {
		t.Fatalf("native Submit of new content under a done job's ID: %v; want a conflict", err)
	}
	redo, err := c.Prove(ctx, &pb.ProveRequest{Submit: testReq("daemon-2", testN, 10, pb.Priority_NORMAL)})
	if err != nil || redo.Result.Status != pb.AwaitProofResponse_COMPLETED || redo.Result.JobId == res.Result.JobId {
		t.Fatalf("cuzk redo of daemon-2: %v %v; want a new completed job", redo, err)
	}
	verifyTest(t, redo.Result.Proof, testN, 10)
	js, err := d.Prover().Jobs(ctx, rpcapi.JobFilter{JobIDs: []rpcapi.JobID{rpcapi.JobID(redo.Result.JobId)}})
	if err != nil || len(js) != 1 || js[0].Origin != rpcapi.OriginCuzk {
		t.Fatalf("redo job: %+v %v; want origin cuzk", js, err)
	}
}
