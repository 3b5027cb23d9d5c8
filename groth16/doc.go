// Package groth16 is a Groth16 engine over BLS12-381 byte-compatible with bellperson, the prover
// Filecoin uses: it reads and writes bellperson's .vk and .params files and 192-byte proofs,
// proves on the CPU with gnark-crypto (H by iFFT / coset FFT with generator 7, then the h, l, a,
// b_g1, b_g2 MSMs and bellperson's r, s assembly), verifies single proofs and batches, and
// generates keys for any cs.Circuit from a seed (insecure; for tests and devnets only).
//
// # Steps and other backends
//
// ProveAssignment is three exported steps that another backend (package gpu) can replace one
// by one, keeping bellperson's exact conventions:
//
//   - ComputeH(ctx, a, b, c) returns the m−1 coefficients of h = (A·B − C)/Z;
//   - ComputeHMSM and ComputeWitnessMSMs fill an MSMResults: Σ h_i·H_i, Σ aux_j·L_j, the A
//     query over inputs and A-dense aux, and the B query in G1 and G2 over the B densities
//     (the k-th set density bit pairs with the k-th point after the input points);
//   - Assemble(vk, results, r, s) applies r and s and returns the proof.
//
// Parameters is the proving-key view: its point slices (gnark-crypto affine points, whose
// memory layout is blst's Montgomery form) can be handed to device code as they are, and
// ScanLayout gives the byte offsets of each section of a .params file for raw streaming.
package groth16
