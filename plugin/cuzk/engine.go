package cuzk

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/filecoin-project/go-jsonrpc"

	"github.com/snarkd/snarkd/rpcapi"
)

// Engine is the part of the native Prover API the service needs. rpcapi.Prover satisfies it,
// so the service is backed by the daemon's job manager however that API is reached.
type Engine interface {
	Submit(ctx context.Context, req rpcapi.ProofRequest) (rpcapi.SubmitResult, error)
	Await(ctx context.Context, id rpcapi.JobID) (rpcapi.JobResult, error)
	Cancel(ctx context.Context, id rpcapi.JobID) (bool, error)
	Status(ctx context.Context) (rpcapi.StatusInfo, error)
	Jobs(ctx context.Context, f rpcapi.JobFilter) ([]rpcapi.Job, error)
}

// HandlerEngine reaches the daemon's native API and /metrics in process, through its HTTP
// handler, with a token of write permission: the daemon offers no other way in without
// editing it, and this keeps its permission checks and typed errors on the path.
type HandlerEngine struct {
	rpcapi.Prover
	handler http.Handler
	token   string
	closer  jsonrpc.ClientCloser
}

// NewHandlerEngine serves the Engine from h (the daemon's Handler) with token.
func NewHandlerEngine(h http.Handler, token string) (*HandlerEngine, error) {
	e := &HandlerEngine{handler: h, token: token}
	var c rpcapi.ProverStruct
	closer, err := jsonrpc.NewCustomClient(rpcapi.ProverNamespace, []interface{}{&c.Internal},
		func(ctx context.Context, body []byte) (io.ReadCloser, error) {
			b, code, err := e.do(ctx, http.MethodPost, "/rpc/v0", body)
			if err != nil {
				return nil, err
			}
			if code == http.StatusRequestEntityTooLarge {
				return nil, &ErrTooLarge{Bytes: len(body)}
			}
			if code != http.StatusOK {
				return nil, fmt.Errorf("native API answered HTTP %d: %s", code, bytes.TrimSpace(b))
			}
			return io.NopCloser(bytes.NewReader(b)), nil
		}, jsonrpc.WithErrors(rpcapi.RPCErrors))
	if err != nil {
		return nil, fmt.Errorf("in-process native API client: %w", err)
	}
	e.Prover, e.closer = &c, closer
	return e, nil
}

// ErrTooLarge is a request the daemon's native API refused for its size: as JSON (base64
// bytes) it is larger than API.MaxRequestBytes.
type ErrTooLarge struct {
	Bytes int
}

func (e *ErrTooLarge) Error() string {
	return fmt.Sprintf("request of %d bytes as JSON exceeds API.MaxRequestBytes; raise it to about 4/3 of Cuzk.MaxMessageBytes", e.Bytes)
}

// Close releases the client.
func (e *HandlerEngine) Close() { e.closer() }

// Metrics returns the daemon's /metrics text.
func (e *HandlerEngine) Metrics(ctx context.Context) (string, error) {
	b, code, err := e.do(ctx, http.MethodGet, "/metrics", nil)
	if err != nil {
		return "", err
	}
	if code != http.StatusOK {
		return "", fmt.Errorf("/metrics answered HTTP %d: %s", code, bytes.TrimSpace(b))
	}
	return string(b), nil
}

func (e *HandlerEngine) do(ctx context.Context, method, path string, body []byte) ([]byte, int, error) {
	r, err := http.NewRequestWithContext(ctx, method, "http://in-process"+path, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	r.RemoteAddr = "in-process:cuzk"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+e.token)
	w := &recorder{header: http.Header{}, code: http.StatusOK}
	e.handler.ServeHTTP(w, r)
	return w.body.Bytes(), w.code, nil
}

// recorder is a minimal in-memory http.ResponseWriter.
type recorder struct {
	header http.Header
	code   int
	wrote  bool
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.wrote = true
	return w.body.Write(b)
}
