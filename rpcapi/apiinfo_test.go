package rpcapi

import (
	"testing"

	ma "github.com/multiformats/go-multiaddr"
)

// TestAPIInfoRoundTrip: the API info strings Lotus writes (lotus-miner's MINER_API_INFO,
// `lotus auth api-info`, Curio's) parse and render back unchanged, so snarkd can print an API
// info a Lotus tool reads and read one a Lotus tool printed; multiaddrs are in go-multiaddr's
// canonical form, the one Lotus prints.
func TestAPIInfoRoundTrip(t *testing.T) {
	const tok = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJBbGxvdyI6WyJhZG1pbiJdfQ.c2ln"
	for _, s := range []string{
		tok + ":/ip4/1.2.3.4/tcp/2345/http",
		tok + ":/ip6/::1/tcp/2345/http",
		tok + ":/dns/miner.example/tcp/443/https",
		tok + ":/dns4/miner.example/tcp/2345/ws",
		tok + ":/dns6/miner.example/tcp/443/wss",
		tok + ":/ip4/1.2.3.4/tcp/443/tls/http",
		tok + ":https://miner.example:443",
		"/ip4/127.0.0.1/tcp/9810/http",
		"http://10.0.0.1:1234",
	} {
		ai, err := ParseAPIInfo(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if got := ai.String(); got != s {
			t.Errorf("%s rendered as %s", s, got)
		}
		if _, err := ai.URL("ws"); err != nil {
			t.Errorf("%s: %v", s, err)
		}
		if ai.Token != "" && ai.Header().Get("Authorization") != "Bearer "+ai.Token {
			t.Errorf("%s: header %v", s, ai.Header())
		}
		if ai.Addr[0] == '/' {
			m, err := ma.NewMultiaddr(ai.Addr)
			if err != nil || m.String() != ai.Addr {
				t.Errorf("%s: multiaddr %v, %v", s, m, err)
			}
		}
	}
}
