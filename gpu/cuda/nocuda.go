//go:build !cuda

package cuda

import "github.com/snarkd/snarkd/gpu"

// CUDAEnabled reports whether this binary carries the CUDA backend.
const CUDAEnabled = false

// DeviceCount returns 0: a build without CUDA sees no devices.
func DeviceCount() (int, error) { return 0, nil }

// Inventory always fails with ErrNoCUDA in a build without CUDA.
func Inventory(ordinal int) (gpu.DeviceInfo, error) { return gpu.DeviceInfo{}, ErrNoCUDA }

// Versions always fails with ErrNoCUDA in a build without CUDA.
func Versions() (runtime, driver int, err error) { return 0, 0, ErrNoCUDA }
