//go:build !cuda

package gpu

// HardwareDevices fails with ErrNoCUDA in a build without CUDA; snarkd then proves on the CPU
// or on simulated devices.
func HardwareDevices() ([]Device, error) { return nil, ErrNoCUDA }

// KernelSizer is the Sizer for device ordinal: the model in a build without CUDA.
func KernelSizer(ordinal int) Sizer { return ModelSizer{} }
