package rpcapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// APIInfo is a parsed Lotus-style API info string: TOKEN:MULTIADDR (the token is optional).
type APIInfo struct {
	Token string
	// Addr is the endpoint: a multiaddr such as /ip4/127.0.0.1/tcp/9810/http, or a URL.
	Addr string
}

// ParseAPIInfo splits "TOKEN:/ip4/host/tcp/port/http" (or TOKEN:URL, a bare multiaddr or a bare
// URL) the way Lotus's cli/util/apiinfo.go does: a token never contains ':' and a multiaddr
// starts with '/'. The address is checked by URL, not here.
func ParseAPIInfo(s string) (APIInfo, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return APIInfo{}, fmt.Errorf("empty API info; want TOKEN:/ip4/<host>/tcp/<port>/http")
	}
	if strings.HasPrefix(s, "/") {
		return APIInfo{Addr: s}, nil
	}
	// A URL's own first ':' is followed by "//", so a ':' followed by a multiaddr ("/ip4…")
	// or by a whole URL ("https://…") is the one after a token, as Lotus accepts both.
	tok, addr, ok := strings.Cut(s, ":")
	if ok && ((strings.HasPrefix(addr, "/") && !strings.HasPrefix(addr, "//")) || strings.Contains(addr, "://")) {
		return APIInfo{Token: tok, Addr: addr}, nil
	}
	if strings.Contains(s, "://") {
		return APIInfo{Addr: s}, nil
	}
	return APIInfo{}, fmt.Errorf("API info %q: want TOKEN:MULTIADDR", redact(s))
}

func redact(s string) string {
	if len(s) > 12 {
		return s[:6] + "…"
	}
	return s
}

// String renders TOKEN:ADDR (or ADDR without a token).
func (a APIInfo) String() string {
	if a.Token == "" {
		return a.Addr
	}
	return a.Token + ":" + a.Addr
}

// URL returns the endpoint's JSON-RPC URL with the given scheme family ("http" or "ws") and
// /rpc/v0 appended when the address is a multiaddr.
func (a APIInfo) URL(scheme string) (string, error) {
	if strings.Contains(a.Addr, "://") {
		u, err := url.Parse(a.Addr)
		if err != nil {
			return "", fmt.Errorf("API address %q: %w", a.Addr, err)
		}
		if scheme == "ws" {
			switch u.Scheme {
			case "http":
				u.Scheme = "ws"
			case "https":
				u.Scheme = "wss"
			}
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/rpc/v0"
		}
		return u.String(), nil
	}
	hostport, tls, err := parseMultiaddr(a.Addr)
	if err != nil {
		return "", err
	}
	s := scheme
	if tls {
		s += "s"
	}
	// url.URL escapes an IPv6 zone's '%' in the host, which a formatted string would not.
	return (&url.URL{Scheme: s, Host: hostport, Path: "/rpc/v0"}).String(), nil
}

// Header returns the Authorization header for the token (nil without one).
func (a APIInfo) Header() http.Header {
	if a.Token == "" {
		return nil
	}
	return http.Header{"Authorization": []string{"Bearer " + a.Token}}
}

// multiaddrHint is the shape every multiaddr error suggests.
const multiaddrHint = "want /ip4/<host>/tcp/<port>/http"

// parseMultiaddr reads the multiaddrs Lotus API info strings use,
// /ip4|ip6|dns|dns4|dns6/<host>/tcp/<port>[/http|/https|/ws|/wss|/tls/...], with go-multiaddr
// and its manet.DialArgs, as Lotus's cliutil does, so an address Lotus accepts means the same
// host and port here. It returns host:port and whether the endpoint speaks TLS.
func parseMultiaddr(s string) (hostport string, tls bool, err error) {
	m, err := ma.NewMultiaddr(s)
	if err != nil {
		return "", false, fmt.Errorf("multiaddr %q (%s): %w", s, multiaddrHint, err)
	}
	network, hostport, err := manet.DialArgs(m)
	if err != nil {
		return "", false, fmt.Errorf("multiaddr %q (%s): %w", s, multiaddrHint, err)
	}
	// DialArgs also accepts UDP and unix sockets; the API is HTTP, so only TCP will do.
	if !strings.HasPrefix(network, "tcp") {
		return "", false, fmt.Errorf("multiaddr %q: %s (network %s)", s, multiaddrHint, network)
	}
	// DialArgs stops at /tcp/<port>; what follows names the application protocol, which
	// decides the URL scheme, so anything unknown there is refused rather than ignored.
	_, rest := ma.SplitFunc(m, func(c ma.Component) bool { return c.Code() == ma.P_TCP })
	for i := 1; i < len(rest); i++ {
		switch c := &rest[i]; c.Code() {
		case ma.P_HTTP, ma.P_WS:
		case ma.P_HTTPS, ma.P_WSS, ma.P_TLS:
			tls = true
		default:
			return "", false, fmt.Errorf("multiaddr %q: unsupported protocol %q after /tcp", s, c.Protocol().Name)
		}
	}
	return hostport, tls, nil
}
