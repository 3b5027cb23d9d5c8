// Package cuda is snarkd's only door to the native CUDA library (native/, cgo, build tag cuda):
// the device inventory, HardwareDevice (the gpu.Device of a real GPU), the NTT, MSM, gather and
// arithmetic bindings the partition prover calls, the native sizer for the planner, and the
// kernel benchmark. Without the tag it reports no devices (ErrNoCUDA) and nothing links CUDA.
package cuda
