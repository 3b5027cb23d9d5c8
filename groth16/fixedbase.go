package groth16

import (
	"context"
	"sync"
	"sync/atomic"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/internal/cores"
)

// Fixed-base multiplication for key generation. Every setup vector is k·G for the same
// generator G, so instead of a double-and-add per scalar (about 255 doublings each) we
// precompute, for each c-bit window k of the scalar, the multiples d·2^(c·k)·G for the signed
// digits d in 1..2^(c−1). A scalar is then the sum of one table entry (or its negation) per
// window: ⌈256/c⌉ mixed additions and no doublings.

const (
	// fbMaxWindow bounds c: at 16 the G2 table is 16 windows × 2^15 × 192 B = 96 MiB, and
	// a 17-bit window would double it for at most one window saved.
	fbMaxWindow = 16
	// fbMaxTableBytes caps the affine table (the largest cost of a wide window).
	fbMaxTableBytes = 200 << 20
	// fbChunk is how many scalars a goroutine takes at a time: large enough that the one
	// field inversion of the affine conversion is negligible, small enough that a cancel is
	// noticed within milliseconds.
	fbChunk = 1024
)

// fbGeom is the window layout of a table: c-bit windows, enough of them to cover 256 bits so
// the signed recoding of any scalar < r < 2^255 ends without a carry out of the top window.
type fbGeom struct {
	c       int // window width in bits
	windows int // number of windows
	half    int // 2^(c−1): table entries per window (digits 1..half)
}

func newFBGeom(c int) fbGeom {
	return fbGeom{c: c, windows: (256 + c - 1) / c, half: 1 << (c - 1)}
}

// fbWindow picks the window width for n scalars over points of pointBytes bytes (affine). It
// minimises the work of building the table (one addition and about one conversion per entry)
// plus n additions per window, keeping the table under fbMaxTableBytes.
func fbWindow(n, pointBytes int) int {
	best, bestCost := 2, -1.0
	for c := 2; c <= fbMaxWindow; c++ {
		g := newFBGeom(c)
		entries := g.windows * g.half
		if entries*pointBytes > fbMaxTableBytes {
			break
		}
		cost := 2*float64(entries) + float64(n)*float64(g.windows)
		if bestCost < 0 || cost < bestCost {
			best, bestCost = c, cost
		}
	}
	return best
}

// digits writes the signed base-2^c digits of s (one per window, lowest first) into d. A
// window value above half becomes value − 2^c with a carry into the next window, so every
// digit lies in [−half+1, half] and only half entries per window are stored: the negative
// ones are the negations of the positive ones, which cost nothing in affine coordinates.
func (g fbGeom) digits(s *fr.Element, d []int32) {
	limbs := s.Bits() // regular (non-Montgomery) form, little-endian
	mask := uint64(1)<<g.c - 1
	carry := uint64(0)
	for k := 0; k < g.windows; k++ {
		pos := k * g.c
		var w uint64
		if limb := pos >> 6; limb < len(limbs) {
			off := uint(pos & 63)
			w = limbs[limb] >> off
			if off+uint(g.c) > 64 && limb+1 < len(limbs) {
				w |= limbs[limb+1] << (64 - off)
			}
			w &= mask
		}
		w += carry
		if w > uint64(g.half) {
			d[k] = int32(w) - int32(1)<<g.c
			carry = 1
		} else {
			d[k] = int32(w)
			carry = 0
		}
	}
}

// forChunks runs the work for [0, n) in chunks of size chunk on GOMAXPROCS goroutines. Each
// goroutine calls newWorker once (for its own scratch) and then the returned function per
// chunk. Chunks are handed out in order from a shared counter so uneven chunks balance; once
// ctx is done no further chunk starts and ctx's error is returned.
func forChunks(ctx context.Context, n, chunk int, newWorker func() func(lo, hi int)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	nChunks := (n + chunk - 1) / chunk
	workers := min(cores.N(), nChunks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work := newWorker()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= nChunks {
					return
				}
				lo := i * chunk
				work(lo, min(lo+chunk, n))
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// g1FixedBase is a fixed-base table for one G1 point.
type g1FixedBase struct {
	fbGeom
	tab []bls.G1Affine // tab[k·half + d − 1] = d·2^(c·k)·base
}

// newG1FixedBase builds the table of base for windows of c bits (2 ≤ c ≤ fbMaxWindow).
func newG1FixedBase(ctx context.Context, base *bls.G1Affine, c int) (*g1FixedBase, error) {
	g := newFBGeom(c)
	// Window bases 2^(c·k)·base: windows·c doublings in all, cheap enough to do serially.
	bases := make([]bls.G1Jac, g.windows)
	bases[0].FromAffine(base)
	for k := 1; k < g.windows; k++ {
		bases[k] = bases[k-1]
		for range c {
			bases[k].DoubleAssign()
		}
	}
	basesAff := make([]bls.G1Affine, g.windows)
	g1ToAffine(bases, basesAff)

	t := &g1FixedBase{fbGeom: g, tab: make([]bls.G1Affine, g.windows*g.half)}
	err := forChunks(ctx, g.windows, 1, func() func(lo, hi int) {
		acc := make([]bls.G1Jac, g.half)
		return func(lo, hi int) {
			for k := lo; k < hi; k++ {
				acc[0].FromAffine(&basesAff[k])
				for d := 1; d < g.half; d++ {
					acc[d] = acc[d-1]
					acc[d].AddMixed(&basesAff[k])
				}
				g1ToAffine(acc, t.tab[k*g.half:(k+1)*g.half])
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// mul returns s_i·base for every scalar, in affine form; it stops early with ctx's error.
func (t *g1FixedBase) mul(ctx context.Context, scalars []fr.Element) ([]bls.G1Affine, error) {
	out := make([]bls.G1Affine, len(scalars))
	tr := setupTrackerFrom(ctx)
	err := forChunks(ctx, len(scalars), fbChunk, func() func(lo, hi int) {
		acc := make([]bls.G1Jac, fbChunk)
		d := make([]int32, t.windows)
		return func(lo, hi int) {
			var neg bls.G1Affine
			for i := lo; i < hi; i++ {
				p := &acc[i-lo]
				*p = bls.G1Jac{} // Z = 0: the identity, which AddMixed replaces by its operand
				t.digits(&scalars[i], d)
				for k, dk := range d {
					row := t.tab[k*t.half : (k+1)*t.half]
					switch {
					case dk > 0:
						p.AddMixed(&row[dk-1])
					case dk < 0:
						neg.Neg(&row[-dk-1])
						p.AddMixed(&neg)
					}
				}
			}
			g1ToAffine(acc[:hi-lo], out[lo:hi])
			tr.Add(int64(hi - lo))
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// g1ToAffine converts src to affine into dst (same length) with one field inversion
// (Montgomery's trick); points with Z = 0 become the affine identity (0, 0), as in gnark. It
// works serially, unlike bls.BatchJacobianToAffineG1, because callers already run one chunk per
// core, and it writes into dst instead of allocating.
func g1ToAffine(src []bls.G1Jac, dst []bls.G1Affine) {
	// Forward pass: dst[i].X holds the product of the non-zero Z before i.
	acc := fp.One()
	for i := range src {
		if src[i].Z.IsZero() {
			continue
		}
		dst[i].X = acc
		acc.Mul(&acc, &src[i].Z)
	}
	acc.Inverse(&acc)
	for i := len(src) - 1; i >= 0; i-- {
		if src[i].Z.IsZero() {
			dst[i] = bls.G1Affine{}
			continue
		}
		var zInv, zInv2 fp.Element
		zInv.Mul(&dst[i].X, &acc) // 1/Z_i
		acc.Mul(&acc, &src[i].Z)
		zInv2.Square(&zInv)
		dst[i].X.Mul(&src[i].X, &zInv2)
		dst[i].Y.Mul(&src[i].Y, &zInv2).Mul(&dst[i].Y, &zInv)
	}
}

// g2FixedBase is a fixed-base table for one G2 point.
type g2FixedBase struct {
	fbGeom
	tab []bls.G2Affine // tab[k·half + d − 1] = d·2^(c·k)·base
}

// newG2FixedBase builds the table of base for windows of c bits (2 ≤ c ≤ fbMaxWindow).
func newG2FixedBase(ctx context.Context, base *bls.G2Affine, c int) (*g2FixedBase, error) {
	g := newFBGeom(c)
	bases := make([]bls.G2Jac, g.windows)
	bases[0].FromAffine(base)
	for k := 1; k < g.windows; k++ {
		bases[k] = bases[k-1]
		for range c {
			bases[k].DoubleAssign()
		}
	}
	basesAff := make([]bls.G2Affine, g.windows)
	g2ToAffine(bases, basesAff)

	t := &g2FixedBase{fbGeom: g, tab: make([]bls.G2Affine, g.windows*g.half)}
	err := forChunks(ctx, g.windows, 1, func() func(lo, hi int) {
		acc := make([]bls.G2Jac, g.half)
		return func(lo, hi int) {
			for k := lo; k < hi; k++ {
				acc[0].FromAffine(&basesAff[k])
				for d := 1; d < g.half; d++ {
					acc[d] = acc[d-1]
					acc[d].AddMixed(&basesAff[k])
				}
				g2ToAffine(acc, t.tab[k*g.half:(k+1)*g.half])
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// mul returns s_i·base for every scalar, in affine form; it stops early with ctx's error.
func (t *g2FixedBase) mul(ctx context.Context, scalars []fr.Element) ([]bls.G2Affine, error) {
	out := make([]bls.G2Affine, len(scalars))
	tr := setupTrackerFrom(ctx)
	err := forChunks(ctx, len(scalars), fbChunk, func() func(lo, hi int) {
		acc := make([]bls.G2Jac, fbChunk)
		d := make([]int32, t.windows)
		return func(lo, hi int) {
			var neg bls.G2Affine
			for i := lo; i < hi; i++ {
				p := &acc[i-lo]
				*p = bls.G2Jac{} // Z = 0: the identity, which AddMixed replaces by its operand
				t.digits(&scalars[i], d)
				for k, dk := range d {
					row := t.tab[k*t.half : (k+1)*t.half]
					switch {
					case dk > 0:
						p.AddMixed(&row[dk-1])
					case dk < 0:
						neg.Neg(&row[-dk-1])
						p.AddMixed(&neg)
					}
				}
			}
			g2ToAffine(acc[:hi-lo], out[lo:hi])
			tr.Add(int64(hi - lo))
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// g2ToAffine is g1ToAffine over Fp2. gnark-crypto v0.19 has no batch conversion for G2, and its
// Fp2 type is internal, so the temporaries take their type from the point fields.
func g2ToAffine(src []bls.G2Jac, dst []bls.G2Affine) {
	if len(src) == 0 {
		return
	}
	acc := src[0].Z
	acc.SetOne()
	for i := range src {
		if src[i].Z.IsZero() {
			continue
		}
		dst[i].X = acc
		acc.Mul(&acc, &src[i].Z)
	}
	acc.Inverse(&acc)
	for i := len(src) - 1; i >= 0; i-- {
		if src[i].Z.IsZero() {
			dst[i] = bls.G2Affine{}
			continue
		}
		zInv := dst[i].X
		zInv.Mul(&zInv, &acc) // 1/Z_i
		acc.Mul(&acc, &src[i].Z)
		zInv2 := zInv
		zInv2.Square(&zInv)
		dst[i].X.Mul(&src[i].X, &zInv2)
		dst[i].Y.Mul(&src[i].Y, &zInv2).Mul(&dst[i].Y, &zInv)
	}
}
