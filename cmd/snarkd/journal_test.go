package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/plugin"
	"github.com/snarkd/snarkd/plugin/journal"
	"github.com/snarkd/snarkd/repolock"
	"github.com/snarkd/snarkd/rpcapi"
)

// journalRepoWithJobs makes a repo whose journal holds n finished jobs.
func journalRepoWithJobs(t *testing.T, n int) (repo, path string) {
	t.Helper()
	repo = t.TempDir()
	path = filepath.Join(repo, plugin.JournalFile)
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for i := 0; i < n; i++ {
		id := rpcapi.JobID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
		rec := journal.Record{Job: rpcapi.Job{ID: id, Kind: rpcapi.KindTest, State: rpcapi.JobQueued}}
		if _, _, err := j.Create(rec, rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 64}}); err != nil {
			t.Fatal(err)
		}
		rec.Job.State = rpcapi.JobDone
		if err := j.Update(rec, []byte(strings.Repeat("p", 192))); err != nil {
			t.Fatal(err)
		}
	}
	return repo, path
}

// TestJournalCommands: check exits 0 on an intact journal and 1 on a damaged one, naming the
// damage and the repair command; repair salvages the jobs, keeps the damaged file and prints
// the counts; bad arguments are usage errors; a running daemon's repo is refused.
func TestJournalCommands(t *testing.T) {
	t.Setenv("SNARKD_PATH", "")
	const jobs = 30
	repo, path := journalRepoWithJobs(t, jobs)
	if out, errOut, code := runApp(t, "journal", "check", "--repo", repo); code != 0 || !strings.Contains(out, fmt.Sprintf("intact, %d jobs", jobs)) {
		t.Fatalf("check intact: %d %q %q", code, out, errOut)
	}
	// The global --repo works as well.
	if out, _, code := runApp(t, "--repo", repo, "journal", "check"); code != 0 || !strings.Contains(out, "intact") {
		t.Fatalf("check with global --repo: %d %q", code, out)
	}
	if out, _, code := runApp(t, "journal", "repair", "--repo", repo); code != 0 || !strings.Contains(out, "nothing to repair") {
		t.Fatalf("repair intact: %d %q", code, out)
	}

	// Overwrite the first page of job records.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	page := -1
	for id := 2; id*pageSize < len(b); id++ {
		if strings.Contains(string(b[id*pageSize:(id+1)*pageSize]), `"State":"done"`) {
			page = id
			break
		}
	}
	if page < 0 {
		t.Fatal("no page of job records")
	}
	copy(b[page*pageSize:(page+1)*pageSize], strings.Repeat("\xff", pageSize))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runApp(t, "journal", "check", "--repo", repo)
	if code != exitFailed || !strings.Contains(out, "damaged") || !strings.Contains(out, fmt.Sprintf("page %d", page)) ||
		!strings.Contains(errOut, "snarkd journal repair --repo "+repo) {
		t.Fatalf("check damaged: %d %q %q", code, out, errOut)
	}

	// A daemon holding the repo keeps repair off the journal.
	lock, err := repolock.Acquire(repo)
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runApp(t, "journal", "repair", "--repo", repo)
	lock.Release()
	if code != exitFailed || !strings.Contains(errOut, "needs the daemon stopped") {
		t.Fatalf("repair beside a daemon: %d %q", code, errOut)
	}

	out, errOut, code = runApp(t, "journal", "repair", "--repo", repo)
	m := regexp.MustCompile(`recovered (\d+) jobs, lost (\d+)`).FindStringSubmatch(out)
	if code != 0 || m == nil || !strings.Contains(out, "moved the damaged file to "+path+journal.BrokenSuffix) {
		t.Fatalf("repair: %d %q %q", code, out, errOut)
	}
	recovered, _ := strconv.Atoi(m[1])
	lost, _ := strconv.Atoi(m[2])
	if recovered+lost != jobs || lost == 0 || strings.Count(out, "lost job ") != lost {
		t.Fatalf("repair counts: %q", out)
	}
	broken, _ := filepath.Glob(path + journal.BrokenSuffix + "*")
	if len(broken) != 1 {
		t.Fatalf("damaged files kept: %v", broken)
	}
	if out, _, code := runApp(t, "journal", "check", "--repo", repo); code != 0 || !strings.Contains(out, fmt.Sprintf("intact, %d jobs", recovered)) {
		t.Fatalf("check after repair: %d %q", code, out)
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"argument", []string{"journal", "check", "--repo", repo, "extra"}, exitUsage, "journal check takes no arguments"},
		{"unknown flag", []string{"journal", "repair", "--force"}, exitUsage, "flag provided but not defined: -force"},
		{"no repo", []string{"journal", "check", "--repo", filepath.Join(repo, "nope")}, exitFailed, "no repo at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, errOut, code := runApp(t, tc.args...); code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("%d %q, want %d %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}
