package itests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/filecoin-project/go-jsonrpc"
	gjauth "github.com/filecoin-project/go-jsonrpc/auth"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/google/uuid"

	"github.com/snarkd/snarkd/plugin/auth"
	"github.com/snarkd/snarkd/rpcapi"
)

// standIn plays lotus-miner for a remote worker, with the same method names, JSON and
// permissions: WorkerConnect dials the worker over HTTP with an admin token from the miner's
// own secret, checks Version (1.7.x), takes Session as the worker ID, reads Info and TaskTypes,
// then polls Session like the miner's scheduler. Return* calls are recorded with their raw JSON.
type standIn struct {
	t       *testing.T
	secret  auth.Secret
	session uuid.UUID
	addr    string
	srv     *http.Server
	poll    time.Duration

	mu        sync.Mutex
	handshake []string
	workers   []connectedWorker
	polls     int
	pollErrs  int
	refuse    bool
	reported  map[rpcapi.CallID]bool
	returns   []recordedReturn
	attempts  int
	retCh     chan recordedReturn

	// storage answers StorageFindSector and remote serves /remote/ (a storage node on the
	// miner's address, as lotus-miner serves its own paths); both are optional.
	storage func(abi.SectorID, rpcapi.SectorFileType) ([]rpcapi.SectorStorageInfo, error)
	remote  http.Handler
}

type connectedWorker struct {
	URL     string
	Session uuid.UUID
	Info    rpcapi.WorkerInfo
	Tasks   map[rpcapi.TaskType]struct{}
	API     rpcapi.Worker
	cancel  context.CancelFunc
}

type recordedReturn struct {
	Method string
	Raw    json.RawMessage // the params array as sent
	CallID rpcapi.CallID
	Proof  []byte
	Err    *rpcapi.CallError
}

func newStandIn(t *testing.T, poll time.Duration) *standIn {
	m := &standIn{t: t, secret: auth.Secret([]byte("stand-in miner secret, 32 bytes!")), session: uuid.New(),
		poll: poll, reported: map[rpcapi.CallID]bool{}, retCh: make(chan recordedReturn, 100)}
	m.start()
	t.Cleanup(m.stop)
	return m
}

// start serves on a fresh port; a second start after stop is a miner restart (new session).
func (m *standIn) start() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if m.addr != "" {
		ln, err = net.Listen("tcp", m.addr)
	}
	if err != nil {
		m.t.Fatal(err)
	}
	m.addr = ln.Addr().String()
	rpc := jsonrpc.NewServer()
	var ms rpcapi.MinerStruct
	auth.Permissioned(&minerAPI{m}, &ms.Internal)
	rpc.Register("Filecoin", &ms)
	h := &gjauth.Handler{Verify: func(_ context.Context, tok string) ([]rpcapi.Permission, error) {
		return m.secret.Verify(tok)
	}, Next: m.capture(rpc).ServeHTTP}
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("/remote/", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		remote := m.remote
		m.mu.Unlock()
		if remote == nil {
			http.NotFound(w, r)
			return
		}
		remote.ServeHTTP(w, r)
	})
	m.srv = &http.Server{Handler: mux}
	go func() { _ = m.srv.Serve(ln) }()
}

func (m *standIn) stop() {
	m.mu.Lock()
	for _, w := range m.workers {
		w.cancel()
	}
	m.workers = nil
	m.mu.Unlock()
	if m.srv != nil {
		_ = m.srv.Close()
	}
}

// restart simulates a miner restart: same address, new session UUID, workers forgotten.
func (m *standIn) restart() {
	m.stop()
	m.mu.Lock()
	m.session = uuid.New()
	m.mu.Unlock()
	m.start()
}

// capture records the raw params of Return* requests.
func (m *standIn) capture(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Method string
			Params json.RawMessage
		}
		if json.Unmarshal(body, &req) == nil && (req.Method == "Filecoin.ReturnSealCommit2" || req.Method == "Filecoin.ReturnProveReplicaUpdate2") {
			r = r.WithContext(context.WithValue(r.Context(), rawKey{}, recordedReturn{Method: req.Method, Raw: req.Params}))
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

type rawKey struct{}

// apiInfo is the miner's TOKEN:MULTIADDR with an admin token.
func (m *standIn) apiInfo() string {
	tok, err := m.secret.NewToken([]rpcapi.Permission{"read", "write", "sign", "admin"})
	if err != nil {
		m.t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(m.addr)
	return fmt.Sprintf("%s:/ip4/%s/tcp/%s/http", tok, host, port)
}

func (m *standIn) setRefuse(v bool) {
	m.mu.Lock()
	m.refuse = v
	m.mu.Unlock()
}

func (m *standIn) worker() (connectedWorker, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.workers) == 0 {
		return connectedWorker{}, false
	}
	return m.workers[len(m.workers)-1], true
}

func (m *standIn) nextReturn(t *testing.T) recordedReturn {
	t.Helper()
	select {
	case r := <-m.retCh:
		return r
	case <-time.After(2 * time.Minute):
		t.Fatal("no Return* call from the worker")
		return recordedReturn{}
	}
}

// minerAPI implements rpcapi.Miner for the stand-in.
type minerAPI struct{ m *standIn }

func (a *minerAPI) Version(context.Context) (rpcapi.MinerVersion, error) {
	return rpcapi.MinerVersion{Version: "1.36.2+standin", APIVersion: rpcapi.MinerAPIVersion0, BlockDelay: 30, Agent: "lotus"}, nil
}

func (a *minerAPI) Session(context.Context) (uuid.UUID, error) {
	a.m.mu.Lock()
	defer a.m.mu.Unlock()
	return a.m.session, nil
}

func (a *minerAPI) AuthVerify(_ context.Context, token string) ([]rpcapi.Permission, error) {
	return a.m.secret.Verify(token)
}

func (a *minerAPI) WorkerConnect(ctx context.Context, url string) error {
	m := a.m
	// Lotus: AuthNew(["admin"]) with the miner's secret, client.NewWorkerRPCV0 over HTTP.
	tok, err := m.secret.NewToken([]rpcapi.Permission{"admin"})
	if err != nil {
		return err
	}
	w, closer, err := rpcapi.NewWorkerClient(context.Background(), url, http.Header{"Authorization": []string{"Bearer " + tok}})
	if err != nil {
		return fmt.Errorf("creating jsonrpc client: %w", err)
	}
	var steps []string
	v, err := w.Version(ctx)
	if err != nil {
		closer()
		return err
	}
	steps = append(steps, "Version")
	if !v.EqMajorMinor(rpcapi.WorkerAPIVersion0) {
		closer()
		return fmt.Errorf("unsupported worker api version: %s (expected %s)", v, rpcapi.WorkerAPIVersion0)
	}
	sess, err := w.Session(ctx)
	if err != nil || sess == uuid.Nil {
		closer()
		return fmt.Errorf("worker session: %v (%s)", err, sess)
	}
	steps = append(steps, "Session")
	info, err := w.Info(ctx)
	if err != nil {
		closer()
		return err
	}
	steps = append(steps, "Info")
	tasks, err := w.TaskTypes(ctx)
	if err != nil {
		closer()
		return err
	}
	steps = append(steps, "TaskTypes")
	pctx, cancel := context.WithCancel(context.Background())
	cw := connectedWorker{URL: url, Session: sess, Info: info, Tasks: tasks, API: w, cancel: func() { cancel(); closer() }}
	m.mu.Lock()
	m.handshake = steps
	m.workers = append(m.workers, cw)
	m.mu.Unlock()
	go m.heartbeat(pctx, w, sess)
	return nil
}

// heartbeat polls the worker's Session as the scheduler does (sched_worker.go checkSession).
func (m *standIn) heartbeat(ctx context.Context, w rpcapi.Worker, want uuid.UUID) {
	t := time.NewTicker(m.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		got, err := w.Session(sctx)
		cancel()
		m.mu.Lock()
		if err != nil || got != want {
			m.pollErrs++
		} else {
			m.polls++
		}
		m.mu.Unlock()
	}
}

func (a *minerAPI) ret(ctx context.Context, method string, call rpcapi.CallID, proof []byte, cerr *rpcapi.CallError) error {
	m := a.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attempts++
	if m.refuse {
		return errors.New("stand-in miner refuses returns for now")
	}
	if m.reported[call] {
		return fmt.Errorf("result for call %v already reported", call)
	}
	m.reported[call] = true
	rec, _ := ctx.Value(rawKey{}).(recordedReturn)
	rec.Method, rec.CallID, rec.Proof, rec.Err = method, call, proof, cerr
	m.returns = append(m.returns, rec)
	m.retCh <- rec
	return nil
}

func (a *minerAPI) ReturnSealCommit2(ctx context.Context, call rpcapi.CallID, proof rpcapi.Proof, cerr *rpcapi.CallError) error {
	return a.ret(ctx, "Filecoin.ReturnSealCommit2", call, proof, cerr)
}

func (a *minerAPI) ReturnProveReplicaUpdate2(ctx context.Context, call rpcapi.CallID, proof rpcapi.ReplicaUpdateProof, cerr *rpcapi.CallError) error {
	return a.ret(ctx, "Filecoin.ReturnProveReplicaUpdate2", call, proof, cerr)
}

func (a *minerAPI) StorageFindSector(_ context.Context, sector abi.SectorID, ft rpcapi.SectorFileType, _ abi.SectorSize, _ bool) ([]rpcapi.SectorStorageInfo, error) {
	a.m.mu.Lock()
	find := a.m.storage
	a.m.mu.Unlock()
	if find == nil {
		return nil, errors.New("stand-in miner has no storage")
	}
	return find(sector, ft)
}
