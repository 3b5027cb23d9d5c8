//go:build !cuda

package gpuprove

import "github.com/snarkd/snarkd/gpu"

// kernelWork returns nil: a build without CUDA has only simulated devices.
func kernelWork(*gpu.Run) partitionWork { return nil }
