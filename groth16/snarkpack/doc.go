// Package snarkpack aggregates Groth16 proofs of one circuit into a single SnarkPack proof
// (TIPP and MIPP inner-pairing-product arguments with KZG-opened commitment keys), and verifies
// such aggregates. Encoding, transcript and challenge derivation follow bellperson's
// groth16::aggregate, so an aggregate made here verifies in filecoin-ffi and the converse.
//
// The aggregate of n proofs needs an SRS specialised to n (a power of two): Filecoin's published
// inner-product SRS (SRSFile) or a devnet one (DevnetSRS), which is insecure like devnet
// Groth16 parameters.
package snarkpack
