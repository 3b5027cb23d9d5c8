package porep

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/chacha20"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// ReplicaID is generate_replica_id: SHA-256(prover_id ‖ u64be(sector) ‖ ticket ‖ comm_d ‖
// porep_id) with the top two bits of byte 31 cleared, so it is a canonical field element.
func ReplicaID(proverID [32]byte, sector uint64, ticket, commD, porepID [32]byte) [32]byte {
	h := sha256.New()
	h.Write(proverID[:])
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], sector)
	h.Write(b[:])
	h.Write(ticket[:])
	h.Write(commD[:])
	h.Write(porepID[:])
	var out [32]byte
	h.Sum(out[:0])
	out[31] &= 0x3f
	return out
}

// challengeFromLE maps a 256-bit little-endian number to a node in 1..nodes−1 (node 0 is never
// challenged), as bigint_to_challenge does.
func challengeFromLE(b []byte, nodes uint64) uint64 {
	m := nodes - 1
	var r uint64
	for i := len(b) - 1; i >= 0; i-- {
		r = (r<<8 | uint64(b[i])) % m
	}
	return r + 1
}

// InteractiveChallenges returns partition k's challenges: for j = k·n + i,
// (LE(SHA-256(replica_id ‖ seed ‖ u32le(j))) mod (nodes − 1)) + 1.
func InteractiveChallenges(nodes uint64, replicaID, seed [32]byte, perPartition, k int) []uint64 {
	out := make([]uint64, perPartition)
	for i := range out {
		h := sha256.New()
		h.Write(replicaID[:])
		h.Write(seed[:])
		var j [4]byte
		binary.LittleEndian.PutUint32(j[:], uint32(perPartition*k+i))
		h.Write(j[:])
		out[i] = challengeFromLE(h.Sum(nil), nodes)
	}
	return out
}

// NonInteractiveChallenges is InteractiveChallenges with the NI-PoRep tag prefixed and comm_r in
// place of the seed.
func NonInteractiveChallenges(nodes uint64, replicaID, commR [32]byte, perPartition, k int) []uint64 {
	out := make([]uint64, perPartition)
	for i := range out {
		h := sha256.New()
		h.Write([]byte("filecoin.io|PoRep|1|NonInteractive|1"))
		h.Write(replicaID[:])
		h.Write(commR[:])
		var j [4]byte
		binary.LittleEndian.PutUint32(j[:], uint32(perPartition*k+i))
		h.Write(j[:])
		out[i] = challengeFromLE(h.Sum(nil), nodes)
	}
	return out
}

// Synthetic PoRep: a ChaCha20 stream keyed by Blake2b-256(replica_id ‖ comm_r) generates the
// synthetic challenge set; a second stream keyed by Blake2b-256(replica_id ‖ seed) picks which
// synthetic challenges are the PoRep challenges.
const (
	defaultSynthChallenges = 1 << 18
	synthNonce             = "synth-porep\x00"
)

func synthStream(keyTag string, replicaID, other [32]byte, offset uint64, n int) ([]byte, error) {
	h, err := blake2b.New(32, []byte(keyTag))
	if err != nil {
		return nil, err
	}
	h.Write(replicaID[:])
	h.Write(other[:])
	c, err := chacha20.NewUnauthenticatedCipher(h.Sum(nil), []byte(synthNonce))
	if err != nil {
		return nil, err
	}
	if offset/64 > 1<<32-1 {
		return nil, fmt.Errorf("synthetic stream offset %d beyond the keystream", offset)
	}
	c.SetCounter(uint32(offset / 64))
	skip := int(offset % 64)
	buf := make([]byte, skip+n)
	c.XORKeyStream(buf, buf)
	return buf[skip:], nil
}

// SynthGenerator produces the synthetic challenges of a replica.
type SynthGenerator struct {
	nodes     uint64
	count     uint64
	replicaID [32]byte
	commR     [32]byte
}

// NewSynthGenerator returns the generator of min(nodes, 2^18) synthetic challenges.
func NewSynthGenerator(nodes uint64, replicaID, commR [32]byte) *SynthGenerator {
	return newSynthGenerator(nodes, replicaID, commR, min(nodes, defaultSynthChallenges))
}

func newSynthGenerator(nodes uint64, replicaID, commR [32]byte, count uint64) *SynthGenerator {
	return &SynthGenerator{nodes: nodes, count: count, replicaID: replicaID, commR: commR}
}

// Challenge returns synthetic challenge i.
func (s *SynthGenerator) Challenge(i uint64) (uint64, error) {
	if i >= s.count {
		return 0, fmt.Errorf("synthetic challenge %d of %d", i, s.count)
	}
	b, err := synthStream("filecoin.io|PoRep|1|Synthetic|1|Generation", s.replicaID, s.commR, i*32, 32)
	if err != nil {
		return 0, err
	}
	return challengeFromLE(b, s.nodes), nil
}

// PartitionIndexes returns which synthetic challenges are partition k's PoRep challenges.
func (s *SynthGenerator) PartitionIndexes(seed [32]byte, perPartition, k int) ([]uint64, error) {
	b, err := synthStream("filecoin.io|PoRep|1|Synthetic|1|Selection", s.replicaID, seed, uint64(k*perPartition)*4, perPartition*4)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, perPartition)
	for i := range out {
		out[i] = uint64(binary.LittleEndian.Uint32(b[4*i:])) % s.count
	}
	return out, nil
}

// PartitionChallenges returns partition k's PoRep challenges selected from the synthetic ones.
func (s *SynthGenerator) PartitionChallenges(seed [32]byte, perPartition, k int) ([]uint64, error) {
	idx, err := s.PartitionIndexes(seed, perPartition, k)
	if err != nil {
		return nil, err
	}
	for i := range idx {
		if idx[i], err = s.Challenge(idx[i]); err != nil {
			return nil, err
		}
	}
	return idx, nil
}

// Challenges returns partition k's challenges for the proof type's challenge scheme.
func Challenges(p *prooftypes.SealProof, replicaID, commR, seed [32]byte, k int) ([]uint64, error) {
	if k < 0 || k >= p.Partitions {
		return nil, fmt.Errorf("partition %d of %d", k, p.Partitions)
	}
	switch p.Feature {
	case prooftypes.Interactive:
		return InteractiveChallenges(p.Nodes(), replicaID, seed, p.ChallengesPerPartition, k), nil
	case prooftypes.NonInteractive:
		return NonInteractiveChallenges(p.Nodes(), replicaID, commR, p.ChallengesPerPartition, k), nil
	case prooftypes.Synthetic:
		return NewSynthGenerator(p.Nodes(), replicaID, commR).PartitionChallenges(seed, p.ChallengesPerPartition, k)
	}
	return nil, fmt.Errorf("unknown PoRep feature %v", p.Feature)
}
