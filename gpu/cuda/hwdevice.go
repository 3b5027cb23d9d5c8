//go:build cuda

package cuda

// #include "snarkd.h"
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/gpu"
)

var log = logging.Logger("snarkd/gpu/cuda")

// HardwareDevice is a CUDA GPU behind the Device interface: device memory through the native
// allocator (cudaMalloc/cudaFree, never a stream-ordered pool), free memory from the driver's
// per-device query, page-locked host memory, synchronous copies and asynchronous uploads on the
// device's dedicated copy stream.
type HardwareDevice struct {
	ordinal int
	info    gpu.DeviceInfo
	mem     *CUDAMemory

	mu     sync.Mutex
	pinned map[uintptr]*PinnedBuffer
	// registered pins the Go objects whose memory the driver holds (HostRegister).
	registered map[uintptr]*runtime.Pinner
}

// NewHardwareDevice opens device ordinal.
func NewHardwareDevice(ordinal int) (*HardwareDevice, error) {
	info, err := Inventory(ordinal)
	if err != nil {
		return nil, fmt.Errorf("opening gpu %d: %w", ordinal, err)
	}
	return &HardwareDevice{ordinal: ordinal, info: info, mem: NewCUDAMemory(ordinal),
		pinned: map[uintptr]*PinnedBuffer{}, registered: map[uintptr]*runtime.Pinner{}}, nil
}

// HardwareDevices opens every visible device.
func HardwareDevices() ([]gpu.Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	out := make([]gpu.Device, 0, n)
	for i := range n {
		d, err := NewHardwareDevice(i)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// Info returns the inventory taken when the device was opened, with free memory now.
func (d *HardwareDevice) Info() gpu.DeviceInfo {
	info := d.info
	if free, _, err := d.MemInfo(); err == nil {
		info.FreeMem = free
	}
	return info
}

// MemInfo asks the driver for this device's free memory (cudaMemGetInfo on this device only).
func (d *HardwareDevice) MemInfo() (free, total uint64, err error) {
	info, err := Inventory(d.ordinal)
	if err != nil {
		return 0, 0, err
	}
	return info.FreeMem, info.TotalMem, nil
}

// Alloc implements Device with cudaMalloc.
func (d *HardwareDevice) Alloc(bytes uint64) (gpu.DevicePtr, error) { return d.mem.Alloc(bytes) }

// Free implements Device with cudaFree.
func (d *HardwareDevice) Free(p gpu.DevicePtr) error { return d.mem.Free(p) }

// HostAlloc implements Device with cudaHostAlloc.
func (d *HardwareDevice) HostAlloc(bytes uint64) (gpu.HostMem, error) {
	b, err := AllocPinned(bytes)
	if err != nil {
		return gpu.HostMem{}, err
	}
	h := uintptr(b.Pointer())
	d.mu.Lock()
	d.pinned[h] = b
	d.mu.Unlock()
	return gpu.HostMem{Bytes: b.Bytes(), Size: bytes, Pinned: true, Handle: h}, nil
}

// HostFree implements Device with cudaFreeHost.
func (d *HardwareDevice) HostFree(m gpu.HostMem) error {
	d.mu.Lock()
	b, ok := d.pinned[m.Handle]
	delete(d.pinned, m.Handle)
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("gpu %d: freeing pinned memory this device did not allocate", d.ordinal)
	}
	return b.Free()
}

// HostRegister implements Device with cudaHostRegister (portable). The driver keeps the address
// after the call, so the Go object is pinned until HostUnregister.
func (d *HardwareDevice) HostRegister(b []byte) (gpu.HostMem, error) {
	if len(b) == 0 {
		return gpu.HostMem{}, fmt.Errorf("gpu: registering an empty host buffer")
	}
	pin := new(runtime.Pinner)
	pin.Pin(&b[0])
	if err := RegisterHost(b); err != nil {
		pin.Unpin()
		return gpu.HostMem{}, err
	}
	h := uintptr(unsafe.Pointer(&b[0]))
	d.mu.Lock()
	d.registered[h] = pin
	d.mu.Unlock()
	return gpu.HostMem{Bytes: b, Size: uint64(len(b)), Pinned: true, Handle: h}, nil
}

// HostUnregister implements Device with cudaHostUnregister.
func (d *HardwareDevice) HostUnregister(m gpu.HostMem) error {
	err := UnregisterHost(m.Bytes)
	d.mu.Lock()
	pin := d.registered[m.Handle]
	delete(d.registered, m.Handle)
	d.mu.Unlock()
	if pin != nil {
		pin.Unpin()
	}
	return err
}

// CopyToDevice copies src.Bytes (pinned or pageable) to dst.
func (d *HardwareDevice) CopyToDevice(ctx context.Context, dst gpu.DevicePtr, src gpu.HostMem) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(src.Bytes) == 0 {
		return nil
	}
	return CopyHostToDevice(d.ordinal, dst, unsafe.Pointer(&src.Bytes[0]), uint64(len(src.Bytes)))
}

// CopyToDeviceAsync enqueues the copy on the device's copy stream (snarkd_memcpy_htod_async)
// and returns a Pending for the event recorded after it. From pinned memory the call returns
// before the DMA ran; from pageable memory the driver stages src before it returns.
func (d *HardwareDevice) CopyToDeviceAsync(ctx context.Context, dst gpu.DevicePtr, src gpu.HostMem) (gpu.Pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(src.Bytes) == 0 {
		return completed{}, nil
	}
	var ev unsafe.Pointer
	if err := check(fmt.Sprintf("async copy of %s to gpu %d", gpu.FormatBytes(uint64(len(src.Bytes))), d.ordinal),
		C.snarkd_memcpy_htod_async(C.int32_t(d.ordinal), devPtr(dst),
			unsafe.Pointer(&src.Bytes[0]), C.size_t(len(src.Bytes)), &ev)); err != nil {
		return nil, err
	}
	return &hwPending{ordinal: d.ordinal, event: ev}, nil
}

// completed is a Pending that finished before it was returned.
type completed struct{ err error }

func (c completed) Wait(context.Context) error { return c.err }

// hwPending is an upload's completion event. The event is waited and destroyed once; the
// result is kept for later Waits.
type hwPending struct {
	ordinal int
	mu      sync.Mutex
	event   unsafe.Pointer // nil once waited
	err     error
}

// Wait synchronizes with the event in the calling goroutine (an upload takes bounded time);
// a ctx that is already done returns its error and leaves the event for a later Wait.
func (p *hwPending) Wait(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.event == nil {
		return p.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.err = check("waiting for an upload", C.snarkd_event_wait(C.int32_t(p.ordinal), p.event))
	p.event = nil
	return p.err
}

// Launch runs fn, which calls the native kernels of this device.
func (d *HardwareDevice) Launch(ctx context.Context, name string, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if fn == nil {
		return nil
	}
	if err := fn(); err != nil {
		return fmt.Errorf("gpu %d: %s: %w", d.ordinal, name, err)
	}
	return nil
}

// NativeSizer sizes kernel memory with the native layer's own layouts on device Ordinal
// (snarkd_ntt_domain_bytes, snarkd_msm_plan_make), so plans book exactly what the kernels use.
// Workspace depends on the device only through its SM count.
type NativeSizer struct{ Ordinal int }

// NTTDomainBytes implements Sizer.
func (NativeSizer) NTTDomainBytes(logN uint32, compact bool) uint64 {
	return NTTDomainBytes(uint(logN), compact)
}

// MSMWorkspace implements Sizer; where the native plan refuses the shape it falls back to the
// model (the MSM itself will then fail loudly).
func (s NativeSizer) MSMWorkspace(c gpu.Curve, npoints uint64, flags gpu.MSMFlags, chunkLog uint32) uint64 {
	if npoints == 0 {
		return 0
	}
	r := &MSMRequest{N: int(npoints), Split01: flags&gpu.MSMSplit01 != 0, ChunkLog: uint(chunkLog)}
	// Sizing only asks where the vectors live; any non-zero address means "on the device".
	if flags&gpu.MSMPointsOnHost == 0 {
		r.PointsDevice = 1
	}
	if flags&gpu.MSMScalarsOnHost == 0 {
		r.ScalarsDevice = 1
	}
	ws, err := MSMWorkspaceBytes(s.Ordinal, c, r)
	if err != nil {
		log.Warnw("native MSM plan failed; sizing by the model", "device", s.Ordinal, "points", npoints, "err", err)
		return gpu.ModelSizer{}.MSMWorkspace(c, npoints, flags, chunkLog)
	}
	return ws
}

// KernelSizer is the Sizer for device ordinal: the native layouts in a CUDA build.
func KernelSizer(ordinal int) gpu.Sizer { return NativeSizer{Ordinal: ordinal} }
