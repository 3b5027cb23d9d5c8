// Package plugin is the snarkd daemon: it wires the JSON-RPC API, health endpoints and (as they
// land) auth, the job manager and metrics into one HTTP server.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/filecoin-project/go-jsonrpc"
	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/rpcapi"
)

var log = logging.Logger("snarkd/plugin")

// RPCPath is where both JSON-RPC namespaces are served, as Lotus serves its worker API.
const RPCPath = "/rpc/v0"

// Server is the daemon's HTTP front: /rpc/v0 and /healthz.
type Server struct {
	cfg     config.Config
	handler http.Handler
}

// New builds the daemon's HTTP handler around the native prover API implementation.
func New(cfg config.Config, prover rpcapi.Prover) *Server {
	rpc := jsonrpc.NewServer(jsonrpc.WithMaxRequestSize(int64(cfg.API.MaxRequestBytes)))
	rpc.Register(rpcapi.ProverNamespace, prover)

	mux := http.NewServeMux()
	mux.Handle(RPCPath, rpc)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	return &Server{cfg: cfg, handler: mux}
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
