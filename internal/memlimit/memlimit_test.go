package memlimit

import (
	"runtime/debug"
	"testing"
)

func TestMemTotal(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"MemTotal:       131072 kB\nMemFree: 1 kB\n", 131072 << 10, true},
		{"MemFree: 1 kB\nMemTotal: 2 kB\n", 2 << 10, true},
		{"MemFree: 1 kB\n", 0, false},
		{"MemTotal: lots kB\n", 0, false},
	} {
		got, err := memTotal([]byte(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%q: %d, %v; want %d (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestSet(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	limit, src := Set()
	avail, err := Available()
	if err != nil {
		t.Skip("no /proc/meminfo:", err)
	}
	if limit == 0 || limit > avail || uint64(debug.SetMemoryLimit(-1)) != limit {
		t.Fatalf("limit %d (%s), available %d, runtime %d", limit, src, avail, debug.SetMemoryLimit(-1))
	}
}
