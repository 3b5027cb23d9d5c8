package plugin

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"sync"

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

// writeGPUMetrics renders the counters of m (may be nil) and the gauges of st.
func writeGPUMetrics(b *bytes.Buffer, m *GPUMetrics, st gpu.Status) {
	family := func(name, typ, help string) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	if m != nil {
		m.mu.Lock()
		keys := sortedKeys(m.granted, func(a, c grantKey) int {
			return cmp.Or(cmp.Compare(a.device, c.device), cmp.Compare(a.kind, c.kind), cmp.Compare(a.tier, c.tier), cmp.Compare(a.srs, c.srs))
		})
		family("snarkd_gpu_plans_granted_total", "counter", "Memory plans granted to partition attempts, by device, proof kind, tier (full, partial, minimal) and SRS placement (resident, streamed).")
		for _, k := range keys {
			fmt.Fprintf(b, "snarkd_gpu_plans_granted_total{device=\"%d\",kind=%q,tier=%q,srs=%q} %d\n", k.device, k.kind, k.tier, k.srs, m.granted[k])
		}
		family("snarkd_gpu_plan_granted_bytes_total", "counter", "Device memory of the plans granted (arena plus resident vectors), same labels.")
		for _, k := range keys {
			fmt.Fprintf(b, "snarkd_gpu_plan_granted_bytes_total{device=\"%d\",kind=%q,tier=%q,srs=%q} %d\n", k.device, k.kind, k.tier, k.srs, m.grantedBytes[k])
		}
		fkeys := sortedKeys(m.allocFailed, func(a, c failKey) int {
			return cmp.Or(cmp.Compare(a.device, c.device), cmp.Compare(a.tier, c.tier))
		})
		family("snarkd_gpu_alloc_failed_total", "counter", "Out-of-memory errors admission did not predict (another process took memory); the partition retried with a smaller plan.")
		for _, k := range fkeys {
			fmt.Fprintf(b, "snarkd_gpu_alloc_failed_total{device=\"%d\",tier=%q} %d\n", k.device, k.tier, m.allocFailed[k])
		}
		dkeys := sortedKeys(m.partitions, func(a, c doneKey) int {
			return cmp.Or(cmp.Compare(a.device, c.device), cmp.Compare(a.kind, c.kind))
		})
		family("snarkd_gpu_partitions_proved_total", "counter", "Partitions proved, by device and proof kind.")
		for _, k := range dkeys {
			fmt.Fprintf(b, "snarkd_gpu_partitions_proved_total{device=\"%d\",kind=%q} %d\n", k.device, k.kind, m.partitions[k].n)
		}
		family("snarkd_gpu_partition_seconds_total", "counter", "Where proved partitions' time went, by device, kind and stage: queued (for a GPU worker), memory (admission), kernel_wait (another partition's kernels), kernels, run (admission to done, uploads included).")
		for _, k := range dkeys {
			s := m.partitions[k]
			for _, st := range []struct {
				name string
				v    float64
			}{{"queued", s.queued}, {"memory", s.memory}, {"kernel_wait", s.kernelWait}, {"kernels", s.kernels}, {"run", s.run}} {
				fmt.Fprintf(b, "snarkd_gpu_partition_seconds_total{device=\"%d\",kind=%q,stage=%q} %g\n", k.device, k.kind, st.name, st.v)
			}
		}
		family("snarkd_gpu_pinned_fallback_total", "counter", "Uploads from pageable memory because the pinned host budget was spent.")
		fmt.Fprintf(b, "snarkd_gpu_pinned_fallback_total %d\n", m.fallbacks)
		family("snarkd_gpu_pinned_fallback_bytes_total", "counter", "Bytes uploaded from pageable memory because the pinned host budget was spent.")
		fmt.Fprintf(b, "snarkd_gpu_pinned_fallback_bytes_total %d\n", m.fallbackBytes)
		m.mu.Unlock()
	}

	perDevice := func(name, help string, get func(d gpu.DeviceStatus) uint64) {
		family(name, "gauge", help)
		for _, d := range st.Devices {
			fmt.Fprintf(b, "%s{device=\"%d\"} %d\n", name, d.Info.Ordinal, get(d))
		}
	}
	perDevice("snarkd_gpu_vram_total_bytes", "Device memory of the GPU.",
		func(d gpu.DeviceStatus) uint64 { return d.Memory.Total })
	perDevice("snarkd_gpu_vram_limit_bytes", "Device memory admission may grant: total − other processes − headroom.",
		func(d gpu.DeviceStatus) uint64 { return vramLimit(d.Memory) })
	perDevice("snarkd_gpu_vram_reserved_bytes", "Device memory granted: partition plans plus resident vectors.",
		func(d gpu.DeviceStatus) uint64 { return d.Memory.Reserved })
	perDevice("snarkd_gpu_vram_allocated_bytes", "Device memory this daemon holds now.",
		func(d gpu.DeviceStatus) uint64 { return d.Memory.Allocated })
	perDevice("snarkd_gpu_vram_resident_bytes", "Device memory of resident vectors (NTT tables, SRS points).",
		func(d gpu.DeviceStatus) uint64 { return d.Memory.ResidentBytes })
	perDevice("snarkd_gpu_vram_others_bytes", "Device memory other processes and the driver use, as last sampled.",
		func(d gpu.DeviceStatus) uint64 { return d.Memory.Others })
	perDevice("snarkd_gpu_partitions_waiting", "Partitions waiting for device memory.",
		func(d gpu.DeviceStatus) uint64 { return uint64(d.Memory.Waiting) })
	perDevice("snarkd_gpu_workers_busy", "GPU partition workers proving a partition.",
		func(d gpu.DeviceStatus) uint64 { return uint64(busyWorkers(d.Workers)) })
	perDeviceF := func(name, typ, help string, get func(d gpu.DeviceStatus) float64) {
		family(name, typ, help)
		for _, d := range st.Devices {
			fmt.Fprintf(b, "%s{device=\"%d\"} %g\n", name, d.Info.Ordinal, get(d))
		}
	}
	perDeviceF("snarkd_gpu_busy_seconds_total", "counter", "Time the GPU's kernels ran (its kernel lock held); its rate is the busy fraction.",
		func(d gpu.DeviceStatus) float64 { return d.Busy.Seconds })
	perDeviceF("snarkd_gpu_busy_ratio", "gauge", "Fraction of the last minute the GPU's kernels ran.",
		func(d gpu.DeviceStatus) float64 { return d.Busy.Recent })
	family("snarkd_gpu_partitions_queued", "gauge", "Partitions in the GPU scheduler's queue.")
	fmt.Fprintf(b, "snarkd_gpu_partitions_queued %d\n", st.Queued)
	family("snarkd_gpu_pinned_bytes", "gauge", "Page-locked host memory held: upload buffers (in use and cached) and host vectors locked in place.")
	fmt.Fprintf(b, "snarkd_gpu_pinned_bytes %d\n", st.Pinned.Held)
	family("snarkd_gpu_pinned_in_place_bytes", "gauge", "Host vectors page-locked in place for streaming to devices: SRS points, and the scalars of plans that stream them.")
	fmt.Fprintf(b, "snarkd_gpu_pinned_in_place_bytes %d\n", st.Pinned.Registered)
	family("snarkd_gpu_pinned_budget_bytes", "gauge", "Budget of page-locked host memory for uploads and streamed host vectors.")
	fmt.Fprintf(b, "snarkd_gpu_pinned_budget_bytes %d\n", st.Pinned.Budget)
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
