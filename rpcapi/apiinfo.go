package rpcapi

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// APIInfo is a parsed Lotus-style API info string: TOKEN:MULTIADDR (the token is optional).
type APIInfo struct {
	Token string
	// Addr is the endpoint: a multiaddr such as /ip4/127.0.0.1/tcp/9810/http, or a URL.
	Addr string
}

// ParseAPIInfo splits "TOKEN:/ip4/host/tcp/port/http" (or a bare multiaddr or URL) the way
// Lotus's cli/util/apiinfo.go does: a token never contains ':' and a multiaddr starts with '/'.
func ParseAPIInfo(s string) (APIInfo, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return APIInfo{}, fmt.Errorf("empty API info; want TOKEN:/ip4/<host>/tcp/<port>/http")
	}
	if strings.HasPrefix(s, "/") || strings.Contains(s, "://") {
		return APIInfo{Addr: s}, nil
	}
	tok, addr, ok := strings.Cut(s, ":")
	if !ok || addr == "" {
		return APIInfo{}, fmt.Errorf("API info %q: want TOKEN:MULTIADDR", redact(s))
	}
	return APIInfo{Token: tok, Addr: addr}, nil
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
	host, port, tls, err := parseMultiaddr(a.Addr)
	if err != nil {
		return "", err
	}
	s := scheme
	if tls {
		s += "s"
	}
	return fmt.Sprintf("%s://%s/rpc/v0", s, net.JoinHostPort(host, port)), nil
}

// Header returns the Authorization header for the token (nil without one).
func (a APIInfo) Header() http.Header {
	if a.Token == "" {
		return nil
	}
	return http.Header{"Authorization": []string{"Bearer " + a.Token}}
}

// parseMultiaddr understands the multiaddrs Lotus API info strings use:
// /ip4|ip6|dns|dns4|dns6/<host>/tcp/<port>[/http|/https|/ws|/wss].
func parseMultiaddr(m string) (host, port string, tls bool, err error) {
	parts := strings.Split(strings.TrimPrefix(m, "/"), "/")
	if len(parts) < 4 || parts[2] != "tcp" {
		return "", "", false, fmt.Errorf("multiaddr %q: want /ip4/<host>/tcp/<port>/http", m)
	}
	switch parts[0] {
	case "ip4", "ip6":
		if net.ParseIP(parts[1]) == nil {
			return "", "", false, fmt.Errorf("multiaddr %q: bad IP %q", m, parts[1])
		}
	case "dns", "dns4", "dns6":
		if parts[1] == "" {
			return "", "", false, fmt.Errorf("multiaddr %q: empty host", m)
		}
	default:
		return "", "", false, fmt.Errorf("multiaddr %q: unsupported protocol %q", m, parts[0])
	}
	for _, c := range parts[3] {
		if c < '0' || c > '9' {
			return "", "", false, fmt.Errorf("multiaddr %q: bad port %q", m, parts[3])
		}
	}
	if len(parts) > 4 {
		switch parts[4] {
		case "http", "ws":
		case "https", "wss", "tls":
			tls = true
		default:
			return "", "", false, fmt.Errorf("multiaddr %q: unsupported protocol %q", m, parts[4])
		}
	}
	return parts[1], parts[3], tls, nil
}
