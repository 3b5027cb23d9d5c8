package cuzk

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/plugin"
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
// reached in process through its handler with a write token.
func TestStartDaemon(t *testing.T) {
	repo := t.TempDir()
	d, err := plugin.Open(config.Default(), plugin.Options{Repo: repo, BackendName: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	token := func(p rpcapi.Permission) string {
		perms, ok := rpcapi.PermsUpTo(p)
		if !ok {
			t.Fatalf("unknown permission %s", p)
		}
		tok, err := d.Secret().NewToken(perms)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	start := func(tok, sock string) pb.ProvingEngineClient {
		srv, err := StartDaemon(config.Cuzk{ListenAddress: "unix://" + filepath.Join(repo, sock), MaxMessageBytes: config.MinCuzkMessageBytes}, d.Handler(), tok)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Stop() })
		c, conn, err := cuzktest.Dial(srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return c
	}
	ctx := context.Background()
	c := start(token(rpcapi.PermWrite), "cuzk.sock")
	res, err := c.Prove(ctx, &pb.ProveRequest{Submit: testReq("daemon-1", testN, 9, pb.Priority_NORMAL)})
	if err != nil || res.Result.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("Prove: %v %v", res, err)
	}
	verifyTest(t, res.Result.Proof, testN, 9)
	m, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{})
	if err != nil || !strings.Contains(m.PrometheusText, `snarkd_jobs_completed_total{kind="test"} 1`) {
		t.Fatalf("GetMetrics: %v\n%s", err, m.GetPrometheusText())
	}

	// A token without write permission is a wiring bug: it surfaces as Internal, naming it.
	ro := start(token(rpcapi.PermRead), "ro.sock")
	_, err = ro.SubmitProof(ctx, testReq("daemon-2", testN, 9, pb.Priority_NORMAL))
	wantCode(t, err, codes.Internal, "missing permission")
}
