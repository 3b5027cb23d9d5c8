// Package prooftypes describes the Filecoin seal (PoRep) proof types snarkd proves: for each
// go-state-types RegisteredSealProof its sector size, partitions, challenges, layers, tree shapes,
// API version, PoRep ID and the parameter files its circuit uses, as rust-fil-proofs defines them.
package prooftypes

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"

	"github.com/filecoin-project/go-state-types/abi"
)

// Sector sizes with published parameters.
const (
	SectorSize2KiB   uint64 = 1 << 11
	SectorSize8MiB   uint64 = 1 << 23
	SectorSize512MiB uint64 = 1 << 29
	SectorSize32GiB  uint64 = 1 << 35
	SectorSize64GiB  uint64 = 1 << 36
)

// Graph and proof constants shared by every SDR PoRep.
const (
	NodeSize           = 32 // bytes per node (one field element)
	BaseDegree         = 6  // DRG parents
	ExpansionDegree    = 8  // expander parents
	Degree             = BaseDegree + ExpansionDegree
	TotalParents       = 37 // parent labels hashed into one label
	ProofBytesPerPart  = 192
	MaxChallengesPerPt = 18 // MAX_CHALLENGES_PER_PARTITION
	ParameterVersion   = 28 // the "v28-" prefix of parameter file names
)

// APIVersion is the rust-fil-proofs API version a proof type runs under.
type APIVersion int

// API versions; V1_0_0 uses the legacy DRG parent order and expander truncation.
const (
	APIVersion1_0_0 APIVersion = iota
	APIVersion1_1_0
	APIVersion1_2_0
)

// String returns "1.0.0", "1.1.0" or "1.2.0".
func (v APIVersion) String() string {
	switch v {
	case APIVersion1_0_0:
		return "1.0.0"
	case APIVersion1_1_0:
		return "1.1.0"
	case APIVersion1_2_0:
		return "1.2.0"
	}
	return fmt.Sprintf("APIVersion(%d)", int(v))
}

// Feature is the PoRep variant: interactive, synthetic or non-interactive.
type Feature int

// Features of a seal proof type.
const (
	Interactive Feature = iota
	Synthetic
	NonInteractive
)

// String names the feature.
func (f Feature) String() string {
	switch f {
	case Interactive:
		return "interactive"
	case Synthetic:
		return "synthetic"
	case NonInteractive:
		return "non-interactive"
	}
	return fmt.Sprintf("Feature(%d)", int(f))
}

// TreeShape gives the arities of a Poseidon tree R / tree C: base arity, sub-tree arity and
// top-tree arity (0 when that level is absent), as merkletree's LCTree<H, Base, Sub, Top>.
type TreeShape struct {
	Base, Sub, Top int
}

// String is rust-fil-proofs' Tree::display(), e.g. "merkletree-poseidon_hasher-8-8-0".
func (t TreeShape) String() string {
	return fmt.Sprintf("merkletree-poseidon_hasher-%d-%d-%d", t.Base, t.Sub, t.Top)
}

// BaseTreeCount is the number of base trees (1 without sub-trees).
func (t TreeShape) BaseTreeCount() int {
	n := 1
	if t.Sub > 0 {
		n *= t.Sub
	}
	if t.Top > 0 {
		n *= t.Top
	}
	return n
}

// BaseLevels returns the number of base-tree levels (hashing steps) of a tree with the given
// number of leaves, or an error if the leaves do not split into full base trees of this arity.
func (t TreeShape) BaseLevels(leaves uint64) (int, error) {
	if t.Base < 2 || t.Base&(t.Base-1) != 0 {
		return 0, fmt.Errorf("tree base arity %d is not a power of two ≥ 2", t.Base)
	}
	per := leaves / uint64(t.BaseTreeCount())
	if per*uint64(t.BaseTreeCount()) != leaves || per < 2 {
		return 0, fmt.Errorf("%d leaves do not split into %d base trees", leaves, t.BaseTreeCount())
	}
	levels := 0
	for per > 1 {
		if per%uint64(t.Base) != 0 {
			return 0, fmt.Errorf("%d leaves per base tree are not a power of %d", leaves/uint64(t.BaseTreeCount()), t.Base)
		}
		per /= uint64(t.Base)
		levels++
	}
	return levels, nil
}

// PathBits is the number of challenge bits a PoR in this tree consumes (log2 of the leaves).
func (t TreeShape) PathBits(leaves uint64) (int, error) {
	levels, err := t.BaseLevels(leaves)
	if err != nil {
		return 0, err
	}
	return levels*log2(t.Base) + log2(t.Sub) + log2(t.Top), nil
}

func log2(a int) int {
	n := 0
	for a > 1 {
		a >>= 1
		n++
	}
	return n
}

// SealProof is the full description of one registered seal proof type.
type SealProof struct {
	Proof       abi.RegisteredSealProof
	Name        string // filecoin-proofs-api enum name, e.g. "StackedDrg32GiBV1_1"
	VanillaName string // VanillaSealProof enum key, e.g. "StackedDrg32GiBV1" (no version suffix)
	SectorSize  uint64
	APIVersion  APIVersion
	Feature     Feature
	// Partitions is the number of Groth16 proofs (circuits) per sector.
	Partitions int
	// MinChallenges is the total challenge count the partitions must cover.
	MinChallenges int
	// ChallengesPerPartition is ceil(MinChallenges / Partitions).
	ChallengesPerPartition int
	Layers                 int
	Tree                   TreeShape // tree R and tree C
}

// Nodes is the number of 32-byte nodes in the sector.
func (s *SealProof) Nodes() uint64 { return s.SectorSize / NodeSize }

// TotalChallenges is Partitions × ChallengesPerPartition (what the vanilla proofs hold).
func (s *SealProof) TotalChallenges() int { return s.Partitions * s.ChallengesPerPartition }

// PoRepID is the 32-byte porep_id: the registered proof id (u64 LE) then the nonce 0 (u64 LE).
func (s *SealProof) PoRepID() [32]byte {
	var id [32]byte
	binary.LittleEndian.PutUint64(id[0:8], uint64(s.Proof))
	return id
}

// ProofBytes is the length of the C2 output: 192 bytes per partition. For non-interactive
// proof types this is the length of the concatenated circuit proofs (before aggregation).
func (s *SealProof) ProofBytes() int { return s.Partitions * ProofBytesPerPart }

// PublicInputs is the number of public inputs of one partition circuit, ONE included.
func (s *SealProof) PublicInputs() int { return 4 + 18*s.ChallengesPerPartition }

// DRGIdentifier is drgraph::BucketGraph's identifier.
func (s *SealProof) drgIdentifier() string {
	return fmt.Sprintf("drgraph::BucketGraph{size: %d; degree: %d; hasher: poseidon_hasher}", s.Nodes(), BaseDegree)
}

// GraphIdentifier is StackedGraph's identifier (also hashed into the parent cache name).
func (s *SealProof) GraphIdentifier() string {
	return fmt.Sprintf("stacked_graph::StackedGraph{expansion_degree: %d base_graph: %s }", ExpansionDegree, s.drgIdentifier())
}

// Identifier is the parameter-set identifier whose SHA-256 names the parameter files.
func (s *SealProof) Identifier() string {
	return fmt.Sprintf("layered_drgporep::PublicParams{ graph: %s, challenges: LayerChallenges { layers: %d, max_count: %d }, tree: %s }",
		s.GraphIdentifier(), s.Layers, s.ChallengesPerPartition, s.Tree)
}

// CachePrefix is the circuit's parameter cache prefix.
func (s *SealProof) CachePrefix() string {
	return "stacked-proof-of-replication-" + s.Tree.String() + "-sha256_hasher"
}

// CacheID is the parameter file stem without extension:
// "v28-stacked-proof-of-replication-…-sha256_hasher-<sha256(identifier)>".
func (s *SealProof) CacheID() string {
	h := sha256.Sum256([]byte(s.Identifier()))
	return fmt.Sprintf("v%d-%s-%s", ParameterVersion, s.CachePrefix(), hex.EncodeToString(h[:]))
}

// ParamsFile is the .params file name in the parameter directory.
func (s *SealProof) ParamsFile() string { return s.CacheID() + ".params" }

// VKFile is the .vk file name in the parameter directory.
func (s *SealProof) VKFile() string { return s.CacheID() + ".vk" }

// MetaFile is the .meta file name in the parameter directory.
func (s *SealProof) MetaFile() string { return s.CacheID() + ".meta" }

// ErrUnknownProof is returned for proof types snarkd does not know.
var ErrUnknownProof = errors.New("unknown seal proof type")

type sizeInfo struct {
	size                         uint64
	label                        string
	partitions, minChallenges    int
	niPartitions, niMinChallenge int
	layers                       int
	tree                         TreeShape
}

var sizes = []sizeInfo{
	{SectorSize2KiB, "2KiB", 1, 2, 13, 26, 2, TreeShape{8, 0, 0}},
	{SectorSize8MiB, "8MiB", 1, 2, 13, 26, 2, TreeShape{8, 0, 0}},
	{SectorSize512MiB, "512MiB", 1, 2, 13, 26, 2, TreeShape{8, 0, 0}},
	{SectorSize32GiB, "32GiB", 10, 176, 126, 2253, 11, TreeShape{8, 8, 0}},
	{SectorSize64GiB, "64GiB", 10, 176, 126, 2253, 11, TreeShape{8, 8, 2}},
}

var (
	byProof = map[abi.RegisteredSealProof]*SealProof{}
	byName  = map[string]*SealProof{}
)

func init() {
	for i, sz := range sizes {
		variants := []struct {
			base    abi.RegisteredSealProof
			suffix  string
			version APIVersion
			feature Feature
		}{
			{abi.RegisteredSealProof_StackedDrg2KiBV1, "V1", APIVersion1_0_0, Interactive},
			{abi.RegisteredSealProof_StackedDrg2KiBV1_1, "V1_1", APIVersion1_1_0, Interactive},
			// filecoin-proofs-api runs the synthetic types under API 1.2 despite their name.
			{abi.RegisteredSealProof_StackedDrg2KiBV1_1_Feat_SyntheticPoRep, "V1_1_Feat_SyntheticPoRep", APIVersion1_2_0, Synthetic},
			{abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep, "V1_2_Feat_NonInteractivePoRep", APIVersion1_2_0, NonInteractive},
		}
		for _, v := range variants {
			p := &SealProof{
				Proof:       v.base + abi.RegisteredSealProof(i),
				Name:        "StackedDrg" + sz.label + v.suffix,
				VanillaName: "StackedDrg" + sz.label + "V1",
				SectorSize:  sz.size,
				APIVersion:  v.version,
				Feature:     v.feature,
				Layers:      sz.layers,
				Tree:        sz.tree,
			}
			if v.feature == NonInteractive {
				p.Partitions, p.MinChallenges = sz.niPartitions, sz.niMinChallenge
			} else {
				p.Partitions, p.MinChallenges = sz.partitions, sz.minChallenges
			}
			p.ChallengesPerPartition = (p.MinChallenges + p.Partitions - 1) / p.Partitions
			byProof[p.Proof] = p
			byName[p.Name] = p
		}
	}
}

// Lookup returns the description of a registered seal proof type.
func Lookup(p abi.RegisteredSealProof) (*SealProof, error) {
	if s, ok := byProof[p]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownProof, int64(p))
}

// LookupName returns the description of a proof type by its filecoin-proofs-api name
// ("StackedDrg2KiBV1_1"), the form C1 outputs carry.
func LookupName(name string) (*SealProof, error) {
	if s, ok := byName[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownProof, name)
}

// All returns every known seal proof type in enum order.
func All() []*SealProof {
	out := make([]*SealProof, 0, len(byProof))
	for _, p := range byProof {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Proof < out[j].Proof })
	return out
}

// ForSectorSize returns the V1_1 (current interactive) proof type of a sector size.
func ForSectorSize(size uint64) (*SealProof, error) {
	for _, p := range byProof {
		if p.SectorSize == size && p.APIVersion == APIVersion1_1_0 && p.Feature == Interactive {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: no seal proof for sector size %d", ErrUnknownProof, size)
}

// SectorSizeLabel formats a sector size as "2KiB", "32GiB", ….
func SectorSizeLabel(size uint64) string {
	for _, s := range sizes {
		if s.size == size {
			return s.label
		}
	}
	return fmt.Sprintf("%dB", size)
}

// ProverID is filecoin-ffi's prover_id for a miner actor: the payload of its ID address
// (the actor id as an unsigned LEB128 varint), zero-padded to 32 bytes.
func ProverID(miner abi.ActorID) [32]byte {
	var id [32]byte
	binary.PutUvarint(id[:], uint64(miner))
	return id
}
