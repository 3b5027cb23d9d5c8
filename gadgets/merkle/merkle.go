// Package merkle builds Filecoin-shaped Merkle trees natively (base trees of
// one arity, optionally joined by a sub-tree and a top-tree level) and
// extracts inclusion proofs in the layout the PoR circuit consumes.
package merkle

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/gadgets/blake2s"
	"github.com/snarkd/snarkd/gadgets/poseidon"
	"github.com/snarkd/snarkd/gadgets/sha254"
)

// Hasher hashes the children of one node.
type Hasher interface {
	Name() string
	Hash(children []fr.Element) (fr.Element, error)
}

// Poseidon is the MerkleTree-tagged Poseidon hasher (any supported arity).
type Poseidon struct{}

// Name implements Hasher.
func (Poseidon) Name() string { return "poseidon_hasher" }

// Hash implements Hasher.
func (Poseidon) Hash(children []fr.Element) (fr.Element, error) {
	return poseidon.HashMerkle(children...)
}

// Sha254 is the sha254 hasher over little-endian element encodings.
type Sha254 struct{}

// Name implements Hasher.
func (Sha254) Name() string { return "sha256_hasher" }

// Hash implements Hasher.
func (Sha254) Hash(children []fr.Element) (fr.Element, error) { return sha254.HashFr(children), nil }

// Blake2s is the BLAKE2s hasher (zero personalization) over little-endian
// element encodings, digest masked to 254 bits.
type Blake2s struct{}

// Name implements Hasher.
func (Blake2s) Name() string { return "Blake2sHasher" }

// Hash implements Hasher.
func (Blake2s) Hash(children []fr.Element) (fr.Element, error) {
	buf := make([]byte, 0, 32*len(children))
	for i := range children {
		b := sha254.FromFr(&children[i])
		buf = append(buf, b[:]...)
	}
	d := blake2s.Sum256(buf, [8]byte{})
	d[31] &= 0x3f
	return sha254.ToFr(d)
}

// Shape gives the arities of a tree: Sub and Top are 0 when absent; Top
// requires Sub.
type Shape struct{ Base, Sub, Top int }

func isPow2(n int) bool { return n > 1 && n&(n-1) == 0 }

// Validate reports an unsupported shape.
func (s Shape) Validate() error {
	if !isPow2(s.Base) || (s.Sub != 0 && !isPow2(s.Sub)) || (s.Top != 0 && !isPow2(s.Top)) {
		return fmt.Errorf("merkle: arities %d-%d-%d must be powers of two (or 0 for sub/top)", s.Base, s.Sub, s.Top)
	}
	if s.Top != 0 && s.Sub == 0 {
		return fmt.Errorf("merkle: top arity %d without a sub arity", s.Top)
	}
	return nil
}

// BaseTreeCount is the number of base trees (sub·top, at least 1).
func (s Shape) BaseTreeCount() int {
	n := 1
	if s.Sub > 0 {
		n *= s.Sub
	}
	if s.Top > 0 {
		n *= s.Top
	}
	return n
}

// PathElement is one level of a proof: the siblings in order and the
// position of the proven node among the arity children.
type PathElement struct {
	Siblings []fr.Element
	Index    int
}

// Proof is an inclusion proof: base levels first, then sub, then top.
type Proof struct {
	Leaf fr.Element
	Path []PathElement
	Root fr.Element
}

// Tree holds every level of every base tree plus the sub and top levels.
type Tree struct {
	shape Shape
	h     Hasher
	base  [][][]fr.Element // base[t][level][i]
	sub   [][]fr.Element   // sub-tree roots, one per sub group (length top or 1)
	root  fr.Element
}

// Build hashes leaves into a tree of the given shape; len(leaves) must be
// BaseTreeCount · Base^k with k ≥ 1.
func Build(h Hasher, shape Shape, leaves []fr.Element) (*Tree, error) {
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	n := shape.BaseTreeCount()
	if len(leaves)%n != 0 {
		return nil, fmt.Errorf("merkle: %d leaves not divisible into %d base trees", len(leaves), n)
	}
	per := len(leaves) / n
	k := per
	for k > 1 && k%shape.Base == 0 {
		k /= shape.Base
	}
	if k != 1 || per < shape.Base {
		return nil, fmt.Errorf("merkle: base tree of %d leaves is not a power of arity %d", per, shape.Base)
	}
	t := &Tree{shape: shape, h: h}
	roots := make([]fr.Element, n)
	for b := 0; b < n; b++ {
		level := append([]fr.Element(nil), leaves[b*per:(b+1)*per]...)
		levels := [][]fr.Element{level}
		for len(level) > 1 {
			next := make([]fr.Element, len(level)/shape.Base)
			for i := range next {
				v, err := h.Hash(level[i*shape.Base : (i+1)*shape.Base])
				if err != nil {
					return nil, err
				}
				next[i] = v
			}
			levels = append(levels, next)
			level = next
		}
		t.base = append(t.base, levels)
		roots[b] = level[0]
	}
	cur := roots
	if shape.Sub > 0 {
		next := make([]fr.Element, len(cur)/shape.Sub)
		for i := range next {
			v, err := h.Hash(cur[i*shape.Sub : (i+1)*shape.Sub])
			if err != nil {
				return nil, err
			}
			next[i] = v
		}
		t.sub = [][]fr.Element{roots, next}
		cur = next
	}
	if shape.Top > 0 {
		v, err := h.Hash(cur)
		if err != nil {
			return nil, err
		}
		cur = []fr.Element{v}
	}
	t.root = cur[0]
	return t, nil
}

// Root returns the tree root.
func (t *Tree) Root() fr.Element { return t.root }

// Leaves returns the number of leaves.
func (t *Tree) Leaves() int { return len(t.base) * len(t.base[0][0]) }

func siblings(level []fr.Element, idx, arity int) PathElement {
	start := idx / arity * arity
	pe := PathElement{Index: idx % arity}
	for j := start; j < start+arity; j++ {
		if j != idx {
			pe.Siblings = append(pe.Siblings, level[j])
		}
	}
	return pe
}

// Proof returns the inclusion proof of leaf i.
func (t *Tree) Proof(i int) (Proof, error) {
	if i < 0 || i >= t.Leaves() {
		return Proof{}, fmt.Errorf("merkle: leaf %d out of range [0, %d)", i, t.Leaves())
	}
	per := len(t.base[0][0])
	b, idx := i/per, i%per
	levels := t.base[b]
	p := Proof{Leaf: levels[0][idx], Root: t.root}
	for l := 0; l < len(levels)-1; l++ {
		p.Path = append(p.Path, siblings(levels[l], idx, t.shape.Base))
		idx /= t.shape.Base
	}
	if t.shape.Sub > 0 {
		p.Path = append(p.Path, siblings(t.sub[0], b, t.shape.Sub))
		b /= t.shape.Sub
	}
	if t.shape.Top > 0 {
		p.Path = append(p.Path, siblings(t.sub[1], b, t.shape.Top))
	}
	return p, nil
}

// Verify recomputes the root from the proof.
func (p Proof) Verify(h Hasher) (bool, error) {
	cur := p.Leaf
	for _, pe := range p.Path {
		arity := len(pe.Siblings) + 1
		if pe.Index < 0 || pe.Index >= arity {
			return false, fmt.Errorf("merkle: index %d outside arity %d", pe.Index, arity)
		}
		children := make([]fr.Element, 0, arity)
		children = append(children, pe.Siblings[:pe.Index]...)
		children = append(children, cur)
		children = append(children, pe.Siblings[pe.Index:]...)
		v, err := h.Hash(children)
		if err != nil {
			return false, err
		}
		cur = v
	}
	return cur.Equal(&p.Root), nil
}

// ChallengeIndex is the leaf index the proof's path encodes (the value of
// the PoR's packed path input).
func (p Proof) ChallengeIndex() uint64 {
	var v uint64
	shift := uint(0)
	for _, pe := range p.Path {
		arity := len(pe.Siblings) + 1
		v |= uint64(pe.Index) << shift
		for a := arity; a > 1; a >>= 1 {
			shift++
		}
	}
	return v
}
