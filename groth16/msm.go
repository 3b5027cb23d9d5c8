package groth16

import (
	"math/bits"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/internal/cores"
)

// Filecoin witnesses are dominated by bits, so the aux MSMs (l, a, b) mostly multiply by 0 or 1.
// A bucket MSM still pays for every window and bucket of those points; instead (as SupraSeal
// does) zero scalars are skipped, points with scalar one are summed directly, and only the
// remaining scalars go through a bucket MSM over a compacted point set. The result is the same
// group element. Density-selected scalars are read in place (the k-th set bit pairs with the
// k-th point), so no gathered copy of the witness is made.

// scalarSource enumerates the scalars of an MSM: all of vals, or those whose density bit is set.
type scalarSource struct {
	vals []fr.Element
	dens *cs.Density // nil: every value
}

func (s scalarSource) len() int {
	if s.dens == nil {
		return len(s.vals)
	}
	return s.dens.Count()
}

// chunk is a worker's share: value indices [lo, hi) and the index of its first point.
type chunk struct{ lo, hi, firstPoint int }

// chunks splits the source into about n pieces along 64-value boundaries.
func (s scalarSource) chunks(n int) []chunk {
	total := len(s.vals)
	if n < 1 || total < 4096 {
		n = 1
	}
	per := ((total+n-1)/n + 63) &^ 63
	var out []chunk
	point := 0
	for lo := 0; lo < total; lo += per {
		hi := min(lo+per, total)
		out = append(out, chunk{lo, hi, point})
		if s.dens == nil {
			point += hi - lo
		} else {
			for _, w := range s.dens.Words()[lo/64 : (hi+63)/64] {
				point += bits.OnesCount64(w)
			}
		}
	}
	return out
}

// each calls fn(valueIndex, pointIndex) for the chunk's selected values in order.
func (s scalarSource) each(c chunk, fn func(v, p int)) {
	if s.dens == nil {
		for i := c.lo; i < c.hi; i++ {
			fn(i, c.firstPoint+i-c.lo)
		}
		return
	}
	words := s.dens.Words()
	p := c.firstPoint
	for w := c.lo / 64; w < (c.hi+63)/64; w++ {
		for word := words[w]; word != 0; word &= word - 1 {
			fn(w*64+bits.TrailingZeros64(word), p)
			p++
		}
	}
}

// gather copies the selected scalars.
func (s scalarSource) gather() []fr.Element {
	if s.dens == nil {
		return s.vals
	}
	out := make([]fr.Element, s.dens.Count())
	s.each(chunk{0, len(s.vals), 0}, func(v, p int) { out[p] = s.vals[v] })
	return out
}

type classified[J any] struct {
	ones  J
	other [][2]int32 // (value, point) of scalars other than 0 and 1
}

// otherShare is the largest share of "other" scalars for which the split pays off.
const otherShareDen = 2 // other·2 ≤ n

func msmG1(out *bls.G1Jac, points []bls.G1Affine, src scalarSource) error {
	cks := src.chunks(cores.N())
	parts := make([]classified[bls.G1Jac], len(cks))
	var wg sync.WaitGroup
	for i, c := range cks {
		wg.Add(1)
		go func(part *classified[bls.G1Jac], c chunk) {
			defer wg.Done()
			part.ones.Set(&g1Infinity)
			src.each(c, func(v, p int) {
				s := &src.vals[v]
				switch {
				case s.IsZero():
				case s.IsOne():
					part.ones.AddMixed(&points[p])
				default:
					part.other = append(part.other, [2]int32{int32(v), int32(p)})
				}
			})
		}(&parts[i], c)
	}
	wg.Wait()
	other := 0
	for i := range parts {
		other += len(parts[i].other)
	}
	n := src.len()
	if other*otherShareDen > n {
		_, err := out.MultiExp(points, src.gather(), msmConfig())
		return err
	}
	out.Set(&g1Infinity)
	for i := range parts {
		out.AddAssign(&parts[i].ones)
	}
	if other == 0 {
		return nil
	}
	pts := make([]bls.G1Affine, 0, other)
	sc := make([]fr.Element, 0, other)
	for i := range parts {
		for _, vp := range parts[i].other {
			sc = append(sc, src.vals[vp[0]])
			pts = append(pts, points[vp[1]])
		}
	}
	var rest bls.G1Jac
	if _, err := rest.MultiExp(pts, sc, msmConfig()); err != nil {
		return err
	}
	out.AddAssign(&rest)
	return nil
}

func msmG2(out *bls.G2Jac, points []bls.G2Affine, src scalarSource) error {
	cks := src.chunks(cores.N())
	parts := make([]classified[bls.G2Jac], len(cks))
	var wg sync.WaitGroup
	for i, c := range cks {
		wg.Add(1)
		go func(part *classified[bls.G2Jac], c chunk) {
			defer wg.Done()
			part.ones.Set(&g2Infinity)
			src.each(c, func(v, p int) {
				s := &src.vals[v]
				switch {
				case s.IsZero():
				case s.IsOne():
					part.ones.AddMixed(&points[p])
				default:
					part.other = append(part.other, [2]int32{int32(v), int32(p)})
				}
			})
		}(&parts[i], c)
	}
	wg.Wait()
	other := 0
	for i := range parts {
		other += len(parts[i].other)
	}
	n := src.len()
	if other*otherShareDen > n {
		_, err := out.MultiExp(points, src.gather(), msmConfig())
		return err
	}
	out.Set(&g2Infinity)
	for i := range parts {
		out.AddAssign(&parts[i].ones)
	}
	if other == 0 {
		return nil
	}
	pts := make([]bls.G2Affine, 0, other)
	sc := make([]fr.Element, 0, other)
	for i := range parts {
		for _, vp := range parts[i].other {
			sc = append(sc, src.vals[vp[0]])
			pts = append(pts, points[vp[1]])
		}
	}
	var rest bls.G2Jac
	if _, err := rest.MultiExp(pts, sc, msmConfig()); err != nil {
		return err
	}
	out.AddAssign(&rest)
	return nil
}

var (
	g1Infinity = func() (p bls.G1Jac) { p.X.SetOne(); p.Y.SetOne(); return }()
	g2Infinity = func() (p bls.G2Jac) { p.X.SetOne(); p.Y.SetOne(); return }()
)
