package snarkpack

import (
	"fmt"
	"math/big"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// minChunk is the fewest pairs a goroutine's Miller loop takes: below it the product is cheaper
// on one core than the goroutines cost.
const minChunk = 16

// millerLoop returns Π f(P_i, Q_i) over the pairs, the loop split across cores.
func millerLoop(P []bls.G1Affine, Q []bls.G2Affine) (bls.GT, error) {
	if len(P) != len(Q) {
		return bls.GT{}, fmt.Errorf("snarkpack: pairing %d G1 with %d G2 points", len(P), len(Q))
	}
	workers := min(runtime.GOMAXPROCS(0), (len(P)+minChunk-1)/minChunk)
	if workers <= 1 {
		return bls.MillerLoop(P, Q)
	}
	chunk := (len(P) + workers - 1) / workers
	parts := make([]bls.GT, 0, workers)
	errs := make([]error, 0, workers)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for lo := 0; lo < len(P); lo += chunk {
		hi := min(lo+chunk, len(P))
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := bls.MillerLoop(P[lo:hi], Q[lo:hi])
			mu.Lock()
			defer mu.Unlock()
			parts = append(parts, f)
			errs = append(errs, err)
		}()
	}
	wg.Wait()
	var acc bls.GT
	acc.SetOne()
	for i := range parts {
		if errs[i] != nil {
			return acc, errs[i]
		}
		acc.Mul(&acc, &parts[i])
	}
	return acc, nil
}

// pairing returns Π e(P_i, Q_i) (inner_product::pairing).
func pairing(P []bls.G1Affine, Q []bls.G2Affine) (bls.GT, error) {
	f, err := millerLoop(P, Q)
	if err != nil {
		return f, err
	}
	return bls.FinalExponentiation(&f), nil
}

// pairingSum returns Π e(P1_i, Q1_i) · Π e(P2_i, Q2_i) with one final exponentiation.
func pairingSum(P1 []bls.G1Affine, Q1 []bls.G2Affine, P2 []bls.G1Affine, Q2 []bls.G2Affine) (bls.GT, error) {
	P := append(append(make([]bls.G1Affine, 0, len(P1)+len(P2)), P1...), P2...)
	Q := append(append(make([]bls.G2Affine, 0, len(Q1)+len(Q2)), Q1...), Q2...)
	return pairing(P, Q)
}

// commitPair is commit::pair: T = Π e(a_i, v1_i)·e(w1_i, b_i), U = Π e(a_i, v2_i)·e(w2_i, b_i).
func commitPair(v1, v2 []bls.G2Affine, w1, w2 []bls.G1Affine, a []bls.G1Affine, b []bls.G2Affine) (Commitment, error) {
	var c Commitment
	var err error
	if c[0], err = pairingSum(a, v1, w1, b); err != nil {
		return c, err
	}
	c[1], err = pairingSum(a, v2, w2, b)
	return c, err
}

// commitSingle is commit::single_g1: T = Π e(a_i, v1_i), U = Π e(a_i, v2_i).
func commitSingle(v1, v2 []bls.G2Affine, a []bls.G1Affine) (Commitment, error) {
	var c Commitment
	var err error
	if c[0], err = pairing(a, v1); err != nil {
		return c, err
	}
	c[1], err = pairing(a, v2)
	return c, err
}

func bigOf(x *fr.Element) *big.Int {
	var b big.Int
	x.BigInt(&b)
	return &b
}

// scaleG1 returns p_i·s_i.
func scaleG1(p []bls.G1Affine, s []fr.Element) []bls.G1Affine {
	out := make([]bls.G1Affine, len(p))
	parallel(len(p), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i].ScalarMultiplication(&p[i], bigOf(&s[i]))
		}
	})
	return out
}

// scaleG2 returns p_i·s_i.
func scaleG2(p []bls.G2Affine, s []fr.Element) []bls.G2Affine {
	out := make([]bls.G2Affine, len(p))
	parallel(len(p), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i].ScalarMultiplication(&p[i], bigOf(&s[i]))
		}
	})
	return out
}

// foldG1 sets left_i = left_i + right_i·x (the GIPA fold; compress in bellperson).
func foldG1(left, right []bls.G1Affine, x *fr.Element) {
	k := bigOf(x)
	parallel(len(left), func(lo, hi int) {
		var t bls.G1Affine
		for i := lo; i < hi; i++ {
			t.ScalarMultiplication(&right[i], k)
			left[i].Add(&left[i], &t)
		}
	})
}

// foldG2 sets left_i = left_i + right_i·x.
func foldG2(left, right []bls.G2Affine, x *fr.Element) {
	k := bigOf(x)
	parallel(len(left), func(lo, hi int) {
		var t bls.G2Affine
		for i := lo; i < hi; i++ {
			t.ScalarMultiplication(&right[i], k)
			left[i].Add(&left[i], &t)
		}
	})
}

func msmG1(p []bls.G1Affine, s []fr.Element) (bls.G1Affine, error) {
	var out bls.G1Affine
	if len(p) == 0 {
		return out, nil
	}
	_, err := out.MultiExp(p, s, ecc.MultiExpConfig{})
	return out, err
}

func msmG2(p []bls.G2Affine, s []fr.Element) (bls.G2Affine, error) {
	var out bls.G2Affine
	if len(p) == 0 {
		return out, nil
	}
	_, err := out.MultiExp(p, s, ecc.MultiExpConfig{})
	return out, err
}

// polyCoeffs returns the coefficients of Π_j (1 + x_j·(shift·X)^{2^j}) for the challenges in
// the order given (polynomial_coefficients_from_transcript; callers pass them reversed).
func polyCoeffs(xs []fr.Element, shift *fr.Element) []fr.Element {
	coeffs := make([]fr.Element, 1, 1<<len(xs))
	coeffs[0].SetOne()
	pow := *shift
	for i := range xs {
		if i > 0 {
			pow.Square(&pow)
		}
		var f fr.Element
		f.Mul(&xs[i], &pow)
		n := len(coeffs)
		for j := range n {
			var c fr.Element
			c.Mul(&coeffs[j], &f)
			coeffs = append(coeffs, c)
		}
	}
	return coeffs
}

// polyEval evaluates that polynomial at z in product form
// (polynomial_evaluation_product_form_from_transcript).
func polyEval(xs []fr.Element, z, shift *fr.Element) fr.Element {
	var pz, one, res, t fr.Element
	one.SetOne()
	pz.Mul(z, shift)
	t.Mul(&xs[0], &pz)
	res.Add(&one, &t)
	for i := 1; i < len(xs); i++ {
		pz.Square(&pz)
		t.Mul(&xs[i], &pz)
		t.Add(&t, &one)
		res.Mul(&res, &t)
	}
	return res
}

// quotient returns (p(X) − p(z))/(X − z) by synthetic division (p(z) only changes the
// remainder).
func quotient(p []fr.Element, z *fr.Element) []fr.Element {
	d := len(p) - 1
	q := make([]fr.Element, d)
	q[d-1] = p[d]
	for i := d - 1; i >= 1; i-- {
		var t fr.Element
		t.Mul(z, &q[i])
		q[i-1].Add(&p[i], &t)
	}
	return q
}

func bigOfInt(n int) *big.Int { return big.NewInt(int64(n)) }
