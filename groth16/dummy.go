package groth16

import (
	"context"
	"sync"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/snarkd/snarkd/cs"
)

// DummyParameters returns parameters of circuit's exact shape whose points are consecutive
// multiples of the generators (cycling after 2^20 points). Proofs made with them do not verify; they exist so that
// benchmarks can time the prover at sizes where a real setup would take too long.
func DummyParameters(ctx context.Context, circuit cs.Circuit) (*Parameters, error) {
	sh, err := cs.SynthesizeShape(ctx, circuit)
	if err != nil {
		return nil, err
	}
	return DummyParametersOf(sh.Shape(), sh.AAuxDensity.Count(), sh.BInputDensity.Count(), sh.BAuxDensity.Count()), nil
}

// DummyParametersOf is DummyParameters for a circuit of the given shape and density counts
// (a-aux, b-input, b-aux), known without a blank synthesis (from a compiled circuit, say).
func DummyParametersOf(shape cs.Shape, aAux, bInput, bAux int) *Parameters {
	m := shape.DomainSize()
	nb := bInput + bAux
	p := &Parameters{}
	var wg sync.WaitGroup
	for _, f := range []func(){
		func() { p.H = multiplesG1(m-1, 1) },
		func() { p.L = multiplesG1(shape.NumAux, 2) },
		func() { p.A = multiplesG1(shape.NumInputs+aAux, 3) },
		func() { p.BG1 = multiplesG1(nb, 4) },
		func() { p.BG2 = multiplesG2(nb, 5) },
	} {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	wg.Wait()
	_, _, g1, g2 := bls.Generators()
	p.VK = VerifyingKey{Alpha1: g1, Beta1: g1, Beta2: g2, Gamma2: g2, Delta1: g1, Delta2: g2,
		IC: multiplesG1(shape.NumInputs, 6)}
	return p
}

// dummyDistinct bounds the distinct points of a dummy vector; longer vectors repeat them, so
// 2^27-point keys cost seconds and no more memory than their own size.
const dummyDistinct = 1 << 20

// multiplesG1 returns (start + i mod 2^20)·G for i < n.
func multiplesG1(n int, start int64) []bls.G1Affine {
	if n > dummyDistinct {
		return repeat(multiplesG1(dummyDistinct, start), n)
	}
	_, _, g, _ := bls.Generators()
	jac := make([]bls.G1Jac, n)
	var acc bls.G1Jac
	var s bls.G1Affine
	s.ScalarMultiplicationBase(bigOf(start))
	acc.FromAffine(&s)
	for i := range jac {
		jac[i] = acc
		acc.AddMixed(&g)
	}
	return bls.BatchJacobianToAffineG1(jac)
}

func multiplesG2(n int, start int64) []bls.G2Affine {
	if n > dummyDistinct {
		return repeat(multiplesG2(dummyDistinct, start), n)
	}
	_, _, _, g := bls.Generators()
	jac := make([]bls.G2Jac, n)
	var acc bls.G2Jac
	var s bls.G2Affine
	s.ScalarMultiplicationBase(bigOf(start))
	acc.FromAffine(&s)
	for i := range jac {
		jac[i] = acc
		acc.AddMixed(&g)
	}
	// Batch inversion of the Z coordinates (one field inversion for all points); the prefix
	// products live in pre[i].X.
	out := make([]bls.G2Affine, n)
	if n == 0 {
		return out
	}
	pre := make([]bls.G2Jac, n)
	pre[0].X = jac[0].Z
	for i := 1; i < n; i++ {
		pre[i].X.Mul(&pre[i-1].X, &jac[i].Z)
	}
	inv := pre[n-1].X
	inv.Inverse(&inv)
	for i := n - 1; i >= 0; i-- {
		zInv := inv
		if i > 0 {
			zInv.Mul(&inv, &pre[i-1].X)
			inv.Mul(&inv, &jac[i].Z)
		}
		z2 := zInv
		z2.Square(&zInv)
		out[i].X.Mul(&jac[i].X, &z2)
		z2.Mul(&z2, &zInv)
		out[i].Y.Mul(&jac[i].Y, &z2)
	}
	return out
}

// repeat returns n elements cycling through base, copied on every core: a fresh 10 GiB
// vector costs more in page faults than in copying, and faults are taken in parallel.
func repeat[T any](base []T, n int) []T {
	out := make([]T, n)
	_ = forChunks(context.Background(), n, len(base), func() func(lo, hi int) {
		return func(lo, hi int) { copy(out[lo:hi], base) }
	})
	return out
}
