//go:build cuda

package cuda

/*
#include "snarkd.h"
static inline void *snarkd_ptr(uintptr_t p) { return (void *)p; }
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/snarkd/snarkd/gpu"
)

// DeviceMemory is how the kernel bindings obtain device memory: every byte the native
// kernels touch (data, twiddle tables, MSM scratch) is allocated through one, so its owner
// accounts for all of it; the kernels never allocate device memory themselves. Device
// implementations satisfy it.
type DeviceMemory interface {
	Alloc(bytes uint64) (gpu.DevicePtr, error)
	Free(p gpu.DevicePtr) error
}

// CUDAMemory is a plain DeviceMemory for one device: cudaMalloc/cudaFree with a count of the
// bytes held. Tests and benchmarks use it; the daemon goes through the accounting Allocator.
type CUDAMemory struct {
	ordinal int
	mu      sync.Mutex
	sizes   map[gpu.DevicePtr]uint64
	inUse   uint64
	peak    uint64
}

// NewCUDAMemory returns a CUDAMemory for device ordinal.
func NewCUDAMemory(ordinal int) *CUDAMemory {
	return &CUDAMemory{ordinal: ordinal, sizes: map[gpu.DevicePtr]uint64{}}
}

// Ordinal returns the device this memory lives on.
func (m *CUDAMemory) Ordinal() int { return m.ordinal }

// Alloc implements DeviceMemory.
func (m *CUDAMemory) Alloc(bytes uint64) (gpu.DevicePtr, error) {
	var p unsafe.Pointer
	if err := check(fmt.Sprintf("device alloc %s on GPU %d", gpu.FormatBytes(bytes), m.ordinal),
		C.snarkd_device_alloc(C.int32_t(m.ordinal), C.size_t(bytes), &p)); err != nil {
		return 0, err
	}
	d := gpu.DevicePtr(uintptr(p))
	m.mu.Lock()
	m.sizes[d] = bytes
	m.inUse += bytes
	if m.inUse > m.peak {
		m.peak = m.inUse
	}
	m.mu.Unlock()
	return d, nil
}

// Free implements DeviceMemory.
func (m *CUDAMemory) Free(p gpu.DevicePtr) error {
	if p == 0 {
		return nil
	}
	if err := check("device free", C.snarkd_device_free(C.int32_t(m.ordinal), devPtr(p))); err != nil {
		return err
	}
	m.mu.Lock()
	m.inUse -= m.sizes[p]
	delete(m.sizes, p)
	m.mu.Unlock()
	return nil
}

// InUse returns the bytes currently allocated.
func (m *CUDAMemory) InUse() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inUse
}

// Peak returns the most bytes held at once.
func (m *CUDAMemory) Peak() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

// devPtr converts a device address for the C ABI.
func devPtr(p gpu.DevicePtr) unsafe.Pointer { return C.snarkd_ptr(C.uintptr_t(p)) }

// PinnedBuffer is page-locked host memory (cudaHostAlloc); copies from it run at full PCIe
// speed and asynchronously. It lives outside the Go heap: call Free.
type PinnedBuffer struct {
	ptr  unsafe.Pointer
	size uint64
}

// AllocPinned returns size bytes of page-locked host memory.
func AllocPinned(size uint64) (*PinnedBuffer, error) {
	var p unsafe.Pointer
	if err := check("pinned host alloc "+gpu.FormatBytes(size), C.snarkd_host_alloc(C.size_t(size), &p)); err != nil {
		return nil, err
	}
	return &PinnedBuffer{ptr: p, size: size}, nil
}

// Bytes returns the buffer as a byte slice (valid until Free).
func (b *PinnedBuffer) Bytes() []byte { return unsafe.Slice((*byte)(b.ptr), b.size) }

// Pointer returns the buffer's address.
func (b *PinnedBuffer) Pointer() unsafe.Pointer { return b.ptr }

// Free releases the buffer.
func (b *PinnedBuffer) Free() error {
	if b == nil || b.ptr == nil {
		return nil
	}
	err := check("pinned host free", C.snarkd_host_free(b.ptr))
	b.ptr = nil
	return err
}

// RegisterHost page-locks b, host memory that outlives the registration (Go memory must stay
// referenced), so that copies from it run at full PCIe speed; UnregisterHost undoes it.
func RegisterHost(b []byte) error {
	if len(b) == 0 {
		return fmt.Errorf("gpu: registering an empty host buffer")
	}
	return check("registering "+gpu.FormatBytes(uint64(len(b)))+" of host memory", C.snarkd_host_register(unsafe.Pointer(&b[0]), C.size_t(len(b))))
}

// UnregisterHost undoes RegisterHost(b).
func UnregisterHost(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return check("unregistering host memory", C.snarkd_host_unregister(unsafe.Pointer(&b[0])))
}

// CopyHostToDevice copies size bytes from host memory src to dst on device ordinal.
func CopyHostToDevice(ordinal int, dst gpu.DevicePtr, src unsafe.Pointer, size uint64) error {
	return check("copy to device", C.snarkd_memcpy_htod(C.int32_t(ordinal), devPtr(dst), src, C.size_t(size)))
}

// CopyDeviceToHost copies size bytes at src on device ordinal into host memory dst.
func CopyDeviceToHost(ordinal int, dst unsafe.Pointer, src gpu.DevicePtr, size uint64) error {
	return check("copy from device", C.snarkd_memcpy_dtoh(C.int32_t(ordinal), dst, devPtr(src), C.size_t(size)))
}

// memsetDevice sets size bytes at p on device ordinal to value.
func memsetDevice(ordinal int, p gpu.DevicePtr, value byte, size uint64) error {
	return check("memset device", C.snarkd_memset_d(C.int32_t(ordinal), devPtr(p), C.int32_t(value), C.size_t(size)))
}

// arithTest runs one native self-test op on count element pairs (see snarkd_arith_test).
// Pointers are device addresses (as unsafe.Pointer) when onDevice, else host memory.
func arithTest(ordinal int, onDevice bool, op int, a, b, out unsafe.Pointer, count int) error {
	dev := C.int32_t(0)
	if onDevice {
		dev = 1
	}
	return check("arith test", C.snarkd_arith_test(C.int32_t(ordinal), dev, C.int32_t(op), a, b, out, C.size_t(count)))
}
