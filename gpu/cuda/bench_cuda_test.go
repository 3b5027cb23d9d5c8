//go:build cuda

package cuda

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

func envLogs(t testing.TB, name, def string) []uint {
	s, ok := os.LookupEnv(name)
	if !ok {
		s = def
	}
	var out []uint
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseUint(f, 10, 8)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, uint(v))
	}
	return out
}

// BenchmarkKernelReport runs KernelBench (the code behind `snarkd bench gpu`) once per
// iteration (run it with -benchtime 1x), for GPU hosts that have the test binary but not the
// daemon, and prints its table. Sizes come from SNARKD_BENCH_{NTT,G1,G1SPLIT,G2,G1DENSE}
// (comma-separated log2 sizes), the G1DENSE MSMs' windows from SNARKD_BENCH_WINDOWS.
func BenchmarkKernelReport(b *testing.B) {
	for range b.N {
		kernelReport(b)
	}
}

func kernelReport(t *testing.B) {
	requireDevice(t)
	runs, _ := strconv.Atoi(os.Getenv("SNARKD_BENCH_RUNS"))
	cfg := KernelBenchConfig{
		Runs:    runs,
		NTTLogs: envLogs(t, "SNARKD_BENCH_NTT", "20,24"),
		G1Logs:  envLogs(t, "SNARKD_BENCH_G1", "20"),
		G1Split: envLogs(t, "SNARKD_BENCH_G1SPLIT", ""),
		G2Logs:  envLogs(t, "SNARKD_BENCH_G2", "20"),
		G1Dense: envLogs(t, "SNARKD_BENCH_G1DENSE", ""),
		Windows: envLogs(t, "SNARKD_BENCH_WINDOWS", ""),
		StreamChunk: func() uint {
			if l := envLogs(t, "SNARKD_BENCH_STREAM_CHUNK", ""); len(l) > 0 {
				return l[0]
			}
			return 0
		}(),
		Log: os.Stderr,
	}
	rows, err := KernelBench(context.Background(), cfg)
	FormatKernelBench(os.Stdout, rows)
	if err != nil {
		t.Fatal(err)
	}
}
