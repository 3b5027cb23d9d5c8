package snarkpack

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/groth16"
)

// TargetLen is filecoin-proofs' get_aggregate_target_len: 1 → 2, else the next power of two.
func TargetLen(n int) int {
	if n <= 2 {
		return 2
	}
	t := 1
	for t < n {
		t <<= 1
	}
	return t
}

// PadProofs repeats the last proof up to TargetLen (filecoin-proofs' pad_proofs_to_target).
func PadProofs(proofs []*groth16.Proof) ([]*groth16.Proof, error) {
	if len(proofs) == 0 {
		return nil, fmt.Errorf("snarkpack: no proofs to aggregate")
	}
	out := append([]*groth16.Proof(nil), proofs...)
	for len(out) < TargetLen(len(proofs)) {
		out = append(out, proofs[len(proofs)-1])
	}
	return out, nil
}

// PadInputs repeats the last proof's public inputs up to TargetLen (pad_inputs_to_target with
// one entry per proof).
func PadInputs(inputs [][]fr.Element) ([][]fr.Element, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("snarkpack: no public inputs")
	}
	out := append([][]fr.Element(nil), inputs...)
	for len(out) < TargetLen(len(inputs)) {
		out = append(out, inputs[len(inputs)-1])
	}
	return out, nil
}
