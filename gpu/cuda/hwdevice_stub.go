//go:build !cuda

package cuda

import "github.com/snarkd/snarkd/gpu"

// HardwareDevices fails with ErrNoCUDA in a build without CUDA; snarkd then proves on the CPU
// or on simulated devices.
func HardwareDevices() ([]gpu.Device, error) { return nil, ErrNoCUDA }

// KernelSizer is the Sizer for device ordinal: the model in a build without CUDA.
func KernelSizer(ordinal int) gpu.Sizer { return gpu.ModelSizer{} }
