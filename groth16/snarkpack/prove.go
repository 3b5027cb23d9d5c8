package snarkpack

import (
	"context"
	"errors"

	"github.com/snarkd/snarkd/groth16"
)

// Aggregate is bellperson's aggregate_proofs: it aggregates len(proofs) proofs (a power of two
// equal to pk.N) with include bound into the transcript (Filecoin passes a hash of the
// sectors' comm_r and seeds).
func Aggregate(ctx context.Context, pk *ProverKey, include []byte, proofs []*groth16.Proof, v Version) (*AggregateProof, error) {
	return nil, errors.New("not yet")
}
