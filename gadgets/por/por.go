// Package por is rust-fil-proofs' proof-of-retrievability circuit: Merkle
// inclusion of a leaf in a tree with base/sub/top arities, for Poseidon and
// SHA-256 (sha254) trees, with the path bits packed into one public input,
// and its insertion/selection gadgets.
package por

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/blake2s"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/merkle"
	"github.com/snarkd/snarkd/gadgets/multipack"
	"github.com/snarkd/snarkd/gadgets/num"
	"github.com/snarkd/snarkd/gadgets/poseidon"
	"github.com/snarkd/snarkd/gadgets/sha256"
)

// Hasher is a tree hash in circuit (filecoin-hashers' hash_multi_leaf_circuit).
type Hasher interface {
	HashMultiLeafCircuit(sys cs.ConstraintSystem, leaves []num.AllocatedNum, height int) (num.AllocatedNum, error)
}

// PoseidonHasher hashes with neptune's v1 circuit and MerkleTree constants.
type PoseidonHasher struct{}

// HashMultiLeafCircuit implements Hasher.
func (PoseidonHasher) HashMultiLeafCircuit(sys cs.ConstraintSystem, leaves []num.AllocatedNum, _ int) (num.AllocatedNum, error) {
	c, err := poseidon.New(len(leaves), poseidon.Standard, poseidon.HashType{Kind: poseidon.MerkleTree})
	if err != nil {
		return num.AllocatedNum{}, err
	}
	return poseidon.HashCircuit(sys, leaves, c)
}

// Sha256Hasher decomposes each leaf into bits ("i_num_into_bits"), hashes
// the little-endian bytes with SHA-256 ("hash") and packs the first 254
// digest bits, little-endian, into one element ("pack_le").
type Sha256Hasher struct{}

// HashMultiLeafCircuit implements Hasher.
func (Sha256Hasher) HashMultiLeafCircuit(sys cs.ConstraintSystem, leaves []num.AllocatedNum, _ int) (num.AllocatedNum, error) {
	bits := make([]boolean.Boolean, 0, 256*len(leaves))
	for i, leaf := range leaves {
		sys.Push(fmt.Sprintf("%d_num_into_bits", i))
		lb, err := leaf.ToBitsLE(sys)
		sys.Pop()
		if err != nil {
			return num.AllocatedNum{}, err
		}
		for len(lb)%8 != 0 {
			lb = append(lb, boolean.Constant(false))
		}
		bits = append(bits, reverseBytes(lb)...)
	}
	return HashBitsCircuit(sys, bits)
}

// reverseBytes reverses the bit order inside each 8-bit group.
func reverseBytes(b []boolean.Boolean) []boolean.Boolean {
	out := make([]boolean.Boolean, 0, len(b))
	for i := 0; i+8 <= len(b); i += 8 {
		for k := 7; k >= 0; k-- {
			out = append(out, b[i+k])
		}
	}
	return out
}

// HashBitsCircuit is Sha256Hasher's hash_circuit: sha256 in namespace "hash"
// then pack_bits of the first 254 little-endian digest bits in "pack_le".
func HashBitsCircuit(sys cs.ConstraintSystem, bits []boolean.Boolean) (num.AllocatedNum, error) {
	sys.Push("hash")
	be, err := sha256.Hash(sys, bits)
	sys.Pop()
	if err != nil {
		return num.AllocatedNum{}, err
	}
	le := reverseBytes(be)[:multipack.Capacity]
	sys.Push("pack_le")
	defer sys.Pop()
	return multipack.PackBits(sys, le)
}

// Blake2sHasher decomposes each leaf into bits ("i_num_into_bits"), hashes
// them little-endian with BLAKE2s and a zero personalization ("hash") and
// packs the first 254 digest bits ("pack").
type Blake2sHasher struct{}

// HashMultiLeafCircuit implements Hasher.
func (Blake2sHasher) HashMultiLeafCircuit(sys cs.ConstraintSystem, leaves []num.AllocatedNum, _ int) (num.AllocatedNum, error) {
	bits := make([]boolean.Boolean, 0, 256*len(leaves))
	for i, leaf := range leaves {
		sys.Push(fmt.Sprintf("%d_num_into_bits", i))
		lb, err := leaf.ToBitsLE(sys)
		sys.Pop()
		if err != nil {
			return num.AllocatedNum{}, err
		}
		bits = append(bits, lb...)
		for len(bits)%8 != 0 {
			bits = append(bits, boolean.Constant(false))
		}
	}
	sys.Push("hash")
	out, err := blake2s.Hash(sys, bits, [8]byte{})
	sys.Pop()
	if err != nil {
		return num.AllocatedNum{}, err
	}
	sys.Push("pack")
	defer sys.Pop()
	return multipack.PackBits(sys, out)
}

// Value is a node given either as an already allocated variable or as a
// value to allocate (rust-fil-proofs' Root::Var / Root::Val).
type Value struct {
	Var *num.AllocatedNum
	Val fr.Element
}

func (v Value) allocated(sys cs.ConstraintSystem, name string) (num.AllocatedNum, error) {
	if v.Var != nil {
		return *v.Var, nil
	}
	sys.Push(name)
	defer sys.Pop()
	return num.Alloc(sys, v.Val)
}

// Circuit is PoRCircuit. In blank mode only Shape, BaseLevels and Private
// matter; in witness mode Path must hold BaseLevels base elements followed
// by the sub and top elements the shape has.
type Circuit struct {
	Hasher     Hasher
	Shape      merkle.Shape
	BaseLevels int
	Leaf       Value
	Path       []merkle.PathElement
	Root       Value
	Private    bool
}

// BaseLevels returns the number of base-tree levels for a tree of leaves.
func BaseLevels(shape merkle.Shape, leaves int) (int, error) {
	if err := shape.Validate(); err != nil {
		return 0, err
	}
	per := leaves / shape.BaseTreeCount()
	n := 0
	for per > 1 {
		if per%shape.Base != 0 {
			return 0, fmt.Errorf("por: %d leaves do not fit shape %v", leaves, shape)
		}
		per /= shape.Base
		n++
	}
	return n, nil
}

func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// Synthesize implements cs.Circuit.
func (c *Circuit) Synthesize(sys cs.ConstraintSystem) error {
	if err := c.Shape.Validate(); err != nil {
		return err
	}
	levels := []int{}
	for i := 0; i < c.BaseLevels; i++ {
		levels = append(levels, c.Shape.Base)
	}
	nBase := len(levels)
	if c.Shape.Sub > 0 {
		levels = append(levels, c.Shape.Sub)
	}
	if c.Shape.Top > 0 {
		levels = append(levels, c.Shape.Top)
	}
	witness := sys.WitnessMode()
	if witness && len(c.Path) != len(levels) {
		return fmt.Errorf("por: path of %d elements for %d levels", len(c.Path), len(levels))
	}
	cur, err := c.Leaf.allocated(sys, "value")
	if err != nil {
		return err
	}
	var pathBits []boolean.Boolean
	sub := func(name string, from, to int) error {
		sys.Push(name)
		defer sys.Pop()
		for i := from; i < to; i++ {
			arity := levels[i]
			var pe merkle.PathElement
			if witness {
				pe = c.Path[i]
				if len(pe.Siblings) != arity-1 {
					return fmt.Errorf("por: level %d has %d siblings for arity %d", i, len(pe.Siblings), arity)
				}
				if pe.Index < 0 || pe.Index >= arity {
					return fmt.Errorf("por: level %d index %d outside arity %d", i, pe.Index, arity)
				}
			} else {
				pe = merkle.PathElement{Siblings: make([]fr.Element, arity-1)}
			}
			sys.PushIndexed("merkle tree hash ", i-from)
			next, bits, err := c.level(sys, cur, pe, arity, i)
			sys.Pop()
			if err != nil {
				return err
			}
			pathBits = append(pathBits, bits...)
			cur = next
		}
		return nil
	}
	if err := sub("base", 0, nBase); err != nil {
		return err
	}
	end := nBase
	if c.Shape.Sub > 0 {
		end++
	}
	if err := sub("sub", nBase, end); err != nil {
		return err
	}
	if err := sub("top", end, len(levels)); err != nil {
		return err
	}
	sys.Push("path")
	err = multipack.PackIntoInputs(sys, pathBits)
	sys.Pop()
	if err != nil {
		return err
	}
	rt, err := c.Root.allocated(sys, "root_value")
	if err != nil {
		return err
	}
	sys.Enforce("enforce root is correct", cur.LC(), cs.LCOf(cs.One), rt.LC())
	if !c.Private {
		sys.Push("root")
		defer sys.Pop()
		return rt.Inputize(sys)
	}
	return nil
}

func (c *Circuit) level(sys cs.ConstraintSystem, cur num.AllocatedNum, pe merkle.PathElement, arity, height int) (num.AllocatedNum, []boolean.Boolean, error) {
	nbits := log2(arity)
	bits := make([]boolean.Boolean, nbits)
	for j := 0; j < nbits; j++ {
		sys.PushIndexed("index bit ", j)
		b, err := boolean.Alloc(sys, pe.Index>>uint(j)&1 == 1)
		sys.Pop()
		if err != nil {
			return num.AllocatedNum{}, nil, err
		}
		bits[j] = boolean.Is(b)
	}
	sibs := make([]num.AllocatedNum, len(pe.Siblings))
	for j := range pe.Siblings {
		sys.PushIndexed("path element ", j)
		a, err := num.Alloc(sys, pe.Siblings[j])
		sys.Pop()
		if err != nil {
			return num.AllocatedNum{}, nil, err
		}
		sibs[j] = a
	}
	inserted, err := Insert(sys, cur, bits, sibs)
	if err != nil {
		return num.AllocatedNum{}, nil, err
	}
	sys.Push("computation of commitment hash")
	defer sys.Pop()
	h, err := c.Hasher.HashMultiLeafCircuit(sys, inserted, height)
	return h, bits, err
}

// NoChallengeInput is por_no_challenge_input: the caller supplies the
// challenge bits (least significant first, base levels then sub then top),
// the leaf, the siblings per level and the root; no input is allocated.
func NoChallengeInput(sys cs.ConstraintSystem, h Hasher, shape merkle.Shape, challengeBits []boolean.AllocatedBit, leaf num.AllocatedNum, pathValues [][]num.AllocatedNum, root num.AllocatedNum) error {
	if err := shape.Validate(); err != nil {
		return err
	}
	nBase := len(pathValues)
	if shape.Sub > 0 {
		nBase--
	}
	if shape.Top > 0 {
		nBase--
	}
	if nBase < 0 {
		return fmt.Errorf("por: %d path levels too few for shape %v", len(pathValues), shape)
	}
	arities := make([]int, 0, len(pathValues))
	for i := 0; i < nBase; i++ {
		arities = append(arities, shape.Base)
	}
	if shape.Sub > 0 {
		arities = append(arities, shape.Sub)
	}
	if shape.Top > 0 {
		arities = append(arities, shape.Top)
	}
	cur := leaf
	bitPos := 0
	for height, arity := range arities {
		sibs := pathValues[height]
		if len(sibs) != arity-1 {
			return fmt.Errorf("por: level %d has %d siblings for arity %d", height, len(sibs), arity)
		}
		nb := log2(arity)
		if bitPos+nb > len(challengeBits) {
			return fmt.Errorf("por: %d challenge bits too few", len(challengeBits))
		}
		idx := make([]boolean.Boolean, nb)
		for j := range idx {
			idx[j] = boolean.Is(challengeBits[bitPos+j])
		}
		bitPos += nb
		sys.Push(fmt.Sprintf("merkle proof insert (height=%d)", height))
		pre, err := Insert(sys, cur, idx, sibs)
		sys.Pop()
		if err != nil {
			return err
		}
		sys.Push(fmt.Sprintf("merkle proof hash (height=%d)", height))
		cur, err = h.HashMultiLeafCircuit(sys, pre, height)
		sys.Pop()
		if err != nil {
			return err
		}
	}
	if bitPos != len(challengeBits) {
		return fmt.Errorf("por: %d challenge bits for %d path bits", len(challengeBits), bitPos)
	}
	sys.Enforce("calculated root == provided root", cur.LC(), cs.LCOf(cs.One), root.LC())
	return nil
}

// HashLeafBitsCircuit is Sha256Hasher's hash_leaf_bits_circuit: the two bit
// strings (little-endian within bytes) are byte-renumbered, concatenated and
// hashed with HashBitsCircuit.
func HashLeafBitsCircuit(sys cs.ConstraintSystem, left, right []boolean.Boolean) (num.AllocatedNum, error) {
	pre := make([]boolean.Boolean, 0, len(left)+len(right)+16)
	for _, side := range [][]boolean.Boolean{left, right} {
		padded := append([]boolean.Boolean(nil), side...)
		for len(padded)%8 != 0 {
			padded = append(padded, boolean.Constant(false))
		}
		pre = append(pre, reverseBytes(padded)...)
	}
	return HashBitsCircuit(sys, pre)
}
