// Package merkle builds and checks the Merkle trees of a sealed sector natively: tree D (binary
// SHA-256 with the top two bits of every node cleared, "sha254") and trees C and R (Poseidon with
// neptune's MerkleTree constants, arity 8 with optional sub-tree and top-tree layers). Leaves are
// not hashed. Trees are dense (every leaf stored) or sparse (a few leaves set, the rest equal to
// a default), the latter for building production-shaped proofs without a production sector.
package merkle

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/gadgets/poseidon"
)

// HashFunc hashes the children of one node.
type HashFunc func(children []c1.Domain) (c1.Domain, error)

// Sha254 is tree D's node hash: SHA-256 of the concatenated children, byte 31 masked to 6 bits.
func Sha254(children []c1.Domain) (c1.Domain, error) {
	h := sha256.New()
	for i := range children {
		h.Write(children[i][:])
	}
	var out c1.Domain
	h.Sum(out[:0])
	out[31] &= 0x3f
	return out, nil
}

// Poseidon is the tree C / tree R node hash (and the column hash): neptune Poseidon over the
// children as field elements, with the MerkleTree domain tag of their count.
func Poseidon(children []c1.Domain) (c1.Domain, error) {
	var buf [16]fr.Element
	if len(children) > len(buf) {
		return c1.Domain{}, fmt.Errorf("poseidon node of arity %d", len(children))
	}
	for i := range children {
		e, err := children[i].Element()
		if err != nil {
			return c1.Domain{}, fmt.Errorf("child %d: %w", i, err)
		}
		buf[i] = e
	}
	out, err := poseidon.HashMerkle(buf[:len(children)]...)
	if err != nil {
		return c1.Domain{}, err
	}
	return c1.DomainOf(&out), nil
}

// Arities lists the arity of every level from the leaves up for a Poseidon tree shape with the
// given number of leaves: the base levels, then the sub-tree layer, then the top layer.
func Arities(shape prooftypes.TreeShape, leaves uint64) ([]int, error) {
	levels, err := shape.BaseLevels(leaves)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, levels+2)
	for range levels {
		out = append(out, shape.Base)
	}
	if shape.Sub > 0 {
		out = append(out, shape.Sub)
	}
	if shape.Top > 0 {
		out = append(out, shape.Top)
	}
	return out, nil
}

// BinaryArities lists log2(leaves) levels of arity 2 (tree D).
func BinaryArities(leaves uint64) ([]int, error) {
	return Arities(prooftypes.TreeShape{Base: 2}, leaves)
}

// Tree is a Merkle tree with per-level arities.
type Tree struct {
	arities []int
	hash    HashFunc
	leaves  uint64
	// dense[k] holds level k (0 = leaves); nil for a sparse tree.
	dense [][]c1.Domain
	// sparse[k] holds the nodes of level k that differ from defaults[k].
	sparse   []map[uint64]c1.Domain
	defaults []c1.Domain
}

func checkArities(arities []int) (uint64, error) {
	if len(arities) == 0 {
		return 0, errors.New("tree without levels")
	}
	n := uint64(1)
	for _, a := range arities {
		if a < 2 {
			return 0, fmt.Errorf("arity %d", a)
		}
		n *= uint64(a)
	}
	return n, nil
}

// NewDense builds a tree over all leaves; len(leaves) must be the product of the arities.
func NewDense(leaves []c1.Domain, arities []int, h HashFunc) (*Tree, error) {
	n, err := checkArities(arities)
	if err != nil {
		return nil, err
	}
	if uint64(len(leaves)) != n {
		return nil, fmt.Errorf("merkle: %d leaves, arities %v need %d", len(leaves), arities, n)
	}
	t := &Tree{arities: arities, hash: h, leaves: n, dense: make([][]c1.Domain, len(arities)+1)}
	t.dense[0] = leaves
	for k, a := range arities {
		below := t.dense[k]
		level := make([]c1.Domain, len(below)/a)
		for i := range level {
			if level[i], err = h(below[i*a : (i+1)*a]); err != nil {
				return nil, fmt.Errorf("merkle: level %d node %d: %w", k+1, i, err)
			}
		}
		t.dense[k+1] = level
	}
	return t, nil
}

// NewSparse builds a tree whose leaves all equal def except those in set.
func NewSparse(set map[uint64]c1.Domain, def c1.Domain, arities []int, h HashFunc) (*Tree, error) {
	n, err := checkArities(arities)
	if err != nil {
		return nil, err
	}
	t := &Tree{arities: arities, hash: h, leaves: n,
		sparse: make([]map[uint64]c1.Domain, len(arities)+1), defaults: make([]c1.Domain, len(arities)+1)}
	t.defaults[0] = def
	t.sparse[0] = make(map[uint64]c1.Domain, len(set))
	for i, v := range set {
		if i >= n {
			return nil, fmt.Errorf("merkle: leaf %d outside %d leaves", i, n)
		}
		t.sparse[0][i] = v
	}
	children := make([]c1.Domain, 0, 16)
	for k, a := range arities {
		children = children[:0]
		for range a {
			children = append(children, t.defaults[k])
		}
		if t.defaults[k+1], err = h(children); err != nil {
			return nil, err
		}
		t.sparse[k+1] = make(map[uint64]c1.Domain)
		for i := range t.sparse[k] {
			parent := i / uint64(a)
			if _, done := t.sparse[k+1][parent]; done {
				continue
			}
			children = children[:0]
			for j := range uint64(a) {
				children = append(children, t.node(k, parent*uint64(a)+j))
			}
			v, err := h(children)
			if err != nil {
				return nil, err
			}
			t.sparse[k+1][parent] = v
		}
	}
	return t, nil
}

func (t *Tree) node(level int, i uint64) c1.Domain {
	if t.dense != nil {
		return t.dense[level][i]
	}
	if v, ok := t.sparse[level][i]; ok {
		return v
	}
	return t.defaults[level]
}

// Root returns the root.
func (t *Tree) Root() c1.Domain { return t.node(len(t.arities), 0) }

// Leaves returns the number of leaves.
func (t *Tree) Leaves() uint64 { return t.leaves }

// Leaf returns leaf i.
func (t *Tree) Leaf(i uint64) c1.Domain { return t.node(0, i) }

// Path returns the inclusion path of leaf i, leaf to root.
func (t *Tree) Path(i uint64) ([]c1.PathElement, error) {
	if i >= t.leaves {
		return nil, fmt.Errorf("merkle: leaf %d outside %d leaves", i, t.leaves)
	}
	out := make([]c1.PathElement, len(t.arities))
	for k, a := range t.arities {
		base := i / uint64(a) * uint64(a)
		pe := c1.PathElement{Index: i % uint64(a), Hashes: make([]c1.Domain, 0, a-1)}
		for j := range uint64(a) {
			if base+j != i {
				pe.Hashes = append(pe.Hashes, t.node(k, base+j))
			}
		}
		out[k] = pe
		i /= uint64(a)
	}
	return out, nil
}

// Proof returns the MerkleProof of leaf i in the serde variant of shape (Single when the shape
// has no sub-tree layer; tree D uses TreeShape{Base: 2}).
func (t *Tree) Proof(i uint64, shape prooftypes.TreeShape) (c1.MerkleProof, error) {
	path, err := t.Path(i)
	if err != nil {
		return c1.MerkleProof{}, err
	}
	return SplitProof(t.Leaf(i), t.Root(), path, shape)
}

// SplitProof arranges a path (leaf to root) into the base/sub/top parts of a MerkleProof.
func SplitProof(leaf, root c1.Domain, path []c1.PathElement, shape prooftypes.TreeShape) (c1.MerkleProof, error) {
	p := c1.MerkleProof{Kind: c1.Single, Root: root, Leaf: leaf}
	extra := 0
	if shape.Sub > 0 {
		extra++
		p.Kind = c1.Sub
	}
	if shape.Top > 0 {
		extra++
		p.Kind = c1.Top
	}
	if len(path) < extra {
		return p, fmt.Errorf("merkle: path of %d levels for shape %v", len(path), shape)
	}
	nb := len(path) - extra
	p.Base = path[:nb]
	if shape.Sub > 0 {
		p.SubPath = path[nb : nb+1]
	}
	if shape.Top > 0 {
		p.TopPath = path[nb+1 : nb+2]
	}
	if p.Kind != c1.Single && p.SubPath == nil {
		p.SubPath = []c1.PathElement{}
	}
	return p, nil
}

// ErrPathMismatch reports a path whose recomputed root differs from the claimed root.
var ErrPathMismatch = errors.New("merkle path does not lead to the root")

// ComputeRoot hashes leaf up the path and returns the root it reaches.
func ComputeRoot(leaf c1.Domain, path []c1.PathElement, h HashFunc) (c1.Domain, error) {
	cur := leaf
	children := make([]c1.Domain, 0, 16)
	for k := range path {
		pe := &path[k]
		if pe.Index > uint64(len(pe.Hashes)) {
			return c1.Domain{}, fmt.Errorf("merkle: level %d index %d with %d siblings", k, pe.Index, len(pe.Hashes))
		}
		children = children[:0]
		children = append(children, pe.Hashes[:pe.Index]...)
		children = append(children, cur)
		children = append(children, pe.Hashes[pe.Index:]...)
		var err error
		if cur, err = h(children); err != nil {
			return c1.Domain{}, fmt.Errorf("merkle: level %d: %w", k, err)
		}
	}
	return cur, nil
}

// VerifyProof recomputes p's root from its leaf with the hash of its tree; the error wraps
// ErrPathMismatch when the path leads elsewhere.
func VerifyProof(p *c1.MerkleProof, h HashFunc) error {
	root, err := ComputeRoot(p.Leaf, p.Levels(), h)
	if err != nil {
		return err
	}
	if root != p.Root {
		return ErrPathMismatch
	}
	return nil
}
