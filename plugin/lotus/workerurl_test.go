package lotus

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
)

// TestRoutableWorkerURL: on a wildcard listen address the worker URL is the local address of a
// connection to the miner with the API's port; a miner that is not there is an error naming it.
func TestRoutableWorkerURL(t *testing.T) {
	miner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer miner.Close()
	port := strconv.Itoa(miner.Addr().(*net.TCPAddr).Port)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := strconv.Itoa(dead.Addr().(*net.TCPAddr).Port)
	dead.Close()
	for _, tc := range []struct {
		name, apiInfo string
		listen        net.Addr
		want, err     string
	}{
		{"0.0.0.0", "tok:/ip4/127.0.0.1/tcp/" + port + "/http", &net.TCPAddr{IP: net.IPv4zero, Port: 9810}, "http://127.0.0.1:9810/rpc/v0", ""},
		{"[::]", "tok:/ip4/127.0.0.1/tcp/" + port + "/http", &net.TCPAddr{IP: net.IPv6unspecified, Port: 1}, "http://127.0.0.1:1/rpc/v0", ""},
		{"no miner there", "tok:/ip4/127.0.0.1/tcp/" + deadPort + "/http", &net.TCPAddr{IP: net.IPv4zero, Port: 9810}, "",
			"connecting to the miner at 127.0.0.1:" + deadPort + " to learn this host's address on its network"},
		{"bad api info", "garbage", &net.TCPAddr{IP: net.IPv4zero, Port: 9810}, "", "miner API info"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RoutableWorkerURL(context.Background(), tc.apiInfo, tc.listen)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%q, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := WorkerURL(&net.TCPAddr{IP: net.IPv6unspecified, Port: 1}); !errors.Is(err, ErrWildcardListen) {
		t.Fatalf("WorkerURL([::]:1): %v, want ErrWildcardListen", err)
	}
}
