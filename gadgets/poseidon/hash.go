package poseidon

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

func sbox(x *fr.Element) {
	var t fr.Element
	t.Square(x)
	t.Square(&t)
	x.Mul(x, &t)
}

// initialState places the tag and the preimage, zero-padding a
// ConstantLength preimage shorter than the arity.
func (c *Constants) initialState(preimage []fr.Element) ([]fr.Element, error) {
	switch {
	case c.Type.Kind == ConstantLength:
		if c.Type.Param > uint64(c.Arity) {
			return nil, fmt.Errorf("poseidon: constant length %d exceeds arity %d (use SpongeHash)", c.Type.Param, c.Arity)
		}
		if uint64(len(preimage)) != c.Type.Param {
			return nil, fmt.Errorf("poseidon: preimage of %d elements for constant length %d", len(preimage), c.Type.Param)
		}
	case len(preimage) != c.Arity:
		return nil, fmt.Errorf("poseidon: preimage of %d elements for arity %d", len(preimage), c.Arity)
	}
	st := make([]fr.Element, c.Width)
	st[0] = c.DomainTag
	copy(st[1:], preimage)
	return st, nil
}

// Hash returns the Poseidon hash of preimage using the optimized (compressed
// constants, sparse matrices) evaluation order neptune uses by default.
func (c *Constants) Hash(preimage []fr.Element) (fr.Element, error) {
	st, err := c.initialState(preimage)
	if err != nil {
		return fr.Element{}, err
	}
	c.permuteOptimized(st)
	return st[1], nil
}

// MustHash is Hash for callers whose preimage length is fixed by construction.
func (c *Constants) MustHash(preimage []fr.Element) fr.Element {
	h, err := c.Hash(preimage)
	if err != nil {
		panic(err)
	}
	return h
}

// HashUnoptimized evaluates the textbook permutation (all round keys before
// each S-box layer, dense MDS everywhere); it must agree with Hash.
func (c *Constants) HashUnoptimized(preimage []fr.Element) (fr.Element, error) {
	st, err := c.initialState(preimage)
	if err != nil {
		return fr.Element{}, err
	}
	t := c.Width
	off := 0
	round := func(full bool) {
		for i := 0; i < t; i++ {
			st[i].Add(&st[i], &c.RoundConstants[off+i])
		}
		off += t
		if full {
			for i := range st {
				sbox(&st[i])
			}
		} else {
			sbox(&st[0])
		}
		copy(st, c.MDS.leftApply(st))
	}
	for i := 0; i < c.HalfFullRounds; i++ {
		round(true)
	}
	for i := 0; i < c.PartialRounds; i++ {
		round(false)
	}
	for i := 0; i < c.HalfFullRounds; i++ {
		round(true)
	}
	return st[1], nil
}

func (c *Constants) permuteOptimized(st []fr.Element) {
	crc := c.CompressedRoundConstants
	buf := make([]fr.Element, len(st))
	off := 0
	for i := range st {
		st[i].Add(&st[i], &crc[i])
	}
	off += c.Width
	round := 0
	full := func(last bool) {
		for i := range st {
			sbox(&st[i])
			if !last {
				st[i].Add(&st[i], &crc[off+i])
			}
		}
		if !last {
			off += c.Width
		}
		c.applyRoundMatrix(st, round, buf)
		round++
	}
	for i := 0; i < c.HalfFullRounds; i++ {
		full(false)
	}
	for i := 0; i < c.PartialRounds; i++ {
		sbox(&st[0])
		st[0].Add(&st[0], &crc[off])
		off++
		c.applyRoundMatrix(st, round, buf)
		round++
	}
	for i := 1; i < c.HalfFullRounds; i++ {
		full(false)
	}
	full(true)
}

// applyRoundMatrix applies the linear layer of round r: the pre-sparse matrix
// in the last initial full round, sparse matrices in the partial rounds and
// the MDS elsewhere. Matrices act on the state as a row vector (state·M); buf
// (the state's length) holds a dense product.
func (c *Constants) applyRoundMatrix(st []fr.Element, r int, buf []fr.Element) {
	half := c.HalfFullRounds
	switch {
	case r == half-1:
		timesColumns(buf, st, c.preSparseCols)
		copy(st, buf)
	case r > half-1 && r < half+c.PartialRounds:
		applySparse(st, &c.SparseMatrices[r-half])
	default:
		timesColumns(buf, st, c.mdsCols)
		copy(st, buf)
	}
}

// timesColumns sets r to v·m, m given by its columns.
func timesColumns(r []fr.Element, v fr.Vector, cols []fr.Vector) {
	for j := range r {
		r[j] = dot(v, cols[j])
	}
}

// dot is Σ a[i]·b[i]. gnark-crypto's InnerProduct (AVX-512 where the CPU has it) costs
// about 75 ns more to start than a loop of multiplications: it pays from 5 terms (2-core VM).
func dot(a, b fr.Vector) fr.Element {
	if len(a) >= 5 {
		return a.InnerProduct(b)
	}
	var acc, tmp fr.Element
	for i := range a {
		tmp.Mul(&a[i], &b[i])
		acc.Add(&acc, &tmp)
	}
	return acc
}

func applySparse(st []fr.Element, sm *SparseMatrix) {
	var tmp fr.Element
	first := dot(st, sm.WHat)
	for j := 1; j < len(st); j++ {
		tmp.Mul(&sm.VRest[j-1], &st[0])
		st[j].Add(&st[j], &tmp)
	}
	st[0] = first
}

// HashMerkle hashes arity = len(preimage) elements with the Standard
// MerkleTree constants (tag 2^arity − 1), as every Filecoin tree does.
func HashMerkle(preimage ...fr.Element) (fr.Element, error) {
	c, err := New(len(preimage), Standard, HashType{Kind: MerkleTree})
	if err != nil {
		return fr.Element{}, err
	}
	return c.Hash(preimage)
}
