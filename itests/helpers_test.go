package itests

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
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

	scratchOnce sync.Once
	scratch     string
	scratchErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if scratch != "" {
		os.RemoveAll(scratch)
	}
	os.Exit(code)
}

// scratchDir is a directory shared by the tests of one test binary run (the daemon binary,
// generated parameters), removed when the run ends.
func scratchDir(t testing.TB) string {
	t.Helper()
	scratchOnce.Do(func() {
		scratch, scratchErr = os.MkdirTemp("", "snarkd-itest-")
	})
	if scratchErr != nil {
		t.Fatal(scratchErr)
	}
	return scratch
}

// buildDaemon returns the snarkd binary the tests run: SNARKD_ITEST_BIN when set (a prebuilt
// binary: a test binary from `go test -c ./itests` then runs where there is no Go toolchain and
// no source tree), otherwise cmd/snarkd compiled once per test binary run.
func buildDaemon(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("SNARKD_ITEST_BIN"); p != "" {
			binPath, buildErr = prebuiltDaemon(p)
			return
		}
		binPath = filepath.Join(scratchDir(t), "snarkd")
		start := time.Now()
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/snarkd").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building snarkd: %w\n%s", err, out)
			return
		}
		t.Logf("built %s in %v", binPath, time.Since(start).Round(time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// prebuiltDaemon checks that SNARKD_ITEST_BIN names an executable file and makes it absolute
// (tests run it from other directories).
func prebuiltDaemon(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("SNARKD_ITEST_BIN: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("SNARKD_ITEST_BIN: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("SNARKD_ITEST_BIN: %s is not an executable file", abs)
	}
	return abs, nil
}

var apiInfoRe = regexp.MustCompile(`^SNARKD_API_INFO=([A-Za-z0-9_.-]+):/ip4/([0-9.]+)/tcp/([0-9]+)/http$`)

// daemon is a running `snarkd run` process.
type daemon struct {
	t     testing.TB
	cmd   *exec.Cmd
	repo  string
	base  string // http://127.0.0.1:port
	token string // write token printed in SNARKD_API_INFO
	// banner is what the daemon printed on stdout up to its SNARKD_API_INFO line.
	banner []string
	done   chan error
}

// startDaemon runs `snarkd run` on an ephemeral loopback port in repo.
func startDaemon(t testing.TB, bin, repo string, extraEnv []string, args ...string) *daemon {
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
			if !sent {
				d.banner = append(d.banner, sc.Text())
			}
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
func (d *daemon) client(t testing.TB, ws bool) rpcapi.Prover {
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
func (d *daemon) adminToken(t testing.TB, bin string) string {
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
	waitWithin(t, what, 2*time.Minute, cond)
}

// waitWithin is waitFor with another deadline, for work that proves (slower under CI's load).
func waitWithin(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
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

// paramSeed is the devnet setup seed of the parameters the itests generate.
const paramSeed = "snarkd itest porep parameters v1"

var (
	paramGenMu   sync.Mutex
	paramGenDone = map[string]bool{} // dir + circuit name
)

// devnetParams returns a parameter directory (the daemon's FIL_PROOFS_PARAMETER_CACHE) holding
// devnet parameters for each named circuit (names `snarkd params gen --proof` takes), made with
// `snarkd params gen` at most once per test process (the PoRep setups take minutes). With
// SNARKD_ITEST_PARAM_CACHE set, the directory lives there, keyed by the setup seed, and is
// reused by later runs and other processes: a file lock serializes the generation and a marker
// written after `params gen` succeeded marks a complete set. Only point it at a scratch
// directory: a circuit change that keeps the shape would make stale parameters fail the proofs.
func devnetParams(t *testing.T, bin string, circuits ...string) string {
	t.Helper()
	paramGenMu.Lock()
	defer paramGenMu.Unlock()
	root := os.Getenv("SNARKD_ITEST_PARAM_CACHE")
	if root == "" {
		root = filepath.Join(scratchDir(t), "params")
	}
	h := sha256.Sum256([]byte(paramSeed))
	dir := filepath.Join(root, "devnet-"+hex.EncodeToString(h[:4]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range circuits {
		if paramGenDone[dir+"\x00"+name] {
			continue
		}
		if err := genParams(t, bin, dir, name); err != nil {
			t.Fatal(err)
		}
		paramGenDone[dir+"\x00"+name] = true
	}
	return dir
}

// genParams runs `snarkd params gen` for circuit name into dir unless an earlier run completed
// it, holding dir's lock.
func genParams(t *testing.T, bin, dir, name string) error {
	t.Helper()
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("parameter directory lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	marker := filepath.Join(dir, name+".itest-complete")
	if _, err := os.Stat(marker); err == nil {
		t.Logf("TIMING params gen %s: reused from %s", name, dir)
		return nil
	}
	t.Logf("generating devnet parameters for %s in %s", name, dir)
	start := time.Now()
	out, err := exec.Command(bin, "params", "gen", "--proof", name, "--dir", dir, "--seed", paramSeed, "--force").CombinedOutput()
	if err != nil {
		return fmt.Errorf("params gen %s: %w\n%s", name, err, out)
	}
	logTiming(t, "params gen "+name, time.Since(start))
	t.Logf("%s", strings.TrimSpace(string(out)))
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		return fmt.Errorf("marking %s complete: %w", name, err)
	}
	return nil
}

// logTiming logs a duration in the form the bundle's run script collects ("TIMING what: d").
func logTiming(t *testing.T, what string, d time.Duration) {
	t.Helper()
	t.Logf("TIMING %s: %v", what, d.Round(time.Millisecond))
}

// logJobTimings logs the daemon's stage timings of every finished job of kind.
func logJobTimings(t *testing.T, api rpcapi.Prover, kind rpcapi.ProofKind) {
	t.Helper()
	jobs, err := api.Jobs(context.Background(), rpcapi.JobFilter{Kinds: []rpcapi.ProofKind{kind}, States: []rpcapi.JobState{rpcapi.JobDone}})
	if err != nil {
		t.Fatalf("listing %s jobs: %v", kind, err)
	}
	for i := len(jobs) - 1; i >= 0; i-- { // oldest first
		j := jobs[i]
		tm := j.Timings
		t.Logf("TIMING job %s %s (%d partitions): queue %dms, synthesis %dms, prove %dms, verify %dms, total %dms",
			j.Kind, j.Origin, j.Partitions, tm.QueueWaitMs, tm.SynthesisMs, tm.ProveMs, tm.VerifyMs, tm.TotalMs)
	}
}
