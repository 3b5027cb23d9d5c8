package cuzk

import (
	"context"
	"net/http"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

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
