package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runApp runs the CLI in process and returns its stdout, stderr and exit code.
func runApp(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &errOut
	err := app.Run(append([]string{"snarkd"}, args...))
	if err != nil {
		errOut.WriteString("snarkd: " + err.Error() + "\n")
	}
	return out.String(), errOut.String(), exitCode(err)
}

// TestCLIRefusesBadInput: invalid flags and arguments are refused before anything is started,
// sent or written, with the exit code of a usage error and a message naming the accepted values;
// a missing or dead daemon is named as such.
func TestCLIRefusesBadInput(t *testing.T) {
	t.Setenv("SNARKD_API_INFO", "")
	t.Setenv("SNARKD_PATH", "")
	dir := t.TempDir()
	array := filepath.Join(dir, "array.json")
	if err := os.WriteFile(array, []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "stale")
	if err := os.MkdirAll(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, apiFile), []byte("/ip4/127.0.0.1/tcp/1/http\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		repo string // default: a fresh path that must stay uncreated
		args []string
		code int
		want string
	}{
		{"jobs bad state", "", []string{"jobs", "--state", "bogus"}, exitUsage, `--state "bogus": want one of queued, running, done, failed or cancelled`},
		{"jobs bad kind", "", []string{"jobs", "--kind", "bogus"}, exitUsage, `--kind "bogus": want one of test, porep-c2, winning-post, window-post, snap-prove or aggregate-seals`},
		{"jobs bad limit", "", []string{"jobs", "--limit", "0"}, exitUsage, "--limit 0: want 1 or more"},
		{"unparsable flag value", "", []string{"jobs", "--limit", "many"}, exitUsage, `invalid value "many" for flag -limit`},
		{"unknown flag", "", []string{"status", "--verbose"}, exitUsage, "flag provided but not defined: -verbose"},
		{"unknown command", "", []string{"stats"}, exitUsage, "unknown command \"stats\": `snarkd --help` lists the commands"},
		{"unknown subcommand", "", []string{"prove", "c3"}, exitUsage, "unknown command \"c3\": `snarkd prove --help` lists the commands"},
		{"zero partitions", "", []string{"prove", "test", "--partitions", "0"}, exitUsage, "--partitions 0: want 1..16"},
		{"too many partitions", "", []string{"prove", "test", "--partitions", "17"}, exitUsage, "--partitions 17: want 1..16"},
		{"too few constraints", "", []string{"prove", "test", "--constraints", "3"}, exitUsage, "--constraints 3: want 6..16777216"},
		{"too many constraints", "", []string{"prove", "test", "--constraints", "16777217"}, exitUsage, "--constraints 16777217: want 6..16777216"},
		{"bad priority", "", []string{"prove", "test", "--priority", "urgent"}, exitUsage, `--priority "urgent": want winning-post, window-post or seal`},
		{"cancel without job", "", []string{"prove", "cancel"}, exitUsage, "want one JOB-ID argument, got 0"},
		{"await two jobs", "", []string{"prove", "await", "a", "b"}, exitUsage, "want one JOB-ID argument, got 2 (`snarkd jobs` lists the jobs)"},
		{"flag after the job", "", []string{"prove", "await", "a", "--json"}, exitUsage, "want one JOB-ID argument, got 2: flags go before it (--json)"},
		{"c1 array", "", []string{"prove", "c2", "--c1", array, "--miner", "1000"}, exitUsage, array + " holds a JSON array, not a JSON object"},
		{"c2 without c1", "", []string{"prove", "c2", "--miner", "1000"}, exitUsage, `Required flag "c1" not set`},
		{"bad api info", "", []string{"status", "--api-info", "tok:/ip4/1.2.3.4/udp/1"}, exitUsage, "--api-info (SNARKD_API_INFO): multiaddr"},
		{"bad perm", "", []string{"auth", "create-token", "--perm", "root"}, exitUsage, `--perm "root": want read, write, sign or admin`},
		{"bad miner api info", "", []string{"run", "--miner-api-info", "garbage"}, exitUsage, `--miner-api-info: Lotus.MinerAPIInfo: API info "garbage": want TOKEN:MULTIADDR`},
		{"bad worker mode", "", []string{"run", "--worker-mode", "post"}, exitUsage, `--worker-mode: Lotus.WorkerMode "post": want seal, windowpost or winningpost`},
		{"bad listen", "", []string{"run", "--listen", "9810"}, exitUsage, `--listen: API.ListenAddress "9810": want host:port`},
		{"bad headroom", "", []string{"run", "--vram-headroom", "lots"}, exitUsage, "--vram-headroom: "},
		{"bad gpu workers", "", []string{"run", "--gpu-workers", "0"}, exitUsage, "--gpu-workers: GPU.WorkersPerDevice 0: want 1..16"},
		{"run argument", "", []string{"run", "now"}, exitUsage, `run takes no arguments, got ["now"]`},
		{"worker connect bad miner", "", []string{"worker", "connect", "--miner-api-info", "garbage"}, exitUsage, `--miner-api-info (MINER_API_INFO): API info "garbage": want TOKEN:MULTIADDR`},
		{"params gen bad proof", "", []string{"params", "gen", "--proof", "3GiB"}, exitUsage, `unknown`},
		{"params check missing dir", "", []string{"params", "check", "--dir", filepath.Join(dir, "none")}, exitFailed, "parameter directory " + filepath.Join(dir, "none") + ": "},
		{"no daemon", "", []string{"status"}, exitFailed, "no running daemon found in repo"},
		{"nothing at the api info", "", []string{"status", "--api-info", "tok:/ip4/127.0.0.1/tcp/1/http"}, exitFailed,
			"no snarkd daemon answers at 127.0.0.1:1 (from --api-info (SNARKD_API_INFO)): "},
		{"stale api file", stale, []string{"jobs"}, exitFailed, "is left from a daemon that did not shut down cleanly; start one with `snarkd run` (it replaces the file) or remove it with `rm " + filepath.Join(stale, apiFile) + "`"},
		{"stale api file, auth api-info", stale, []string{"auth", "api-info"}, exitFailed, "no snarkd daemon is running on this repo: " + filepath.Join(stale, apiFile)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := tc.repo
			if repo == "" {
				repo = filepath.Join(t.TempDir(), "repo")
			}
			stdout, stderr, code := runApp(t, append([]string{"--repo", repo}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want %d with %q; stderr:\n%s", code, tc.code, tc.want, stderr)
			}
			if strings.Contains(stdout, " listening on ") || strings.Contains(stdout, "SNARKD_API_INFO=") {
				t.Fatalf("announced a daemon:\n%s", stdout)
			}
			if tc.repo == "" && tc.args[0] != "auth" {
				if _, err := os.Stat(repo); !os.IsNotExist(err) {
					t.Fatalf("the repo was created: %v", err)
				}
			}
		})
	}
}

// TestRunChecksMinerAPIInfoSetting: a Lotus.MinerAPIInfo from the environment (or config.toml)
// that cannot work stops `run` before the repo is created, naming the setting.
func TestRunChecksMinerAPIInfoSetting(t *testing.T) {
	t.Setenv("SNARKD_MINER_API_INFO", "tok:/ip4/1.2.3.4/udp/1")
	repo := filepath.Join(t.TempDir(), "repo")
	stdout, stderr, code := runApp(t, "--repo", repo, "run")
	if code != exitFailed || !strings.Contains(stderr, `Lotus.MinerAPIInfo: multiaddr "/ip4/1.2.3.4/udp/1": want /ip4/<host>/tcp/<port>/http`) || stdout != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(repo); !os.IsNotExist(err) {
		t.Fatalf("the repo was created: %v", err)
	}
}

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{os.ErrNotExist, exitFailed},
		{usagef("--x: bad"), exitUsage},
		{usage(os.ErrInvalid), exitUsage},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestCheckSummary(t *testing.T) {
	for _, tc := range []struct {
		total  int
		counts map[string]int
		want   string
	}{
		{0, nil, "0 file(s): nothing to check"},
		{4, map[string]int{"missing": 2, "ok": 1, "mismatch": 1}, "4 file(s): 1 ok, 2 missing, 1 mismatch"},
	} {
		if got := checkSummary(tc.total, tc.counts); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.counts, got, tc.want)
		}
	}
}
