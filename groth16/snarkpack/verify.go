package snarkpack

import (
	"context"
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/groth16"
)

// ErrInvalid marks an aggregate that does not verify.
var ErrInvalid = errors.New("SnarkPack aggregate does not verify")

// Verify is bellperson's verify_aggregate_proof: inputs holds each aggregated proof's public
// inputs (ONE excluded), in order, one entry per proof (padding included). It checks the
// GIPA recursion of TIPP and MIPP, the KZG openings of the final commitment keys and the
// aggregated Groth16 equation, each as its own pairing equation.
func Verify(ctx context.Context, vk *VerifierKey, gvk *groth16.VerifyingKey, inputs [][]fr.Element, p *AggregateProof, include []byte, v Version) error {
	if v != V1 && v != V2 {
		return fmt.Errorf("snarkpack: unknown version %d", int(v))
	}
	if err := p.check(); err != nil {
		return err
	}
	n := p.NumProofs()
	if n != vk.N {
		return fmt.Errorf("snarkpack: verifier key for %d proofs, aggregate of %d", vk.N, n)
	}
	if len(inputs) != n {
		return fmt.Errorf("snarkpack: %d public input vectors for an aggregate of %d proofs", len(inputs), n)
	}
	for i, in := range inputs {
		if len(in)+1 != len(gvk.IC) {
			return fmt.Errorf("snarkpack: proof %d has %d public inputs, the verifying key takes %d", i, len(in), len(gvk.IC)-1)
		}
	}
	st := fold(ctx, p, include, v)
	if err := ctx.Err(); err != nil {
		return err
	}
	g := &p.GIPA
	r, z, chs, chsInv := st.r, st.z, st.chs, st.chsInv
	var one fr.Element
	one.SetOne()
	var checks []check
	// KZG opening of v: e(−g, v_k − h·f_v(z)) · e(g^{α or β} − g·z, π) = 1.
	fvz := polyEval(chsInv, &z, &one)
	var ng bls.G1Affine
	ng.Neg(&vk.G)
	for k, gk := range []*bls.G1Affine{&vk.GAlpha, &vk.GBeta} {
		left := subG2(&g.FinalVKey[k], mulG2(&vk.H, &fvz))
		right := subG1(gk, mulG1(&vk.G, &z))
		checks = append(checks, check{name: fmt.Sprintf("KZG opening of v%d", k+1), P: []bls.G1Affine{ng, right}, Q: []bls.G2Affine{left, p.VKeyOpening[k]}})
	}
	// KZG opening of w (scaled by r^{-1}): e(w_k − g·f_w(z), −h) · e(π, h^{α or β} − h·z) = 1.
	var rInv fr.Element
	rInv.Inverse(&r)
	fwz := polyEval(chs, &z, &rInv)
	var zn fr.Element
	zn.Exp(z, bigOfInt(n))
	fwz.Mul(&fwz, &zn)
	var nh bls.G2Affine
	nh.Neg(&vk.H)
	for k, hk := range []*bls.G2Affine{&vk.HAlpha, &vk.HBeta} {
		left := subG1(&g.FinalWKey[k], mulG1(&vk.G, &fwz))
		right := subG2(hk, mulG2(&vk.H, &z))
		checks = append(checks, check{name: fmt.Sprintf("KZG opening of w%d", k+1), P: []bls.G1Affine{left, p.WKeyOpening[k]}, Q: []bls.G2Affine{nh, right}})
	}
	tm, err := st.tippMipp(p)
	if err != nil {
		return err
	}
	checks = append(checks, tm...)
	// Groth16, aggregated: e(α·Σr^i, β)·e(ic_0·Σr^i + Σ_k ic_{k+1}·Σ_i a_{i,k}r^i, γ)·e(agg_c, δ) = ip_ab.
	rv := powers(&r, n)
	var rSum fr.Element
	for i := range rv {
		rSum.Add(&rSum, &rv[i])
	}
	alpha := mulG1(&gvk.Alpha1, &rSum)
	scal := make([]fr.Element, len(gvk.IC))
	scal[0] = rSum
	for i := range n {
		for k := range inputs[i] {
			var t fr.Element
			t.Mul(&inputs[i][k], &rv[i])
			scal[k+1].Add(&scal[k+1], &t)
		}
	}
	var ic bls.G1Affine
	if _, err := ic.MultiExp(gvk.IC, scal, ecc.MultiExpConfig{}); err != nil {
		return err
	}
	checks = append(checks, check{name: "aggregated Groth16 equation", P: []bls.G1Affine{alpha, ic, p.AggC}, Q: []bls.G2Affine{gvk.Beta2, gvk.Gamma2, gvk.Delta2}, want: &p.IPAB})

	errs := make([]error, len(checks))
	fns := make([]func(), len(checks))
	for i := range checks {
		fns[i] = func() { errs[i] = checks[i].run() }
	}
	runAll(fns)
	return errors.Join(errs...)
}

// check is one pairing equation: Π e(P_i, Q_i) equals want (1 when want is nil).
type check struct {
	name string
	P    []bls.G1Affine
	Q    []bls.G2Affine
	want *bls.GT
}

func (c *check) run() error {
	got, err := pairing(c.P, c.Q)
	if err != nil {
		return fmt.Errorf("snarkpack: %s: %w", c.name, err)
	}
	if c.want == nil {
		if !got.IsOne() {
			return fmt.Errorf("%w: %s", ErrInvalid, c.name)
		}
		return nil
	}
	if !got.Equal(c.want) {
		return fmt.Errorf("%w: %s", ErrInvalid, c.name)
	}
	return nil
}

// mulExp sets acc = acc · l^x · r^xi.
func mulExp(acc, l *bls.GT, x *fr.Element, r *bls.GT, xi *fr.Element) {
	a, b := gtExp(l, x), gtExp(r, xi)
	acc.Mul(acc, &a)
	acc.Mul(acc, &b)
}

func jac(p *bls.G1Affine) *bls.G1Jac {
	var j bls.G1Jac
	j.FromAffine(p)
	return &j
}

func mulG1(p *bls.G1Affine, s *fr.Element) bls.G1Affine {
	var out bls.G1Affine
	out.ScalarMultiplication(p, bigOf(s))
	return out
}

func mulG2(p *bls.G2Affine, s *fr.Element) bls.G2Affine {
	var out bls.G2Affine
	out.ScalarMultiplication(p, bigOf(s))
	return out
}

func subG1(a *bls.G1Affine, b bls.G1Affine) bls.G1Affine {
	var out bls.G1Affine
	out.Sub(a, &b)
	return out
}

func subG2(a *bls.G2Affine, b bls.G2Affine) bls.G2Affine {
	var out bls.G2Affine
	out.Sub(a, &b)
	return out
}

// folded is what the GIPA verifier derives from the transcript: the random r, the round
// challenges (last round first), the KZG point z, and the commitments folded with them.
type folded struct {
	r, z, finalR          fr.Element
	chs, chsInv           []fr.Element
	tab, uab, zab, tc, uc bls.GT
	zc                    bls.G1Jac
}

// fold replays the transcript of p (gipa_verify_tipp_mipp and the KZG challenge).
func fold(ctx context.Context, p *AggregateProof, include []byte, v Version) *folded {
	st := &folded{}
	hcom := newTranscript("hcom").gt(&p.ComAB[0], &p.ComAB[1], &p.ComC[0], &p.ComC[1]).challenge()
	st.r = newTranscript("random-r").fr(&hcom).bytes(include).challenge()
	g := &p.GIPA
	l := len(g.CommsAB)
	chs := make([]fr.Element, l)
	chsInv := make([]fr.Element, l)
	cInv := newTranscript("gipa-0").fr(&hcom).gt(&p.IPAB).g1(&p.AggC).fr(&st.r).challenge()
	for i := range l {
		ab, cc := &g.CommsAB[i], &g.CommsC[i]
		if i > 0 || v == V2 {
			cInv = newTranscript(fmt.Sprintf("gipa-%d", i)).fr(&cInv).gt(&g.ZAB[i][0], &g.ZAB[i][1]).g1(&g.ZC[i][0], &g.ZC[i][1]).
				gt(&ab[0][0], &ab[0][1], &ab[1][0], &ab[1][1], &cc[0][0], &cc[0][1], &cc[1][0], &cc[1][1]).challenge()
		}
		chsInv[i] = cInv
		chs[i].Inverse(&cInv)
	}
	extra := extraChallenge(g, &chs[l-1])
	st.tab, st.uab, st.zab = p.ComAB[0], p.ComAB[1], p.IPAB
	st.tc, st.uc = p.ComC[0], p.ComC[1]
	st.zc.FromAffine(&p.AggC)
	for i := range l {
		if ctx.Err() != nil {
			return st
		}
		x, xi := &chs[i], &chsInv[i]
		ab, cc := &g.CommsAB[i], &g.CommsC[i]
		mulExp(&st.tab, &ab[0][0], x, &ab[1][0], xi)
		mulExp(&st.uab, &ab[0][1], x, &ab[1][1], xi)
		mulExp(&st.zab, &g.ZAB[i][0], x, &g.ZAB[i][1], xi)
		mulExp(&st.tc, &cc[0][0], x, &cc[1][0], xi)
		mulExp(&st.uc, &cc[0][1], x, &cc[1][1], xi)
		var t bls.G1Jac
		t.ScalarMultiplication(jac(&g.ZC[i][0]), bigOf(x))
		st.zc.AddAssign(&t)
		t.ScalarMultiplication(jac(&g.ZC[i][1]), bigOf(xi))
		st.zc.AddAssign(&t)
	}
	reverse(chs)
	reverse(chsInv)
	st.chs, st.chsInv = chs, chsInv
	var one fr.Element
	one.SetOne()
	st.finalR = polyEval(chsInv, &st.r, &one)
	st.z = kzgPoint(g, &chs[0], &extra, v)
	return st
}

// tippMipp checks MIPP's Z (no pairing) and returns the pairing equations of the folded
// values: TIPP's Z, T, U for A and B and MIPP's T, U for C. None needs the SRS or the
// verifying key.
func (st *folded) tippMipp(p *AggregateProof) ([]check, error) {
	g := &p.GIPA
	var fz bls.G1Jac
	fz.ScalarMultiplication(jac(&g.FinalC), bigOf(&st.finalR))
	if !fz.Equal(&st.zc) {
		return nil, fmt.Errorf("%w: MIPP Z", ErrInvalid)
	}
	return []check{
		{name: "TIPP Z", P: []bls.G1Affine{g.FinalA}, Q: []bls.G2Affine{g.FinalB}, want: &st.zab},
		{name: "TIPP T", P: []bls.G1Affine{g.FinalA, g.FinalWKey[0]}, Q: []bls.G2Affine{g.FinalVKey[0], g.FinalB}, want: &st.tab},
		{name: "TIPP U", P: []bls.G1Affine{g.FinalA, g.FinalWKey[1]}, Q: []bls.G2Affine{g.FinalVKey[1], g.FinalB}, want: &st.uab},
		{name: "MIPP T", P: []bls.G1Affine{g.FinalC}, Q: []bls.G2Affine{g.FinalVKey[0]}, want: &st.tc},
		{name: "MIPP U", P: []bls.G1Affine{g.FinalC}, Q: []bls.G2Affine{g.FinalVKey[1]}, want: &st.uc},
	}, nil
}
