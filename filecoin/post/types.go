// Package post is Filecoin's fallback proof of spacetime (WinningPoSt and WindowPoSt) as
// rust-fil-proofs' storage-proofs-post and filecoin-proofs define it: the registered PoSt proof
// types and their sizes, strict decoding of the bincode vanilla proofs filecoin-ffi passes to
// Generate*PoStWithVanilla, sector and leaf challenges, public inputs, and the circuit.
//
// seal proof types live in filecoin/prooftypes; the PoSt proof types are defined here.
package post

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// ErrUnknownProof is returned for a RegisteredPoStProof snarkd does not know.
var ErrUnknownProof = errors.New("unknown PoSt proof type")

// Kind is Winning or Window PoSt.
type Kind int

// PoSt kinds.
const (
	Winning Kind = iota + 1
	Window
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Winning:
		return "winning"
	case Window:
		return "window"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Constants of filecoin-proofs/src/constants.rs.
const (
	WinningChallengeCount = 66 // WINNING_POST_CHALLENGE_COUNT
	WinningSectorCount    = 1  // WINNING_POST_SECTOR_COUNT
	WindowChallengeCount  = 10 // WINDOW_POST_CHALLENGE_COUNT
	ProofBytes            = 192
)

// WindowSectorCount is WINDOW_POST_SECTOR_COUNT: sectors per WindowPoSt partition.
var WindowSectorCount = map[uint64]int{
	prooftypes.SectorSize2KiB:   2,
	prooftypes.SectorSize8MiB:   2,
	prooftypes.SectorSize512MiB: 2,
	prooftypes.SectorSize32GiB:  2349,
	prooftypes.SectorSize64GiB:  2300,
}

// Proof describes one registered PoSt proof type. SectorCount and ChallengeCount are the
// PoStConfig values (what vanilla proofs hold per sector); CircuitSectors and
// CircuitChallenges are the circuit's parameters (winning_post_setup_params turns 1 sector × 66
// challenges into 66 circuit sectors × 1 challenge).
type Proof struct {
	Proof          abi.RegisteredPoStProof
	Name           string // go-state-types name
	Kind           Kind
	SectorSize     uint64
	APIVersion     prooftypes.APIVersion
	SectorCount    int
	ChallengeCount int
	Tree           prooftypes.TreeShape
}

// Nodes is the number of 32-byte leaves of a sector.
func (p *Proof) Nodes() uint64 { return p.SectorSize / prooftypes.NodeSize }

// CircuitSectors is the number of sectors one partition circuit proves.
func (p *Proof) CircuitSectors() int {
	if p.Kind == Winning {
		return p.ChallengeCount / p.SectorCount
	}
	return p.SectorCount
}

// CircuitChallenges is the number of challenges per circuit sector.
func (p *Proof) CircuitChallenges() int {
	if p.Kind == Winning {
		return 1
	}
	return p.ChallengeCount
}

// PublicInputs is the number of public inputs of the circuit, ONE included.
func (p *Proof) PublicInputs() int { return 1 + p.CircuitSectors()*(1+p.CircuitChallenges()) }

// BaseLevels is the number of base-tree levels of tree R.
func (p *Proof) BaseLevels() int {
	n, err := p.Tree.BaseLevels(p.Nodes())
	if err != nil {
		panic(err) // the table below only holds consistent shapes
	}
	return n
}

// Identifier is the parameter-set identifier whose SHA-256 names the parameter files.
func (p *Proof) Identifier() string {
	return fmt.Sprintf("FallbackPoSt::PublicParams{sector_size: %d, challenge_count: %d, sector_count: %d}",
		p.SectorSize, p.CircuitChallenges(), p.CircuitSectors())
}

// CachePrefix is FallbackPoStCompound's parameter cache prefix.
func (p *Proof) CachePrefix() string { return "proof-of-spacetime-fallback-" + p.Tree.String() }

// ParamFile is the parameter file name without extension (.params / .vk).
func (p *Proof) ParamFile() string {
	sum := sha256.Sum256([]byte(p.Identifier()))
	return fmt.Sprintf("v%d-%s-%s", prooftypes.ParameterVersion, p.CachePrefix(), hex.EncodeToString(sum[:]))
}

var sizes = []struct {
	size  uint64
	label string
	tree  prooftypes.TreeShape
}{
	{prooftypes.SectorSize2KiB, "2KiB", prooftypes.TreeShape{Base: 8}},
	{prooftypes.SectorSize8MiB, "8MiB", prooftypes.TreeShape{Base: 8}},
	{prooftypes.SectorSize512MiB, "512MiB", prooftypes.TreeShape{Base: 8}},
	{prooftypes.SectorSize32GiB, "32GiB", prooftypes.TreeShape{Base: 8, Sub: 8}},
	{prooftypes.SectorSize64GiB, "64GiB", prooftypes.TreeShape{Base: 8, Sub: 8, Top: 2}},
}

var table = func() map[abi.RegisteredPoStProof]*Proof {
	m := map[abi.RegisteredPoStProof]*Proof{}
	for i, s := range sizes {
		win := abi.RegisteredPoStProof(int64(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1) + int64(i))
		m[win] = &Proof{Proof: win, Name: "StackedDrgWinning" + s.label + "V1", Kind: Winning, SectorSize: s.size,
			APIVersion: prooftypes.APIVersion1_0_0, SectorCount: WinningSectorCount, ChallengeCount: WinningChallengeCount, Tree: s.tree}
		w1 := abi.RegisteredPoStProof(int64(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1) + int64(i))
		m[w1] = &Proof{Proof: w1, Name: "StackedDrgWindow" + s.label + "V1", Kind: Window, SectorSize: s.size,
			APIVersion: prooftypes.APIVersion1_0_0, SectorCount: WindowSectorCount[s.size], ChallengeCount: WindowChallengeCount, Tree: s.tree}
		// go-state-types' Window…V1_1 is filecoin-proofs-api's Window…V1_2 (API 1.2.0: challenge
		// indices restart at 0 for every sector).
		w11 := abi.RegisteredPoStProof(int64(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1) + int64(i))
		m[w11] = &Proof{Proof: w11, Name: "StackedDrgWindow" + s.label + "V1_1", Kind: Window, SectorSize: s.size,
			APIVersion: prooftypes.APIVersion1_2_0, SectorCount: WindowSectorCount[s.size], ChallengeCount: WindowChallengeCount, Tree: s.tree}
	}
	return m
}()

// Lookup returns the description of a registered PoSt proof type.
func Lookup(p abi.RegisteredPoStProof) (*Proof, error) {
	if d, ok := table[p]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownProof, int64(p))
}

// All returns every PoSt proof type in enum order.
func All() []*Proof {
	out := make([]*Proof, 0, len(table))
	for v := abi.RegisteredPoStProof_StackedDrgWinning2KiBV1; v <= abi.RegisteredPoStProof_StackedDrgWindow64GiBV1_1; v++ {
		if d, ok := table[v]; ok {
			out = append(out, d)
		}
	}
	return out
}
