// Package porep holds the native side of Filecoin's SDR PoRep as rust-fil-proofs computes it:
// the stacked DRG (bucket-sampled DRG parents and Feistel expander parents), replica IDs,
// challenge derivation (interactive, synthetic, non-interactive), labels, vanilla-proof
// verification and the public inputs of every partition circuit.
package porep

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"

	"golang.org/x/crypto/blake2b"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// Graph is StackedBucketGraph: 6 DRG parents from the same layer and 8 expander parents from the
// previous layer for every node.
type Graph struct {
	nodes      uint64
	version    prooftypes.APIVersion
	drgSeed    [28]byte
	keys       [4]uint64
	leftMask   uint64
	rightMask  uint64
	halfBits   uint
	identifier string
}

// NewGraph builds the graph of a seal proof type.
func NewGraph(p *prooftypes.SealProof) (*Graph, error) {
	return newGraph(p.Nodes(), p.PoRepID(), p.APIVersion, p.GraphIdentifier())
}

func newGraph(nodes uint64, porepID [32]byte, version prooftypes.APIVersion, identifier string) (*Graph, error) {
	if nodes < 2 || nodes > math.MaxUint32 {
		return nil, fmt.Errorf("graph of %d nodes is outside 2..2^32-1", nodes)
	}
	g := &Graph{nodes: nodes, version: version, identifier: identifier}
	drg := domainSeed("Filecoin_DRSample", porepID)
	copy(g.drgSeed[:], drg[:28])
	fs := domainSeed("Filecoin_Feistel", porepID)
	for i := range g.keys {
		g.keys[i] = binary.LittleEndian.Uint64(fs[8*i:])
	}
	// Feistel over the smallest power of 4 ≥ nodes·8 elements (at least 4).
	n := nodes * prooftypes.ExpansionDegree
	next, log4 := uint64(4), uint(1)
	for next < n {
		next *= 4
		log4++
	}
	g.halfBits = log4
	g.rightMask = 1<<log4 - 1
	g.leftMask = g.rightMask << log4
	return g, nil
}

func domainSeed(tag string, porepID [32]byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(tag))
	h.Write(porepID[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Nodes is the number of nodes.
func (g *Graph) Nodes() uint64 { return g.nodes }

// BaseParents writes the 6 DRG parents of node into out (bucket sampling with ChaCha8). Nodes 0
// and 1 have only parent 0. From API 1.1 the immediate predecessor comes first; in 1.0 last.
func (g *Graph) BaseParents(node uint32, out *[prooftypes.BaseDegree]uint32) {
	if node < 2 {
		*out = [prooftypes.BaseDegree]uint32{}
		return
	}
	var seed [32]byte
	copy(seed[:28], g.drgSeed[:])
	binary.LittleEndian.PutUint32(seed[28:], node)
	rng := newChachaRng(seed, 8)
	const mPrime = prooftypes.BaseDegree - 1
	meta := uint64(node) * mPrime
	nBuckets := uint64(math.Ceil(math.Log2(float64(meta))))
	first, pred := 1, 0
	if g.version == prooftypes.APIVersion1_0_0 {
		first, pred = 0, mPrime
	}
	for k := 0; k < mPrime; k++ {
		bucket := rng.nextU64()%nBuckets + 1
		largest := min(meta, uint64(1)<<bucket)
		smallest := max(2, largest>>1)
		distance := smallest + rng.nextU64()%(largest-smallest+1)
		parent := uint32((meta - distance) / mPrime)
		if parent == node {
			parent = node - 1
		}
		out[first+k] = parent
	}
	out[pred] = node - 1
}

// ExpParents writes the 8 expander parents of node into out (a 3-round Feistel permutation of
// node·8+i over nodes·8 elements, divided by 8).
func (g *Graph) ExpParents(node uint32, out *[prooftypes.ExpansionDegree]uint32) {
	n := g.nodes * prooftypes.ExpansionDegree
	for i := range out {
		a := uint64(node)*prooftypes.ExpansionDegree + uint64(i)
		u := g.feistelEncode(a)
		for u >= n {
			u = g.feistelEncode(u)
		}
		if g.version == prooftypes.APIVersion1_0_0 {
			// API 1.0 truncated the permuted index to 32 bits before dividing.
			out[i] = uint32(u) / prooftypes.ExpansionDegree
		} else {
			out[i] = uint32(u / prooftypes.ExpansionDegree)
		}
	}
}

// Parents writes the 6 DRG parents then the 8 expander parents of node.
func (g *Graph) Parents(node uint32, out *[prooftypes.Degree]uint32) {
	var b [prooftypes.BaseDegree]uint32
	var e [prooftypes.ExpansionDegree]uint32
	g.BaseParents(node, &b)
	g.ExpParents(node, &e)
	copy(out[:prooftypes.BaseDegree], b[:])
	copy(out[prooftypes.BaseDegree:], e[:])
}

func (g *Graph) feistelEncode(index uint64) uint64 {
	left := (index & g.leftMask) >> g.halfBits
	right := index & g.rightMask
	for r := 0; r < 3; r++ {
		left, right = right, left^g.feistelRound(right, g.keys[r])
	}
	return left<<g.halfBits | right
}

func (g *Graph) feistelRound(right, key uint64) uint64 {
	var data [16]byte
	binary.BigEndian.PutUint64(data[:8], right)
	binary.BigEndian.PutUint64(data[8:], key)
	h := blake2b.Sum512(data[:])
	return binary.BigEndian.Uint64(h[:8]) & g.rightMask
}

// ParentCacheName is the file stem rust-fil-proofs gives this graph's parent cache
// ("v28-sdr-parent-<hex>"), which keys its published parent-cache digests.
func (g *Graph) ParentCacheName() string {
	h := sha256.New()
	h.Write([]byte("poseidon_hasher"))
	h.Write([]byte(g.identifier))
	var b [8]byte
	for _, k := range g.keys {
		binary.LittleEndian.PutUint64(b[:], k)
		h.Write(b[:])
	}
	binary.LittleEndian.PutUint32(b[:4], uint32(g.nodes))
	h.Write(b[:4])
	return fmt.Sprintf("v%d-sdr-parent-%x", prooftypes.ParameterVersion, h.Sum(nil))
}

// ParentCacheDigest is the SHA-256 of the parent cache file (every node's 14 parents as u32 LE),
// the consistency digest rust-fil-proofs publishes in parent_cache.json.
func (g *Graph) ParentCacheDigest() [32]byte {
	h := sha256.New()
	buf := make([]byte, 0, 4096*prooftypes.Degree*4)
	var ps [prooftypes.Degree]uint32
	for node := uint64(0); node < g.nodes; node++ {
		g.Parents(uint32(node), &ps)
		for _, p := range ps {
			buf = binary.LittleEndian.AppendUint32(buf, p)
		}
		if len(buf) >= 4096*prooftypes.Degree*4 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	var out [32]byte
	h.Sum(out[:0])
	return out
}
