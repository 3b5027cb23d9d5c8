package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseBenchLists(t *testing.T) {
	for _, tc := range []struct {
		in      string
		windows bool
		want    []uint
		err     bool
	}{
		{in: "", want: nil},
		{in: "20, 2^24 ,26", want: []uint{20, 24, 26}},
		{in: "0", err: true},
		{in: "29", err: true},
		{in: "2^x", err: true},
		{in: "20,22", windows: true, want: []uint{20, 22}},
		{in: "3", windows: true, err: true},
		{in: "25", windows: true, err: true},
		{in: "2^20", windows: true, err: true},
	} {
		parse := parseLogs
		if tc.windows {
			parse = parseWindows
		}
		got, err := parse(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%q (windows %v): err %v, want error %v", tc.in, tc.windows, err, tc.err)
			continue
		}
		if !tc.err && !slices.Equal(got, tc.want) {
			t.Errorf("%q (windows %v): %v, want %v", tc.in, tc.windows, got, tc.want)
		}
	}
}

// TestBenchCPUProfile: `bench post --cpuprofile` proves and leaves a gzip'd pprof profile; a
// path that cannot be created is refused, naming the flag.
func TestBenchCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	args := []string{"bench", "post", "--proof", "StackedDrgWindow2KiBV1_1", "--proofs", "1", "--backend", "cpu"}
	out, _, err := runCLI(t, append(args, "--cpuprofile", path)...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "sustained") {
		t.Fatalf("no report:\n%s", out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile of %d bytes is not gzip'd", len(b))
	}
	_, _, err = runCLI(t, append(args, "--cpuprofile", filepath.Join(t.TempDir(), "missing", "cpu.prof"))...)
	if err == nil || !strings.Contains(err.Error(), "--cpuprofile") {
		t.Fatalf("unwritable profile path: %v", err)
	}
}
