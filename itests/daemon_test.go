// Package itests runs snarkd end to end: the real binary, real HTTP and websocket JSON-RPC on
// loopback, and a lotus-miner stand-in.
package itests

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/rpcapi"
)

func TestDaemonAnswersVersion(t *testing.T) {
	bin := buildDaemon(t)
	repo := t.TempDir()
	d := startDaemon(t, bin, repo, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := d.client(t, false).Version(ctx)
	if err != nil {
		t.Fatalf("Prover.Version: %v", err)
	}
	if v.APIVersion != buildinfo.APIVersion || v.Backend != "cpu" || v.Version == "" {
		t.Fatalf("unexpected version %+v", v)
	}

	resp, err := http.Get(d.base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "ok" {
		t.Fatalf("/healthz = %d %q", resp.StatusCode, body)
	}

	// The daemon wrote a default config, its endpoint and token files, the token secret and
	// the journal into the repo.
	for _, f := range []string{"config.toml", "api", "token", "jobs.db", "keystore/MF2XI2BNNJ3XILLQOJUXMYLUMU"} {
		if _, err := os.Stat(filepath.Join(repo, f)); err != nil {
			t.Errorf("repo file %s: %v", f, err)
		}
	}

	// SIGTERM shuts down cleanly and removes the endpoint file.
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-d.done:
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

// TestCLIProveFlow drives the CLI against the daemon: prove test (with the Events-driven
// progress bar), jobs, status, and a C2 from a Commit2In file whose C1 output is refused.
func TestCLIProveFlow(t *testing.T) {
	bin := buildDaemon(t)
	repo := t.TempDir()
	d := startDaemon(t, bin, repo, nil)
	cli := func(args ...string) (string, string, error) {
		cmd := exec.Command(bin, append([]string{"--repo", repo}, args...)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	proofOut := filepath.Join(t.TempDir(), "proof.bin")
	_, stderr, err := cli("prove", "test", "--constraints", "128", "--partitions", "2", "--seed", "5", "--progress", "--out", proofOut)
	if err != nil {
		t.Fatalf("prove test: %v\n%s", err, stderr)
	}
	for _, want := range []string{"proving partition 2/2", "verifying", "done"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress output lacks %q:\n%s", want, stderr)
		}
	}
	proof, err := os.ReadFile(proofOut)
	if err != nil {
		t.Fatal(err)
	}
	verifyTestProof(t, proof, 128, 5, 2)

	out, _, err := cli("jobs", "--state", "done")
	if err != nil || !strings.Contains(out, "test") || !strings.Contains(out, "2/2") {
		t.Fatalf("jobs: %v\n%s", err, out)
	}
	out, _, err = cli("status", "--json")
	if err != nil || !strings.Contains(out, `"Completed": 1`) {
		t.Fatalf("status: %v\n%s", err, out)
	}

	c1 := filepath.Join(t.TempDir(), "c1.json")
	if err := os.WriteFile(c1, []byte(`{"SectorNum":9,"Phase1Out":"eyJyZWdpc3RlcmVkX3Byb29mIjoiU3RhY2tlZERyZzJLaUJWMV8xIn0=","SectorSize":2048}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = cli("prove", "c2", "--c1", c1, "--miner", "1000")
	if err == nil || !strings.Contains(stderr, "not a valid C1 output") {
		t.Fatalf("prove c2: %v\n%s", err, stderr)
	}
	_, stderr, err = cli("prove", "c2", "--c1", c1, "--miner", "1000", "--sector", "1")
	if err == nil || !strings.Contains(stderr, "Phase1Out") {
		t.Fatalf("prove c2 again: %v\n%s", err, stderr)
	}

	// Cancel a job through the CLI: submit without waiting, cancel, and see it cancelled.
	out, stderr, err = cli("prove", "test", "--constraints", "8192", "--seed", "77", "--no-wait")
	if err != nil {
		t.Fatalf("prove --no-wait: %v\n%s", err, stderr)
	}
	id := strings.TrimSpace(out)
	if out, _, err = cli("prove", "cancel", id); err != nil || !strings.Contains(out, "cancelled") {
		t.Fatalf("prove cancel: %v %s", err, out)
	}
	_, stderr, err = cli("prove", "await", id)
	if err == nil || !strings.Contains(stderr, "was cancelled") {
		t.Fatalf("await cancelled job: %v\n%s", err, stderr)
	}
	if out, _, _ = cli("jobs", "--state", "cancelled", "--json"); !strings.Contains(out, id) {
		t.Fatalf("cancelled job not listed:\n%s", out)
	}

	// A token from `auth api-info` works for a client.
	out, _, err = cli("auth", "api-info", "--perm", "read")
	if err != nil || !strings.HasPrefix(out, "SNARKD_API_INFO=ey") {
		t.Fatalf("auth api-info: %v %q", err, out)
	}
	info, err := rpcapi.ParseAPIInfo(strings.TrimSpace(strings.TrimPrefix(out, "SNARKD_API_INFO=")))
	if err != nil {
		t.Fatal(err)
	}
	url, _ := info.URL("http")
	api, closer, err := rpcapi.NewProverClient(context.Background(), url, info.Header())
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	if _, err := api.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = d
}
