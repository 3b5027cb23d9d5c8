package post

import (
	"fmt"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/merkle"
)

// GenerateSectorVanilla is generate_single_vanilla_proof for a sector whose tree R is at hand
// (the Go sealer's): the bincode FallbackPoStSectorProof opening the given challenged leaves.
// It is how test fixtures and a storage-side stand-in produce what lotus-miner serves.
func GenerateSectorVanilla(p *Proof, sector uint64, commC c1.Domain, treeR *merkle.Tree, challenges []uint64) ([]byte, error) {
	if treeR.Leaves() != p.Nodes() {
		return nil, fmt.Errorf("tree R has %d leaves, %s sectors have %d", treeR.Leaves(), p.Name, p.Nodes())
	}
	commRLast := treeR.Root()
	commR, err := merkle.Poseidon([]c1.Domain{commC, commRLast})
	if err != nil {
		return nil, err
	}
	v := SectorVanilla{SectorID: sector, CommR: commR, Sectors: []SectorProof{{CommC: commC, CommRLast: commRLast}}}
	for _, c := range challenges {
		mp, err := treeR.Proof(c, p.Tree)
		if err != nil {
			return nil, fmt.Errorf("sector %d leaf %d: %w", sector, c, err)
		}
		v.Sectors[0].InclusionProofs = append(v.Sectors[0].InclusionProofs, mp)
	}
	return v.Encode()
}
