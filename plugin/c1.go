package plugin

import (
	"encoding/json"
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/rpcapi"
)

// sealProofNames maps rust-fil-proofs' RegisteredSealProof names (as serde writes them in a C1
// output's "registered_proof") to the abi enum.
var sealProofNames = func() map[string]abi.RegisteredSealProof {
	sizes := []string{"2KiB", "8MiB", "512MiB", "32GiB", "64GiB"}
	versions := []string{"V1", "V1_1", "V1_1_Feat_SyntheticPoRep", "V1_2_Feat_NiPoRep"}
	out := map[string]abi.RegisteredSealProof{}
	for v, ver := range versions {
		for s, size := range sizes {
			out["StackedDrg"+size+ver] = abi.RegisteredSealProof(v*len(sizes) + s)
		}
	}
	return out
}()

// C1SealProof reads the registered seal proof out of a C1 output (SealCommitPhase1Output JSON).
func C1SealProof(phase1Out []byte) (abi.RegisteredSealProof, error) {
	var head struct {
		RegisteredProof string `json:"registered_proof"`
	}
	if err := json.Unmarshal(phase1Out, &head); err != nil {
		return 0, &rpcapi.ErrBadRequest{Field: "Phase1Out", Reason: fmt.Sprintf("not a C1 output JSON object: %v", err)}
	}
	spt, ok := sealProofNames[head.RegisteredProof]
	if !ok {
		return 0, &rpcapi.ErrBadRequest{Field: "Phase1Out.registered_proof", Reason: fmt.Sprintf("unknown seal proof %q", head.RegisteredProof)}
	}
	return spt, nil
}
