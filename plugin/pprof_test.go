package plugin

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestPprofNeedsAdmin: /debug/pprof/* answers an admin token (in the header, or in the URL of
// a GET) and nothing less: 403 for no token or a weaker one, 401 for a bad token, and 401
// without a token when API.RequireReadToken is on.
func TestPprofNeedsAdmin(t *testing.T) {
	for _, requireRead := range []bool{false, true} {
		cfg := config.Default()
		cfg.API.RequireReadToken = requireRead
		base, d := openDaemon(t, cfg)
		admin := token(t, d, rpcapi.PermAdmin).Get("Authorization")
		write := token(t, d, rpcapi.PermWrite).Get("Authorization")
		read := token(t, d, rpcapi.PermRead).Get("Authorization")
		anonymous := http.StatusForbidden
		if requireRead {
			anonymous = http.StatusUnauthorized
		}
		for _, tc := range []struct {
			name, method, path, auth string
			status                   int
			body                     string // in a 200 answer
		}{
			{"index without a token", "GET", "/debug/pprof/", "", anonymous, ""},
			{"heap without a token", "GET", "/debug/pprof/heap", "", anonymous, ""},
			{"index with a read token", "GET", "/debug/pprof/", read, http.StatusForbidden, ""},
			{"goroutine with a write token", "GET", "/debug/pprof/goroutine?debug=1", write, http.StatusForbidden, ""},
			{"cmdline with a write token in the URL", "GET", "/debug/pprof/cmdline?token=" + strings.TrimPrefix(write, "Bearer "), "", http.StatusForbidden, ""},
			{"bad token", "GET", "/debug/pprof/", "Bearer x.y.z", http.StatusUnauthorized, ""},
			{"index with an admin token", "GET", "/debug/pprof/", admin, http.StatusOK, "goroutine"},
			{"goroutine with an admin token", "GET", "/debug/pprof/goroutine?debug=1", admin, http.StatusOK, "goroutine profile"},
			{"cmdline, admin token in the URL", "GET", "/debug/pprof/cmdline?token=" + strings.TrimPrefix(admin, "Bearer "), "", http.StatusOK, ""},
			{"symbol with an admin token", "GET", "/debug/pprof/symbol", admin, http.StatusOK, "num_symbols"},
			{"POST is refused", "POST", "/debug/pprof/symbol", admin, http.StatusMethodNotAllowed, ""},
		} {
			t.Run(map[bool]string{false: "reads open/", true: "reads need a token/"}[requireRead]+tc.name, func(t *testing.T) {
				r, err := http.NewRequest(tc.method, base+tc.path, nil)
				if err != nil {
					t.Fatal(err)
				}
				if tc.auth != "" {
					r.Header.Set("Authorization", tc.auth)
				}
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
				if resp.StatusCode != tc.status {
					t.Fatalf("%d %q, want %d", resp.StatusCode, b, tc.status)
				}
				if tc.status == http.StatusForbidden && !strings.Contains(string(b), `missing permission "admin"`) {
					t.Fatalf("refusal %q does not name the admin permission", b)
				}
				if !strings.Contains(string(b), tc.body) {
					t.Fatalf("answer lacks %q:\n%s", tc.body, b)
				}
			})
		}
	}
}
