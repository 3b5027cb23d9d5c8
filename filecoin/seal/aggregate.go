package seal

import (
	"crypto/sha256"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// AggregateInclude is the 32 bytes filecoin-proofs binds into a SnarkPack aggregate of seal
// proofs (the transcript's "include"): SHA-256 over each sector's comm_r in order for
// non-interactive PoRep, which has no seeds (seeds is ignored), and SHA-256 over seed then comm_r
// of each sector in order for the interactive types. As filecoin-proofs zips the two lists, an
// interactive call hashes min(len(commRs), len(seeds)) pairs: callers check the lengths.
func AggregateInclude(p *prooftypes.SealProof, commRs, seeds [][32]byte) [32]byte {
	h := sha256.New()
	if p.Feature == prooftypes.NonInteractive {
		for i := range commRs {
			h.Write(commRs[i][:])
		}
	} else {
		for i := range min(len(commRs), len(seeds)) {
			h.Write(seeds[i][:])
			h.Write(commRs[i][:])
		}
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}
