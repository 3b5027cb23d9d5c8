// Package gadgets groups the circuit gadgets of the Filecoin proofs, written
// to be constraint-for-constraint identical to bellpepper, bellperson,
// neptune (Poseidon circuit v1) and rust-fil-proofs' storage-proofs-core:
// the same variables allocated in the same order, the same constraints in
// the same order with the same coefficients, and the same namespace paths.
//
// Subpackages:
//
//	boolean    allocated bits, constant-folding Boolean, xor/and/…, SHA-256 ch/maj
//	num        AllocatedNum, Num, to_bits_le(_strict), conditional reversal
//	u32        UInt32 and MultiEq (batched addition equalities)
//	sha256     SHA-256 compression and padded hash
//	blake2s    BLAKE2s circuit and native hash with personalization
//	multipack  bits → public inputs in 254-bit chunks, pack_bits
//	poseidon   neptune Poseidon: constants, native hash and sponge, v1 circuit
//	core       storage-proofs-core helpers: UInt64, byte/bit allocation, add/sub/encode
//	por        insertion/selection, tree hashers in circuit, the PoR circuit
//	sha254     native SHA-256 truncated to 254 bits, zero-tree commitments
//	merkle     native Filecoin-shaped trees (base/sub/top) and proofs
//
// Gadgets work in the caller's current namespace: where a Rust caller passes
// cs.namespace(|| "x"), Go callers Push("x") around the call. Every gadget
// runs in witness mode and blank mode with the identical structure (the
// tests check both through internal/gadgettest).
//
// Structure digests recorded in the tests are bellpepper's
// TestConstraintSystem::hash() (cs.TestConstraintSystem.Hash): Blake2s-256
// over the input, aux and constraint counts and every constraint's merged,
// sorted A, B and C terms. It covers variable order and coefficients but not
// names; the tests compare names separately between witness and blank runs.
//
// Heavy cases (SHA-256 and BLAKE2s trees, long hash inputs) are skipped under
// -short and -race; GADGETS_EXHAUSTIVE=1 runs every case.
package gadgets
