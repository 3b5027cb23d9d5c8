package groth16

import (
	"runtime"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Filecoin witnesses are dominated by bits, so the aux MSMs (l, a, b) mostly multiply by 0 or 1.
// A bucket MSM still pays for every window and bucket of those points; instead (as SupraSeal
// does) zero scalars are skipped, points with scalar one are summed directly, and only the
// remaining scalars go through a bucket MSM over a compacted point set. The result is the same
// group element.

// sparseThreshold: below this share of "other" scalars the split pays off.
const sparseThreshold = 2 // other·sparseThreshold ≤ n

// classify splits [lo, hi) into the sum of one-scalar points and the indices of other non-zero
// scalars.
type classResult[J any] struct {
	ones  J
	other []int32
}

func classifyWorkers(n int) int {
	w := runtime.GOMAXPROCS(0)
	if n < 4096 {
		return 1
	}
	return w
}

// msmG1 computes Σ scalars_i·points_i.
func msmG1(out *bls.G1Jac, points []bls.G1Affine, scalars []fr.Element) error {
	n := len(scalars)
	workers := classifyWorkers(n)
	per := (n + workers - 1) / workers
	parts := make([]classResult[bls.G1Jac], workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min((w+1)*per, n)
		wg.Add(1)
		go func(part *classResult[bls.G1Jac], lo, hi int) {
			defer wg.Done()
			part.ones.Set(&g1Infinity)
			for i := lo; i < hi; i++ {
				s := &scalars[i]
				switch {
				case s.IsZero():
				case s.IsOne():
					part.ones.AddMixed(&points[i])
				default:
					part.other = append(part.other, int32(i))
				}
			}
		}(&parts[w], lo, hi)
	}
	wg.Wait()
	other := 0
	for i := range parts {
		other += len(parts[i].other)
	}
	if other*sparseThreshold > n {
		// Dense witness: the plain MSM is cheaper than compacting.
		_, err := out.MultiExp(points, scalars, msmConfig())
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
		for _, j := range parts[i].other {
			pts = append(pts, points[j])
			sc = append(sc, scalars[j])
		}
	}
	var rest bls.G1Jac
	if _, err := rest.MultiExp(pts, sc, msmConfig()); err != nil {
		return err
	}
	out.AddAssign(&rest)
	return nil
}

// msmG2 is msmG1 in G2.
func msmG2(out *bls.G2Jac, points []bls.G2Affine, scalars []fr.Element) error {
	n := len(scalars)
	workers := classifyWorkers(n)
	per := (n + workers - 1) / workers
	parts := make([]classResult[bls.G2Jac], workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min((w+1)*per, n)
		wg.Add(1)
		go func(part *classResult[bls.G2Jac], lo, hi int) {
			defer wg.Done()
			part.ones.Set(&g2Infinity)
			for i := lo; i < hi; i++ {
				s := &scalars[i]
				switch {
				case s.IsZero():
				case s.IsOne():
					part.ones.AddMixed(&points[i])
				default:
					part.other = append(part.other, int32(i))
				}
			}
		}(&parts[w], lo, hi)
	}
	wg.Wait()
	other := 0
	for i := range parts {
		other += len(parts[i].other)
	}
	if other*sparseThreshold > n {
		_, err := out.MultiExp(points, scalars, msmConfig())
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
		for _, j := range parts[i].other {
			pts = append(pts, points[j])
			sc = append(sc, scalars[j])
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
