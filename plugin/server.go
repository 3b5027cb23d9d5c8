// Package plugin is the snarkd daemon: it wires the native Prover API and the Lotus worker API
// (both under /rpc/v0), token auth, the job manager and its journal, Lotus result delivery,
// /metrics, /status and /healthz into one HTTP server.
package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/pprof"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
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
	// Metrics and Status serve /metrics and /status, UI the status page /ui; nil leaves them out.
	Metrics http.Handler
	Status  http.Handler
	UI      http.Handler
	// ObserveRPC, if set, hears every JSON-RPC call's method ("Prover.Submit") and duration.
	ObserveRPC func(method string, d time.Duration)
}

// Server is the daemon's HTTP front.
type Server struct {
	cfg     config.Config
	handler http.Handler
	gate    *gate
}

// New builds the HTTP handler. Every method is wrapped in a permission check (tags in rpcapi);
// requests without a token get read permission only, as in Lotus, or with API.RequireReadToken
// are refused (HTTP 401) everywhere but /healthz and /metrics. Before any body is read the
// token is checked (from the Authorization header; from the URL's token parameter only for
// GETs, which carry no body), the body is bounded (API.MaxReadRequestBytes without a token
// granting write, API.MaxRequestBytes with one) and it takes one of the slots for bodies being
// read and decoded (API.MaxConcurrentRequests for large ones).
func New(cfg config.Config, h Handlers) *Server {
	max := int64(cfg.API.MaxRequestBytes)
	rpc := jsonrpc.NewServer(jsonrpc.WithMaxRequestSize(max), jsonrpc.WithServerErrors(rpcapi.RPCErrors))
	var ps rpcapi.ProverStruct
	auth.Permissioned(h.Prover, &ps.Internal)
	wrapCalls(&ps.Internal, rpcapi.ProverNamespace, h.ObserveRPC)
	rpc.Register(rpcapi.ProverNamespace, &ps)
	if h.Worker != nil {
		var ws rpcapi.WorkerStruct
		auth.Permissioned(h.Worker, &ws.Internal)
		wrapCalls(&ws.Internal, rpcapi.WorkerNamespace, h.ObserveRPC)
		rpc.Register(rpcapi.WorkerNamespace, &ws)
	}
	verify := h.Verify
	if verify == nil {
		verify = func(context.Context, string) ([]rpcapi.Permission, error) {
			return nil, errors.New("this server accepts no tokens")
		}
	}
	g := newGate(cfg.API, verify)
	mux := http.NewServeMux()
	mux.Handle(RPCPath, g.rpc(rpc))
	if h.Metrics != nil {
		// Scrapers carry no token: API.RequireReadToken leaves /metrics open, as /healthz.
		mux.Handle("/metrics", g.get(requirePerm(rpcapi.PermRead, h.Metrics), true))
	}
	if h.Status != nil {
		mux.Handle("/status", g.get(requirePerm(rpcapi.PermRead, h.Status), false))
	}
	if h.UI != nil {
		mux.Handle("/ui", g.get(requirePerm(rpcapi.PermRead, h.UI), false))
		mux.Handle("/ui/", g.get(requirePerm(rpcapi.PermRead, h.UI), false))
	}
	// Profiles expose memory contents (heap, goroutine stacks with their arguments) and cost CPU
	// while they run, so they need admin; a token in the URL works as for the other GETs, so
	// `go tool pprof 'http://host:port/debug/pprof/heap?token=...'` reaches them.
	mux.Handle(pprofPath, g.get(requirePerm(rpcapi.PermAdmin, pprofHandler()), false))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	return &Server{cfg: cfg, handler: mux, gate: g}
}

// pprofPath is the prefix of the Go runtime profiles (net/http/pprof), served to admin tokens.
const pprofPath = "/debug/pprof/"

// pprofHandler serves net/http/pprof's routes on their own mux: importing the package also
// registers them on http.DefaultServeMux, which the daemon does not serve.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(pprofPath, pprof.Index) // the index and every named profile (heap, goroutine, ...)
	mux.HandleFunc(pprofPath+"cmdline", pprof.Cmdline)
	mux.HandleFunc(pprofPath+"profile", pprof.Profile)
	mux.HandleFunc(pprofPath+"symbol", pprof.Symbol)
	mux.HandleFunc(pprofPath+"trace", pprof.Trace)
	return mux
}

// Bounds on request bodies that are not configurable.
const (
	// maxSmallBodies bounds the request bodies of at most API.MaxReadRequestBytes read and
	// decoded at once (256 × 64 KiB by default).
	maxSmallBodies = 256
	// slotWait is how long a request waits for a body slot before it is answered 503: long
	// enough for a burst of C2 requests from a lotus-miner to go through one after another
	// (a waiting request holds no body in memory).
	slotWait = 30 * time.Second
	// retryAfter is the Retry-After of that answer, in seconds.
	retryAfter = "5"
)

// JSON-RPC error codes of the answers the gate gives itself.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeServerBusy     = -32000
)

// gate checks the token and bounds a request's body before anything reads it.
type gate struct {
	verify   func(ctx context.Context, token string) ([]rpcapi.Permission, error)
	maxRead  int64 // bodies without a token granting write
	maxWrite int64 // bodies with one
	small    chan struct{}
	large    chan struct{}
	wait     time.Duration
	// requireToken refuses requests without a token on routes that are not open
	// (API.RequireReadToken).
	requireToken bool
}

func newGate(api config.API, verify func(context.Context, string) ([]rpcapi.Permission, error)) *gate {
	return &gate{
		verify:   verify,
		maxRead:  int64(api.MaxReadRequestBytes),
		maxWrite: int64(api.MaxRequestBytes),
		small:    make(chan struct{}, maxSmallBodies),
		large:    make(chan struct{}, api.MaxConcurrentRequests),
		wait:     slotWait,

		requireToken: api.RequireReadToken,
	}
}

// refusal is an answer given instead of serving a request.
type refusal struct {
	status int
	code   int
	msg    string
}

// authenticate returns r's context with the permissions of its token, or the refusal of a bad
// one. The token comes from the Authorization header, or with allowQuery (GETs: websocket
// connections and scrapes, which carry no body) from the URL's token parameter; a request
// body is never parsed for it. With API.RequireReadToken a request without a token is refused
// unless the route is open.
func (g *gate) authenticate(r *http.Request, allowQuery, open bool) (context.Context, *refusal) {
	ctx := r.Context()
	hdr := r.Header.Get("Authorization")
	if hdr == "" {
		if q := r.URL.Query().Get("token"); q != "" {
			if !allowQuery {
				return nil, &refusal{http.StatusUnauthorized, codeInvalidRequest, fmt.Sprintf("a token in the URL is "+
					"accepted only on GET (websocket) requests; send %s requests the header Authorization: Bearer <token>", r.Method)}
			}
			hdr = "Bearer " + q
		}
	}
	if hdr == "" {
		if g.requireToken && !open {
			return nil, &refusal{http.StatusUnauthorized, codeInvalidRequest, "this server requires a token for reads " +
				"(API.RequireReadToken); send Authorization: Bearer <token>"}
		}
		return ctx, nil
	}
	tok, ok := strings.CutPrefix(hdr, "Bearer ")
	if !ok {
		log.Warnw("refused request: Authorization header without Bearer prefix", "remote", r.RemoteAddr)
		return nil, &refusal{http.StatusUnauthorized, codeInvalidRequest, `Authorization header: want "Bearer <token>"`}
	}
	perms, err := g.verify(ctx, tok)
	if err != nil {
		log.Warnw("refused request: token does not verify", "remote", r.RemoteAddr, "error", err)
		return nil, &refusal{http.StatusUnauthorized, codeInvalidRequest, "invalid API token"}
	}
	return gjauth.WithPerm(ctx, perms), nil
}

// get serves GET and HEAD requests of a plain HTTP route with the token's permissions; an open
// route answers without a token even with API.RequireReadToken.
func (g *gate) get(next http.Handler, open bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, fmt.Sprintf("method %s not allowed; use GET", r.Method), http.StatusMethodNotAllowed)
			return
		}
		ctx, ref := g.authenticate(r, true, open)
		if ref != nil {
			http.Error(w, ref.msg, ref.status)
			return
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// rpc fronts the JSON-RPC server: it refuses other methods and form bodies, checks the token,
// refuses a declared body over the caller's limit at once (413), bounds an undeclared one as
// it is read (413 when it goes over), waits up to slotWait for a body slot (503 with
// Retry-After when none frees) and answers JSON type errors in params with the typed
// bad-request error. Websocket connections (GET with Connection: upgrade) pass after the
// token check, each of their messages bounded by the same limit (wsLimitWriter).
func (g *gate) rpc(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost && r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET, POST")
			refuse(w, nil, &refusal{http.StatusMethodNotAllowed, codeInvalidRequest, fmt.Sprintf("method %s: JSON-RPC "+
				"requests are POSTs (websocket connections GETs)", r.Method)})
			return
		}
		if ref := formBody(r); ref != nil {
			refuse(w, nil, ref)
			return
		}
		ctx, ref := g.authenticate(r, r.Method == http.MethodGet, false)
		if ref != nil {
			refuse(w, nil, ref)
			return
		}
		r = r.WithContext(ctx)
		limit, setting := g.maxRead, "API.MaxReadRequestBytes"
		if auth.HasPerm(ctx, rpcapi.PermWrite) {
			limit, setting = g.maxWrite, "API.MaxRequestBytes"
		}
		if r.Method == http.MethodGet && headerHas(r.Header, "Connection", "upgrade") {
			// Each message the connection carries is bounded like a request body.
			next.ServeHTTP(&wsLimitWriter{ResponseWriter: w, limit: limit, setting: setting, remote: r.RemoteAddr}, r)
			return
		}
		if r.ContentLength > limit {
			log.Warnw("refused oversize request", "bytes", r.ContentLength, "max", limit, "setting", setting, "remote", r.RemoteAddr)
			w.Header().Set("Connection", "close")
			refuse(w, nil, &refusal{http.StatusRequestEntityTooLarge, codeParseError,
				fmt.Sprintf("request of %d bytes is bigger than the maximum %d allowed (%s)%s", r.ContentLength, limit, setting, limitHint(setting))})
			return
		}
		pool, what := g.small, fmt.Sprintf("%d request bodies of at most %d bytes", cap(g.small), g.maxRead)
		if limit > g.maxRead && (r.ContentLength < 0 || r.ContentLength > g.maxRead) {
			pool, what = g.large, fmt.Sprintf("%d request bodies over %d bytes (API.MaxConcurrentRequests)", cap(g.large), g.maxRead)
		}
		if !g.acquire(ctx, pool) {
			log.Warnw("refused request: no body slot free", "slots", what, "remote", r.RemoteAddr)
			w.Header().Set("Retry-After", retryAfter)
			w.Header().Set("Connection", "close")
			refuse(w, nil, &refusal{http.StatusServiceUnavailable, codeServerBusy,
				fmt.Sprintf("server busy: %s are being read and decoded; retry after %ss", what, retryAfter)})
			return
		}
		var once sync.Once
		release := func() { once.Do(func() { <-pool }) }
		defer release()
		body := &limitedBody{ReadCloser: http.MaxBytesReader(w, r.Body, limit)}
		r.Body = body
		r = r.WithContext(context.WithValue(ctx, releaseKey{}, release))
		rw := &rpcWriter{ResponseWriter: w}
		next.ServeHTTP(rw, r)
		if body.over.Load() {
			log.Warnw("refused oversize request", "max", limit, "setting", setting, "remote", r.RemoteAddr)
		}
		rw.finish(body.over.Load(), fmt.Sprintf("request is bigger than the maximum %d bytes allowed (%s)%s", limit, setting, limitHint(setting)))
	})
}

// limitHint tells a caller over the read limit how to get the larger one.
func limitHint(setting string) string {
	if setting == "API.MaxReadRequestBytes" {
		return " without a token granting write; send Authorization: Bearer <token>"
	}
	return ""
}

// acquire takes a slot of pool, waiting up to g.wait.
func (g *gate) acquire(ctx context.Context, pool chan struct{}) bool {
	select {
	case pool <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case pool <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// releaseKey carries, in a request's context, the function that frees its body slot.
type releaseKey struct{}

// wrapCalls wraps every function field of methods (an rpcapi *Methods struct of namespace ns)
// so that the request's body slot is freed when the method starts (the body has been read and
// its params decoded by then, and a method that blocks, Await or Prove, must not hold a slot),
// and, with observe set, so that the call's duration is reported under "ns.Method".
func wrapCalls(methods interface{}, ns string, observe func(method string, d time.Duration)) {
	rv := reflect.ValueOf(methods).Elem()
	rt := rv.Type()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		inner := reflect.ValueOf(f.Interface())
		ft := f.Type()
		name := ns + "." + rt.Field(i).Name
		f.Set(reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
			if ctx, ok := args[0].Interface().(context.Context); ok && ctx != nil {
				if release, ok := ctx.Value(releaseKey{}).(func()); ok {
					release()
				}
			}
			if observe != nil {
				t0 := time.Now()
				defer func() { observe(name, time.Since(t0)) }()
			}
			if ft.IsVariadic() {
				return inner.CallSlice(args)
			}
			return inner.Call(args)
		}))
	}
}

// limitedBody records that the body went over its http.MaxBytesReader limit.
type limitedBody struct {
	io.ReadCloser
	over atomic.Bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	if err != nil && errors.As(err, &mbe) {
		b.over.Store(true)
	}
	return n, err
}

// maxHeldAnswer bounds the error answer rpcWriter holds back: go-jsonrpc's are one line.
const maxHeldAnswer = 64 << 10

// rpcWriter holds back an error answer of go-jsonrpc (status 400 or 500, written before any
// body) so that finish can replace the ones that say too little.
type rpcWriter struct {
	http.ResponseWriter
	status  int
	held    []byte
	holding bool
	started bool
}

func (w *rpcWriter) WriteHeader(code int) {
	if w.started || w.holding {
		return
	}
	if code >= 400 {
		w.holding, w.status = true, code
		return
	}
	w.started = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *rpcWriter) Write(p []byte) (int, error) {
	if w.holding {
		if len(w.held)+len(p) <= maxHeldAnswer {
			w.held = append(w.held, p...)
			return len(p), nil
		}
		w.pass()
	}
	w.started = true
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *rpcWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// pass sends the held answer as it was.
func (w *rpcWriter) pass() {
	w.holding, w.started = false, true
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(w.held)
	w.held = nil
}

// finish sends the held answer: 413 with tooLarge when the body went over its limit, the
// typed bad-request error for params that do not decode into the method's types, and
// otherwise go-jsonrpc's own.
func (w *rpcWriter) finish(over bool, tooLarge string) {
	if !w.holding {
		return
	}
	var ans struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(w.held, &ans) != nil {
		ans.Error = nil
	}
	switch {
	case over:
		w.holding = false
		w.Header().Set("Connection", "close")
		refuse(w.ResponseWriter, ans.ID, &refusal{http.StatusRequestEntityTooLarge, codeParseError, tooLarge})
	case ans.Error != nil && ans.Error.Code == codeParseError:
		if e := paramError(ans.Error.Message); e != nil {
			w.holding = false
			writeAnswer(w.ResponseWriter, http.StatusBadRequest, ans.ID, map[string]interface{}{
				"code": rpcapi.CodeBadRequest, "message": e.Error(), "meta": e,
			})
			return
		}
		w.pass()
	default:
		w.pass()
	}
}

var (
	// go-jsonrpc's message for params that do not decode into the method's parameter types.
	paramsErrRe = regexp.MustCompile(`(?s)^unmarshaling params for '([^']*)' \(param: \*?([^)]*)\): (.*)$`)
	// encoding/json's *UnmarshalTypeError.
	typeErrRe = regexp.MustCompile(`(?s)^(?:json: )?cannot unmarshal (.+?) into Go (?:struct field (\S+)|value) of type (.+)$`)
)

// paramError turns go-jsonrpc's parse error for undecodable params into the typed bad-request
// error naming the field and the types, or returns nil for other parse errors.
func paramError(msg string) *rpcapi.ErrBadRequest {
	if strings.HasPrefix(msg, "unmarshaling param array") {
		return &rpcapi.ErrBadRequest{Field: "params", Reason: "want a JSON array of the method's parameters"}
	}
	m := paramsErrRe.FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	method, typ, cause := m[1], m[2], m[3]
	t := typeErrRe.FindStringSubmatch(cause)
	if t == nil {
		return &rpcapi.ErrBadRequest{Field: "params", Reason: fmt.Sprintf("%s (%s): %s", method, typ, strings.TrimPrefix(cause, "json: "))}
	}
	got := strings.TrimPrefix(t[1], "JSON ")
	if t[2] == "" {
		return &rpcapi.ErrBadRequest{Field: "params", Reason: fmt.Sprintf("%s takes %s: got a JSON %s, want %s", method, typ, got, t[3])}
	}
	field := t[2]
	if _, rest, ok := strings.Cut(field, "."); ok {
		field = rest // drop the name of the struct type holding the field
	}
	return &rpcapi.ErrBadRequest{Field: field, Reason: fmt.Sprintf("got a JSON %s, want %s", got, t[3])}
}

// refuse answers with a JSON-RPC error of its own.
func refuse(w http.ResponseWriter, id json.RawMessage, ref *refusal) {
	writeAnswer(w, ref.status, id, map[string]interface{}{"code": ref.code, "message": ref.msg})
}

func writeAnswer(w http.ResponseWriter, status int, id json.RawMessage, rpcErr map[string]interface{}) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]interface{}{"jsonrpc": "2.0", "id": id, "error": rpcErr})
}

// formBody refuses HTTP JSON-RPC requests sent as an HTML form (curl -d without a
// Content-Type header sends application/x-www-form-urlencoded), naming the header to send.
func formBody(r *http.Request) *refusal {
	if r.Method != http.MethodPost {
		return nil
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" && ct != "multipart/form-data" {
		return nil
	}
	return &refusal{http.StatusUnsupportedMediaType, codeInvalidRequest, fmt.Sprintf("Content-Type %s: JSON-RPC requests "+
		"are JSON; send the header Content-Type: application/json (curl: -H 'Content-Type: application/json')", ct)}
}

// headerHas reports whether the comma-separated header key lists token (case-insensitively).
func headerHas(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
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
