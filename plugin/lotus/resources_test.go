package lotus

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestInfoReportsResourceTable: a sealing worker on two GPUs reports both names, no
// IgnoreResources, and a table for C2 and PRU2 over every seal proof type, each entry half the
// box; a configured C2 concurrency changes C2's entries only.
func TestInfoReportsResourceTable(t *testing.T) {
	w := NewWorkerAPI(nil, "box1", []string{"NVIDIA H100", "NVIDIA H100"}, nil)
	w.SetResources(ResourceConfig{CPUConcurrency: 2, MaxConcurrent: map[rpcapi.TaskType]int{rpcapi.TTProveReplicaUpdate2: 4}})
	info, err := w.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := info.Resources
	if info.IgnoreResources || len(r.GPUs) != 2 || r.CPUs == 0 || r.MemPhysical == 0 {
		t.Fatalf("Info %+v", info)
	}
	if len(r.Resources) != 2 {
		t.Fatalf("table has %d task types, want C2 and PRU2: %v", len(r.Resources), r.Resources)
	}
	for tt, m := range map[rpcapi.TaskType]int{rpcapi.TTCommit2: 2, rpcapi.TTProveReplicaUpdate2: 4} {
		byProof := r.Resources[tt]
		if len(byProof) != len(prooftypes.All()) {
			t.Errorf("%s: %d seal proof types, want %d", tt, len(byProof), len(prooftypes.All()))
		}
		e, ok := byProof[abi.RegisteredSealProof_StackedDrg32GiBV1_1]
		if !ok {
			t.Fatalf("%s: no 32GiB V1_1 entry", tt)
		}
		if e.MaxConcurrent != m || e.GPUUtilization != 2/float64(m) || e.BaseMinMemory != 0 ||
			e.MinMemory != r.MemPhysical/uint64(m) || e.MaxMemory > e.MinMemory {
			t.Errorf("%s 32GiB entry %+v, want a 1/%d share of %d GPUs and %d bytes", tt, e, m, len(r.GPUs), r.MemPhysical)
		}
	}
	// The JSON keys are Lotus's: task type strings, seal proof numbers as strings.
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Resources struct {
			Resources map[string]map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw.Resources.Resources["seal/v0/commit/2"]["8"]; !ok {
		t.Errorf("no seal/v0/commit/2 → \"8\" (32GiB V1_1) key in %s", b)
	}
}

// TestInfoIgnoreResources: with IgnoreResources the table is left out altogether, since Lotus
// checks MaxConcurrent even for a worker that ignores resources.
func TestInfoIgnoreResources(t *testing.T) {
	w := NewWorkerAPI(nil, "box1", []string{"gpu"}, nil)
	w.SetResources(ResourceConfig{IgnoreResources: true, MaxConcurrent: map[rpcapi.TaskType]int{rpcapi.TTCommit2: 3}})
	info, err := w.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !info.IgnoreResources || info.Resources.Resources != nil || len(info.Resources.GPUs) != 1 {
		t.Fatalf("Info %+v", info)
	}
}

// TestInfoPoStModeAndCPU: a WindowPoSt worker without GPUs reports only its PoSt task type,
// sized by the CPU concurrency, with no GPU share; a disabled task type keeps its entry.
func TestInfoPoStModeAndCPU(t *testing.T) {
	w := NewWorkerAPI(nil, "post1", nil, nil)
	if err := w.SetMode(ModeWindowPoSt, NewVanillaFetcher(nil, 1, 0, nil)); err != nil {
		t.Fatal(err)
	}
	w.SetResources(ResourceConfig{CPUConcurrency: 3})
	if err := w.TaskDisable(context.Background(), rpcapi.TTGenerateWindowPoSt); err != nil {
		t.Fatal(err)
	}
	info, err := w.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Resources.GPUs) != 0 || info.Resources.GPUs == nil || len(info.Resources.Resources) != 1 {
		t.Fatalf("Info %+v", info)
	}
	e := info.Resources.Resources[rpcapi.TTGenerateWindowPoSt][abi.RegisteredSealProof_StackedDrg32GiBV1]
	if e.MaxConcurrent != 3 || e.GPUUtilization != 0 || e.MaxParallelism != int(info.Resources.CPUs/3) {
		t.Fatalf("WindowPoSt entry %+v (CPUs %d)", e, info.Resources.CPUs)
	}
}

// TestShareFitsExactlyM checks the sums the miner forms (sched_resources.go, CanHandleRequest):
// m shares fit the GPUs, the CPUs and both memory checks, and on GPUs m+1 do not, for GPU
// counts, concurrencies and CPU counts the settings allow, on a box whose memory is mostly in
// use when it connects (the virtual memory check must not refuse any of the m).
func TestShareFitsExactlyM(t *testing.T) {
	for _, gpus := range []int{0, 1, 2, 3, 7, 8} {
		for _, m := range []int{1, 2, 3, 5, 7, 10, 64, 256} {
			for _, cpus := range []uint64{2, 16, 96} {
				wr := rpcapi.WorkerResources{MemPhysical: 256 << 30, MemUsed: 200 << 30, MemSwap: 8 << 30, MemSwapUsed: 8 << 30,
					CPUs: cpus, GPUs: make([]string, gpus)}
				r := Share(wr, m)
				var gpu float64
				var memMin, memMax, threads uint64
				for i := 0; i < m; i++ {
					if gpus > 0 && gpu+r.GPUUtilization > float64(gpus) {
						t.Fatalf("%d GPUs, m=%d: share %d of %v does not fit", gpus, m, i+1, r.GPUUtilization)
					}
					if r.MinMemory > wr.MemPhysical-memMin {
						t.Fatalf("m=%d: physical memory refuses share %d", m, i+1)
					}
					if r.MaxMemory > wr.MemPhysical+wr.MemSwap-max(memMax, wr.MemUsed+wr.MemSwapUsed) {
						t.Fatalf("m=%d: virtual memory refuses share %d", m, i+1)
					}
					if threads+uint64(r.MaxParallelism) > cpus {
						t.Fatalf("m=%d, %d CPUs: threads refuse share %d", m, cpus, i+1)
					}
					gpu += r.GPUUtilization
					memMin, memMax, threads = memMin+r.MinMemory, memMax+r.MaxMemory, threads+uint64(r.MaxParallelism)
				}
				if gpus > 0 && gpu+r.GPUUtilization <= float64(gpus) {
					t.Errorf("%d GPUs, m=%d: share %d of %v still fits", gpus, m, m+1, r.GPUUtilization)
				}
				if r.MinMemory <= wr.MemPhysical-memMin {
					t.Errorf("m=%d: physical memory takes share %d", m, m+1)
				}
				// Free them all again, as the miner does when tasks end: the sum returns to 0
				// exactly, so no drift builds up over a day of tasks.
				for i := 0; i < m; i++ {
					gpu -= r.GPUUtilization
				}
				if gpu != 0 {
					t.Errorf("%d GPUs, m=%d: %v GPUs left in use after freeing every share", gpus, m, gpu)
				}
			}
		}
	}
}
