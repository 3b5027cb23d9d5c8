package itests

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWildcardListenWorkerURL: a daemon on --listen 0.0.0.0:PORT, with lotus-worker's
// MINER_API_INFO naming the miner, registers the address of its side of a connection to the
// miner (here 127.0.0.1) with the API's port, as lotus-worker does, and logs it; attached later
// with `worker connect`, it derives the address then. A miner that cannot be reached at start
// stops the daemon with an error naming --worker-url.
func TestWildcardListenWorkerURL(t *testing.T) {
	bin := buildDaemon(t)
	m := newStandIn(t, 100*time.Millisecond)

	repo := t.TempDir()
	d := startDaemon(t, bin, repo, append([]string{"MINER_API_INFO=" + m.apiInfo()}, lotusEnv...), "--listen", "0.0.0.0:0")
	port := d.base[strings.LastIndex(d.base, ":")+1:]
	want := "http://127.0.0.1:" + port + "/rpc/v0"
	waitFor(t, "WorkerConnect", func() bool { _, ok := m.worker(); return ok })
	if w, _ := m.worker(); w.URL != want {
		t.Fatalf("the miner was told to dial %s, want %s", w.URL, want)
	}
	logged, _ := os.ReadFile(filepath.Join(repo, "daemon.log"))
	for _, s := range []string{`"from":"MINER_API_INFO"`, `derived the worker URL`, `"worker_url":"` + want + `"`} {
		if !strings.Contains(string(logged), s) {
			t.Errorf("daemon log lacks %s:\n%s", s, logged)
		}
	}
	d.kill()

	// No miner at start: `worker connect` derives the address for the miner it attaches.
	m2 := newStandIn(t, 100*time.Millisecond)
	repo2 := t.TempDir()
	d2 := startDaemon(t, bin, repo2, lotusEnv, "--listen", "0.0.0.0:0")
	out, err := runCLI(bin, repo2, "worker", "connect", "--miner-api-info", m2.apiInfo())
	if err != nil {
		t.Fatalf("worker connect: %v\n%s", err, out)
	}
	want2 := "http://127.0.0.1:" + d2.base[strings.LastIndex(d2.base, ":")+1:] + "/rpc/v0"
	if w, ok := m2.worker(); !ok || w.URL != want2 || !strings.Contains(out, "it dials "+want2) {
		t.Fatalf("the miner was told to dial %q (%v), want %s; worker connect:\n%s", w.URL, ok, want2, out)
	}

	// A miner that cannot be reached: the address cannot be derived.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().(*net.TCPAddr)
	ln.Close()
	cmd := exec.Command(bin, "--repo", t.TempDir(), "run", "--listen", "0.0.0.0:0")
	cmd.Env = append(os.Environ(), "SNARKD_MINER_API_INFO=tok:/ip4/127.0.0.1/tcp/"+strconv.Itoa(dead.Port)+"/http")
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "deriving this host's address failed") || !strings.Contains(string(b), "set --worker-url") {
		t.Fatalf("unreachable miner: %v\n%s", err, b)
	}
}
