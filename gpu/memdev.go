package gpu

import (
	"context"
	"errors"
)

// DefaultHeadroom is the device memory kept free for other host processes (--vram-headroom).
const DefaultHeadroom = 512 << 20

// AllocGranularity is the unit in which the accounting books device allocations: the CUDA
// driver backs large cudaMalloc allocations with 2 MiB pages, so booking the rounded size keeps
// the books at or above what the driver will report as used.
const AllocGranularity = 2 << 20

// RoundAlloc rounds n up to AllocGranularity.
func RoundAlloc(n uint64) uint64 {
	return (n + AllocGranularity - 1) &^ (AllocGranularity - 1)
}

// DevicePtr is an address in one device's memory (a CUDA device pointer, or a token in the
// simulator). Zero is never a valid allocation.
type DevicePtr uintptr

// HostMem is a host buffer that can be the source of an upload. Bytes is nil for simulated
// memory, which models sizes and time but not contents.
type HostMem struct {
	Bytes  []byte
	Size   uint64
	Pinned bool
	// Handle identifies a pinned allocation or registration to the Device that made it.
	Handle uintptr
}

// Device is what the scheduler needs of one GPU. Only the Allocator calls Alloc and Free.
// Implementations: SimDevice (tests, --simulate-gpus) and HardwareDevice (build tag cuda).
type Device interface {
	// Info returns the device's inventory; FreeMem is as of the call.
	Info() DeviceInfo
	// MemInfo reports the driver's free and total memory of this device only, without any
	// device-wide synchronization.
	MemInfo() (free, total uint64, err error)
	// Alloc allocates device memory; a full device fails with an error IsOutOfMemory accepts.
	Alloc(bytes uint64) (DevicePtr, error)
	// Free returns an allocation made by Alloc.
	Free(p DevicePtr) error
	// HostAlloc allocates page-locked host memory.
	HostAlloc(bytes uint64) (HostMem, error)
	// HostFree returns page-locked memory made by HostAlloc.
	HostFree(m HostMem) error
	// HostRegister page-locks existing host memory b (kept referenced by the caller) for
	// copies to any device; HostUnregister undoes it.
	HostRegister(b []byte) (HostMem, error)
	// HostUnregister undoes HostRegister.
	HostUnregister(m HostMem) error
	// CopyToDevice copies src (pinned or pageable) to device memory at dst.
	CopyToDevice(ctx context.Context, dst DevicePtr, src HostMem) error
	// CopyToDeviceAsync starts copying src to dst on the device's copy stream and returns at
	// once; copies complete in the order they were started. src must stay valid and unchanged
	// until the Pending's Wait returned the copy's result. A copy that fails after it started
	// reports its error through Wait.
	CopyToDeviceAsync(ctx context.Context, dst DevicePtr, src HostMem) (Pending, error)
	// Launch runs kernel work fn on this device; the simulator adds its kernel latency.
	Launch(ctx context.Context, name string, fn func() error) error
}

// Pending is a copy in flight. Wait blocks until the copy completed or ctx is done; once the
// copy completed, every Wait (concurrent or later) returns the copy's result.
type Pending interface {
	Wait(ctx context.Context) error
}

// errClosed reports use of a scheduler or allocator after Close.
var errClosed = errors.New("gpu: scheduler closed")
