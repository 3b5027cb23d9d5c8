package post

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/merkle"
	"github.com/snarkd/snarkd/filecoin/post/bincode"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// ErrInvalidVanilla is wrapped by every error of a vanilla proof that decodes but does not prove
// what it must (wrong challenge, broken path, comm_r mismatch).
var ErrInvalidVanilla = errors.New("invalid vanilla proof")

// SectorProof is storage-proofs-post's SectorProof: one inclusion proof in tree R per
// challenge, plus comm_c and comm_r_last.
type SectorProof struct {
	InclusionProofs []c1.MerkleProof
	CommC           c1.Domain
	CommRLast       c1.Domain
}

// SectorVanilla is filecoin-proofs' FallbackPoStSectorProof, the bytes
// GenerateSingleVanillaProof returns: sector number, comm_r and the vanilla proof of that
// sector (a fallback Proof with exactly one SectorProof).
type SectorVanilla struct {
	SectorID uint64
	CommR    c1.Domain
	Sectors  []SectorProof
}

// DecodeSectorVanilla decodes and structurally validates one bincode FallbackPoStSectorProof
// for proof type p: exactly one sector proof with p.ChallengeCount inclusion proofs of the
// tree-R shape, canonical field elements, no trailing bytes. It does not check the hashes or
// the challenges; VerifySector does.
func DecodeSectorVanilla(p *Proof, b []byte) (*SectorVanilla, error) {
	r := bincode.NewReader(b)
	var v SectorVanilla
	var err error
	if v.SectorID, err = r.U64("sector_id"); err != nil {
		return nil, err
	}
	if v.CommR, err = r.Domain("comm_r"); err != nil {
		return nil, err
	}
	n, err := r.Len("vanilla_proof.sectors", 8+64)
	if err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, r.Errorf("vanilla_proof.sectors", "%d sector proofs, a single-sector vanilla proof has 1", n)
	}
	levels := p.BaseLevels()
	for s := 0; s < n; s++ {
		f := fmt.Sprintf("vanilla_proof.sectors[%d]", s)
		m, err := r.Len(f+".inclusion_proofs", 4+64)
		if err != nil {
			return nil, err
		}
		if m != p.ChallengeCount {
			return nil, r.Errorf(f+".inclusion_proofs", "%d inclusion proofs, %s has %d challenges per sector", m, p.Name, p.ChallengeCount)
		}
		sp := SectorProof{InclusionProofs: make([]c1.MerkleProof, m)}
		for i := range sp.InclusionProofs {
			if sp.InclusionProofs[i], err = r.MerkleProof(fmt.Sprintf("%s.inclusion_proofs[%d]", f, i), p.Tree, levels); err != nil {
				return nil, err
			}
		}
		if sp.CommC, err = r.Domain(f + ".comm_c"); err != nil {
			return nil, err
		}
		if sp.CommRLast, err = r.Domain(f + ".comm_r_last"); err != nil {
			return nil, err
		}
		v.Sectors = append(v.Sectors, sp)
	}
	if err := r.End("vanilla proof"); err != nil {
		return nil, err
	}
	return &v, nil
}

// Encode writes v in bincode, byte for byte what rust-fil-proofs serializes.
func (v *SectorVanilla) Encode() ([]byte, error) {
	var w bincode.Writer
	w.U64(v.SectorID)
	w.Domain(v.CommR)
	w.U64(uint64(len(v.Sectors)))
	for i := range v.Sectors {
		s := &v.Sectors[i]
		w.U64(uint64(len(s.InclusionProofs)))
		for j := range s.InclusionProofs {
			if err := w.MerkleProof(&s.InclusionProofs[j]); err != nil {
				return nil, err
			}
		}
		w.Domain(s.CommC)
		w.Domain(s.CommRLast)
	}
	return w.B, nil
}

// LeafChallenge is generate_leaf_challenge: the leaf of a sector challenged by challenge index
// idx, u64le(sha256(randomness ‖ u64le(sector) ‖ u64le(idx))[0..8]) mod nodes.
func LeafChallenge(randomness [32]byte, sector uint64, idx uint64, nodes uint64) uint64 {
	var buf [48]byte
	copy(buf[:32], randomness[:])
	binary.LittleEndian.PutUint64(buf[32:40], sector)
	binary.LittleEndian.PutUint64(buf[40:48], idx)
	h := sha256.Sum256(buf[:])
	return binary.LittleEndian.Uint64(h[:8]) % nodes
}

// ChallengeIndex is get_challenge_index: the challenge index of challenge n of the sector at
// position sectorIndex (across partitions) in the proof.
func (p *Proof) ChallengeIndex(sectorIndex, challengeCount, n int) uint64 {
	if p.APIVersion == prooftypes.APIVersion1_2_0 {
		return uint64(n)
	}
	return uint64(sectorIndex*challengeCount + n)
}

// SectorChallenges is generate_fallback_sector_challenges for one sector: the leaves that
// GenerateSingleVanillaProof must open, given the sector's position in the proof (its index in
// the sorted, deduplicated sector list; 0 for WinningPoSt).
func (p *Proof) SectorChallenges(randomness [32]byte, sector uint64, sectorIndex int) []uint64 {
	out := make([]uint64, p.ChallengeCount)
	for n := range out {
		out[n] = LeafChallenge(randomness, sector, p.ChallengeIndex(sectorIndex, p.ChallengeCount, n), p.Nodes())
	}
	return out
}

// WinningSectorChallenge is generate_sector_challenge: which of sectorSetLen sectors challenge n
// of a WinningPoSt picks, u64le(sha256(prover_id ‖ randomness ‖ u64le(n))[0..8]) mod len.
func WinningSectorChallenge(randomness, proverID [32]byte, n int, sectorSetLen uint64) (uint64, error) {
	if sectorSetLen == 0 {
		return 0, errors.New("empty sector set")
	}
	var buf [72]byte
	copy(buf[:32], proverID[:])
	copy(buf[32:64], randomness[:])
	binary.LittleEndian.PutUint64(buf[64:], uint64(n))
	h := sha256.Sum256(buf[:])
	return binary.LittleEndian.Uint64(h[:8]) % sectorSetLen, nil
}

// VerifySector checks a decoded vanilla proof as FallbackPoSt::verify does, for the sector at
// position sectorIndex: comm_r = Poseidon(comm_c, comm_r_last), every inclusion proof has root
// comm_r_last, hashes to it and opens exactly the challenged leaf.
func (p *Proof) VerifySector(v *SectorVanilla, randomness [32]byte, sectorIndex int) error {
	if err := p.sectorShape(v, randomness, sectorIndex); err != nil {
		return err
	}
	return sectorHashes(v)
}

// sectorShape is the part of VerifySector that hashes nothing: one sector proof, ChallengeCount
// inclusion proofs, each with comm_r_last as its root and opening its challenged leaf.
func (p *Proof) sectorShape(v *SectorVanilla, randomness [32]byte, sectorIndex int) error {
	if len(v.Sectors) != 1 {
		return fmt.Errorf("%w: sector %d: %d sector proofs", ErrInvalidVanilla, v.SectorID, len(v.Sectors))
	}
	s := &v.Sectors[0]
	if len(s.InclusionProofs) != p.ChallengeCount {
		return fmt.Errorf("%w: sector %d: %d inclusion proofs, want %d", ErrInvalidVanilla, v.SectorID, len(s.InclusionProofs), p.ChallengeCount)
	}
	want := p.SectorChallenges(randomness, v.SectorID, sectorIndex)
	for i := range s.InclusionProofs {
		ip := &s.InclusionProofs[i]
		if ip.Root != s.CommRLast {
			return fmt.Errorf("%w: sector %d: inclusion proof %d: root is not comm_r_last", ErrInvalidVanilla, v.SectorID, i)
		}
		if got := bincode.PathIndex(ip, p.Tree); got != want[i] {
			return fmt.Errorf("%w: sector %d: inclusion proof %d opens leaf %d, challenge is leaf %d", ErrInvalidVanilla, v.SectorID, i, got, want[i])
		}
	}
	return nil
}

// sectorHashes is the part of VerifySector that hashes: Poseidon(comm_c, comm_r_last) is
// comm_r, and every inclusion path hashes to its root. The proof's shape is checked already.
func sectorHashes(v *SectorVanilla) error {
	s := &v.Sectors[0]
	h, err := merkle.Poseidon([]c1.Domain{s.CommC, s.CommRLast})
	if err != nil {
		return err
	}
	if h != v.CommR {
		return fmt.Errorf("%w: sector %d: Poseidon(comm_c, comm_r_last) is not comm_r", ErrInvalidVanilla, v.SectorID)
	}
	for i := range s.InclusionProofs {
		if err := merkle.VerifyProof(&s.InclusionProofs[i], merkle.Poseidon); err != nil {
			return fmt.Errorf("%w: sector %d: inclusion proof %d: %v", ErrInvalidVanilla, v.SectorID, i, err)
		}
	}
	return nil
}

// FallbackChallenges is generate_fallback_sector_challenges (filecoin-ffi's
// GeneratePoStFallbackSectorChallenges): the challenged leaves of each sector, by sector
// number. WindowPoSt sectors are challenged by their position in the list (partitions are
// consecutive runs of SectorCount); WinningPoSt challenges only the first sector, as Rust does.
func (p *Proof) FallbackChallenges(randomness [32]byte, sectors []uint64) (map[uint64][]uint64, error) {
	if len(sectors) == 0 {
		return nil, errors.New("no sectors to challenge")
	}
	if err := checkSafe("randomness", randomness); err != nil {
		return nil, err
	}
	if p.Kind == Winning {
		sectors = sectors[:1]
	}
	out := make(map[uint64][]uint64, len(sectors))
	for i, s := range sectors {
		if _, dup := out[s]; dup {
			return nil, fmt.Errorf("%w: sector %d", ErrDuplicateSector, s)
		}
		out[s] = p.SectorChallenges(randomness, s, i)
	}
	return out, nil
}
