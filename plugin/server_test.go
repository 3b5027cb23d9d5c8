package plugin

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/filecoin-project/go-jsonrpc"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/plugin/auth"
	"github.com/snarkd/snarkd/rpcapi"
)

// openDaemon serves a daemon on loopback and returns its base URL and admin/read/write tokens.
func openDaemon(t *testing.T, cfg config.Config) (string, *Daemon) {
	t.Helper()
	d, err := Open(cfg, Options{Repo: t.TempDir(), BackendName: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, ln, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String(), d
}

func token(t *testing.T, d *Daemon, p rpcapi.Permission) http.Header {
	perms, _ := rpcapi.PermsUpTo(p)
	tok, err := d.Secret().NewToken(perms)
	if err != nil {
		t.Fatal(err)
	}
	return http.Header{"Authorization": []string{"Bearer " + tok}}
}

func TestVersionOverJSONRPC(t *testing.T) {
	base, _ := openDaemon(t, config.Default())
	ctx := context.Background()
	api, closer, err := rpcapi.NewProverClient(ctx, base+RPCPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	v, err := api.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.Backend != "cpu" || v.APIVersion == "" {
		t.Fatalf("Version = %+v", v)
	}
}

func TestPermissions(t *testing.T) {
	base, d := openDaemon(t, config.Default())
	ctx := context.Background()
	req := rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 64}}
	for _, tc := range []struct {
		name   string
		header http.Header
		ok     bool
	}{
		{"no token", nil, false},
		{"read token", token(t, d, rpcapi.PermRead), false},
		{"write token", token(t, d, rpcapi.PermWrite), true},
	} {
		api, closer, err := rpcapi.NewProverClient(ctx, base+RPCPath, tc.header)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := api.Status(ctx); err != nil {
			t.Errorf("%s: Status: %v", tc.name, err)
		}
		_, err = api.Submit(ctx, req)
		var perr *rpcapi.ErrPermission
		if tc.ok && err != nil {
			t.Errorf("%s: Submit: %v", tc.name, err)
		}
		if !tc.ok && (!errors.As(err, &perr) || perr.Method != "Submit" || perr.Need != rpcapi.PermWrite) {
			t.Errorf("%s: Submit err = %v, want a permission error", tc.name, err)
		}
		closer()
	}
	// Forged and malformed tokens are refused outright.
	forged, _ := auth.Secret([]byte("not-the-daemon-secret-0123456789")).NewToken([]rpcapi.Permission{"read", "write", "sign", "admin"})
	for _, tok := range []string{forged, "garbage", ""} {
		r, _ := http.NewRequest("POST", base+RPCPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`))
		r.Header.Set("Authorization", "Bearer "+tok)
		if tok == "" {
			r.Header.Set("Authorization", "Basic abc")
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("token %.10q: status %d, want 401", tok, resp.StatusCode)
		}
	}
	// The Lotus worker API needs admin.
	w, closer, err := rpcapi.NewWorkerClient(ctx, base+RPCPath, token(t, d, rpcapi.PermWrite))
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	if _, err := w.Session(ctx); !errors.As(err, new(*rpcapi.ErrPermission)) {
		t.Fatalf("worker Session with a write token: %v", err)
	}
}

// TestOversizeRequestRefused: a body over the caller's limit is refused with 413 naming the
// limit and the setting, whether its length is declared (unread) or not (read up to the limit);
// write tokens get API.MaxRequestBytes, everyone else API.MaxReadRequestBytes.
func TestOversizeRequestRefused(t *testing.T) {
	cfg := config.Default()
	cfg.API.MaxRequestBytes = 1 << 20
	cfg.API.MaxReadRequestBytes = 8 << 10
	base, d := openDaemon(t, cfg)
	version := func(size int) string {
		const call = `{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`
		return call + strings.Repeat(" ", size-len(call))
	}
	write, read := token(t, d, rpcapi.PermWrite), token(t, d, rpcapi.PermRead)
	for _, tc := range []struct {
		name    string
		header  http.Header
		size    int
		chunked bool
		status  int
		want    string
	}{
		{"no token, declared", nil, 16 << 10, false, http.StatusRequestEntityTooLarge, "request of 16384 bytes is bigger than the maximum 8192 allowed (API.MaxReadRequestBytes) without a token granting write"},
		{"no token, chunked", nil, 16 << 10, true, http.StatusRequestEntityTooLarge, "request is bigger than the maximum 8192 bytes allowed (API.MaxReadRequestBytes)"},
		{"read token, declared", read, 16 << 10, false, http.StatusRequestEntityTooLarge, "(API.MaxReadRequestBytes)"},
		{"no token, under the read limit", nil, 8 << 10, true, http.StatusOK, `"APIVersion"`},
		{"write token, over the read limit", write, 16 << 10, false, http.StatusOK, `"APIVersion"`},
		{"write token, chunked", write, 16 << 10, true, http.StatusOK, `"APIVersion"`},
		{"write token, declared", write, 2 << 20, false, http.StatusRequestEntityTooLarge, "request of 2097152 bytes is bigger than the maximum 1048576 allowed (API.MaxRequestBytes)"},
		{"write token, chunked over", write, 2 << 20, true, http.StatusRequestEntityTooLarge, "request is bigger than the maximum 1048576 bytes allowed (API.MaxRequestBytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(version(tc.size))
			if tc.chunked {
				body = io.MultiReader(body) // hides the length: sent chunked
			}
			r, _ := http.NewRequest("POST", base+RPCPath, body)
			if tc.header != nil {
				r.Header = tc.header.Clone()
			}
			r.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(msg), tc.want) {
				t.Fatalf("%d %s, want %d with %q", resp.StatusCode, msg, tc.status, tc.want)
			}
		})
	}
	// The server keeps answering other clients.
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz after oversize request: %d", resp.StatusCode)
	}
}

// TestTokenSources: the token comes from the Authorization header; a URL token only opens
// websocket connections (GETs, no body); a POST is never parsed as a form, whatever its
// method or Content-Type says.
func TestTokenSources(t *testing.T) {
	base, d := openDaemon(t, config.Default())
	admin := token(t, d, rpcapi.PermAdmin).Get("Authorization")
	tok := strings.TrimPrefix(admin, "Bearer ")
	const call = `{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`
	for _, tc := range []struct {
		name, method, query, auth, contentType string
		status                                 int
		want                                   string
	}{
		{"header", "POST", "", admin, "application/json", http.StatusOK, `"APIVersion"`},
		{"URL token on POST", "POST", "?token=" + tok, "", "application/json", http.StatusUnauthorized, "accepted only on GET (websocket) requests"},
		{"form token", "POST", "", "", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType, "Content-Type application/x-www-form-urlencoded"},
		{"multipart PUT", "PUT", "", "", "multipart/form-data; boundary=x", http.StatusMethodNotAllowed, "method PUT"},
		{"PATCH", "PATCH", "", admin, "application/json", http.StatusMethodNotAllowed, "method PATCH"},
		{"basic auth", "POST", "", "Basic abc", "application/json", http.StatusUnauthorized, `want \"Bearer \u003ctoken\u003e\"`},
		{"bad token", "POST", "", "Bearer x.y.z", "application/json", http.StatusUnauthorized, "invalid API token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := call
			if strings.Contains(tc.contentType, "form") {
				body = "token=" + tok
			}
			r, _ := http.NewRequest(tc.method, base+RPCPath+tc.query, strings.NewReader(body))
			r.Header.Set("Content-Type", tc.contentType)
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%d %s, want %d with %q", resp.StatusCode, b, tc.status, tc.want)
			}
		})
	}
	// A websocket connection may carry the token in the URL, as before.
	ctx := context.Background()
	api, closer, err := rpcapi.NewProverClient(ctx, "ws"+strings.TrimPrefix(base, "http")+RPCPath+"?token="+tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	if _, err := api.Submit(ctx, rpcapi.ProofRequest{Kind: "quantum"}); !errors.As(err, new(*rpcapi.ErrBadRequest)) {
		t.Fatalf("Submit over a websocket with a URL token: %v, want the bad-request error (permission granted)", err)
	}
	// Scrapes may too; other methods are refused.
	for _, tc := range []struct {
		method string
		status int
	}{{"GET", http.StatusOK}, {"POST", http.StatusMethodNotAllowed}} {
		r, _ := http.NewRequest(tc.method, base+"/metrics?token="+tok, nil)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s /metrics: %d, want %d", tc.method, resp.StatusCode, tc.status)
		}
	}
}

// blockingProver answers Await only once release is closed.
type blockingProver struct {
	rpcapi.Prover
	awaiting chan struct{}
	release  chan struct{}
}

func (p *blockingProver) Version(context.Context) (rpcapi.VersionInfo, error) {
	return rpcapi.VersionInfo{APIVersion: "test"}, nil
}

func (p *blockingProver) Await(ctx context.Context, id rpcapi.JobID) (rpcapi.JobResult, error) {
	p.awaiting <- struct{}{}
	select {
	case <-p.release:
	case <-ctx.Done():
	}
	return rpcapi.JobResult{}, nil
}

// TestBodySlots: large bodies take one of API.MaxConcurrentRequests slots while they are read
// and decoded; a request that finds none free within the wait is answered 503 with
// Retry-After; a method that blocks does not hold its slot; small bodies have slots of their
// own.
func TestBodySlots(t *testing.T) {
	cfg := config.Default()
	cfg.API.MaxRequestBytes = 1 << 20
	cfg.API.MaxReadRequestBytes = 4 << 10
	cfg.API.MaxConcurrentRequests = 1
	p := &blockingProver{awaiting: make(chan struct{}, 1), release: make(chan struct{})}
	srv := New(cfg, Handlers{Prover: p, Verify: func(_ context.Context, tok string) ([]rpcapi.Permission, error) {
		if tok != "w" {
			return nil, errors.New("unknown token")
		}
		return []rpcapi.Permission{rpcapi.PermRead, rpcapi.PermWrite}, nil
	}})
	srv.gate.wait = 200 * time.Millisecond // the default, 30 s, is for lotus-miner bursts
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	pad := func(call string, size int) string { return call + strings.Repeat(" ", size-len(call)) }
	version := pad(`{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`, 8<<10)
	post := func(body io.Reader, tok string) (int, string, http.Header) {
		r, _ := http.NewRequest("POST", ts.URL+RPCPath, body)
		r.Header.Set("Content-Type", "application/json")
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Error(err)
			return 0, "", nil
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b), resp.Header
	}

	// A blocking method frees its slot when it starts.
	awaited := make(chan int, 1)
	go func() {
		code, _, _ := post(strings.NewReader(pad(`{"jsonrpc":"2.0","id":1,"method":"Prover.Await","params":["j"]}`, 8<<10)), "w")
		awaited <- code
	}()
	<-p.awaiting
	if code, body, _ := post(strings.NewReader(version), "w"); code != http.StatusOK {
		t.Fatalf("large request while a method blocks: %d %s", code, body)
	}

	// A body still being read holds the slot: the next large one is refused, small ones pass.
	pr, pw := io.Pipe()
	defer pw.Close()
	held := make(chan int, 1)
	go func() {
		code, _, _ := post(pr, "w")
		held <- code
	}()
	if _, err := pw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(srv.gate.large) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the held request never took its slot")
		}
	}
	start := time.Now()
	code, body, hdr := post(strings.NewReader(version), "w")
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") != retryAfter || !strings.Contains(body, "API.MaxConcurrentRequests") {
		t.Fatalf("large request while the slot is held: %d %s (Retry-After %q)", code, body, hdr.Get("Retry-After"))
	}
	if waited := time.Since(start); waited < srv.gate.wait/2 {
		t.Errorf("refused after %v, want a wait of about %v", waited, srv.gate.wait)
	}
	if code, body, _ := post(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`), ""); code != http.StatusOK {
		t.Fatalf("small request while the large slot is held: %d %s", code, body)
	}
	pw.Close()
	if code := <-held; code != http.StatusOK {
		t.Fatalf("the held request: %d", code)
	}
	if code, body, _ := post(strings.NewReader(version), "w"); code != http.StatusOK {
		t.Fatalf("large request after the slot was freed: %d %s", code, body)
	}
	close(p.release)
	if code := <-awaited; code != http.StatusOK {
		t.Fatalf("Await: %d", code)
	}
}

func TestMalformedRequests(t *testing.T) {
	base, d := openDaemon(t, config.Default())
	hdr := token(t, d, rpcapi.PermAdmin)
	for _, tc := range []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"Prover.Submit","params":[{"Kind":"test","Test":{"Constraints":"many"}}]}`,
			`{"code":1002,"message":"invalid proof request: Test.Constraints: got a JSON string, want uint64","meta":{"Field":"Test.Constraints","Reason":"got a JSON string, want uint64"}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"Prover.Submit","params":[{"Kind":7}]}`, `"Field":"Kind","Reason":"got a JSON number, want rpcapi.ProofKind"`},
		{`{"jsonrpc":"2.0","id":1,"method":"Prover.Submit","params":[{"Kind":"porep-c2","Phase1Out":"!!"}]}`, `"Field":"params","Reason":"Prover.Submit (rpcapi.ProofRequest): illegal base64 data at input byte 0"`},
		{`{"jsonrpc":"2.0","id":1,"method":"Prover.Await","params":[5]}`, `Prover.Await takes rpcapi.JobID: got a JSON number, want rpcapi.JobID`},
		{`{"jsonrpc":"2.0","id":1,"method":"Prover.Await","params":{"id":"x"}}`, `"code":1002,"message":"invalid proof request: params: want a JSON array of the method's parameters"`},
		{`{"jsonrpc":"2.0","id":1,"method":"Prover.Submit","params":[{"Kind":"quantum"}]}`, `unknown proof kind \"quantum\"`},
		{`{"jsonrpc":"2.0","id":1,"method":"Prover.Submit","params":[{"Kind":"porep-c2","RegisteredProof":8,"SectorSize":2048,"Phase1Out":"e30="}]}`, "SectorSize"},
		{`{"jsonrpc":"2.0","id":1,"method":"Prover.Submit","params":[{"Kind":"porep-c2","RegisteredProof":8,"Phase1Out":"e30="}]}`, "Phase1Out: not a valid C1 output"},
		{`{"jsonrpc":"2.0","id":1,"method":"Prover.Submit"`, "Parse error"},
		{`{"jsonrpc":"2.0","id":1,"method":"Prover.Nope","params":[]}`, "not found"},
		{`{"jsonrpc":"2.0","id":1,"method":"Filecoin.AddPiece","params":[{"ID":{"Miner":1,"Number":2},"ProofType":8},[],2032,null]}`, "method not supported"},
	} {
		r, _ := http.NewRequest("POST", base+RPCPath, strings.NewReader(tc.body))
		r.Header = hdr.Clone()
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), tc.want) {
			t.Errorf("%s\n -> %s\nwant %q", tc.body, b, tc.want)
		}
	}
	// A Go client gets the typed error back.
	var wrong struct {
		Submit func(ctx context.Context, req map[string]interface{}) (rpcapi.SubmitResult, error)
	}
	closer, err := jsonrpc.NewMergeClient(context.Background(), base+RPCPath, rpcapi.ProverNamespace, []interface{}{&wrong},
		hdr, jsonrpc.WithErrors(rpcapi.RPCErrors))
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	_, err = wrong.Submit(context.Background(), map[string]interface{}{"Kind": "test", "Test": map[string]interface{}{"Constraints": true}})
	var bad *rpcapi.ErrBadRequest
	if !errors.As(err, &bad) || bad.Field != "Test.Constraints" || bad.Reason != "got a JSON bool, want uint64" {
		t.Errorf("Submit with a bool for a number: %v (%T), want the typed bad-request error", err, err)
	}
	// Still healthy, nothing queued by the bad requests.
	if n := len(d.jobs.Jobs(rpcapi.JobFilter{})); n != 0 {
		t.Fatalf("%d jobs after bad requests", n)
	}
}

// TestContentType: a form-encoded POST (curl -d without -H) is answered with the header to send;
// JSON and requests without a Content-Type are served.
func TestContentType(t *testing.T) {
	base, _ := openDaemon(t, config.Default())
	const body = `{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`
	for _, tc := range []struct {
		contentType string
		status      int
		want        string
	}{
		{"application/x-www-form-urlencoded", http.StatusUnsupportedMediaType, "send the header Content-Type: application/json"},
		{"multipart/form-data; boundary=x", http.StatusUnsupportedMediaType, "Content-Type multipart/form-data"},
		{"application/json", http.StatusOK, `"APIVersion"`},
		{"application/json; charset=utf-8", http.StatusOK, `"APIVersion"`},
		{"", http.StatusOK, `"APIVersion"`},
	} {
		r, _ := http.NewRequest("POST", base+RPCPath, strings.NewReader(body))
		if tc.contentType != "" {
			r.Header.Set("Content-Type", tc.contentType)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("Content-Type %q: %d %s, want %d with %q", tc.contentType, resp.StatusCode, b, tc.status, tc.want)
		}
	}
}

// TestReadyBeforeServing: Options.Ready runs before the API answers, and its error ends Serve.
func TestReadyBeforeServing(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{{"ready", nil}, {"refused", errors.New("not today")}} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			readyc := make(chan net.Addr, 1)
			d, err := Open(config.Default(), Options{Repo: t.TempDir(), BackendName: "cpu",
				Ready: func(a net.Addr) error { readyc <- a; return tc.err }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- d.Serve(ctx, ln, time.Second) }()
			if tc.err != nil {
				if err := <-done; !errors.Is(err, tc.err) {
					t.Fatalf("Serve = %v, want %v", err, tc.err)
				}
				cancel()
				return
			}
			resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			select {
			case got := <-readyc:
				if got.String() != ln.Addr().String() {
					t.Errorf("Ready got %v, want %v", got, ln.Addr())
				}
			default:
				t.Error("the API answered before Ready was called")
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func toPerms(ss []string) []rpcapi.Permission {
	out := make([]rpcapi.Permission, len(ss))
	for i, s := range ss {
		out[i] = rpcapi.Permission(s)
	}
	return out
}
