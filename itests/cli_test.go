package itests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snarkd/snarkd/rpcapi"
)

// cliResult is one CLI invocation's outcome.
type cliResult struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// runSnarkd runs the binary with args and returns its output and exit status.
func runSnarkd(t *testing.T, bin string, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := cliResult{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %v: %v", args, err)
	}
	return r
}

// TestCLIFirstContact walks the mistakes a newcomer makes with the CLI and the daemon, in
// order, against real processes: each step's exit status and the fragment of its message that
// names the problem and the fix. Exit codes: 1 failed, 2 invalid flag or argument (nothing
// started), 4 `prove cancel` of a job that had already finished.
func TestCLIFirstContact(t *testing.T) {
	bin := buildDaemon(t)
	repo := t.TempDir()
	apiPath := filepath.Join(repo, "api")
	c1Array := filepath.Join(t.TempDir(), "c1.json")
	if err := os.WriteFile(c1Array, []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	// One job worker: the queue steps need a job to wait behind a running one.
	env := []string{"SNARKD_API_INFO=", "SNARKD_LOG_FORMAT=json", "SNARKD_JOBS_WORKERS=1"}

	var (
		d                *daemon
		bigJob, smallJob string
	)
	start := func(args ...string) func(t *testing.T) {
		return func(t *testing.T) { d = startDaemon(t, bin, repo, env, args...) }
	}
	stop := func(t *testing.T) {
		if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if err := <-d.done; err != nil {
			t.Fatalf("daemon exit: %v", err)
		}
	}
	jobOut := func(id *string) func(t *testing.T, r cliResult) {
		return func(t *testing.T, r cliResult) { *id = strings.TrimSpace(r.stdout) }
	}
	// The steps share one repo and daemon, so they run in order in this test (a subtest's
	// cleanup would stop the daemon it started).
	for _, step := range []struct {
		name   string
		before func(t *testing.T)
		args   func() []string // nil: only before runs
		code   int
		want   func() string // in stderr (stdout for exit 0)
		check  func(t *testing.T, r cliResult)
	}{
		{
			name: "no daemon yet", args: func() []string { return []string{"status"} },
			code: 1, want: func() string { return "no running daemon found in repo " + repo },
		},
		{
			name: "bad miner API info refused before anything is announced",
			args: func() []string { return []string{"run", "--listen", "127.0.0.1:0", "--miner-api-info", "garbage"} },
			code: 2, want: func() string { return `--miner-api-info: Lotus.MinerAPIInfo: API info "garbage": want TOKEN:MULTIADDR` },
			check: func(t *testing.T, r cliResult) {
				if r.stdout != "" {
					t.Errorf("printed before failing:\n%s", r.stdout)
				}
			},
		},
		{name: "start the daemon", before: start()},
		{
			name: "a second daemon on the repo names the first",
			args: func() []string { return []string{"run", "--listen", "127.0.0.1:0"} },
			code: 1,
			want: func() string {
				return fmt.Sprintf("repo %s is in use by another snarkd daemon (pid %d, listening on %s/rpc/v0)", repo, d.cmd.Process.Pid, d.base)
			},
			check: func(t *testing.T, r cliResult) {
				if r.took > 4*time.Second || strings.Contains(r.stdout, "listening") {
					t.Errorf("took %v, stdout:\n%s", r.took, r.stdout)
				}
			},
		},
		{
			name: "jobs with an unknown state", args: func() []string { return []string{"jobs", "--state", "bogus"} },
			code: 2, want: func() string { return `--state "bogus": want one of queued, running, done, failed or cancelled` },
		},
		{
			name: "jobs with an unknown kind", args: func() []string { return []string{"jobs", "--kind", "bogus"} },
			code: 2, want: func() string {
				return `--kind "bogus": want one of test, porep-c2, winning-post, window-post, snap-prove or aggregate-seals`
			},
		},
		{
			name: "zero partitions", args: func() []string { return []string{"prove", "test", "--partitions", "0"} },
			code: 2, want: func() string { return "--partitions 0: want 1..16" },
		},
		{
			name: "too few constraints", args: func() []string { return []string{"prove", "test", "--constraints", "3"} },
			code: 2, want: func() string { return "--constraints 3: want 6..16777216" },
		},
		{
			name: "too few constraints through the API",
			before: func(t *testing.T) {
				_, err := d.client(t, false).Submit(context.Background(), rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 3}})
				if err == nil || !strings.Contains(err.Error(), "Test.Constraints: 3: want 6..16777216") {
					t.Fatalf("Submit: %v", err)
				}
			},
		},
		{
			name: "a C1 file holding an array", args: func() []string { return []string{"prove", "c2", "--c1", c1Array, "--miner", "1000"} },
			code: 2, want: func() string { return c1Array + " holds a JSON array, not a JSON object" },
		},
		{
			name: "prove a small test job", args: func() []string { return []string{"prove", "test", "--constraints", "64", "--seed", "3", "--no-wait"} },
			code: 0, want: func() string { return "" }, check: jobOut(&smallJob),
		},
		{
			name: "await it", args: func() []string { return []string{"prove", "await", "--json", smallJob} },
			code: 0, want: func() string { return `"State": "done"` },
		},
		{
			name: "cancel the finished job", args: func() []string { return []string{"prove", "cancel", smallJob} },
			code: 4, want: func() string { return "job " + smallJob + " had already finished (done at " },
		},
		{
			name: "a big job that keeps the worker busy",
			args: func() []string {
				return []string{"prove", "test", "--constraints", "262144", "--partitions", "16", "--seed", "11", "--no-wait"}
			},
			code: 0, want: func() string { return "" }, check: jobOut(&bigJob),
		},
		{
			name: "a job queued behind it", args: func() []string { return []string{"prove", "test", "--constraints", "64", "--seed", "12", "--no-wait"} },
			code: 0, want: func() string { return "" }, check: jobOut(&smallJob),
		},
		{
			name: "cancel the queued job", args: func() []string { return []string{"prove", "cancel", smallJob} },
			code: 0, want: func() string { return "cancelled job " + smallJob + " (it was queued)" },
		},
		{
			name: "cancel it again", args: func() []string { return []string{"prove", "cancel", smallJob} },
			code: 4, want: func() string { return "job " + smallJob + " had already finished (cancelled at " },
		},
		{
			name: "cancel the running job", args: func() []string { return []string{"prove", "cancel", bigJob} },
			code: 0, want: func() string { return "cancelled job " + bigJob + " (it was " },
		},
		{
			name: "cancel an unknown job", args: func() []string { return []string{"prove", "cancel", "no-such-job"} },
			code: 1, want: func() string { return "no-such-job" },
		},
		{
			name: "JSON-RPC posted as a form",
			before: func(t *testing.T) {
				resp, err := http.Post(d.base+"/rpc/v0", "application/x-www-form-urlencoded",
					strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(b), "send the header Content-Type: application/json") {
					t.Fatalf("%d %s", resp.StatusCode, b)
				}
			},
		},
		{
			name: "params check of a missing directory",
			args: func() []string { return []string{"params", "check", "--dir", filepath.Join(repo, "no-params")} },
			code: 1, want: func() string { return "parameter directory " + filepath.Join(repo, "no-params") + ": " },
		},
		{name: "kill -9", before: func(t *testing.T) { d.kill() }},
		{
			name: "the killed daemon's api file", args: func() []string { return []string{"jobs"} },
			code: 1,
			want: func() string {
				return fmt.Sprintf("%s (%s) is left from daemon pid %d, which did not shut down cleanly; start one with `snarkd run` (it replaces the file) or remove it with `rm %s`",
					apiPath, "/ip4/127.0.0.1/tcp/"+d.base[strings.LastIndex(d.base, ":")+1:]+"/http", d.cmd.Process.Pid, apiPath)
			},
		},
		{name: "restart in PoSt mode without a miner", before: start("--worker-mode", "windowpost")},
		{
			name: "the PoSt worker says it has no miner",
			before: func(t *testing.T) {
				banner := strings.Join(d.banner, "\n")
				if !strings.Contains(banner, "no lotus-miner attached: as a windowpost worker this daemon gets no PoSt work until one is (`snarkd worker connect") {
					t.Fatalf("banner:\n%s", banner)
				}
			},
		},
		{
			name: "the restarted daemon has the jobs", args: func() []string { return []string{"jobs", "--state", "done", "--json"} },
			code: 0, want: func() string { return `"State": "done"` },
		},
		{name: "stop it", before: stop},
		{
			name: "after a clean stop", args: func() []string { return []string{"status"} },
			code: 1, want: func() string { return "no running daemon found in repo " + repo },
		},
	} {
		t.Logf("step: %s", step.name)
		if step.before != nil {
			step.before(t)
		}
		if step.args == nil {
			continue
		}
		args := step.args()
		r := runSnarkd(t, bin, env, append([]string{"--repo", repo}, args...)...)
		out := r.stderr
		if step.code == 0 {
			out = r.stdout
		}
		if r.code != step.code || !strings.Contains(out, step.want()) {
			t.Fatalf("%s: snarkd %s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s",
				step.name, strings.Join(args, " "), r.code, step.code, step.want(), r.stdout, r.stderr)
		}
		if step.check != nil {
			step.check(t, r)
		}
	}
}
