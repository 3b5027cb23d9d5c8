// Package update is Filecoin's SnapDeals proof (storage-proofs-update's EmptySectorUpdate and
// its Poseidon variant) as rust-fil-proofs defines it: the size-dependent parameters, challenge
// derivation, public inputs (k and h_select, comm_r_old, comm_d_new, comm_r_new), strict
// decoding of the bincode partition proofs filecoin-ffi passes to GenerateUpdateProofWithVanilla,
// and the circuits.
package update

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// ErrUnsupportedSize is returned for a sector size storage-proofs-update does not allow.
var ErrUnsupportedSize = errors.New("sector size not allowed for SnapDeals")

// Sector sizes in nodes (ALLOWED_SECTOR_SIZES): 1KiB … 32KiB are test sizes.
var allowedNodes = []uint64{1 << 5, 1 << 6, 1 << 7, 1 << 8, 1 << 9, 1 << 10, 1 << 18, 1 << 19, 1 << 24, 1 << 30, 1 << 31}

// Params is storage-proofs-update's PublicParams for one sector size.
type Params struct {
	SectorNodes     uint64
	ChallengeCount  int
	ChallengeBitLen int
	PartitionCount  int
	PartitionBitLen int
	ApexLeafCount   int
	ApexLeafBitLen  int
	// Poseidon marks the -poseidon variant (Poseidon tree D, one partition).
	Poseidon bool
}

func partitionCount(nodes uint64) int {
	switch {
	case nodes <= 1<<8:
		return 1
	case nodes <= 1<<10:
		return 2
	case nodes <= 1<<19:
		return 4
	}
	return 16
}

func challengeCount(nodes uint64) int {
	if nodes <= 1<<19 {
		return 10
	}
	return 86
}

func apexLeafCount(nodes uint64) int {
	if nodes <= 1<<8 {
		return 8
	}
	return 128
}

func nodesOf(sectorBytes uint64) (uint64, error) {
	for _, n := range allowedNodes {
		if n*prooftypes.NodeSize == sectorBytes {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%w: %d bytes", ErrUnsupportedSize, sectorBytes)
}

// FromSectorSize is PublicParams::from_sector_size.
func FromSectorSize(sectorBytes uint64) (*Params, error) {
	n, err := nodesOf(sectorBytes)
	if err != nil {
		return nil, err
	}
	pc, al := partitionCount(n), apexLeafCount(n)
	return &Params{SectorNodes: n, ChallengeCount: challengeCount(n), ChallengeBitLen: bits.TrailingZeros64(n),
		PartitionCount: pc, PartitionBitLen: bits.TrailingZeros(uint(pc)), ApexLeafCount: al, ApexLeafBitLen: bits.TrailingZeros(uint(al))}, nil
}

// FromSectorSizePoseidon is PublicParams::from_sector_size_poseidon: one partition holding every
// partition's challenges.
func FromSectorSizePoseidon(sectorBytes uint64) (*Params, error) {
	n, err := nodesOf(sectorBytes)
	if err != nil {
		return nil, err
	}
	return &Params{SectorNodes: n, ChallengeCount: challengeCount(n) * partitionCount(n), ChallengeBitLen: bits.TrailingZeros64(n),
		PartitionCount: 1, Poseidon: true}, nil
}

// SectorSize is the sector size in bytes.
func (p *Params) SectorSize() uint64 { return p.SectorNodes * prooftypes.NodeSize }

// TreeR is the tree R shape validate_tree_r_shape requires for the sector size.
func (p *Params) TreeR() prooftypes.TreeShape {
	switch p.SectorNodes {
	case 1 << 5, 1 << 8:
		return prooftypes.TreeShape{Base: 8, Sub: 4}
	case 1 << 7:
		return prooftypes.TreeShape{Base: 8, Sub: 2}
	case 1 << 9, 1 << 30:
		return prooftypes.TreeShape{Base: 8, Sub: 8}
	case 1 << 10, 1 << 31:
		return prooftypes.TreeShape{Base: 8, Sub: 8, Top: 2}
	case 1 << 19:
		return prooftypes.TreeShape{Base: 8, Sub: 2}
	}
	return prooftypes.TreeShape{Base: 8}
}

// Hs is hs(): the allowed values of h.
func (p *Params) Hs() [6]int {
	if p.SectorNodes <= 1<<10 {
		return [6]int{1, 1, 1, 1, 1, 1}
	}
	return [6]int{7, 8, 9, 10, 11, 12}
}

// HDefault is h_default(), the h filecoin-proofs uses.
func (p *Params) HDefault() int { return p.Hs()[3] }

// HSelect is h_select(): 1 << (position of h in Hs).
func (p *Params) HSelect(h int) (uint64, error) {
	for i, v := range p.Hs() {
		if v == h {
			return 1 << i, nil
		}
	}
	return 0, fmt.Errorf("h = %d is not allowed for %d-node sectors (allowed %v)", h, p.SectorNodes, p.Hs())
}

// Identifier is the parameter-set identifier (the same for both variants).
func (p *Params) Identifier() string {
	return fmt.Sprintf("empty_sector_update::PublicParams{ sector_nodes: %d }", p.SectorNodes)
}

// ParamFile is the parameter file name without extension.
func (p *Params) ParamFile() string {
	sum := sha256.Sum256([]byte(p.Identifier()))
	prefix := "empty-sector-update-" + p.TreeR().String()
	if p.Poseidon {
		prefix = "empty-sector-update-poseidon-" + p.TreeR().String()
	}
	return fmt.Sprintf("v%d-%s-%s", prooftypes.ParameterVersion, prefix, hex.EncodeToString(sum[:]))
}

// ForProof returns the parameters of a registered update proof type (StackedDrg{2KiB…64GiB}V1).
func ForProof(p abi.RegisteredUpdateProof) (*Params, error) {
	sizes := []uint64{prooftypes.SectorSize2KiB, prooftypes.SectorSize8MiB, prooftypes.SectorSize512MiB, prooftypes.SectorSize32GiB, prooftypes.SectorSize64GiB}
	if p < abi.RegisteredUpdateProof_StackedDrg2KiBV1 || int(p) >= len(sizes) {
		return nil, fmt.Errorf("unknown update proof type %d", int64(p))
	}
	return FromSectorSize(sizes[p])
}

// All returns the parameters of every registered update proof type (2KiB … 64GiB), followed by
// the Poseidon variants of 32GiB and 64GiB, which have published parameters too.
func All() []*Params {
	var out []*Params
	for p := abi.RegisteredUpdateProof_StackedDrg2KiBV1; p <= abi.RegisteredUpdateProof_StackedDrg64GiBV1; p++ {
		ps, err := ForProof(p)
		if err != nil {
			panic(err) // the table covers every registered type
		}
		out = append(out, ps)
	}
	for _, size := range []uint64{prooftypes.SectorSize32GiB, prooftypes.SectorSize64GiB} {
		ps, err := FromSectorSizePoseidon(size)
		if err != nil {
			panic(err)
		}
		out = append(out, ps)
	}
	return out
}
