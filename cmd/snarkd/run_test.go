package main

import (
	"net"
	"testing"
)

func TestAPIInfo(t *testing.T) {
	for _, tc := range []struct {
		addr *net.TCPAddr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9810}, "/ip4/127.0.0.1/tcp/9810/http"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 1234}, "/ip4/127.0.0.1/tcp/1234/http"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 80}, "/ip6/::1/tcp/80/http"},
	} {
		if got := apiInfo(tc.addr); got != tc.want {
			t.Errorf("apiInfo(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

func TestResolveBackendWithoutCUDA(t *testing.T) {
	if b, err := resolveBackend("cpu"); err != nil || b != "cpu" {
		t.Fatalf("cpu: %q, %v", b, err)
	}
	b, err := resolveBackend("auto")
	if err != nil || (b != "cpu" && b != "cuda") {
		t.Fatalf("auto: %q, %v", b, err)
	}
}
