package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFilesUpToDate regenerates into a scratch copy of package rpcapi and compares
// with the committed proxy_gen.go and docs/api.md: run `go generate ./rpcapi` when it fails.
func TestGeneratedFilesUpToDate(t *testing.T) {
	src := ".."
	tmp := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(tmp, "api.md")
	if err := run(tmp, out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ got, want string }{
		{filepath.Join(tmp, "proxy_gen.go"), filepath.Join(src, "proxy_gen.go")},
		{out, filepath.Join(src, "..", "docs", "api.md")},
	} {
		got, _ := os.ReadFile(f.got)
		want, err := os.ReadFile(f.want)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s is stale: run go generate ./rpcapi", f.want)
		}
	}
}
