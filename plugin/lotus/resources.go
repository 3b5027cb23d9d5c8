package lotus

import (
	"math"
	"sort"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/rpcapi"
)

// ResourceConfig says what Info reports to the miner's scheduler (config Lotus.IgnoreResources
// and Lotus.MaxConcurrent*).
//
// The miner's scheduler (lotus storage/sealer: ActiveResources.CanHandleRequest, called by the
// assigners' TrySched and by each worker's assignReadyWork/withResources) admits a task on a
// worker only while MaxConcurrent tasks of its (task type, seal proof type) are not already
// running there, and, unless the worker reports IgnoreResources, while the task's MinMemory,
// MaxMemory, CPU threads (Resources.Threads) and GPUUtilization, added to those of the tasks
// already running, fit the memory, CPUs and GPU count the worker reported. snarkd reports each
// task as a fraction 1/m of the box (m the task type's concurrency), so exactly m fit however
// the tasks split across sector sizes and seal proof types.
type ResourceConfig struct {
	// IgnoreResources reports IgnoreResources and no resource table: the miner sends every
	// task it has, as before snarkd had a table. MaxConcurrent is not reported then either,
	// because Lotus checks MaxConcurrent even for a worker that ignores resources.
	IgnoreResources bool
	// MaxConcurrent is the concurrency of each task type; a task type that is missing or 0
	// gets the default (DefaultConcurrency).
	MaxConcurrent map[rpcapi.TaskType]int
	// CPUConcurrency is the default concurrency where the worker reports no GPU (the daemon
	// passes Jobs.Workers: the jobs it proves at once).
	CPUConcurrency int
}

// DefaultConcurrency is the concurrency of a task type without its own setting: one task per
// GPU, as Lotus's own table gives a lotus-worker (GPUUtilization 1.0), else the configured CPU
// concurrency, else 1.
func (rc ResourceConfig) DefaultConcurrency(gpus int) int {
	switch {
	case gpus > 0:
		return gpus
	case rc.CPUConcurrency > 0:
		return rc.CPUConcurrency
	}
	return 1
}

// Concurrency is how many tasks of type tt the miner may run here at once.
func (rc ResourceConfig) Concurrency(tt rpcapi.TaskType, gpus int) int {
	if m := rc.MaxConcurrent[tt]; m > 0 {
		return m
	}
	return rc.DefaultConcurrency(gpus)
}

// gpuShareQuantum is the resolution of a reported GPU share: shares are whole multiples of
// 2^-20, so the miner's running sums of GPUUtilization (added and subtracted as tasks start and
// end) are exact in float64 and never drift past the GPU count.
const gpuShareQuantum = 1 << 20

// Share is what one of m concurrent tasks takes on a machine that reported wr, so that the
// miner's checks admit exactly m at once:
//   - GPUUtilization: 1/m of the GPUs, rounded down to gpuShareQuantum, so m shares never add
//     up to more than the GPU count while m+1 always do (for any m the settings allow);
//   - MinMemory: 1/m of the physical memory, rounded down. The miner checks the sum of
//     MinMemory against MemPhysical alone, so m fit and m+1 do not, with or without GPUs;
//   - MaxMemory: 1/m of the virtual memory available when Info was answered
//     (MemPhysical+MemSwap less MemUsed+MemSwapUsed), at most MinMemory. The miner checks it
//     against that same free memory, so this check never refuses one of the m;
//   - MaxParallelism and MaxParallelismGPU: 1/m of the CPUs, rounded down (0, no CPU check,
//     where there are fewer CPUs than m);
//   - BaseMinMemory: 0, since the parameters live in snarkd's cache, shared by every job and
//     bounded by Prover.ParameterMemoryLimit, not loaded per task.
//
// snarkd bounds its own memory and GPU use whatever the miner sends; the shares only tell the
// miner how many tasks to send and how full each box is (its assigner prefers the least
// utilized worker, and utilization is the largest of these fractions in use).
func Share(wr rpcapi.WorkerResources, m int) rpcapi.Resources {
	if m < 1 {
		m = 1
	}
	r := rpcapi.Resources{MaxConcurrent: m}
	if n := len(wr.GPUs); n > 0 {
		r.GPUUtilization = math.Floor(float64(n)*gpuShareQuantum/float64(m)) / gpuShareQuantum
	}
	r.MinMemory = wr.MemPhysical / uint64(m)
	var free uint64
	if total, used := wr.MemPhysical+wr.MemSwap, wr.MemUsed+wr.MemSwapUsed; total > used {
		free = total - used
	}
	r.MaxMemory = min(r.MinMemory, free/uint64(m))
	threads := int(wr.CPUs / uint64(m))
	r.MaxParallelism, r.MaxParallelismGPU = threads, threads
	return r
}

// ResourceTable is the table Info reports for task types tts on a machine that reported wr:
// every seal proof type snarkd knows gets the task type's Share, since a task's share of the box
// does not depend on its sector size (snarkd bounds its memory and GPU use itself) and the
// miner looks entries up by the task's seal proof type (a PoSt task by the seal proof type of
// its sectors). Seal proof types missing from a table would fall back to Lotus's defaults.
func ResourceTable(wr rpcapi.WorkerResources, tts []rpcapi.TaskType, rc ResourceConfig) map[rpcapi.TaskType]map[abi.RegisteredSealProof]rpcapi.Resources {
	out := make(map[rpcapi.TaskType]map[abi.RegisteredSealProof]rpcapi.Resources, len(tts))
	for _, tt := range tts {
		share := Share(wr, rc.Concurrency(tt, len(wr.GPUs)))
		byProof := map[abi.RegisteredSealProof]rpcapi.Resources{}
		for _, p := range prooftypes.All() {
			byProof[p.Proof] = share
		}
		out[tt] = byProof
	}
	return out
}

// SetResources sets what Info reports (call it before the API serves).
func (w *WorkerAPI) SetResources(rc ResourceConfig) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.resources = rc
}

// modeTaskTypes lists the mode's task types, enabled or not, sorted: a disabled task type keeps
// its table entry, so enabling it again needs no new WorkerConnect.
func (w *WorkerAPI) modeTaskTypes() []rpcapi.TaskType {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]rpcapi.TaskType, 0, len(w.tasks))
	for t := range w.tasks {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
