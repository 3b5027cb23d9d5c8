package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// noJSON lists the commands that print no result of their own, with the reason; every other
// command that runs an action must take --json ("add --json to any command", README).
var noJSON = map[string]string{
	"snarkd run": "runs the daemon: it prints its endpoint lines for people and scripts that wait for them, then streams logs",
}

// TestEveryResultCommandHasJSON walks the whole command tree: a command with an action has
// --json unless it only groups subcommands (its action refuses an unknown one) or noJSON names
// it.
func TestEveryResultCommandHasJSON(t *testing.T) {
	seen := map[string]bool{}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := prefix + " " + c.Name
			seen[name] = true
			walk(name, c.Subcommands)
			if c.Action == nil || len(c.Subcommands) > 0 {
				continue
			}
			if _, ok := noJSON[name]; ok {
				continue
			}
			if !hasFlag(c, "json") {
				t.Errorf("%s prints a result but has no --json flag (add one, or list it in noJSON with the reason)", name)
			}
		}
	}
	walk("snarkd", newApp().Commands)
	for name := range noJSON {
		if !seen[name] {
			t.Errorf("noJSON lists %s, which is not a command", name)
		}
	}
}

func hasFlag(c *cli.Command, name string) bool {
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// jsonObject runs the CLI and decodes its whole stdout as one JSON object.
func jsonObject(t *testing.T, wantCode int, args ...string) map[string]any {
	t.Helper()
	out, errOut, code := runApp(t, args...)
	if code != wantCode {
		t.Fatalf("snarkd %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, out, errOut)
	}
	var v map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&v); err != nil || dec.More() {
		t.Fatalf("snarkd %s: stdout is not one JSON object (%v):\n%s", strings.Join(args, " "), err, out)
	}
	return v
}

// TestJSONResults runs the commands that gained --json without a daemon.
func TestJSONResults(t *testing.T) {
	t.Setenv("SNARKD_PATH", "")
	t.Setenv("SNARKD_API_INFO", "")
	repo := t.TempDir()

	v := jsonObject(t, 0, "--repo", repo, "auth", "create-token", "--perm", "write", "--json")
	if tok, _ := v["token"].(string); strings.Count(tok, ".") != 2 || v["perm"] != "write" ||
		len(v["allow"].([]any)) != 2 {
		t.Errorf("auth create-token --json = %v", v)
	}
	// Without --json the text is the bare token, as before.
	if out, _, code := runApp(t, "--repo", repo, "auth", "create-token"); code != 0 || strings.Count(strings.TrimSpace(out), ".") != 2 || strings.Contains(out, "{") {
		t.Errorf("auth create-token = %d %q", code, out)
	}

	v = jsonObject(t, 0, "journal", "check", "--repo", repo, "--json")
	if v["exists"] != false || v["intact"] != true || v["file"] != filepath.Join(repo, "jobs.db") {
		t.Errorf("journal check --json on a repo without a journal = %v", v)
	}
	jrepo, path := journalRepoWithJobs(t, 3)
	v = jsonObject(t, 0, "journal", "check", "--repo", jrepo, "--json")
	if v["intact"] != true || v["jobs"] != 3.0 {
		t.Errorf("journal check --json = %v", v)
	}
	v = jsonObject(t, 0, "journal", "repair", "--repo", jrepo, "--json")
	if v["repaired"] != false || v["file"] != path {
		t.Errorf("journal repair --json on an intact journal = %v", v)
	}
	if err := os.WriteFile(path, []byte("not a journal"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A damaged journal still exits 1, with the report on stdout.
	v = jsonObject(t, 1, "journal", "check", "--repo", jrepo, "--json")
	if v["intact"] != false || len(v["problems"].([]any)) == 0 {
		t.Errorf("journal check --json on a damaged journal = %v", v)
	}
	v = jsonObject(t, 0, "journal", "repair", "--repo", jrepo, "--json")
	if v["repaired"] != true || v["broken_path"] == "" {
		t.Errorf("journal repair --json on a damaged journal = %v", v)
	}

	out := filepath.Join(t.TempDir(), "c1.json")
	v = jsonObject(t, 0, "demo", "seal", "--proof", "2KiB", "--out", out, "--json")
	if v["out"] != out || v["sector"] != 1.0 || v["miner"] != 1000.0 {
		t.Errorf("demo seal --json = %v", v)
	}
}

// TestJSONResultsWithDaemon runs the client commands that gained --json against an in-process
// daemon: auth api-info, and prove cancel of a finished job (exit 4, the result still printed).
func TestJSONResultsWithDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a daemon")
	}
	t.Setenv("SNARKD_PATH", "")
	t.Setenv("SNARKD_API_INFO", "")
	repo := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		app := newApp()
		app.Writer, app.ErrWriter = &strings.Builder{}, &strings.Builder{}
		done <- app.RunContext(ctx, []string{"snarkd", "--repo", repo, "run", "--listen", "127.0.0.1:0", "--backend", "cpu"})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("daemon did not stop")
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(repo, apiFile)); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("daemon stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("daemon did not write its api file")
		}
		time.Sleep(50 * time.Millisecond)
	}

	v := jsonObject(t, 0, "--repo", repo, "auth", "api-info", "--perm", "admin", "--json")
	info, _ := v["api_info"].(string)
	if !strings.HasPrefix(info, v["token"].(string)+":/ip4/127.0.0.1/tcp/") || !strings.HasSuffix(info, v["multiaddr"].(string)) ||
		v["perm"] != "admin" {
		t.Errorf("auth api-info --json = %v", v)
	}

	v = jsonObject(t, 0, "--repo", repo, "prove", "test", "--constraints", "1024", "--partitions", "1", "--json")
	id, _ := v["ID"].(string)
	if id == "" {
		t.Fatalf("prove test --json printed no job ID: %v", v)
	}
	v = jsonObject(t, exitAlreadyFinished, "--repo", repo, "prove", "cancel", "--json", id)
	if v["job_id"] != id || v["cancelled"] != false || v["state"] != "done" || v["finished"] == nil {
		t.Errorf("prove cancel --json of a finished job = %v", v)
	}
}
