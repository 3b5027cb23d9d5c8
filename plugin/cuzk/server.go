package cuzk

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/snarkd/snarkd/config"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// KeepaliveTime is how long a connection may be silent before the server pings the client.
const KeepaliveTime = time.Minute

// StopGrace is how long Stop lets calls in flight finish before closing their connections.
const StopGrace = 10 * time.Second

// Address is a parsed Cuzk.ListenAddress.
type Address struct {
	// Network is "unix" or "tcp".
	Network string
	// Addr is the socket path or host:port.
	Addr string
}

// ParseAddress reads unix:///path.sock or host:port (tcp:// prefix allowed).
func ParseAddress(s string) (Address, error) {
	if path, ok := strings.CutPrefix(s, "unix://"); ok {
		if !filepath.IsAbs(path) {
			return Address{}, fmt.Errorf("cuzk listen address %q: want unix:///absolute/path.sock", s)
		}
		return Address{Network: "unix", Addr: path}, nil
	}
	hostport := strings.TrimPrefix(s, "tcp://")
	if _, _, err := net.SplitHostPort(hostport); err != nil {
		return Address{}, fmt.Errorf("cuzk listen address %q: want unix:///path.sock or host:port: %w", s, err)
	}
	return Address{Network: "tcp", Addr: hostport}, nil
}

// Loopback reports whether a TCP address can only be reached from this host (unix sockets
// count as local).
func (a Address) Loopback() bool {
	if a.Network == "unix" {
		return true
	}
	host, _, err := net.SplitHostPort(a.Addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// listen opens the address; a unix socket's directory is created, a stale socket file left by
// a killed daemon is replaced, and the socket is made group-accessible for a Curio running
// under another user of the same group.
func listen(a Address) (net.Listener, error) {
	if a.Network == "tcp" {
		ln, err := net.Listen("tcp", a.Addr)
		if err != nil {
			return nil, fmt.Errorf("cuzk service: listening on %s: %w", a.Addr, err)
		}
		return ln, nil
	}
	if err := os.MkdirAll(filepath.Dir(a.Addr), 0o755); err != nil {
		return nil, fmt.Errorf("cuzk service: creating socket directory: %w", err)
	}
	if fi, err := os.Lstat(a.Addr); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("cuzk service: %s exists and is not a socket", a.Addr)
		}
		if c, err := net.DialTimeout("unix", a.Addr, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("cuzk service: %s is in use by another process", a.Addr)
		}
		if err := os.Remove(a.Addr); err != nil {
			return nil, fmt.Errorf("cuzk service: removing stale socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", a.Addr)
	if err != nil {
		return nil, fmt.Errorf("cuzk service: listening on %s: %w", a.Addr, err)
	}
	if err := os.Chmod(a.Addr, 0o660); err != nil {
		ln.Close()
		return nil, fmt.Errorf("cuzk service: socket permissions: %w", err)
	}
	return ln, nil
}

// ServerOptions builds the gRPC options for cfg: message limits, TLS and the token check.
func ServerOptions(cfg config.Cuzk) ([]grpc.ServerOption, error) {
	max := int(cfg.MaxMessageBytes)
	if max < config.MinCuzkMessageBytes {
		max = config.MinCuzkMessageBytes
	}
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(max), grpc.MaxSendMsgSize(max),
		// A Prove call is silent for as long as the proof takes (Curio allows 30 minutes): ping
		// the client so that a dead one is noticed and idle NAT or firewall state stays alive.
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: KeepaliveTime, Timeout: 20 * time.Second}),
		grpc.ChainUnaryInterceptor(recoverPanic),
	}
	if cfg.TLSCertFile != "" {
		tc, err := tlsConfig(cfg)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(tc)))
	}
	if cfg.Token != "" {
		want := []byte("Bearer " + cfg.Token)
		opts = append(opts, grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
			if err := checkToken(ctx, want); err != nil {
				log.Warnw("refused call without a valid token", "method", info.FullMethod, "err", err)
				return nil, err
			}
			return next(ctx, req)
		}))
	}
	return opts, nil
}

// recoverPanic keeps a bug reached by one request (the decoders see untrusted bytes) from
// taking down the daemon and every other caller's proof with it.
func recoverPanic(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Errorw("cuzk call panicked", "method", info.FullMethod, "panic", r, "stack", string(debug.Stack()))
			resp, err = nil, status.Errorf(codes.Internal, "internal error handling %s: %v", info.FullMethod, r)
		}
	}()
	return next(ctx, req)
}

func checkToken(ctx context.Context, want []byte) error {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return status.Error(codes.Unauthenticated, "missing \"authorization: Bearer <token>\" metadata (Cuzk.Token is set)")
	}
	for _, v := range vals {
		if subtle.ConstantTimeCompare([]byte(v), want) == 1 {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "invalid bearer token")
}

func tlsConfig(cfg config.Cuzk) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("cuzk service: loading Cuzk.TLSCertFile/TLSKeyFile: %w", err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if cfg.TLSClientCAFile != "" {
		pem, err := os.ReadFile(cfg.TLSClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("cuzk service: reading Cuzk.TLSClientCAFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("cuzk service: Cuzk.TLSClientCAFile %s holds no PEM certificate", cfg.TLSClientCAFile)
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// Server is the running gRPC service. Start it with Start; Stop ends it.
type Server struct {
	grpc *grpc.Server
	ln   net.Listener
	addr Address
	done chan error
	once sync.Once
}

// Start listens on cfg.ListenAddress and serves svc in the background. Listening happens
// before Start returns, so a taken address fails the daemon's start.
func Start(cfg config.Cuzk, svc pb.ProvingEngineServer) (*Server, error) {
	a, err := ParseAddress(cfg.ListenAddress)
	if err != nil {
		return nil, err
	}
	opts, err := ServerOptions(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := listen(a)
	if err != nil {
		return nil, err
	}
	if a.Network == "tcp" {
		a.Addr = ln.Addr().String()
	}
	switch {
	case a.Loopback() || cfg.Token != "" || cfg.TLSClientCAFile != "":
	case cfg.TLSCertFile == "":
		log.Warnw("cuzk gRPC service listens on a non-loopback address without Cuzk.Token or TLS: anyone who can reach it can submit and cancel proofs; prefer a unix socket, a loopback address with an SSH tunnel, or a firewall that admits only the Curio hosts",
			"listen", a.Addr)
	default:
		log.Warnw("cuzk gRPC service listens on a non-loopback address with TLS but neither Cuzk.Token nor Cuzk.TLSClientCAFile: traffic is encrypted, but any client that can reach it can submit and cancel proofs",
			"listen", a.Addr)
	}
	g := grpc.NewServer(opts...)
	pb.RegisterProvingEngineServer(g, svc)
	s := &Server{grpc: g, ln: ln, addr: a, done: make(chan error, 1)}
	go func() { s.done <- g.Serve(ln) }()
	log.Infow("cuzk gRPC service listening", "network", a.Network, "addr", a.Addr,
		"token", cfg.Token != "", "tls", cfg.TLSCertFile != "", "max_message_bytes", int64(cfg.MaxMessageBytes))
	return s, nil
}

// Addr is where the service listens (the bound port for tcp).
func (s *Server) Addr() Address { return s.addr }

// Stop lets calls in flight finish for up to StopGrace, then closes everything and removes a
// unix socket file.
func (s *Server) Stop() error {
	var err error
	s.once.Do(func() {
		stopped := make(chan struct{})
		go func() {
			s.grpc.GracefulStop()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(StopGrace):
			log.Warnw("cuzk gRPC calls still running after the grace period; closing them", "grace", StopGrace)
			s.grpc.Stop()
			<-stopped
		}
		if serr := <-s.done; serr != nil && !errors.Is(serr, grpc.ErrServerStopped) {
			err = fmt.Errorf("cuzk service: %w", serr)
		}
		if s.addr.Network == "unix" {
			_ = os.Remove(s.addr.Addr)
		}
	})
	return err
}

// Daemon is what the service needs of the daemon (*plugin.Daemon): its native API in process,
// its parameter cache and its metrics text.
type Daemon interface {
	Prover() rpcapi.Prover
	Params() *prover.ParamCache
	Metrics(ctx context.Context) (string, error)
}

// StartDaemon starts the service for d. Requests go to d's job manager in process, as the
// structs the gRPC layer decoded: no JSON or base64 round trip, and no API.MaxRequestBytes
// (Cuzk.MaxMessageBytes bounds them). PreloadSRS and EvictSRS work on d's parameter cache.
func StartDaemon(cfg config.Cuzk, d Daemon) (*Server, error) {
	return Start(cfg, NewService(d.Prover(), Options{Metrics: d.Metrics, SRS: NewParamSRS(d.Params())}))
}

// String renders the address as Curio's [Cuzk] Address takes it.
func (a Address) String() string {
	if a.Network == "unix" {
		return "unix://" + a.Addr
	}
	return a.Addr
}
