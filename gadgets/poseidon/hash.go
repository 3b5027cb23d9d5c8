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
	_ = c.permute(st, make([]fr.Element, len(st)), plainBox)
}

// boxFunc replaces *x, element i of the state in round r, with x⁵ + rk (rk nil: none).
type boxFunc func(r, i int, x, rk *fr.Element) error

// plainBox is the S-box of the hash itself.
func plainBox(_, _ int, x, rk *fr.Element) error {
	sbox(x)
	if rk != nil {
		x.Add(x, rk)
	}
	return nil
}

// permute runs the optimized permutation (compressed round keys, added after the S-boxes;
// sparse matrices in the partial rounds) on st, buf its scratch; box computes each S-box, so
// that witness synthesis can allocate its intermediate values (nativeHash).
func (c *Constants) permute(st, buf []fr.Element, box boxFunc) error {
	crc := c.CompressedRoundConstants
	for i := range st {
		st[i].Add(&st[i], &crc[i])
	}
	off := c.Width
	round := 0
	full := func(last bool) error {
		var keys []fr.Element // none after the last round's S-boxes
		if !last {
			keys = crc[off : off+c.Width]
			off += c.Width
		}
		for i := range st {
			var rk *fr.Element
			if keys != nil {
				rk = &keys[i]
			}
			if err := box(round, i, &st[i], rk); err != nil {
				return err
			}
		}
		c.applyRoundMatrix(st, round, buf)
		round++
		return nil
	}
	for i := 0; i < c.HalfFullRounds; i++ {
		if err := full(false); err != nil {
			return err
		}
	}
	for i := 0; i < c.PartialRounds; i++ {
		if err := box(round, 0, &st[0], &crc[off]); err != nil {
			return err
		}
		off++
		c.applyRoundMatrix(st, round, buf)
		round++
	}
	for i := 1; i < c.HalfFullRounds; i++ {
		if err := full(false); err != nil {
			return err
		}
	}
	return full(true)
}

// applyRoundMatrix applies the linear layer of round r: the pre-sparse matrix
// in the last initial full round, sparse matrices in the partial rounds and
// the MDS elsewhere. Matrices act on the state as a row vector (state·M); buf
// (the state's length, not st) holds a dense product.
func (c *Constants) applyRoundMatrix(st []fr.Element, r int, buf []fr.Element) {
	half := c.HalfFullRounds
	switch {
	case r == half-1:
		dense(st, buf, c.PreSparseMatrix, c.preSparseCols)
	case r > half-1 && r < half+c.PartialRounds:
		applySparse(st, &c.SparseMatrices[r-half])
	default:
		dense(st, buf, c.MDS, c.mdsCols)
	}
}

// dense sets st to st·m through buf; cols are m's columns (computed here for constants not
// made by New).
func dense(st, buf []fr.Element, m matrix, cols []fr.Vector) {
	if cols == nil {
		cols = m.columns()
	}
	for j := range buf {
		buf[j] = dot(cols[j], st)
	}
	copy(st, buf)
}

// dot is Σ k[i]·v[i] for a constant vector k. gnark-crypto's InnerProduct (AVX-512 where the
// CPU has it) starts about 75 ns slower than a loop of multiplications, so it pays from 5
// terms (2-core VM). Its v0.19 kernel reads a few bytes past the end of the vector it is
// called on, so it is called on k, and only when k has spare capacity for that read (the
// constants' vectors are allocated so: padded).
func dot(k, v fr.Vector) fr.Element {
	if len(k) >= 5 && cap(k) > len(k) {
		return k.InnerProduct(v)
	}
	var acc, tmp fr.Element
	for i := range k {
		tmp.Mul(&k[i], &v[i])
		acc.Add(&acc, &tmp)
	}
	return acc
}

// padded returns a vector of n elements with room for one more: InnerProduct may read past
// the last element of its receiver (dot).
func padded(n int) fr.Vector { return make(fr.Vector, n, n+1) }

func applySparse(st []fr.Element, sm *SparseMatrix) {
	var tmp fr.Element
	first := dot(sm.WHat, st)
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
