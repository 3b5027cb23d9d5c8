package plugin

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestRequireReadToken: with API.RequireReadToken a request without a token is refused with
// 401 naming the setting on /rpc/v0 (read methods, websocket connections), /status and the
// status page /ui, while
// /healthz and /metrics stay open and a read token reads; off (the default), reads need no
// token, as in Lotus.
func TestRequireReadToken(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg := config.Default()
		cfg.API.RequireReadToken = on
		base, d := openDaemon(t, cfg)
		read := token(t, d, rpcapi.PermRead).Get("Authorization")
		refused := http.StatusOK
		if on {
			refused = http.StatusUnauthorized
		}
		for _, tc := range []struct {
			name, method, path, body, auth string
			ws                             bool
			status                         int
		}{
			{"Version without a token", "POST", RPCPath, `{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`, "", false, refused},
			{"Jobs without a token", "POST", RPCPath, `{"jsonrpc":"2.0","id":1,"method":"Prover.Jobs","params":[{}]}`, "", false, refused},
			{"Await without a token", "POST", RPCPath, `{"jsonrpc":"2.0","id":1,"method":"Prover.Await","params":["no-such-job"]}`, "", false, refused},
			{"websocket without a token", "GET", RPCPath, "", "", true, map[bool]int{false: http.StatusSwitchingProtocols, true: http.StatusUnauthorized}[on]},
			{"status without a token", "GET", "/status", "", "", false, refused},
			{"metrics without a token", "GET", "/metrics", "", "", false, http.StatusOK},
			{"healthz without a token", "GET", "/healthz", "", "", false, http.StatusOK},
			{"Jobs with a read token", "POST", RPCPath, `{"jsonrpc":"2.0","id":1,"method":"Prover.Jobs","params":[{}]}`, read, false, http.StatusOK},
			{"status with a read token", "GET", "/status", "", read, false, http.StatusOK},
			{"status page without a token", "GET", "/ui", "", "", false, refused},
			{"status page data without a token", "GET", "/ui/data.json", "", "", false, refused},
			{"status page with a read token", "GET", "/ui", "", read, false, http.StatusOK},
			{"status page data, read token in the URL", "GET", "/ui/data.json?token=" + strings.TrimPrefix(read, "Bearer "), "", "", false, http.StatusOK},
			{"status page, unknown path", "GET", "/ui/other", "", read, false, http.StatusNotFound},
			{"bad token", "POST", RPCPath, `{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`, "Bearer x.y.z", false, http.StatusUnauthorized},
		} {
			t.Run(map[bool]string{false: "off/", true: "on/"}[on]+tc.name, func(t *testing.T) {
				var body io.Reader
				if tc.body != "" {
					body = strings.NewReader(tc.body)
				}
				r, _ := http.NewRequest(tc.method, base+tc.path, body)
				if tc.body != "" {
					r.Header.Set("Content-Type", "application/json")
				}
				if tc.ws {
					r.Header.Set("Connection", "Upgrade")
					r.Header.Set("Upgrade", "websocket")
					r.Header.Set("Sec-WebSocket-Version", "13")
					r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
				}
				if tc.auth != "" {
					r.Header.Set("Authorization", tc.auth)
				}
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					t.Fatal(err)
				}
				var b []byte
				if resp.StatusCode != http.StatusSwitchingProtocols { // an upgraded body is the connection
					b, _ = io.ReadAll(io.LimitReader(resp.Body, 4096))
				}
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Fatalf("%d %s, want %d", resp.StatusCode, b, tc.status)
				}
				if tc.status == http.StatusUnauthorized && tc.auth == "" && !strings.Contains(string(b), "API.RequireReadToken") {
					t.Fatalf("refusal %q does not name API.RequireReadToken", b)
				}
			})
		}
		// The Go client with a read token reads; without one it is refused.
		ctx := context.Background()
		api, closer, err := rpcapi.NewProverClient(ctx, base+RPCPath, token(t, d, rpcapi.PermRead))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := api.Status(ctx); err != nil {
			t.Errorf("RequireReadToken %v: Status with a read token: %v", on, err)
		}
		closer()
		anon, closer, err := rpcapi.NewProverClient(ctx, base+RPCPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := anon.Status(ctx); (err != nil) != on {
			t.Errorf("RequireReadToken %v: Status without a token: %v", on, err)
		}
		closer()
	}
}

// TestTestQuotaByTokenClass: a test job over the quota of the caller's token class is refused
// with the typed bad-request error naming the limit and its setting; an admin token gets the
// admin quota.
func TestTestQuotaByTokenClass(t *testing.T) {
	cfg := config.Default()
	cfg.Jobs.MaxTestConstraints, cfg.Jobs.MaxTestPartitions = 64, 2
	cfg.Jobs.AdminMaxTestConstraints, cfg.Jobs.AdminMaxTestPartitions = 128, 3
	base, d := openDaemon(t, cfg)
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		perm        rpcapi.Permission
		constraints uint64
		partitions  int
		field, want string // "" for accepted
	}{
		{"write within", rpcapi.PermWrite, 64, 2, "", ""},
		{"write over constraints", rpcapi.PermWrite, 65, 1, "Test.Constraints", "65: over the limit of 64 for a write token (Jobs.MaxTestConstraints); an admin token may ask for up to 128 constraints and 3 partitions"},
		{"write over partitions", rpcapi.PermWrite, 16, 3, "Test.Partitions", "3: over the limit of 2 for a write token (Jobs.MaxTestPartitions)"},
		{"sign is a write token", rpcapi.PermSign, 65, 1, "Test.Constraints", "Jobs.MaxTestConstraints"},
		{"admin within", rpcapi.PermAdmin, 100, 3, "", ""},
		{"admin over constraints", rpcapi.PermAdmin, 129, 1, "Test.Constraints", "129: over the limit of 128 for an admin token (Jobs.AdminMaxTestConstraints)"},
		{"admin over partitions", rpcapi.PermAdmin, 16, 4, "Test.Partitions", "Jobs.AdminMaxTestPartitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api, closer, err := rpcapi.NewProverClient(ctx, base+RPCPath, token(t, d, tc.perm))
			if err != nil {
				t.Fatal(err)
			}
			defer closer()
			req := rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: tc.constraints, Partitions: tc.partitions, Seed: 3}}
			res, err := api.Submit(ctx, req)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if done, err := api.Await(ctx, res.JobID); err != nil || done.State != rpcapi.JobDone {
					t.Fatalf("job: %+v %v", done.Job, err)
				}
				return
			}
			var bad *rpcapi.ErrBadRequest
			if !errors.As(err, &bad) || bad.Field != tc.field || !strings.Contains(bad.Reason, tc.want) {
				t.Fatalf("err = %v, want ErrBadRequest on %s saying %q", err, tc.field, tc.want)
			}
		})
	}
}
