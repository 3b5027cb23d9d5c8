package itests

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/snarkd/snarkd/plugin/journal"
	"github.com/snarkd/snarkd/rpcapi"
)

// journalWithJobs writes n finished jobs into repo's journal through the journal API.
func journalWithJobs(t *testing.T, repo string, n int) string {
	t.Helper()
	path := filepath.Join(repo, "jobs.db")
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	now := time.Now()
	for i := 0; i < n; i++ {
		id := rpcapi.JobID(fmt.Sprintf("11111111-2222-3333-4444-%012d", i))
		rec := journal.Record{Job: rpcapi.Job{ID: id, RequestID: fmt.Sprintf("r%d", i), Kind: rpcapi.KindTest,
			State: rpcapi.JobQueued, Partitions: 1, Submitted: now}}
		req := rpcapi.ProofRequest{RequestID: rec.Job.RequestID, Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 64, Partitions: 1}}
		if _, _, err := j.Create(rec, req); err != nil {
			t.Fatal(err)
		}
		rec.Job.State, rec.Job.Finished = rpcapi.JobDone, now
		if err := j.Update(rec, []byte(strings.Repeat("p", 192))); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestJournalDamageStopsDaemon: the daemon refuses to start on a damaged, truncated, empty or
// missing journal with an error naming the file and the repair command, without a panic and
// without touching the file; `snarkd journal repair` then salvages the jobs and the daemon
// serves them.
func TestJournalDamageStopsDaemon(t *testing.T) {
	bin := buildDaemon(t)
	const jobs = 30
	rng := rand.New(rand.NewSource(11))
	for _, tc := range []struct {
		name   string
		damage func(path string, b []byte) error
		want   string
	}{
		{"truncated to zero", func(p string, _ []byte) error { return os.Truncate(p, 0) }, "the file is empty"},
		{"missing", func(p string, _ []byte) error { return os.Remove(p) }, "the file is missing"},
		{"truncated to half", func(p string, b []byte) error { return os.Truncate(p, int64(len(b)/2)) }, "the file is truncated"},
		{"random page", func(p string, b []byte) error {
			// A page of job records.
			for id := 2; (id+1)*4096 <= len(b); id++ {
				if strings.Contains(string(b[id*4096:(id+1)*4096]), `"State":"done"`) {
					rng.Read(b[id*4096 : (id+1)*4096])
					return os.WriteFile(p, b, 0o600)
				}
			}
			return fmt.Errorf("no page of job records")
		}, "is overwritten"},
		{"random file", func(p string, b []byte) error { rng.Read(b); return os.WriteFile(p, b, 0o600) }, "neither meta page is valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := t.TempDir()
			path := journalWithJobs(t, repo, jobs)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.damage(path, b); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, "--repo", repo, "run", "--listen", "127.0.0.1:0").CombinedOutput()
			if err == nil {
				t.Fatal("the daemon started on a damaged journal")
			}
			for _, want := range []string{path, tc.want, "snarkd journal repair --repo " + repo} {
				if !strings.Contains(string(out), want) {
					t.Errorf("output does not say %q:\n%s", want, out)
				}
			}
			if strings.Contains(string(out), "panic") || strings.Contains(string(out), "goroutine ") {
				t.Fatalf("the daemon panicked:\n%s", out)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Fatal("the damaged journal was changed")
			}

			out2, err := runCLI(bin, repo, "journal", "check")
			if code := exitStatus(err); code != 1 || !strings.Contains(out2, "damaged") {
				t.Fatalf("journal check: exit %d\n%s", code, out2)
			}
			out2, err = runCLI(bin, repo, "journal", "repair")
			if err != nil {
				t.Fatalf("journal repair: %v\n%s", err, out2)
			}
			m := regexp.MustCompile(`recovered (\d+) jobs, lost (\d+)`).FindStringSubmatch(out2)
			if m == nil {
				t.Fatalf("journal repair does not print the counts:\n%s", out2)
			}
			recovered, _ := strconv.Atoi(m[1])
			lost, _ := strconv.Atoi(m[2])
			switch tc.name {
			case "random page":
				if recovered+lost != jobs || lost == 0 {
					t.Fatalf("recovered %d, lost %d of %d:\n%s", recovered, lost, jobs, out2)
				}
			case "truncated to zero", "missing", "random file":
				if recovered != 0 || !strings.Contains(out2, "note:") {
					t.Fatalf("repair of a lost journal:\n%s", out2)
				}
			}
			t.Logf("journal repair:\n%s", out2)

			d := startDaemon(t, bin, repo, nil)
			list, err := d.client(t, false).Jobs(context.Background(), rpcapi.JobFilter{States: []rpcapi.JobState{rpcapi.JobDone}})
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != recovered {
				t.Fatalf("the daemon serves %d done jobs, the repair recovered %d", len(list), recovered)
			}
		})
	}
}

func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
