package groth16

import (
	"fmt"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// ProofSize is the size of one encoded proof: compressed A (48) ‖ B (96) ‖ C (48).
const ProofSize = G1CompressedSize + G2CompressedSize + G1CompressedSize

// Proof is a Groth16 proof.
type Proof struct {
	A bls.G1Affine
	B bls.G2Affine
	C bls.G1Affine
}

// Bytes returns bellperson's 192-byte encoding (Proof::write).
func (p *Proof) Bytes() [ProofSize]byte {
	var out [ProofSize]byte
	a, b, c := p.A.Bytes(), p.B.Bytes(), p.C.Bytes()
	copy(out[:], a[:])
	copy(out[G1CompressedSize:], b[:])
	copy(out[G1CompressedSize+G2CompressedSize:], c[:])
	return out
}

// ParseProof decodes one 192-byte proof with bellperson's checks: valid compressed encodings,
// points in the prime-order subgroup, none at infinity.
func ParseProof(b []byte) (*Proof, error) {
	if len(b) != ProofSize {
		return nil, fmt.Errorf("proof is %d bytes, want %d", len(b), ProofSize)
	}
	p := new(Proof)
	if err := decodeG1Compressed(&p.A, b[:G1CompressedSize], CheckSubgroup); err != nil {
		return nil, fmt.Errorf("proof A: %w", err)
	}
	if err := decodeG2Compressed(&p.B, b[G1CompressedSize:G1CompressedSize+G2CompressedSize], CheckSubgroup); err != nil {
		return nil, fmt.Errorf("proof B: %w", err)
	}
	if err := decodeG1Compressed(&p.C, b[G1CompressedSize+G2CompressedSize:], CheckSubgroup); err != nil {
		return nil, fmt.Errorf("proof C: %w", err)
	}
	for _, inf := range []struct {
		name string
		is   bool
	}{{"A", p.A.IsInfinity()}, {"B", p.B.IsInfinity()}, {"C", p.C.IsInfinity()}} {
		if inf.is {
			return nil, fmt.Errorf("proof %s: %w", inf.name, ErrPointAtInfinity)
		}
	}
	return p, nil
}

// MarshalProofs concatenates the proofs of a multi-partition proof in order (MultiProof::write).
func MarshalProofs(proofs []*Proof) []byte {
	out := make([]byte, 0, len(proofs)*ProofSize)
	for _, p := range proofs {
		b := p.Bytes()
		out = append(out, b[:]...)
	}
	return out
}

// ParseProofs splits and decodes a concatenation of proofs. want is the expected number of
// partitions, or 0 to accept any positive multiple of ProofSize.
func ParseProofs(b []byte, want int) ([]*Proof, error) {
	if len(b) == 0 || len(b)%ProofSize != 0 {
		return nil, fmt.Errorf("multi-proof is %d bytes, not a positive multiple of %d", len(b), ProofSize)
	}
	n := len(b) / ProofSize
	if want > 0 && n != want {
		return nil, fmt.Errorf("multi-proof holds %d proofs, want %d", n, want)
	}
	out := make([]*Proof, n)
	for i := range out {
		p, err := ParseProof(b[i*ProofSize : (i+1)*ProofSize])
		if err != nil {
			return nil, fmt.Errorf("partition %d: %w", i, err)
		}
		out[i] = p
	}
	return out, nil
}
