package itests

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/rpcapi"
	"github.com/snarkd/snarkd/testcircuit"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildDaemon compiles cmd/snarkd once per test binary run.
func buildDaemon(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "snarkd-itest-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "snarkd")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/snarkd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building snarkd: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

var apiInfoRe = regexp.MustCompile(`^SNARKD_API_INFO=([A-Za-z0-9_.-]+):/ip4/([0-9.]+)/tcp/([0-9]+)/http$`)

// daemon is a running `snarkd run` process.
type daemon struct {
	t     *testing.T
	cmd   *exec.Cmd
	repo  string
	base  string // http://127.0.0.1:port
	token string // write token printed in SNARKD_API_INFO
	done  chan error
}

// startDaemon runs `snarkd run` on an ephemeral loopback port in repo.
func startDaemon(t *testing.T, bin, repo string, extraEnv []string, args ...string) *daemon {
	t.Helper()
	argv := append([]string{"--repo", repo, "--log-format", "json", "run", "--listen", "127.0.0.1:0"}, args...)
	cmd := exec.Command(bin, argv...)
	cmd.Env = append(os.Environ(), extraEnv...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.OpenFile(filepath.Join(repo, "daemon.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{t: t, cmd: cmd, repo: repo, done: make(chan error, 1)}
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if m := apiInfoRe.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m
				sent = true
			}
		}
		if !sent {
			close(found)
		}
		d.done <- cmd.Wait()
	}()
	t.Cleanup(func() { d.kill() })
	select {
	case m, ok := <-found:
		if !ok {
			log, _ := os.ReadFile(filepath.Join(repo, "daemon.log"))
			t.Fatalf("daemon exited without printing SNARKD_API_INFO; log:\n%s", log)
		}
		d.token, d.base = m[1], fmt.Sprintf("http://%s:%s", m[2], m[3])
	case <-time.After(60 * time.Second):
		t.Fatal("daemon did not print SNARKD_API_INFO within 60s")
	}
	return d
}

// kill sends SIGKILL (no cleanup in the daemon) and waits for the process.
func (d *daemon) kill() {
	if d.cmd.ProcessState != nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		d.t.Errorf("daemon did not die after SIGKILL")
	}
}

func (d *daemon) header(tok string) http.Header {
	if tok == "" {
		return nil
	}
	return http.Header{"Authorization": []string{"Bearer " + tok}}
}

// client dials the native API with the write token (ws for Events).
func (d *daemon) client(t *testing.T, ws bool) rpcapi.Prover {
	t.Helper()
	url := d.base + "/rpc/v0"
	if ws {
		url = "ws" + url[len("http"):]
	}
	api, closer, err := rpcapi.NewProverClient(context.Background(), url, d.header(d.token))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closer)
	return api
}

// adminToken mints an admin token with the daemon's CLI from its repo.
func (d *daemon) adminToken(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "--repo", d.repo, "auth", "create-token", "--perm", "admin").Output()
	if err != nil {
		t.Fatalf("auth create-token: %v", err)
	}
	return string(out[:len(out)-1])
}

// verifyTestProof checks a test-kind proof independently of the daemon: fresh devnet
// parameters, the circuit's public inputs, and the groth16 verifier.
func verifyTestProof(t *testing.T, proof []byte, constraints int, seed uint64, partitions int) {
	t.Helper()
	pk := testParams(t, constraints, seed)
	proofs, err := groth16.ParseProofs(proof, partitions)
	if err != nil {
		t.Fatalf("parsing proof: %v", err)
	}
	inputs := testcircuit.New(constraints, seed).PublicInputs()
	for i, p := range proofs {
		if err := groth16.Verify(&pk.VK, p, inputs); err != nil {
			t.Fatalf("partition %d does not verify: %v", i, err)
		}
	}
}

var (
	paramsMu sync.Mutex
	params   = map[string]*groth16.Parameters{}
)

func testParams(t *testing.T, constraints int, seed uint64) *groth16.Parameters {
	t.Helper()
	paramsMu.Lock()
	defer paramsMu.Unlock()
	key := fmt.Sprint(constraints, "-", seed)
	if pk, ok := params[key]; ok {
		return pk
	}
	pk, err := testcircuit.DevnetParameters(context.Background(), constraints, seed, []byte("snarkd devnet test-circuit parameters v1"))
	if err != nil {
		t.Fatal(err)
	}
	params[key] = pk
	return pk
}

// waitFor polls cond until it holds; the bound only keeps a broken build from hanging CI.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runCLI runs a snarkd client command against repo's daemon and returns stdout+stderr.
func runCLI(bin, repo string, args ...string) (string, error) {
	out, err := exec.Command(bin, append([]string{"--repo", repo}, args...)...).CombinedOutput()
	return string(out), err
}
