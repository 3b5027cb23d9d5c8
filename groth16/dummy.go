package groth16

import (
	"context"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/snarkd/snarkd/cs"
)

// DummyParameters returns parameters of circuit's exact shape whose points are consecutive
// multiples of the generators. Proofs made with them do not verify; they exist so that
// benchmarks can time the prover at sizes where a real setup would take too long.
func DummyParameters(ctx context.Context, circuit cs.Circuit) (*Parameters, error) {
	sh, err := cs.SynthesizeShape(ctx, circuit)
	if err != nil {
		return nil, err
	}
	shape := sh.Shape()
	m := shape.DomainSize()
	nb := sh.BInputDensity.Count() + sh.BAuxDensity.Count()
	p := &Parameters{
		H:   multiplesG1(m-1, 1),
		L:   multiplesG1(shape.NumAux, 2),
		A:   multiplesG1(shape.NumInputs+sh.AAuxDensity.Count(), 3),
		BG1: multiplesG1(nb, 4),
		BG2: multiplesG2(nb, 5),
	}
	_, _, g1, g2 := bls.Generators()
	p.VK = VerifyingKey{Alpha1: g1, Beta1: g1, Beta2: g2, Gamma2: g2, Delta1: g1, Delta2: g2,
		IC: multiplesG1(shape.NumInputs, 6)}
	return p, nil
}

// multiplesG1 returns (start+i)·G for i < n.
func multiplesG1(n int, start int64) []bls.G1Affine {
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
	out := make([]bls.G2Affine, n)
	for i := range jac {
		out[i].FromJacobian(&jac[i]) // no batch helper for G2; dummy keys only
	}
	return out
}
