// Package gpu is the device policy: the Device interface, the scheduler that queues partitions
// by priority and admits them to devices, the accounting allocator (512 MiB headroom, resident
// SRS vectors evicted LRU), the memory planner and its tiers, the pinned host pool and device
// regions. It knows no curve arithmetic and no cgo: the CUDA door is gpu/cuda, the simulated
// device gpu/sim, and the partition prover that runs on both groth16/gpuprove.
package gpu

import (
	"errors"
	"fmt"
)

// DeviceInfo describes one GPU as the driver reports it.
type DeviceInfo struct {
	Ordinal      int    `json:"ordinal"`
	Name         string `json:"name"`
	TotalMem     uint64 `json:"total_mem"`
	FreeMem      uint64 `json:"free_mem"`
	SMCount      int    `json:"sm_count"`
	ComputeMajor int    `json:"compute_major"`
	ComputeMinor int    `json:"compute_minor"`
	PCIBusID     int    `json:"pci_bus_id"`
}

// String renders the device for logs and the CLI.
func (d DeviceInfo) String() string {
	return fmt.Sprintf("GPU %d: %s (sm_%d%d, %d SMs, %s total, %s free)", d.Ordinal, d.Name,
		d.ComputeMajor, d.ComputeMinor, d.SMCount, FormatBytes(d.TotalMem), FormatBytes(d.FreeMem))
}

// Error is a failure reported by the native CUDA code. Code is the cudaError_t value, or one
// of the native layer's own codes; OutOfMemory reports cudaErrorMemoryAllocation.
type Error struct {
	Op      string
	Code    int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("gpu: %s: %s (code %d)", e.Op, e.Message, e.Code)
}

// CodeOutOfMemory is the Error code of a device allocation failure: cudaErrorMemoryAllocation,
// cudaError_t 2 in every CUDA release.
const CodeOutOfMemory = 2

// OutOfMemory reports whether the error is a device allocation failure.
func (e *Error) OutOfMemory() bool { return e.Code == CodeOutOfMemory }

// IsOutOfMemory reports whether err wraps a device out-of-memory error.
func IsOutOfMemory(err error) bool {
	var ge *Error
	return errors.As(err, &ge) && ge.OutOfMemory()
}

// FormatBytes renders a byte count in binary units (e.g. "139.8 GiB").
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
