// Package groth16 is a Groth16 engine over BLS12-381 byte-compatible with bellperson, the prover
// Filecoin uses: it reads and writes bellperson's .vk and .params files and 192-byte proofs,
// proves on the CPU with gnark-crypto (H by iFFT / coset FFT with generator 7, then the h, l, a,
// b_g1, b_g2 MSMs and bellperson's r, s assembly), verifies single proofs and batches, and
// generates keys for any cs.Circuit from a seed (insecure; for tests and devnets only).
//
// The prover is split into exported steps so that other backends (package gpu) can replace
// some of them: ComputeH (the quotient polynomial), ComputeMSMs (the five multi-scalar
// multiplications against a ProvingKey view) and Assemble (the proof from MSM results and r, s).
package groth16
