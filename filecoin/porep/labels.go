package porep

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// labelPrefix writes replica_id ‖ u32be(layer) ‖ u64be(node) ‖ 20 zero bytes (one 64-byte block).
func labelPrefix(h hash.Hash, replicaID *[32]byte, layer uint32, node uint64) {
	var b [64]byte
	copy(b[:32], replicaID[:])
	binary.BigEndian.PutUint32(b[32:], layer)
	binary.BigEndian.PutUint64(b[36:], node)
	h.Write(b[:])
}

func finishLabel(h hash.Hash) c1.Domain {
	var out c1.Domain
	h.Sum(out[:0])
	out[31] &= 0x3f
	return out
}

// Label computes an SDR label from its 37 (already repeated) parent labels:
// SHA-256(replica_id ‖ u32be(layer) ‖ u64be(node) ‖ 0²⁰ ‖ parents) with byte 31 masked.
func Label(replicaID [32]byte, layer uint32, node uint64, parents []c1.Domain) c1.Domain {
	h := sha256.New()
	labelPrefix(h, &replicaID, layer, node)
	for i := range parents {
		h.Write(parents[i][:])
	}
	return finishLabel(h)
}

// labelNodeZero is the label of node 0, which has no parents: only the 64-byte prefix is hashed.
func labelNodeZero(replicaID [32]byte, layer uint32) c1.Domain {
	h := sha256.New()
	labelPrefix(h, &replicaID, layer, 0)
	return finishLabel(h)
}

// RepeatParents expands the parents of one label to the 37 hashed: layer 1 hashes its 6 DRG
// parents six times then the first again; later layers hash the 14 parents (6 DRG from the same
// layer, 8 expander from the previous one) twice, then the first 9.
func RepeatParents(parents []c1.Domain) []c1.Domain {
	out := make([]c1.Domain, prooftypes.TotalParents)
	for i := range out {
		out[i] = parents[i%len(parents)]
	}
	return out
}

// Encode is the replica node: data + key in the field.
func Encode(data, key c1.Domain) (c1.Domain, error) {
	d, err := data.Element()
	if err != nil {
		return c1.Domain{}, err
	}
	k, err := key.Element()
	if err != nil {
		return c1.Domain{}, err
	}
	var e fr.Element
	e.Add(&d, &k)
	return c1.DomainOf(&e), nil
}

// Labels computes every layer's labels of a sector (SDR), layer by layer: layer 1 from the 6 DRG
// parents, later layers also from the 8 expander parents in the previous layer. It holds all
// layers in memory (nodes × layers × 32 bytes), so it is meant for small sectors.
func Labels(g *Graph, replicaID [32]byte, layers int) [][]c1.Domain {
	n := g.Nodes()
	out := make([][]c1.Domain, layers)
	var base [prooftypes.BaseDegree]uint32
	var exp [prooftypes.ExpansionDegree]uint32
	parents := make([]c1.Domain, 0, prooftypes.Degree)
	for l := range layers {
		layer := uint32(l + 1)
		cur := make([]c1.Domain, n)
		cur[0] = labelNodeZero(replicaID, layer)
		for node := uint64(1); node < n; node++ {
			g.BaseParents(uint32(node), &base)
			parents = parents[:0]
			for _, p := range base {
				parents = append(parents, cur[p])
			}
			if l > 0 {
				g.ExpParents(uint32(node), &exp)
				for _, p := range exp {
					parents = append(parents, out[l-1][p])
				}
			}
			h := sha256.New()
			labelPrefix(h, &replicaID, layer, node)
			for i := range prooftypes.TotalParents {
				h.Write(parents[i%len(parents)][:])
			}
			cur[node] = finishLabel(h)
		}
		out[l] = cur
	}
	return out
}
