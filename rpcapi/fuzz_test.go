package rpcapi

import (
	"strings"
	"testing"
)

// FuzzParseAPIInfo: any string parses or fails cleanly; a parse that succeeds yields URLs that
// end in /rpc/v0 and keep the token.
func FuzzParseAPIInfo(f *testing.F) {
	for _, s := range []string{"tok:/ip4/127.0.0.1/tcp/1234/http", "/ip6/::1/tcp/1/ws", "http://h:1", "::", ":/", "a:/dns/x/tcp/1/https/extra",
		"tok:/ip4/1.2.3.4/tcp/", "/ip4//tcp/1/http"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ai, err := ParseAPIInfo(s)
		if err != nil {
			return
		}
		if strings.Contains(ai.Token, ":") {
			t.Fatalf("token %q contains ':'", ai.Token)
		}
		for _, scheme := range []string{"http", "ws"} {
			u, err := ai.URL(scheme)
			if err == nil && !strings.Contains(u, "://") {
				t.Fatalf("URL %q", u)
			}
		}
	})
}
