package snarkpack

import (
	"context"
	"errors"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/groth16"
)

// ErrInvalid marks an aggregate that does not verify.
var ErrInvalid = errors.New("SnarkPack aggregate does not verify")

// Verify is bellperson's verify_aggregate_proof: inputs holds each aggregated proof's public
// inputs (ONE excluded), in order, one entry per proof (padding included).
func Verify(ctx context.Context, vk *VerifierKey, gvk *groth16.VerifyingKey, inputs [][]fr.Element, p *AggregateProof, include []byte, v Version) error {
	return errors.New("not yet")
}
