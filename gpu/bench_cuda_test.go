//go:build cuda

package gpu

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

func envLogs(t *testing.T, name, def string) []uint {
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

// TestKernelBenchReport runs KernelBench (the code behind `snarkd bench gpu`) when
// SNARKD_KERNEL_BENCH is set, for GPU hosts that have the test binary but not the daemon.
// Sizes come from SNARKD_BENCH_{NTT,G1,G1SPLIT,G2,G1DENSE} (comma-separated log2 sizes), the
// G1DENSE MSMs' windows from SNARKD_BENCH_WINDOWS.
func TestKernelBenchReport(t *testing.T) {
	if os.Getenv("SNARKD_KERNEL_BENCH") == "" {
		t.Skip("set SNARKD_KERNEL_BENCH=1 to run the kernel benchmark")
	}
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
