package post

import (
	"fmt"
	"io"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/merkle"
)

// SyntheticSectorVanilla is a vanilla proof of production shape for a sector that does not
// exist: tree R is sparse, random at the leaves the challenges open (for the sector at position
// sectorIndex) and zero elsewhere, comm_c is random. It verifies like a real one, so the
// circuits of every sector size (32GiB and 64GiB included) can be synthesized and proven
// without sealing.
func SyntheticSectorVanilla(p *Proof, sector uint64, randomness [32]byte, sectorIndex int, r io.Reader) ([]byte, error) {
	challenges := p.SectorChallenges(randomness, sector, sectorIndex)
	set := make(map[uint64]c1.Domain, len(challenges))
	for _, c := range challenges {
		if _, ok := set[c]; ok {
			continue
		}
		d, err := c1.RandomDomain(r)
		if err != nil {
			return nil, err
		}
		set[c] = d
	}
	ar, err := merkle.Arities(p.Tree, p.Nodes())
	if err != nil {
		return nil, err
	}
	tree, err := merkle.NewSparse(set, c1.Domain{}, ar, merkle.Poseidon)
	if err != nil {
		return nil, fmt.Errorf("synthetic tree R: %w", err)
	}
	commC, err := c1.RandomDomain(r)
	if err != nil {
		return nil, err
	}
	return GenerateSectorVanilla(p, sector, commC, tree, challenges)
}
