package main

import (
	"context"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/filecoin-project/go-jsonrpc"
	logging "github.com/ipfs/go-log/v2"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/rpcapi"
)

// runConfigOf runs `snarkd run ARGS` with the environment env (other snarkd and lotus variables
// cleared) up to its configuration: runConfig's result, and the log it wrote.
func runConfigOf(t *testing.T, env map[string]string, args ...string) (config.Config, string, error) {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "log")
	for _, k := range []string{"SNARKD_MINER_API_INFO", "MINER_API_INFO", "SNARKD_LOTUS_WORKER_MODE", "SNARKD_PATH",
		"GOLOG_LOG_LEVEL", "GOLOG_LOG_FMT", "GOLOG_OUTPUT", "GOLOG_URL", "GOLOG_LOG_LABELS"} {
		t.Setenv(k, env[k]) // restored after the test
		if _, ok := env[k]; !ok {
			os.Unsetenv(k) // set but empty is a value to config.Load
		}
	}
	t.Setenv("GOLOG_FILE", logFile) // the log to read back
	t.Cleanup(func() { _ = setupLogging(config.Default().Log, func(string) string { return "" }) })
	var (
		cfg config.Config
		err error
	)
	app := newApp()
	app.Writer, app.ErrWriter = &strings.Builder{}, &strings.Builder{}
	repo := filepath.Join(t.TempDir(), "repo")
	for _, cmd := range app.Commands {
		if cmd.Name == "run" {
			cmd.Action = func(c *cli.Context) error {
				cfg, err = runConfig(c, repo)
				return nil
			}
		}
	}
	if runErr := app.Run(append([]string{"snarkd", "--repo", repo, "run"}, args...)); runErr != nil {
		t.Fatalf("run: %v", runErr)
	}
	b, _ := os.ReadFile(logFile)
	return cfg, string(b), err
}

// TestRunLotusWorkerNames: `snarkd run` takes lotus-worker's MINER_API_INFO (below
// SNARKD_MINER_API_INFO and --miner-api-info, the log naming the one used; the flag replaces
// bad variables) and its
// --windowpost/--winningpost booleans as --worker-mode, refusing contradicting flags.
func TestRunLotusWorkerNames(t *testing.T) {
	const (
		lotusInfo  = "lotus-token:/ip4/10.0.0.2/tcp/2345/http"
		snarkdInfo = "snarkd-token:/ip4/10.0.0.3/tcp/2345/http"
		flagInfo   = "flag-token:/ip4/10.0.0.4/tcp/2345/http"
	)
	for _, tc := range []struct {
		name      string
		env       map[string]string
		args      []string
		wantMiner string
		wantMode  string
		wantLog   []string
		wantErr   string // and exitCode exitUsage unless wantFailed
		failed    bool
	}{
		{name: "no miner", wantMode: "seal"},
		{name: "MINER_API_INFO", env: map[string]string{"MINER_API_INFO": lotusInfo},
			wantMiner: lotusInfo, wantMode: "seal", wantLog: []string{`"from":"MINER_API_INFO"`}},
		{name: "SNARKD_MINER_API_INFO", env: map[string]string{"SNARKD_MINER_API_INFO": snarkdInfo},
			wantMiner: snarkdInfo, wantMode: "seal", wantLog: []string{`"from":"SNARKD_MINER_API_INFO"`}},
		{name: "both variables: snarkd's wins", env: map[string]string{"MINER_API_INFO": lotusInfo, "SNARKD_MINER_API_INFO": snarkdInfo},
			wantMiner: snarkdInfo, wantMode: "seal", wantLog: []string{`"from":"SNARKD_MINER_API_INFO"`, `using SNARKD_MINER_API_INFO`, `"ignored":"MINER_API_INFO"`}},
		{name: "the flag wins", env: map[string]string{"MINER_API_INFO": lotusInfo, "SNARKD_MINER_API_INFO": snarkdInfo},
			args: []string{"--miner-api-info", flagInfo}, wantMiner: flagInfo, wantMode: "seal", wantLog: []string{`"from":"--miner-api-info"`}},
		{name: "bad MINER_API_INFO", env: map[string]string{"MINER_API_INFO": "garbage"}, failed: true,
			wantErr: `MINER_API_INFO: Lotus.MinerAPIInfo: API info "garbage": want TOKEN:MULTIADDR`},
		{name: "bad variables, the flag replaces them", env: map[string]string{"MINER_API_INFO": "garbage", "SNARKD_MINER_API_INFO": "junk"},
			args: []string{"--miner-api-info", flagInfo}, wantMiner: flagInfo, wantMode: "seal", wantLog: []string{`"from":"--miner-api-info"`}},
		{name: "bad flag", args: []string{"--miner-api-info", "garbage"},
			wantErr: `--miner-api-info: Lotus.MinerAPIInfo: API info "garbage"`},
		{name: "--windowpost", args: []string{"--windowpost"}, wantMode: "windowpost"},
		{name: "--winningpost", args: []string{"--winningpost"}, wantMode: "winningpost"},
		{name: "--windowpost over the setting", env: map[string]string{"SNARKD_LOTUS_WORKER_MODE": "winningpost"},
			args: []string{"--windowpost"}, wantMode: "windowpost"},
		{name: "--windowpost=false changes nothing", env: map[string]string{"SNARKD_LOTUS_WORKER_MODE": "winningpost"},
			args: []string{"--windowpost=false"}, wantMode: "winningpost"},
		{name: "--winningpost and the same --worker-mode", args: []string{"--winningpost", "--worker-mode", "winningpost"}, wantMode: "winningpost"},
		{name: "both booleans", args: []string{"--windowpost", "--winningpost"},
			wantErr: "--windowpost and --winningpost contradict each other"},
		{name: "--windowpost and --worker-mode seal", args: []string{"--worker-mode", "seal", "--windowpost"},
			wantErr: "--windowpost and --worker-mode seal contradict each other: --windowpost is --worker-mode windowpost"},
		{name: "--winningpost and --worker-mode windowpost", args: []string{"--winningpost", "--worker-mode", "windowpost"},
			wantErr: "--winningpost and --worker-mode windowpost contradict each other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"GOLOG_LOG_FMT": "json"}
			for k, v := range tc.env {
				env[k] = v
			}
			cfg, logged, err := runConfigOf(t, env, tc.args...)
			if tc.wantErr != "" {
				want := exitUsage
				if tc.failed {
					want = exitFailed
				}
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || exitCode(err) != want {
					t.Fatalf("err %v (exit %d), want %q (exit %d)", err, exitCode(err), tc.wantErr, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Lotus.MinerAPIInfo != tc.wantMiner || cfg.Lotus.WorkerMode != tc.wantMode {
				t.Fatalf("miner %q mode %q, want %q %q", cfg.Lotus.MinerAPIInfo, cfg.Lotus.WorkerMode, tc.wantMiner, tc.wantMode)
			}
			for _, w := range tc.wantLog {
				if !strings.Contains(logged, w) {
					t.Errorf("log lacks %s:\n%s", w, logged)
				}
			}
		})
	}
}

// TestLogConfig: the GOLOG_* variables override Log.Level and Log.Format where set, as go-log
// reads them for Lotus, per-subsystem levels included; a value go-log would ignore is an error
// naming the variable.
func TestLogConfig(t *testing.T) {
	noTerm := func(*os.File) bool { return false }
	term := func(*os.File) bool { return true }
	for _, tc := range []struct {
		name    string
		log     config.Log
		env     map[string]string
		term    func(*os.File) bool
		level   logging.LogLevel
		subs    map[string]logging.LogLevel
		format  logging.LogFormat
		file    string
		stdout  bool
		stderr  bool
		labels  map[string]string
		fromEnv bool
		wantErr string
	}{
		{name: "defaults", log: config.Log{Level: "info", Format: "text"}, term: noTerm, level: logging.LevelInfo, format: logging.PlaintextOutput, stderr: true},
		{name: "text on a terminal is coloured", log: config.Log{Level: "warn", Format: "text"}, term: term, level: logging.LevelWarn, format: logging.ColorizedOutput, stderr: true},
		{name: "Log.Format json", log: config.Log{Level: "debug", Format: "json"}, term: term, level: logging.LevelDebug, format: logging.JSONOutput, stderr: true},
		{name: "subsystem level beside Log.Level", log: config.Log{Level: "info"}, term: noTerm,
			env:   map[string]string{"GOLOG_LOG_LEVEL": "snarkd/prover=debug"},
			level: logging.LevelInfo, subs: map[string]logging.LogLevel{"snarkd/prover": logging.LevelDebug}, format: logging.PlaintextOutput, stderr: true},
		{name: "global and subsystem levels", log: config.Log{Level: "info"}, term: noTerm,
			env:   map[string]string{"GOLOG_LOG_LEVEL": "warn, snarkd/prover=debug,rpc=error"},
			level: logging.LevelWarn, fromEnv: true, subs: map[string]logging.LogLevel{"snarkd/prover": logging.LevelDebug, "rpc": logging.LevelError},
			format: logging.PlaintextOutput, stderr: true},
		{name: "GOLOG_LOG_FMT over Log.Format", log: config.Log{Level: "info", Format: "json"}, term: noTerm,
			env: map[string]string{"GOLOG_LOG_FMT": "color"}, level: logging.LevelInfo, format: logging.ColorizedOutput, stderr: true},
		{name: "GOLOG_LOG_FMT nocolor on a terminal", log: config.Log{Level: "info"}, term: term,
			env: map[string]string{"GOLOG_LOG_FMT": "nocolor"}, level: logging.LevelInfo, format: logging.PlaintextOutput, stderr: true},
		{name: "GOLOG_FILE replaces stderr", log: config.Log{Level: "info"}, term: term,
			env: map[string]string{"GOLOG_FILE": "/var/log/snarkd.log"}, level: logging.LevelInfo, format: logging.PlaintextOutput, file: "/var/log/snarkd.log"},
		{name: "GOLOG_FILE and stderr", log: config.Log{Level: "info"}, term: noTerm,
			env:   map[string]string{"GOLOG_FILE": "/var/log/snarkd.log", "GOLOG_OUTPUT": "file+stderr"},
			level: logging.LevelInfo, format: logging.PlaintextOutput, file: "/var/log/snarkd.log", stderr: true},
		{name: "GOLOG_OUTPUT stdout", log: config.Log{Level: "info"}, term: noTerm,
			env: map[string]string{"GOLOG_OUTPUT": "stdout"}, level: logging.LevelInfo, format: logging.PlaintextOutput, stdout: true},
		{name: "labels", log: config.Log{Level: "info"}, term: noTerm,
			env: map[string]string{"GOLOG_LOG_LABELS": "host=gpu1,dc=sjc"}, level: logging.LevelInfo, format: logging.PlaintextOutput, stderr: true,
			labels: map[string]string{"host": "gpu1", "dc": "sjc"}},
		{name: "bad level", log: config.Log{Level: "info"}, term: noTerm, env: map[string]string{"GOLOG_LOG_LEVEL": "snarkd/prover=loud"},
			wantErr: `GOLOG_LOG_LEVEL "snarkd/prover=loud": entry "snarkd/prover=loud": want LEVEL or SUBSYSTEM=LEVEL`},
		{name: "bad format", log: config.Log{Level: "info"}, term: noTerm, env: map[string]string{"GOLOG_LOG_FMT": "xml"},
			wantErr: `GOLOG_LOG_FMT "xml": want color, nocolor or json`},
		{name: "file output without a file", log: config.Log{Level: "info"}, term: noTerm, env: map[string]string{"GOLOG_OUTPUT": "file"},
			wantErr: `GOLOG_OUTPUT "file" names file but GOLOG_FILE is empty`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := logConfig(tc.log, func(k string) string { return tc.env[k] }, tc.term)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Level != tc.level || s.Format != tc.format || s.File != tc.file || s.Stdout != tc.stdout || s.Stderr != tc.stderr || s.levelFromEnv != tc.fromEnv {
				t.Fatalf("got %+v (level from env %v)", s.Config, s.levelFromEnv)
			}
			if len(s.SubsystemLevels) != len(tc.subs) {
				t.Fatalf("subsystem levels %v, want %v", s.SubsystemLevels, tc.subs)
			}
			for k, v := range tc.subs {
				if s.SubsystemLevels[k] != v {
					t.Fatalf("subsystem levels %v, want %v", s.SubsystemLevels, tc.subs)
				}
			}
			if len(s.Labels) != len(tc.labels) {
				t.Fatalf("labels %v, want %v", s.Labels, tc.labels)
			}
			for k, v := range tc.labels {
				if s.Labels[k] != v {
					t.Fatalf("labels %v, want %v", s.Labels, tc.labels)
				}
			}
		})
	}
}

// TestGologSubsystemLevel: GOLOG_LOG_LEVEL="snarkd/prover=debug" turns on that subsystem's
// debug lines while Log.Level keeps the others at info, and GOLOG_FILE takes the lines.
func TestGologSubsystemLevel(t *testing.T) {
	_, logged, err := runConfigOf(t, map[string]string{"GOLOG_LOG_LEVEL": "snarkd/prover=debug", "GOLOG_LOG_FMT": "json"}, "--worker-mode", "seal")
	if err != nil {
		t.Fatal(err)
	}
	_ = logged
	// runConfigOf's cleanup resets logging; look now.
	for sub, want := range map[string]string{"snarkd/prover": "debug", "snarkd/cmd": "info"} {
		logging.Logger(sub) // make sure it exists
		if got, err := logging.SubsystemLevelName(sub); err != nil || got != want {
			t.Errorf("%s: level %q (%v), want %q", sub, got, err, want)
		}
	}
	logging.Logger("snarkd/prover").Debugw("a prover debug line")
	logging.Logger("snarkd/cmd").Debugw("a cmd debug line")
	b, err := os.ReadFile(os.Getenv("GOLOG_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "a prover debug line") || strings.Contains(string(b), "a cmd debug line") {
		t.Fatalf("GOLOG_FILE holds:\n%s", b)
	}
}

// TestCheckDaemonVersion: the same API version passes silently; another one of the same major
// gives one warning line naming both builds and API versions; another major is refused.
func TestCheckDaemonVersion(t *testing.T) {
	for _, tc := range []struct {
		name       string
		daemon     rpcapi.VersionInfo
		warn, fail string
	}{
		{name: "same build", daemon: rpcapi.VersionInfo{Version: "v1.2.0 (go1.26.1)", APIVersion: "1.3.0"}},
		{name: "other build, same API", daemon: rpcapi.VersionInfo{Version: "v1.1.0 (go1.26.0)", APIVersion: "1.3.0"}},
		{name: "older minor API", daemon: rpcapi.VersionInfo{Version: "v1.1.0 (go1.26.0)", APIVersion: "1.2.0"},
			warn: "snarkd: warning: API version mismatch: the daemon is snarkd v1.1.0 (go1.26.0) (API 1.2.0), this CLI snarkd v1.2.0 (go1.26.1) (API 1.3.0); the command goes on"},
		{name: "newer patch API", daemon: rpcapi.VersionInfo{Version: "v1.2.1 (go1.26.1)", APIVersion: "1.3.1"}, warn: "(API 1.3.1)"},
		{name: "unparsable API", daemon: rpcapi.VersionInfo{Version: "dev (go1.26.1)", APIVersion: "test"}, warn: "(API test)"},
		{name: "other major", daemon: rpcapi.VersionInfo{Version: "v2.0.0 (go1.27.0)", APIVersion: "2.0.0"},
			fail: "incompatible daemon: the daemon is snarkd v2.0.0 (go1.27.0) (API 2.0.0), this CLI snarkd v1.2.0 (go1.26.1) (API 1.3.0); their API major versions differ"},
		{name: "older major, v prefix", daemon: rpcapi.VersionInfo{Version: "v0.9.0 (go1.25.0)", APIVersion: "v0.9.0"}, fail: "API major versions differ"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w strings.Builder
			err := checkDaemonVersion(&w, tc.daemon, "v1.2.0 (go1.26.1)", "1.3.0")
			if tc.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fail) {
					t.Fatalf("err %v, want %q", err, tc.fail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.warn == "" && w.Len() != 0 || tc.warn != "" && (!strings.Contains(w.String(), tc.warn) || strings.Count(w.String(), "\n") != 1) {
				t.Fatalf("stderr %q, want one line with %q", w.String(), tc.warn)
			}
		})
	}
}

// fakeDaemon answers Prover.Version with v and Prover.Jobs with no jobs, counting Jobs calls.
type fakeDaemon struct {
	v    rpcapi.VersionInfo
	jobs atomic.Int32
}

func (f *fakeDaemon) Version(context.Context) (rpcapi.VersionInfo, error) { return f.v, nil }

func (f *fakeDaemon) Jobs(context.Context, rpcapi.JobFilter) ([]rpcapi.Job, error) {
	f.jobs.Add(1)
	return nil, nil
}

// TestCLIChecksDaemonVersion: a CLI command that talks to the daemon warns on stderr about a
// daemon of another API version and goes on, and refuses one of another API major version
// without sending its call.
func TestCLIChecksDaemonVersion(t *testing.T) {
	t.Setenv("SNARKD_API_INFO", "")
	for _, tc := range []struct {
		name     string
		api      string
		code     int
		warn     bool
		jobCalls int32
	}{
		{"same API", buildinfo.APIVersion, 0, false, 1},
		{"other minor", bumpMinor(t, buildinfo.APIVersion), 0, true, 1},
		{"other major", "99.0.0", exitFailed, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeDaemon{v: rpcapi.VersionInfo{Version: "v9.9.9 (go1.0)", APIVersion: tc.api}}
			rpc := jsonrpc.NewServer()
			rpc.Register(rpcapi.ProverNamespace, f)
			srv := httptest.NewServer(rpc)
			defer srv.Close()
			host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
			stdout, stderr, code := runApp(t, "jobs", "--api-info", "tok:/ip4/"+host+"/tcp/"+port+"/http")
			if code != tc.code || f.jobs.Load() != tc.jobCalls {
				t.Fatalf("exit %d, want %d; Jobs called %d times\nstdout:\n%s\nstderr:\n%s", code, tc.code, f.jobs.Load(), stdout, stderr)
			}
			warned := strings.Contains(stderr, "warning: API version mismatch: the daemon is snarkd v9.9.9 (go1.0) (API "+tc.api+"), this CLI snarkd "+buildinfo.String())
			if warned != tc.warn {
				t.Fatalf("warned %v, want %v; stderr:\n%s", warned, tc.warn, stderr)
			}
			if tc.code == exitFailed && !strings.Contains(stderr, "incompatible daemon") {
				t.Fatalf("stderr:\n%s", stderr)
			}
			if tc.code == 0 && !strings.Contains(stdout, "JOB") {
				t.Fatalf("stdout:\n%s", stdout)
			}
		})
	}
}

// bumpMinor returns v ("X.Y.Z") with its minor part one higher.
func bumpMinor(t *testing.T, v string) string {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		t.Fatalf("API version %q is not X.Y.Z", v)
	}
	return parts[0] + "." + parts[1] + "9.0"
}
