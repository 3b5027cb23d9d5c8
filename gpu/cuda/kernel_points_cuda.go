//go:build cuda

package cuda

import (
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// g1XYZZ and g2XYZZ mirror the native extended-Jacobian points (x = X/ZZ, y = Y/ZZZ; ZZ = 0 is
// infinity) that the kernels hand back.
type g1XYZZ struct{ X, Y, ZZ, ZZZ fp.Element }

type g2XYZZ struct{ X, Y, ZZ, ZZZ bls12381.E2 }

// jac converts to Jacobian: X' = X·ZZ², Y' = Y·ZZZ², Z' = ZZZ (no inversion).
func (p *g1XYZZ) jac() bls12381.G1Jac {
	var j bls12381.G1Jac
	if p.ZZ.IsZero() {
		j.X.SetOne()
		j.Y.SetOne()
		return j
	}
	var t fp.Element
	t.Square(&p.ZZ)
	j.X.Mul(&p.X, &t)
	t.Square(&p.ZZZ)
	j.Y.Mul(&p.Y, &t)
	j.Z = p.ZZZ
	return j
}

func (p *g2XYZZ) jac() bls12381.G2Jac {
	var j bls12381.G2Jac
	if p.ZZ.IsZero() {
		j.X.SetOne()
		j.Y.SetOne()
		return j
	}
	var t bls12381.E2
	t.Square(&p.ZZ)
	j.X.Mul(&p.X, &t)
	t.Square(&p.ZZZ)
	j.Y.Mul(&p.Y, &t)
	j.Z = p.ZZZ
	return j
}
