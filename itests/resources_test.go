package itests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/rpcapi"
)

// Lotus's storiface.WorkerInfo, WorkerResources and Resources as lotus-miner decodes a worker's
// Info: Go field names as JSON keys, the table keyed by task type string and by seal proof
// number. Decoded with unknown fields refused, so snarkd reports nothing Lotus would not read.
type lotusWorkerInfo struct {
	Hostname        string
	IgnoreResources bool
	Resources       lotusWorkerResources
}

type lotusWorkerResources struct {
	MemPhysical uint64
	MemUsed     uint64
	MemSwap     uint64
	MemSwapUsed uint64
	CPUs        uint64
	GPUs        []string
	Resources   map[string]map[abi.RegisteredSealProof]lotusResources
}

type lotusResources struct {
	MinMemory         uint64
	MaxMemory         uint64
	GPUUtilization    float64
	MaxParallelism    int
	MaxParallelismGPU int
	BaseMinMemory     uint64
	MaxConcurrent     int
}

// lotusResourceFields are storiface.Resources' fields, every one of which an entry must carry.
var lotusResourceFields = []string{"BaseMinMemory", "GPUUtilization", "MaxConcurrent", "MaxMemory", "MaxParallelism", "MaxParallelismGPU", "MinMemory"}

// threads is lotus storiface.Resources.Threads: MaxParallelismGPU when the task uses GPUs and
// the worker has some (and it is set), else MaxParallelism; -1 means 92% of the CPUs.
func (r lotusResources) threads(cpus uint64, gpus int) uint64 {
	mp := r.MaxParallelism
	if r.GPUUtilization > 0 && gpus > 0 && r.MaxParallelismGPU != 0 {
		mp = r.MaxParallelismGPU
	}
	if mp == -1 {
		if n := cpus * 92 / 100; n > 0 {
			return n
		}
		return cpus
	}
	return uint64(mp)
}

// sealTask is lotus sealtasks.SealTaskType, the key of the per-worker task counters.
type sealTask struct {
	tt  string
	spt abi.RegisteredSealProof
}

// schedBox is the miner's view of one worker: what it reported and, as lotus's
// ActiveResources, what the tasks running there take.
type schedBox struct {
	name    string
	info    lotusWorkerInfo
	memMin  uint64
	memMax  uint64
	gpuUsed float64
	cpuUse  uint64
	running map[sealTask]int
}

// spec is lotus WorkerResources.ResourceSpec for a table that has the entry (the test fails
// where it has not: Lotus would fall back to its built-in table there).
func (b *schedBox) spec(t *testing.T, tt string, spt abi.RegisteredSealProof) lotusResources {
	t.Helper()
	r, ok := b.info.Resources.Resources[tt][spt]
	if !ok {
		t.Fatalf("%s reports no %s entry for seal proof %d", b.name, tt, spt)
	}
	return r
}

// canHandle is lotus ActiveResources.CanHandleRequest (storage/sealer/sched_resources.go): the
// task-type limit first (checked even with IgnoreResources), then physical memory (MinMemory
// sums against MemPhysical), virtual memory (MaxMemory sums, or the memory in use when the
// worker reported, against physical plus swap), CPU threads and GPU share.
func (b *schedBox) canHandle(st sealTask, need lotusResources) bool {
	if need.MaxConcurrent > 0 && b.running[st] >= need.MaxConcurrent {
		return false
	}
	if b.info.IgnoreResources {
		return true
	}
	res := b.info.Resources
	if need.MinMemory+need.BaseMinMemory > res.MemPhysical-b.memMin {
		return false
	}
	vmemUsed := max(b.memMax, res.MemUsed+res.MemSwapUsed)
	if need.MaxMemory+need.BaseMinMemory > res.MemPhysical+res.MemSwap-vmemUsed {
		return false
	}
	if b.cpuUse+need.threads(res.CPUs, len(res.GPUs)) > res.CPUs {
		return false
	}
	if len(res.GPUs) > 0 && need.GPUUtilization > 0 && b.gpuUsed+need.GPUUtilization > float64(len(res.GPUs)) {
		return false
	}
	return true
}

// add and free are lotus ActiveResources.Add and Free.
func (b *schedBox) add(st sealTask, r lotusResources) {
	res := b.info.Resources
	b.gpuUsed += r.GPUUtilization
	b.cpuUse += r.threads(res.CPUs, len(res.GPUs))
	b.memMin += r.MinMemory
	b.memMax += r.MaxMemory
	b.running[st]++
}

func (b *schedBox) free(st sealTask, r lotusResources) {
	res := b.info.Resources
	b.gpuUsed -= r.GPUUtilization
	b.cpuUse -= r.threads(res.CPUs, len(res.GPUs))
	b.memMin -= r.MinMemory
	b.memMax -= r.MaxMemory
	b.running[st]--
}

// utilization is lotus ActiveResources.utilization: the largest fraction in use of the CPUs,
// physical memory, virtual memory and GPUs.
func (b *schedBox) utilization() float64 {
	res := b.info.Resources
	u := float64(b.cpuUse) / float64(res.CPUs)
	u = max(u, float64(max(b.memMin, res.MemUsed))/float64(res.MemPhysical))
	u = max(u, float64(max(b.memMax, res.MemUsed+res.MemSwapUsed))/float64(res.MemPhysical+res.MemSwap))
	if len(res.GPUs) > 0 {
		u = max(u, b.gpuUsed/float64(len(res.GPUs)))
	}
	return u
}

// assign is the miner's default assigner for one task (lotus sched_assigner_utilization.go,
// LowestUtilizationWS): among the workers that can take it, the least utilized. It returns the
// box, or nil when none can take it now and the task waits in the miner's queue.
func assign(t *testing.T, boxes []*schedBox, st sealTask) *schedBox {
	t.Helper()
	var best *schedBox
	for _, b := range boxes {
		need := b.spec(t, st.tt, st.spt)
		if !b.canHandle(st, need) {
			continue
		}
		if best == nil || b.utilization() < best.utilization() {
			best = b
		}
	}
	if best != nil {
		best.add(st, best.spec(t, st.tt, st.spt))
	}
	return best
}

// TestMinerCapsC2PerBox: two daemons on two simulated GPUs each attach to the stand-in miner
// with the default settings. Each reports both GPUs, no IgnoreResources, and a resource table
// for C2 and PRU2 that Lotus's types decode; fed to the miner's scheduler arithmetic, seven
// 32 GiB C2 of two seal proof types put two on each box and leave three queued on the miner,
// and a C2 that ends on one box lets the next one go there.
func TestMinerCapsC2PerBox(t *testing.T) {
	bin := buildDaemon(t)
	m := newStandIn(t, time.Second)
	const gpus = 2
	for _, name := range []string{"box-a", "box-b"} {
		startDaemon(t, bin, t.TempDir(), append(append([]string{}, lotusEnv...), "SNARKD_LOTUS_WORKER_NAME="+name),
			"--miner-api-info", m.apiInfo(), "--simulate-gpus", fmt.Sprintf("%dx16GiB", gpus))
	}
	waitFor(t, "both daemons' WorkerConnect", func() bool { m.mu.Lock(); defer m.mu.Unlock(); return len(m.workers) == 2 })

	minerTok, err := m.secret.NewToken([]rpcapi.Permission{"admin"})
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	workers := append([]connectedWorker(nil), m.workers...)
	m.mu.Unlock()
	var boxes []*schedBox
	for _, w := range workers {
		res, rerr := rawCall(t, w.URL, minerTok, `{"jsonrpc":"2.0","method":"Filecoin.Info","params":[],"id":1}`)
		if rerr != "" {
			t.Fatalf("Info from %s: %s", w.URL, rerr)
		}
		var info lotusWorkerInfo
		dec := json.NewDecoder(strings.NewReader(res))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&info); err != nil {
			t.Fatalf("Info as Lotus decodes it: %v\n%s", err, res)
		}
		checkReportedResources(t, info, res, gpus)
		boxes = append(boxes, &schedBox{name: info.Hostname, info: info, running: map[sealTask]int{}})
	}
	sort.Slice(boxes, func(i, j int) bool { return boxes[i].name < boxes[j].name })

	// Alternate two 32 GiB seal proof types: the miner counts MaxConcurrent per (task type,
	// seal proof type), so only the GPU and memory shares can hold a box to two C2 in all.
	kinds := []abi.RegisteredSealProof{abi.RegisteredSealProof_StackedDrg32GiBV1_1, abi.RegisteredSealProof_StackedDrg32GiBV1_1_Feat_SyntheticPoRep}
	var queued []sealTask
	placed := map[*schedBox][]sealTask{}
	for i := 0; i < 7; i++ {
		st := sealTask{string(rpcapi.TTCommit2), kinds[i%2]}
		if b := assign(t, boxes, st); b != nil {
			placed[b] = append(placed[b], st)
		} else {
			queued = append(queued, st)
		}
	}
	for _, b := range boxes {
		if len(placed[b]) != gpus {
			t.Errorf("%s runs %d C2 (%v), want %d: one per GPU", b.name, len(placed[b]), placed[b], gpus)
		}
	}
	if len(queued) != 7-2*gpus {
		t.Fatalf("%d C2 left queued on the miner, want %d", len(queued), 7-2*gpus)
	}
	// What refuses a further C2 is the box's share, not the per-proof-type limit alone: a
	// 32 GiB C2 of a seal proof type below its MaxConcurrent on the box is refused too.
	for _, b := range boxes {
		checked := false
		for _, spt := range kinds {
			st := sealTask{string(rpcapi.TTCommit2), spt}
			need := b.spec(t, st.tt, st.spt)
			if b.running[st] >= need.MaxConcurrent {
				continue
			}
			checked = true
			if b.canHandle(st, need) || b.gpuUsed+need.GPUUtilization <= gpus {
				t.Errorf("%s takes a C2 of seal proof %d: GPU share %v + %v in use, %d GPUs", b.name, spt, need.GPUUtilization, b.gpuUsed, gpus)
			}
		}
		if !checked {
			t.Errorf("%s: every seal proof type is at its MaxConcurrent (%v)", b.name, b.running)
		}
	}

	// A C2 ends on box-b (its Return arrived): the next queued one goes there, nowhere else.
	done := placed[boxes[1]][0]
	boxes[1].free(done, boxes[1].spec(t, done.tt, done.spt))
	if b := assign(t, boxes, queued[0]); b != boxes[1] {
		t.Fatalf("after a C2 ended on box-b the next went to %v", b)
	}
	if b := assign(t, boxes, queued[1]); b != nil {
		t.Fatalf("a fifth C2 went to %s", b.name)
	}
}

// checkReportedResources checks one daemon's Info as the miner decoded it (raw is its JSON):
// the simulated GPUs by name, resources taken into account, and a full table for the sealing
// task types whose 32 GiB C2 entry is one GPU's share of the box.
func checkReportedResources(t *testing.T, info lotusWorkerInfo, raw string, gpus int) {
	t.Helper()
	res := info.Resources
	if info.IgnoreResources || len(res.GPUs) != gpus || res.CPUs == 0 || res.MemPhysical == 0 {
		t.Fatalf("%s: Info %+v", info.Hostname, info)
	}
	if len(res.Resources) != 2 {
		t.Fatalf("%s: table for %d task types, want C2 and PRU2", info.Hostname, len(res.Resources))
	}
	for _, tt := range []rpcapi.TaskType{rpcapi.TTCommit2, rpcapi.TTProveReplicaUpdate2} {
		if got, want := len(res.Resources[string(tt)]), len(prooftypes.All()); got != want {
			t.Errorf("%s: %s has %d seal proof types, want %d", info.Hostname, tt, got, want)
		}
	}
	c2 := res.Resources[string(rpcapi.TTCommit2)][abi.RegisteredSealProof_StackedDrg32GiBV1_1]
	if c2.MaxConcurrent != gpus || c2.GPUUtilization != 1 || c2.BaseMinMemory != 0 ||
		c2.MinMemory != res.MemPhysical/uint64(gpus) || c2.MaxMemory > c2.MinMemory {
		t.Errorf("%s: 32 GiB C2 entry %+v on %d bytes of memory", info.Hostname, c2, res.MemPhysical)
	}
	// Every field of storiface.Resources is on the wire (a missing one would decode as 0 and
	// mean something else to Lotus: MaxConcurrent 0 is no limit).
	var wire struct {
		Resources struct {
			Resources map[string]map[string]map[string]json.RawMessage
		}
	}
	if err := json.NewDecoder(bytes.NewReader([]byte(raw))).Decode(&wire); err != nil {
		t.Fatal(err)
	}
	entry := wire.Resources.Resources["seal/v0/commit/2"]["8"]
	keys := make([]string, 0, len(entry))
	for k := range entry {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != strings.Join(lotusResourceFields, ",") {
		t.Errorf("%s: C2 32GiB V1_1 entry has fields %v, want %v", info.Hostname, keys, lotusResourceFields)
	}
}
