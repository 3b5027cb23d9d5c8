// Package sim is the simulated GPU (a gpu.Device): it enforces capacity like a driver, models
// copy rates and kernel latency, and lets tests change other processes' usage and inject
// failures. Tests and `snarkd run --simulate-gpus` use it.
package sim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/internal/bytesize"
)

// Config describes one simulated GPU.
type Config struct {
	Ordinal  int
	Name     string
	TotalMem uint64
	SMCount  int
	// OthersMem is device memory used by other processes (and the driver) at start.
	OthersMem uint64
	// PinnedBandwidth and PageableBandwidth are host-to-device copy rates in bytes per second;
	// zero makes copies instant.
	PinnedBandwidth   float64
	PageableBandwidth float64
	// KernelLatency is added to every Launch.
	KernelLatency time.Duration
	// RegisterLatency is how long HostRegister and HostUnregister take (page-locking gigabytes
	// takes seconds).
	RegisterLatency time.Duration
	// OnLaunch, when set, is called at the start of every Launch (tests observe the books
	// while kernels would run).
	OnLaunch func(name string)
}

// Stats is what a simulated device observed.
type Stats struct {
	Allocated     uint64 // bytes currently allocated by this process (rounded)
	PeakAllocated uint64
	Allocs        int
	Frees         int
	FailedAllocs  int // real (device full) and injected failures
	Injected      int
	HostPinned    uint64
	// HostRegistered is host memory page-locked by HostRegister and not yet unregistered.
	HostRegistered uint64
	CopiedPinned   uint64
	CopiedPaged    uint64
	AsyncCopies    int // copies started by CopyToDeviceAsync
	Launches       int
	// MaxConcurrentLaunches is the most Launch calls seen running at once: the scheduler's
	// kernel lock keeps it at 1.
	MaxConcurrentLaunches int
}

// Device is a simulated GPU for tests and `snarkd run --simulate-gpus`. It enforces its
// capacity like a driver (an allocation past total − others fails with out-of-memory), lets
// tests change other processes' usage and inject allocation failures, and checks that every
// Free matches a live allocation.
type Device struct {
	cfg Config

	mu       sync.Mutex
	others   uint64
	live     map[gpu.DevicePtr]uint64
	next     gpu.DevicePtr
	failNext int
	hostLive map[uintptr]uint64
	hostRegs map[uintptr]uint64
	failReg  int
	active   int
	// copyTail closes when the last copy started by CopyToDeviceAsync finished: the next one
	// waits for it, as copies on one CUDA stream run in order.
	copyTail chan struct{}
	stats    Stats
}

// New returns a simulated device; zero fields get an H200-like name and 132 SMs.
func New(cfg Config) *Device {
	if cfg.Name == "" {
		cfg.Name = "Simulated GPU"
	}
	if cfg.SMCount == 0 {
		cfg.SMCount = 132
	}
	return &Device{cfg: cfg, others: cfg.OthersMem, live: map[gpu.DevicePtr]uint64{},
		next: 1 << 32, hostLive: map[uintptr]uint64{}, hostRegs: map[uintptr]uint64{}}
}

// Info returns the simulated inventory.
func (d *Device) Info() gpu.DeviceInfo {
	free, total, _ := d.MemInfo()
	return gpu.DeviceInfo{Ordinal: d.cfg.Ordinal, Name: d.cfg.Name, TotalMem: total, FreeMem: free,
		SMCount: d.cfg.SMCount, ComputeMajor: 9, ComputeMinor: 0, PCIBusID: d.cfg.Ordinal}
}

// MemInfo reports total minus other processes' and this process's allocations.
func (d *Device) MemInfo() (free, total uint64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	used := d.others + d.stats.Allocated
	if used > d.cfg.TotalMem {
		return 0, d.cfg.TotalMem, nil
	}
	return d.cfg.TotalMem - used, d.cfg.TotalMem, nil
}

// SetOthers changes the memory other processes hold, as when another program starts or exits.
func (d *Device) SetOthers(bytes uint64) {
	d.mu.Lock()
	d.others = bytes
	d.mu.Unlock()
}

// InjectAllocFailures makes the next n allocations fail with out-of-memory.
func (d *Device) InjectAllocFailures(n int) {
	d.mu.Lock()
	d.failNext += n
	d.mu.Unlock()
}

// Stats returns a snapshot of what the device observed.
func (d *Device) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

func (d *Device) oom(bytes uint64, why string) error {
	d.stats.FailedAllocs++
	return &gpu.Error{Op: fmt.Sprintf("device alloc of %s on simulated GPU %d", gpu.FormatBytes(bytes), d.cfg.Ordinal),
		Code: gpu.CodeOutOfMemory, Message: why}
}

// Alloc books RoundAlloc(bytes) against the simulated capacity.
func (d *Device) Alloc(bytes uint64) (gpu.DevicePtr, error) {
	size := gpu.RoundAlloc(max(bytes, 1))
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failNext > 0 {
		d.failNext--
		d.stats.Injected++
		return 0, d.oom(bytes, "out of memory (injected)")
	}
	if d.others+d.stats.Allocated+size > d.cfg.TotalMem {
		return 0, d.oom(bytes, "out of memory")
	}
	p := d.next
	d.next += gpu.DevicePtr(size)
	d.live[p] = size
	d.stats.Allocated += size
	d.stats.PeakAllocated = max(d.stats.PeakAllocated, d.stats.Allocated)
	d.stats.Allocs++
	return p, nil
}

// Free releases an allocation; freeing an unknown pointer is an error, as in CUDA.
func (d *Device) Free(p gpu.DevicePtr) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	size, ok := d.live[p]
	if !ok {
		return &gpu.Error{Op: "device free", Code: 1, Message: fmt.Sprintf("invalid device pointer %#x", p)}
	}
	delete(d.live, p)
	d.stats.Allocated -= size
	d.stats.Frees++
	return nil
}

// HostAlloc models page-locked memory: it is counted but has no contents.
func (d *Device) HostAlloc(bytes uint64) (gpu.HostMem, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := uintptr(d.next)
	d.next += gpu.DevicePtr(gpu.RoundAlloc(max(bytes, 1)))
	d.hostLive[h] = bytes
	d.stats.HostPinned += bytes
	return gpu.HostMem{Size: bytes, Pinned: true, Handle: h}, nil
}

// HostFree releases memory from HostAlloc.
func (d *Device) HostFree(m gpu.HostMem) error {
	return d.dropHost(d.hostLive, m.Handle, &d.stats.HostPinned, &gpu.Error{Op: "host free", Code: 1, Message: "invalid host pointer"})
}

// dropHost removes host memory h from live and its size from *counter, or returns notFound.
func (d *Device) dropHost(live map[uintptr]uint64, h uintptr, counter *uint64, notFound *gpu.Error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	size, ok := live[h]
	if !ok {
		return notFound
	}
	delete(live, h)
	*counter -= size
	return nil
}

// InjectRegisterFailures makes the next n HostRegister calls fail.
func (d *Device) InjectRegisterFailures(n int) {
	d.mu.Lock()
	d.failReg += n
	d.mu.Unlock()
}

// HostRegister models page-locking b: it is counted; registering memory that is already
// registered fails, as in CUDA.
func (d *Device) HostRegister(b []byte) (gpu.HostMem, error) {
	if len(b) == 0 {
		return gpu.HostMem{}, &gpu.Error{Op: "host register", Code: 1, Message: "empty host buffer"}
	}
	h := uintptr(unsafe.Pointer(&b[0]))
	time.Sleep(d.cfg.RegisterLatency)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failReg > 0 {
		d.failReg--
		return gpu.HostMem{}, &gpu.Error{Op: "host register", Code: 2, Message: "out of memory (injected)"}
	}
	if _, ok := d.hostRegs[h]; ok {
		return gpu.HostMem{}, &gpu.Error{Op: "host register", Code: 712, Message: "host memory already registered"}
	}
	d.hostRegs[h] = uint64(len(b))
	d.stats.HostRegistered += uint64(len(b))
	return gpu.HostMem{Bytes: b, Size: uint64(len(b)), Pinned: true, Handle: h}, nil
}

// HostUnregister undoes HostRegister.
func (d *Device) HostUnregister(m gpu.HostMem) error {
	time.Sleep(d.cfg.RegisterLatency)
	return d.dropHost(d.hostRegs, m.Handle, &d.stats.HostRegistered, &gpu.Error{Op: "host unregister", Code: 713, Message: "host memory not registered"})
}

// CopyToDevice checks that the destination is live and takes size/bandwidth.
func (d *Device) CopyToDevice(ctx context.Context, dst gpu.DevicePtr, src gpu.HostMem) error {
	size := src.Size
	if size == 0 {
		size = uint64(len(src.Bytes))
	}
	d.mu.Lock()
	ok := d.contains(dst, size)
	if ok {
		if src.Pinned {
			d.stats.CopiedPinned += size
		} else {
			d.stats.CopiedPaged += size
		}
	}
	d.mu.Unlock()
	if !ok {
		return &gpu.Error{Op: "memcpy htod", Code: 1, Message: fmt.Sprintf("%d bytes at %#x outside any allocation", size, dst)}
	}
	bw := d.cfg.PageableBandwidth
	if src.Pinned {
		bw = d.cfg.PinnedBandwidth
	}
	if bw <= 0 {
		return ctx.Err()
	}
	return sleepCtx(ctx, time.Duration(float64(size)/bw*float64(time.Second)))
}

// CopyToDeviceAsync runs CopyToDevice (the same checks and bandwidth time) in a goroutine
// after the previously started copy, like a copy stream, and returns at once; Wait joins it.
// The copy stops early when ctx is cancelled, with ctx's error as its result.
func (d *Device) CopyToDeviceAsync(ctx context.Context, dst gpu.DevicePtr, src gpu.HostMem) (gpu.Pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := &simPending{done: make(chan struct{})}
	d.mu.Lock()
	prev := d.copyTail
	d.copyTail = p.done
	d.stats.AsyncCopies++
	d.mu.Unlock()
	go func() {
		defer close(p.done)
		if prev != nil {
			select {
			case <-prev:
			case <-ctx.Done():
				p.err = ctx.Err()
				return
			}
		}
		p.err = d.CopyToDevice(ctx, dst, src)
	}()
	return p, nil
}

// simPending is a simulated copy in flight; err is written before done closes.
type simPending struct {
	done chan struct{}
	err  error
}

// Wait returns the copy's result once it finished, or ctx's error if ctx ends first.
func (p *simPending) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// contains reports whether [p, p+size) lies inside one live allocation.
func (d *Device) contains(p gpu.DevicePtr, size uint64) bool {
	for base, n := range d.live {
		if p >= base && uint64(p-base)+size <= n {
			return true
		}
	}
	return false
}

// Launch sleeps the configured kernel latency and runs fn.
func (d *Device) Launch(ctx context.Context, name string, fn func() error) error {
	d.mu.Lock()
	d.stats.Launches++
	d.active++
	d.stats.MaxConcurrentLaunches = max(d.stats.MaxConcurrentLaunches, d.active)
	d.mu.Unlock()
	if d.cfg.OnLaunch != nil {
		d.cfg.OnLaunch(name)
	}
	defer func() {
		d.mu.Lock()
		d.active--
		d.mu.Unlock()
	}()
	if err := sleepCtx(ctx, d.cfg.KernelLatency); err != nil {
		return err
	}
	if fn != nil {
		return fn()
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ParseSpec parses a --simulate-gpus value: comma-separated groups of [COUNTx]SIZE, e.g.
// "2x16GiB" or "1x80GB,2x24GiB". Devices are numbered in order and get planning-number copy
// rates (50 GB/s pinned, 10 GB/s pageable).
func ParseSpec(spec string) ([]Config, error) {
	var out []Config
	for _, group := range strings.Split(spec, ",") {
		group = strings.TrimSpace(group)
		if group == "" {
			return nil, fmt.Errorf("simulated GPU spec %q: empty group", spec)
		}
		count, size := 1, group
		if i := strings.IndexAny(group, "xX"); i > 0 {
			n, err := strconv.Atoi(group[:i])
			if err != nil || n < 1 || n > 64 {
				return nil, fmt.Errorf("simulated GPU spec %q: bad device count %q", spec, group[:i])
			}
			count, size = n, group[i+1:]
		}
		bytes, err := bytesize.Parse(size)
		if err != nil {
			return nil, fmt.Errorf("simulated GPU spec %q: %w", spec, err)
		}
		if bytes < 1<<30 {
			return nil, fmt.Errorf("simulated GPU spec %q: %s is less than 1 GiB", spec, size)
		}
		for range count {
			out = append(out, Config{Ordinal: len(out),
				Name:     fmt.Sprintf("Simulated GPU (%s)", gpu.FormatBytes(bytes)),
				TotalMem: bytes, PinnedBandwidth: 50e9, PageableBandwidth: 10e9})
		}
	}
	return out, nil
}

// NewDevices builds the devices of a --simulate-gpus spec.
func NewDevices(spec string) ([]*Device, error) {
	cfgs, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	out := make([]*Device, len(cfgs))
	for i, c := range cfgs {
		out[i] = New(c)
	}
	return out, nil
}

// Devices builds the devices of a --simulate-gpus spec as Config.Devices.
func Devices(spec string) ([]gpu.Device, error) {
	sims, err := NewDevices(spec)
	if err != nil {
		return nil, err
	}
	out := make([]gpu.Device, len(sims))
	for i, d := range sims {
		out[i] = d
	}
	return out, nil
}
