// Package gpuprove proves Groth16 partitions on the scheduler's devices: it prepares a
// partition's host vectors, asks gpu.Scheduler for a device and a memory plan, runs the H step
// and the five MSMs there (through gpu/cuda on hardware, on the CPU inside the simulated
// kernel slots on a gpu/sim device) and assembles the proof with groth16. With the same r and s
// its bytes equal the CPU prover's.
package gpuprove
