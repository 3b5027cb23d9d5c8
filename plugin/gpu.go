package plugin

import (
	"cmp"
	"slices"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/rpcapi"
)

// GPUMetrics counts the GPU scheduler's measurements for /metrics; it implements gpu.Metrics
// (gpu.Config.Metrics) and is handed to the daemon in Options.GPUMetrics.
type GPUMetrics struct {
	mu            sync.Mutex
	granted       map[grantKey]uint64
	grantedBytes  map[grantKey]uint64
	allocFailed   map[failKey]uint64
	fallbacks     uint64
	fallbackBytes uint64
	partitions    map[doneKey]*doneSums
}

type doneKey struct {
	device int
	kind   string
}

// doneSums adds up the proved partitions' times, in seconds.
type doneSums struct {
	n                                        uint64
	queued, memory, kernelWait, kernels, run float64
}

type grantKey struct {
	device int
	kind   string
	tier   string
	srs    string
}

type failKey struct {
	device int
	tier   string
}

var _ gpu.Metrics = (*GPUMetrics)(nil)

// NewGPUMetrics returns empty counters.
func NewGPUMetrics() *GPUMetrics {
	return &GPUMetrics{granted: map[grantKey]uint64{}, grantedBytes: map[grantKey]uint64{}, allocFailed: map[failKey]uint64{},
		partitions: map[doneKey]*doneSums{}}
}

func srsLabel(resident bool) string {
	if resident {
		return "resident"
	}
	return "streamed"
}

// PlanGranted implements gpu.Metrics.
func (m *GPUMetrics) PlanGranted(device int, kind string, tier gpu.Tier, srsResident bool, bytes uint64) {
	k := grantKey{device: device, kind: kind, tier: tier.String(), srs: srsLabel(srsResident)}
	m.mu.Lock()
	m.granted[k]++
	m.grantedBytes[k] += bytes
	m.mu.Unlock()
}

// AllocFailed implements gpu.Metrics.
func (m *GPUMetrics) AllocFailed(device int, tier gpu.Tier) {
	m.mu.Lock()
	m.allocFailed[failKey{device: device, tier: tier.String()}]++
	m.mu.Unlock()
}

// PinnedFallback implements gpu.Metrics.
func (m *GPUMetrics) PinnedFallback(bytes uint64) {
	m.mu.Lock()
	m.fallbacks++
	m.fallbackBytes += bytes
	m.mu.Unlock()
}

// PartitionDone implements gpu.Metrics.
func (m *GPUMetrics) PartitionDone(device int, kind string, t gpu.PartitionTimes) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := doneKey{device, kind}
	s := m.partitions[k]
	if s == nil {
		s = &doneSums{}
		m.partitions[k] = s
	}
	s.n++
	s.queued += t.Queued.Seconds()
	s.memory += t.Memory.Seconds()
	s.kernelWait += t.KernelWait.Seconds()
	s.kernels += t.Kernels.Seconds()
	s.run += t.Run.Seconds()
}

// collectGPU emits the counters of m (may be nil) and the gauges of st.
func collectGPU(put putFunc, m *GPUMetrics, st gpu.Status) {
	counter, gauge := prometheus.CounterValue, prometheus.GaugeValue
	dev := func(i int) string { return strconv.Itoa(i) }
	if m != nil {
		m.mu.Lock()
		keys := sortedKeys(m.granted, func(a, c grantKey) int {
			return cmp.Or(cmp.Compare(a.device, c.device), cmp.Compare(a.kind, c.kind), cmp.Compare(a.tier, c.tier), cmp.Compare(a.srs, c.srs))
		})
		grantLabels := []string{"device", "kind", "tier", "srs"}
		for _, k := range keys {
			put("snarkd_gpu_plans_granted_total", "Memory plans granted to partition attempts, by device, proof kind, tier (full, partial, minimal) and SRS placement (resident, streamed).",
				counter, grantLabels, float64(m.granted[k]), dev(k.device), k.kind, k.tier, k.srs)
		}
		for _, k := range keys {
			put("snarkd_gpu_plan_granted_bytes_total", "Device memory of the plans granted (arena plus resident vectors), same labels.",
				counter, grantLabels, float64(m.grantedBytes[k]), dev(k.device), k.kind, k.tier, k.srs)
		}
		fkeys := sortedKeys(m.allocFailed, func(a, c failKey) int {
			return cmp.Or(cmp.Compare(a.device, c.device), cmp.Compare(a.tier, c.tier))
		})
		for _, k := range fkeys {
			put("snarkd_gpu_alloc_failed_total", "Out-of-memory errors admission did not predict (another process took memory); the partition retried with a smaller plan.",
				counter, []string{"device", "tier"}, float64(m.allocFailed[k]), dev(k.device), k.tier)
		}
		dkeys := sortedKeys(m.partitions, func(a, c doneKey) int {
			return cmp.Or(cmp.Compare(a.device, c.device), cmp.Compare(a.kind, c.kind))
		})
		for _, k := range dkeys {
			put("snarkd_gpu_partitions_proved_total", "Partitions proved, by device and proof kind.",
				counter, []string{"device", "kind"}, float64(m.partitions[k].n), dev(k.device), k.kind)
		}
		for _, k := range dkeys {
			s := m.partitions[k]
			for _, st := range []struct {
				name string
				v    float64
			}{{"queued", s.queued}, {"memory", s.memory}, {"kernel_wait", s.kernelWait}, {"kernels", s.kernels}, {"run", s.run}} {
				put("snarkd_gpu_partition_seconds_total", "Where proved partitions' time went, by device, kind and stage: queued (for a GPU worker), memory (admission), kernel_wait (another partition's kernels), kernels, run (admission to done, uploads included).",
					counter, []string{"device", "kind", "stage"}, st.v, dev(k.device), k.kind, st.name)
			}
		}
		put("snarkd_gpu_pinned_fallback_total", "Uploads from pageable memory because the pinned host budget was spent.",
			counter, nil, float64(m.fallbacks))
		put("snarkd_gpu_pinned_fallback_bytes_total", "Bytes uploaded from pageable memory because the pinned host budget was spent.",
			counter, nil, float64(m.fallbackBytes))
		m.mu.Unlock()
	}

	perDevice := func(name string, typ prometheus.ValueType, help string, get func(d gpu.DeviceStatus) float64) {
		for _, d := range st.Devices {
			put(name, help, typ, []string{"device"}, get(d), dev(d.Info.Ordinal))
		}
	}
	bytes := func(f func(d gpu.DeviceStatus) uint64) func(d gpu.DeviceStatus) float64 {
		return func(d gpu.DeviceStatus) float64 { return float64(f(d)) }
	}
	perDevice("snarkd_gpu_vram_total_bytes", gauge, "Device memory of the GPU.",
		bytes(func(d gpu.DeviceStatus) uint64 { return d.Memory.Total }))
	perDevice("snarkd_gpu_vram_limit_bytes", gauge, "Device memory admission may grant: total − other processes − headroom.",
		bytes(func(d gpu.DeviceStatus) uint64 { return vramLimit(d.Memory) }))
	perDevice("snarkd_gpu_vram_reserved_bytes", gauge, "Device memory granted: partition plans plus resident vectors.",
		bytes(func(d gpu.DeviceStatus) uint64 { return d.Memory.Reserved }))
	perDevice("snarkd_gpu_vram_allocated_bytes", gauge, "Device memory this daemon holds now.",
		bytes(func(d gpu.DeviceStatus) uint64 { return d.Memory.Allocated }))
	perDevice("snarkd_gpu_vram_resident_bytes", gauge, "Device memory of resident vectors (NTT tables, SRS points).",
		bytes(func(d gpu.DeviceStatus) uint64 { return d.Memory.ResidentBytes }))
	perDevice("snarkd_gpu_vram_others_bytes", gauge, "Device memory other processes and the driver use, as last sampled.",
		bytes(func(d gpu.DeviceStatus) uint64 { return d.Memory.Others }))
	perDevice("snarkd_gpu_partitions_waiting", gauge, "Partitions waiting for device memory.",
		func(d gpu.DeviceStatus) float64 { return float64(d.Memory.Waiting) })
	perDevice("snarkd_gpu_workers_busy", gauge, "GPU partition workers proving a partition.",
		func(d gpu.DeviceStatus) float64 { return float64(busyWorkers(d.Workers)) })
	perDevice("snarkd_gpu_busy_seconds_total", counter, "Time the GPU's kernels ran (its kernel lock held); its rate is the busy fraction.",
		func(d gpu.DeviceStatus) float64 { return d.Busy.Seconds })
	perDevice("snarkd_gpu_busy_ratio", gauge, "Fraction of the last minute the GPU's kernels ran.",
		func(d gpu.DeviceStatus) float64 { return d.Busy.Recent })
	put("snarkd_gpu_partitions_queued", "Partitions in the GPU scheduler's queue.", gauge, nil, float64(st.Queued))
	put("snarkd_gpu_pinned_bytes", "Page-locked host memory held: upload buffers (in use and cached) and host vectors locked in place.",
		gauge, nil, float64(st.Pinned.Held))
	put("snarkd_gpu_pinned_in_place_bytes", "Host vectors page-locked in place for streaming to devices: SRS points, and the scalars of plans that stream them.",
		gauge, nil, float64(st.Pinned.Registered))
	put("snarkd_gpu_pinned_budget_bytes", "Budget of page-locked host memory for uploads and streamed host vectors.",
		gauge, nil, float64(st.Pinned.Budget))
}

// sortedKeys returns m's keys in the order of compare.
func sortedKeys[K comparable, V any](m map[K]V, compare func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	return keys
}

// vramLimit is what admission may grant on the device in all.
func vramLimit(m gpu.AllocatorStats) uint64 {
	if m.Others+m.Headroom >= m.Total {
		return 0
	}
	return m.Total - m.Others - m.Headroom
}

func busyWorkers(ws []gpu.WorkerStatus) int {
	n := 0
	for _, w := range ws {
		if w.Busy {
			n++
		}
	}
	return n
}

// gpuDevices turns the scheduler's status into the API's device list.
func gpuDevices(st gpu.Status) []rpcapi.DeviceStatus {
	out := make([]rpcapi.DeviceStatus, 0, len(st.Devices))
	for _, d := range st.Devices {
		ds := rpcapi.DeviceStatus{
			Name: d.Info.Name, Ordinal: d.Info.Ordinal, VRAMTotal: d.Memory.Total, VRAMFree: d.Info.FreeMem,
			VRAMReserved: d.Memory.Reserved, VRAMLimit: vramLimit(d.Memory), VRAMAllocated: d.Memory.Allocated,
			VRAMOthers: d.Memory.Others, VRAMHeadroom: d.Memory.Headroom, ResidentBytes: d.Memory.ResidentBytes,
			Waiting: d.Memory.Waiting, Tiers: map[string]int{}, Workers: len(d.Workers),
		}
		b, mt := d.Busy, d.Busy.Mean
		ds.Busy = &rpcapi.DeviceBusy{Seconds: b.Seconds, Recent: b.Recent, Partitions: b.Partitions,
			Queued: mt.Queued.Seconds(), Memory: mt.Memory.Seconds(), KernelWait: mt.KernelWait.Seconds(),
			Kernels: mt.Kernels.Seconds(), Run: mt.Run.Seconds()}
		// Every tier is listed, so that clients see zero counts rather than missing keys.
		for _, t := range []gpu.Tier{gpu.TierFull, gpu.TierPartial, gpu.TierMinimal} {
			ds.Tiers[t.String()] = d.Tiers[t.String()]
		}
		for k, v := range d.Tiers {
			ds.Tiers[k] = v
		}
		for _, w := range d.Workers {
			dw := rpcapi.DeviceWorker{ID: w.ID, Busy: w.Busy}
			if w.Busy {
				ds.WorkersBusy++
				dw.JobID, dw.Kind, dw.Partition = rpcapi.JobID(w.JobID), w.Kind, w.Index
				dw.Tier, dw.SRSResident, dw.CompactNTT, dw.Bytes = w.Tier, w.SRSResident, w.CompactNTT, w.Bytes
				if !containsJob(ds.CurrentJobIDs, dw.JobID) {
					ds.CurrentJobIDs = append(ds.CurrentJobIDs, dw.JobID)
				}
			}
			ds.WorkerStates = append(ds.WorkerStates, dw)
		}
		out = append(out, ds)
	}
	return out
}

func containsJob(ids []rpcapi.JobID, id rpcapi.JobID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
