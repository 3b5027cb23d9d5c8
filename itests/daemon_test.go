// Package itests runs snarkd end to end: the real binary, real HTTP JSON-RPC on loopback.
package itests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/rpcapi"
)

// buildDaemon compiles cmd/snarkd once per test binary run.
func buildDaemon(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "snarkd")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/snarkd")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building snarkd: %v\n%s", err, out)
	}
	return bin
}

var apiInfoRe = regexp.MustCompile(`^SNARKD_API_INFO=/ip4/([0-9.]+)/tcp/([0-9]+)/http$`)

// startDaemon runs `snarkd run` on an ephemeral loopback port and returns its base URL.
func startDaemon(t *testing.T, bin, repo string, extraEnv ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, "--repo", repo, "--log-format", "json", "run", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), extraEnv...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(repo, "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := apiInfoRe.FindStringSubmatch(sc.Text()); m != nil {
				found <- fmt.Sprintf("%s:%s", m[1], m[2])
			}
		}
		close(found)
	}()
	select {
	case hostport, ok := <-found:
		if !ok {
			log, _ := os.ReadFile(filepath.Join(repo, "daemon.log"))
			t.Fatalf("daemon exited without printing SNARKD_API_INFO; log:\n%s", log)
		}
		return "http://" + hostport, cmd
	case <-time.After(60 * time.Second):
		t.Fatal("daemon did not print SNARKD_API_INFO within 60s")
	}
	return "", nil
}

func TestDaemonAnswersVersion(t *testing.T) {
	bin := buildDaemon(t)
	repo := t.TempDir()
	base, cmd := startDaemon(t, bin, repo)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	api, closer, err := rpcapi.NewProverClient(ctx, base+"/rpc/v0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	v, err := api.Version(ctx)
	if err != nil {
		t.Fatalf("Prover.Version: %v", err)
	}
	if v.APIVersion != buildinfo.APIVersion || v.Backend != "cpu" || v.Version == "" {
		t.Fatalf("unexpected version %+v", v)
	}

	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "ok" {
		t.Fatalf("/healthz = %d %q", resp.StatusCode, body)
	}

	// The daemon wrote a default config and its endpoint file into the repo.
	for _, f := range []string{"config.toml", "api"} {
		if _, err := os.Stat(filepath.Join(repo, f)); err != nil {
			t.Errorf("repo file %s: %v", f, err)
		}
	}

	// SIGTERM shuts down cleanly and removes the endpoint file.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("daemon exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not exit within 30s of SIGTERM")
	}
	if _, err := os.Stat(filepath.Join(repo, "api")); !os.IsNotExist(err) {
		t.Errorf("api file left behind after shutdown: %v", err)
	}
}

func TestDaemonRejectsBadConfig(t *testing.T) {
	bin := buildDaemon(t)
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "config.toml"), []byte("[Prover]\nBackend = \"tpu\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--repo", repo, "run", "--listen", "127.0.0.1:0").CombinedOutput()
	if err == nil {
		t.Fatal("daemon started with an invalid backend")
	}
	if !strings.Contains(string(out), `Prover.Backend "tpu"`) {
		t.Fatalf("error does not name the bad setting:\n%s", out)
	}
}
