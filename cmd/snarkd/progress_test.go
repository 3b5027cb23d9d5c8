package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/rpcapi"
)

// runCLI runs the CLI with args and returns what it wrote to stdout and stderr.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &errOut
	app.ExitErrHandler = func(*cli.Context, error) {}
	err = app.Run(append([]string{"snarkd", "--repo", t.TempDir()}, args...))
	return out.String(), errOut.String(), err
}

// TestProgressOut: off a terminal a line is written when the step changes and not again within
// the step until logEvery has passed; on a terminal every call redraws the line in place, with
// a bar only for countable work, padded over a longer line drawn before.
func TestProgressOut(t *testing.T) {
	type call struct {
		key  string
		frac float64
		line string
	}
	for _, tc := range []struct {
		name  string
		draw  bool
		calls []call
		want  string
	}{
		{"log: step changes only", false,
			[]call{{"a", -1, "a 1"}, {"a", -1, "a 2"}, {"b", 0.5, "b 1"}, {"b", 0.6, "b 2"}},
			"a 1\nb 1\n"},
		{"draw: every call, in place", true,
			[]call{{"a", -1, "step a, long line"}, {"b", 0.5, "b"}},
			"\rstep a, long line\r[###############...............] b\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := &progressOut{w: &buf, draw: tc.draw, logEvery: time.Hour, lastLog: time.Now()}
			for _, c := range tc.calls {
				p.show(c.key, c.frac, c.line)
			}
			p.end()
			if got := buf.String(); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestParamsGenProgress: `params gen` names every step of the setup as it begins (counts where
// the step has them), as redrawn lines with --progress and as log lines off a terminal, and
// ends with the files written and the time of each step.
func TestParamsGenProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("Groth16 setup in -short")
	}
	const proof = "StackedDrgWindow2KiBV1_1"
	for _, tc := range []struct {
		name string
		args []string
		draw bool
	}{
		{"off a terminal", nil, false},
		{"--progress", []string{"--progress"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			stdout, stderr, err := runCLI(t, append([]string{"params", "gen", "--dir", dir, "--proof", proof}, tc.args...)...)
			if err != nil {
				t.Fatalf("%v\n%s%s", err, stdout, stderr)
			}
			if got := strings.Contains(stderr, "\r"); got != tc.draw {
				t.Errorf("lines redrawn in place: %v, want %v\n%q", got, tc.draw, stderr)
			}
			for _, want := range []string{
				proof + ": circuit synthesis, ",
				proof + ": QAP evaluation 0/",
				" matrix rows (0%), ",
				proof + ": G1 queries 0/",
				proof + ": G2 query 0/",
				" points (0%), ",
				proof + ": writing files, ",
			} {
				if !strings.Contains(stderr, want) {
					t.Errorf("progress lacks %q:\n%s", want, stderr)
				}
			}
			if !tc.draw {
				// One line per step: synthesis, evaluation, G1, G2, writing (no check for PoSt).
				if n := strings.Count(stderr, "\n"+proof+": "); n < 5 {
					t.Errorf("%d progress lines, want a line per step:\n%s", n, stderr)
				}
			}
			for _, want := range []string{"wrote v28-proof-of-spacetime-", ".params (", ".vk (", ".meta (", "in " + dir + "; took ",
				": circuit synthesis ", ", QAP evaluation ", ", G1 queries ", ", G2 query ", ", writing files "} {
				if !strings.Contains(stdout, want) {
					t.Errorf("summary lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}

// TestCircuitInfoProgress: circuit info names the circuit and its step on stderr before it
// synthesizes it, and ends with a summary line; stdout keeps the table alone.
func TestCircuitInfoProgress(t *testing.T) {
	stdout, stderr, err := runCLI(t, "circuit", "info", "--proof", "StackedDrgWinning2KiBV1")
	if err != nil {
		t.Fatalf("%v\n%s%s", err, stdout, stderr)
	}
	for _, want := range []string{"circuit 1/1 StackedDrgWinning2KiBV1: blank synthesis of one sector block, ", "1 circuit(s) synthesized in "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stdout, "circuit 1/1") || !strings.Contains(stdout, "StackedDrgWinning2KiBV1") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestJobSummaryAndStage: prove's last line itemises the parameter load with the other stages,
// and the progress bar shows what a job loads or generates instead of a partition stage.
func TestJobSummaryAndStage(t *testing.T) {
	j := rpcapi.Job{ID: "j1", Partitions: 2, Timings: rpcapi.Timings{QueueWaitMs: 5, SRSLoadMs: 6100, SynthesisMs: 900, ProveMs: 1200, VerifyMs: 30, TotalMs: 8300}}
	want := "job j1 done: 384 bytes, 2 partition(s), 8.3s total (queue 5ms, parameters 6.1s, synthesis 900ms, proving 1.2s, verify 30ms)"
	if got := jobSummary(j, 384); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	for _, tc := range []struct {
		ev   rpcapi.JobEvent
		want string
	}{
		{rpcapi.JobEvent{Type: rpcapi.EventLoadingParams, Detail: "generate test-16384-0"}, "parameters: generate test-16384-0"},
		{rpcapi.JobEvent{Type: rpcapi.EventLoadingParams}, "loading parameters"},
		{rpcapi.JobEvent{Type: rpcapi.EventSynthesizing, Partition: 0}, "synthesizing partition 1/2"},
		{rpcapi.JobEvent{Type: rpcapi.EventVerifying, Partition: 2}, "verifying"},
	} {
		if got := progressStage(tc.ev, 2); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.ev.Type, got, tc.want)
		}
	}
}
