package plugin

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

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

func TestOversizeRequestRefused(t *testing.T) {
	cfg := config.Default()
	cfg.API.MaxRequestBytes = 1 << 20
	base, _ := openDaemon(t, cfg)
	body := `{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":["` + strings.Repeat("x", 2<<20) + `"]}`
	resp, err := http.Post(base+RPCPath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "bigger than the maximum 1048576") {
		t.Fatalf("oversize request: %d %s", resp.StatusCode, msg)
	}
	// Without a declared length go-jsonrpc's own limit applies.
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(body))
		pw.Close()
	}()
	resp, err = http.Post(base+RPCPath, "application/json", pr)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(msg), "bigger than maximum") {
		t.Fatalf("chunked oversize request: %d %s", resp.StatusCode, msg)
	}
	// The server keeps answering other clients.
	resp, err = http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz after oversize request: %d", resp.StatusCode)
	}
}

func TestMalformedRequests(t *testing.T) {
	base, d := openDaemon(t, config.Default())
	hdr := token(t, d, rpcapi.PermAdmin)
	for _, tc := range []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"Prover.Submit","params":[{"Kind":"test","Test":{"Constraints":"many"}}]}`, "unmarshaling params"},
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
