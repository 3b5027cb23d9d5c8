package plugin

import (
	"errors"
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/rpcapi"
)

// C1SealProof decodes a C1 output (SealCommitPhase1Output JSON) strictly and returns its
// registered seal proof, so that a malformed output is refused with a typed error naming the
// field before anything is queued. Whether its vanilla proofs are consistent is checked by the
// prover, which needs the miner and sector number.
func C1SealProof(phase1Out []byte) (abi.RegisteredSealProof, error) {
	_, p, err := c1.Decode(phase1Out)
	if err != nil {
		field := "Phase1Out"
		var fe *c1.FieldError
		if errors.As(err, &fe) {
			field += "." + fe.Field
		}
		return 0, &rpcapi.ErrBadRequest{Field: field, Reason: fmt.Sprintf("not a valid C1 output: %v", err)}
	}
	return p.Proof, nil
}
