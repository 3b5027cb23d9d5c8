//go:build !cuda

package gpu

// kernelWork returns nil: a build without CUDA has only simulated devices.
func kernelWork(*Run) partitionWork { return nil }
