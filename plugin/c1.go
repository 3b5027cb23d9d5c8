package plugin

import (
	"encoding/json"
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/rpcapi"
)

// C1SealProof reads the registered seal proof out of a C1 output (SealCommitPhase1Output JSON),
// by the names rust-fil-proofs writes (NI-PoRep ones end in "_Feat_NonInteractivePoRep"). The
// rest of the output is decoded strictly when the request is submitted (jobs.Validate).
func C1SealProof(phase1Out []byte) (abi.RegisteredSealProof, error) {
	var head struct {
		RegisteredProof string `json:"registered_proof"`
	}
	if err := json.Unmarshal(phase1Out, &head); err != nil {
		return 0, &rpcapi.ErrBadRequest{Field: "Phase1Out", Reason: fmt.Sprintf("not a C1 output JSON object: %v", err)}
	}
	p, err := prooftypes.LookupName(head.RegisteredProof)
	if err != nil {
		return 0, &rpcapi.ErrBadRequest{Field: "Phase1Out.registered_proof", Reason: err.Error()}
	}
	return p.Proof, nil
}
