// Package plugin is the snarkd daemon: it wires the native Prover API and the Lotus worker API
// (both under /rpc/v0), token auth, the job manager and its journal, Lotus result delivery,
// /metrics, /status and /healthz into one HTTP server.
package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"time"

	"github.com/filecoin-project/go-jsonrpc"
	gjauth "github.com/filecoin-project/go-jsonrpc/auth"
	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/plugin/auth"
	"github.com/snarkd/snarkd/rpcapi"
)

var log = logging.Logger("snarkd/plugin")

// RPCPath is where both JSON-RPC namespaces are served, as Lotus serves its worker API.
const RPCPath = "/rpc/v0"

// Handlers are what the server exposes.
type Handlers struct {
	// Prover is the native API (namespace Prover).
	Prover rpcapi.Prover
	// Worker is the Lotus worker API (namespace Filecoin); nil leaves it out.
	Worker rpcapi.Worker
	// Verify checks bearer tokens; nil rejects every token (requests without one still get read).
	Verify func(ctx context.Context, token string) ([]rpcapi.Permission, error)
	// Metrics and Status serve /metrics and /status; nil leaves them out.
	Metrics http.Handler
	Status  http.Handler
}

// Server is the daemon's HTTP front.
type Server struct {
	cfg     config.Config
	handler http.Handler
}

// New builds the HTTP handler. Every method is wrapped in a permission check (tags in rpcapi);
// requests without a token get read permission only, as in Lotus.
func New(cfg config.Config, h Handlers) *Server {
	max := int64(cfg.API.MaxRequestBytes)
	rpc := jsonrpc.NewServer(jsonrpc.WithMaxRequestSize(max), jsonrpc.WithServerErrors(rpcapi.RPCErrors))
	var ps rpcapi.ProverStruct
	auth.Permissioned(h.Prover, &ps.Internal)
	rpc.Register(rpcapi.ProverNamespace, &ps)
	if h.Worker != nil {
		var ws rpcapi.WorkerStruct
		auth.Permissioned(h.Worker, &ws.Internal)
		rpc.Register(rpcapi.WorkerNamespace, &ws)
	}
	verify := h.Verify
	if verify == nil {
		verify = func(context.Context, string) ([]rpcapi.Permission, error) {
			return nil, errors.New("this server accepts no tokens")
		}
	}
	authed := func(next http.Handler) http.Handler {
		return &gjauth.Handler{Verify: verify, Next: next.ServeHTTP}
	}
	mux := http.NewServeMux()
	mux.Handle(RPCPath, requireJSON(authed(limitBody(max, rpc))))
	if h.Metrics != nil {
		mux.Handle("/metrics", authed(requirePerm(rpcapi.PermRead, h.Metrics)))
	}
	if h.Status != nil {
		mux.Handle("/status", authed(requirePerm(rpcapi.PermRead, h.Status)))
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	return &Server{cfg: cfg, handler: mux}
}

// limitBody answers a request whose declared size exceeds max at once, with 413 and a JSON-RPC
// error naming the limit, without reading the body. Requests of unknown length are bounded by
// go-jsonrpc's own limit.
func limitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			log.Warnw("refused oversize request", "bytes", r.ContentLength, "max", max, "remote", r.RemoteAddr)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_ = json.NewEncoder(w).Encode(map[string]interface{}{
				"jsonrpc": "2.0", "id": nil,
				"error": map[string]interface{}{
					"code":    -32700,
					"message": fmt.Sprintf("request of %d bytes is bigger than the maximum %d allowed (API.MaxRequestBytes)", r.ContentLength, max),
				},
			})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireJSON refuses HTTP JSON-RPC requests sent as an HTML form (curl -d without a
// Content-Type header sends application/x-www-form-urlencoded): the token handler would parse
// the body as form fields and JSON-RPC would see an empty request. The answer names the header.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnsupportedMediaType)
				_ = json.NewEncoder(w).Encode(map[string]interface{}{
					"jsonrpc": "2.0", "id": nil,
					"error": map[string]interface{}{
						"code": -32600,
						"message": fmt.Sprintf("Content-Type %s: JSON-RPC requests are JSON; send the header "+
							"Content-Type: application/json (curl: -H 'Content-Type: application/json')", ct),
					},
				})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func requirePerm(p rpcapi.Permission, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !auth.HasPerm(r.Context(), p) {
			http.Error(w, fmt.Sprintf("missing permission %q", p), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Handler exposes the routes, for tests that serve them on their own listener.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve answers on ln until ctx is cancelled, then shuts down gracefully: in-flight requests get
// up to grace to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	log.Infow("shutting down API server", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
		return fmt.Errorf("shutting down API server: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
