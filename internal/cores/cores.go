// Package cores says how many goroutines compute loops run, apart from the runtime's
// GOMAXPROCS. A daemon that proves on every core keeps spare Ps (Spare): a request handler
// woken by the network then finds an idle P at once instead of queueing behind the compute
// goroutines, and the kernel, which favours threads that sleep, runs it promptly. With
// GOMAXPROCS equal to the cores, a heartbeat waited up to half a second (docs/benchmarks.md,
// "RPC latency while proving").
package cores

import (
	"runtime"
	"sync/atomic"
)

// n is GOMAXPROCS as the process started: the machine's cores, its cgroup's CPU quota, or the
// GOMAXPROCS variable.
var n atomic.Int64

func init() { n.Store(int64(runtime.GOMAXPROCS(0))) }

// N is the number of goroutines a loop over all cores runs: GOMAXPROCS as the process started.
func N() int { return int(n.Load()) }

// SpareFactor is how many Ps Spare gives the runtime per core.
const SpareFactor = 4

// Spare sets GOMAXPROCS to SpareFactor × N (compute loops keep running N goroutines) and
// returns it. Call it once, at the start of a program that must answer requests while it
// computes.
func Spare() int {
	p := SpareFactor * N()
	runtime.GOMAXPROCS(p)
	return p
}
