// Package memlimit sets the Go runtime's soft memory limit from the machine's memory. A prover
// holds tens of gigabytes live (parameters, partitions in flight); with the default GC pacing
// alone the heap may grow to twice that before a collection, past the machine's memory.
package memlimit

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fraction of the available memory the limit is set to: the rest is left to the kernel, CUDA's
// pinned staging buffers and other processes.
const Fraction = 0.9

// Set sets the soft memory limit to Fraction of the smaller of the machine's memory and the
// process's cgroup limit, unless GOMEMLIMIT is set. It returns the limit in force (0 when none
// could be determined) and where it came from.
func Set() (limit uint64, source string) {
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		return uint64(debug.SetMemoryLimit(-1)), "GOMEMLIMIT=" + v
	}
	total, err := Available()
	if err != nil || total == 0 {
		return 0, "unknown"
	}
	limit = uint64(float64(total) * Fraction)
	debug.SetMemoryLimit(int64(min(limit, math.MaxInt64)))
	return limit, fmt.Sprintf("%.0f%% of %d bytes", Fraction*100, total)
}

// Available is the memory this process may use: MemTotal, or the cgroup's memory.max when
// lower.
func Available() (uint64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	total, err := memTotal(data)
	if err != nil {
		return 0, err
	}
	if cg, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseUint(strings.TrimSpace(string(cg)), 10, 64); err == nil && v < total {
			total = v
		}
	}
	return total, nil
}

// memTotal parses MemTotal (kB) out of /proc/meminfo.
func memTotal(meminfo []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("MemTotal %q: %w", f[1], err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no MemTotal in /proc/meminfo")
}
