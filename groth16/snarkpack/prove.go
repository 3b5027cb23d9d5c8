package snarkpack

import (
	"context"
	"fmt"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/groth16"
)

// Aggregate is bellperson's aggregate_proofs: it aggregates len(proofs) proofs (a power of two
// equal to pk.N) with include bound into the transcript (Filecoin passes a hash of the
// sectors' comm_r and seeds).
func Aggregate(ctx context.Context, pk *ProverKey, include []byte, proofs []*groth16.Proof, v Version) (*AggregateProof, error) {
	n := len(proofs)
	if n < 2 || n&(n-1) != 0 {
		return nil, fmt.Errorf("snarkpack: aggregating %d proofs: want a power of two of at least 2", n)
	}
	if pk.N != n {
		return nil, fmt.Errorf("snarkpack: key specialised for %d proofs, given %d", pk.N, n)
	}
	if v != V1 && v != V2 {
		return nil, fmt.Errorf("snarkpack: unknown version %d", int(v))
	}
	start := time.Now()
	a := make([]bls.G1Affine, n)
	b := make([]bls.G2Affine, n)
	c := make([]bls.G1Affine, n)
	for i, p := range proofs {
		a[i], b[i], c[i] = p.A, p.B, p.C
	}
	comAB, err := commitPair(pk.VKeyA, pk.VKeyB, pk.WKeyA, pk.WKeyB, a, b)
	if err != nil {
		return nil, err
	}
	comC, err := commitSingle(pk.VKeyA, pk.VKeyB, c)
	if err != nil {
		return nil, err
	}
	hcom := newTranscript("hcom").gt(&comAB[0], &comAB[1], &comC[0], &comC[1]).challenge()
	r := newTranscript("random-r").fr(&hcom).bytes(include).challenge()
	rVec := powers(&r, n)
	rInv := fr.BatchInvert(rVec)
	bR := scaleG2(b, rVec)
	ipAB, err := pairing(a, bR)
	if err != nil {
		return nil, err
	}
	aggC, err := msmG1(c, rVec)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wA, wB := scaleG1(pk.WKeyA, rInv), scaleG1(pk.WKeyB, rInv)
	p := &AggregateProof{ComAB: comAB, ComC: comC, IPAB: ipAB, AggC: aggC}
	chs, chsInv, extra, err := gipa(ctx, &p.GIPA, a, bR, c, rVec,
		append([]bls.G2Affine(nil), pk.VKeyA...), append([]bls.G2Affine(nil), pk.VKeyB...), wA, wB, &ipAB, &aggC, &hcom, v)
	if err != nil {
		return nil, err
	}
	// The KZG openings take the challenges last round first.
	reverse(chs)
	reverse(chsInv)
	g := &p.GIPA
	z := kzgPoint(g, &chs[0], &extra, v)
	var one fr.Element
	one.SetOne()
	// v keys: f_v(X) = Π (1 + x_j^{-1} X^{2^j}) over h^{α^i} and h^{β^i}.
	fv := polyCoeffs(chsInv, &one)
	qv := quotient(fv, &z)
	if p.VKeyOpening[0], err = msmG2(pk.HAlpha[:len(qv)], qv); err != nil {
		return nil, err
	}
	if p.VKeyOpening[1], err = msmG2(pk.HBeta[:len(qv)], qv); err != nil {
		return nil, err
	}
	// w keys: f_w(X) = X^n · Π (1 + x_j (r^{-1}X)^{2^j}) over g^{α^i} and g^{β^i}, i < 2n.
	var rInvShift fr.Element
	rInvShift.Inverse(&r)
	f := polyCoeffs(chs, &rInvShift)
	fw := make([]fr.Element, n, 2*n)
	fw = append(fw, f...)
	qw := quotient(fw, &z)
	if p.WKeyOpening[0], err = msmG1(pk.GAlpha[:len(qw)], qw); err != nil {
		return nil, err
	}
	if p.WKeyOpening[1], err = msmG1(pk.GBeta[:len(qw)], qw); err != nil {
		return nil, err
	}
	log.Debugw("aggregated", "proofs", n, "version", v, "took", time.Since(start))
	return p, nil
}

func reverse(x []fr.Element) {
	for i, j := 0, len(x)-1; i < j; i, j = i+1, j-1 {
		x[i], x[j] = x[j], x[i]
	}
}

// gipa runs the GIPA recursion of TIPP (A, B with the pair commitment) and MIPP (C with the
// scalars r) together, filling g; it returns the round challenges x_j, their inverses and
// the extra challenge that links the recursion to the KZG openings. The slices are folded
// in place.
func gipa(ctx context.Context, g *GIPAProof, a []bls.G1Affine, b []bls.G2Affine, c []bls.G1Affine, r []fr.Element,
	vA, vB []bls.G2Affine, wA, wB []bls.G1Affine, ipAB *bls.GT, aggC *bls.G1Affine, hcom *fr.Element, v Version) (chs, chsInv []fr.Element, extra fr.Element, err error) {
	g.NProofs = uint32(len(a))
	cInv := newTranscript("gipa-0").fr(hcom).gt(ipAB).g1(aggC).fr(&r[1]).challenge()
	var x fr.Element
	for i := 0; len(a) > 1; i++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, extra, err
		}
		s := len(a) / 2
		aL, aR, bL, bR, cL, cR, rL, rR := a[:s], a[s:], b[:s], b[s:], c[:s], c[s:], r[:s], r[s:]
		var tabL, tabR, tucL, tucR Commitment
		var zabL, zabR bls.GT
		var zcL, zcR bls.G1Affine
		errs := make([]error, 8)
		run := []func(){
			func() { tabL, errs[0] = commitPair(vA[:s], vB[:s], wA[s:], wB[s:], aR, bL) },
			func() { tabR, errs[1] = commitPair(vA[s:], vB[s:], wA[:s], wB[:s], aL, bR) },
			func() { zabL, errs[2] = pairing(aR, bL) },
			func() { zabR, errs[3] = pairing(aL, bR) },
			func() { zcL, errs[4] = msmG1(cR, rL) },
			func() { zcR, errs[5] = msmG1(cL, rR) },
			func() { tucL, errs[6] = commitSingle(vA[:s], vB[:s], cR) },
			func() { tucR, errs[7] = commitSingle(vA[s:], vB[s:], cL) },
		}
		runAll(run)
		for _, e := range errs {
			if e != nil {
				return nil, nil, extra, e
			}
		}
		if i > 0 || v == V2 {
			// V1 keeps the gipa-0 challenge for the first round; V2 binds it to the round's
			// values as every later round does.
			cInv = newTranscript(fmt.Sprintf("gipa-%d", i)).fr(&cInv).gt(&zabL, &zabR).g1(&zcL, &zcR).
				gt(&tabL[0], &tabL[1], &tabR[0], &tabR[1], &tucL[0], &tucL[1], &tucR[0], &tucR[1]).challenge()
		}
		x.Inverse(&cInv)
		foldG1(aL, aR, &x)
		foldG2(bL, bR, &cInv)
		foldG1(cL, cR, &x)
		for j := range rL {
			var t fr.Element
			t.Mul(&rR[j], &cInv)
			rL[j].Add(&rL[j], &t)
		}
		foldG2(vA[:s], vA[s:], &cInv)
		foldG2(vB[:s], vB[s:], &cInv)
		foldG1(wA[:s], wA[s:], &x)
		foldG1(wB[:s], wB[s:], &x)
		a, b, c, r, vA, vB, wA, wB = aL, bL, cL, rL, vA[:s], vB[:s], wA[:s], wB[:s]

		g.CommsAB = append(g.CommsAB, [2]Commitment{tabL, tabR})
		g.CommsC = append(g.CommsC, [2]Commitment{tucL, tucR})
		g.ZAB = append(g.ZAB, [2]bls.GT{zabL, zabR})
		g.ZC = append(g.ZC, [2]bls.G1Affine{zcL, zcR})
		chs = append(chs, x)
		chsInv = append(chsInv, cInv)
	}
	g.FinalA, g.FinalB, g.FinalC = a[0], b[0], c[0]
	g.FinalVKey = [2]bls.G2Affine{vA[0], vB[0]}
	g.FinalWKey = [2]bls.G1Affine{wA[0], wB[0]}
	extra = extraChallenge(g, &chs[len(chs)-1])
	return chs, chsInv, extra, nil
}

// extraChallenge is the "gipa-extra-link" challenge over the last round and the final values.
func extraChallenge(g *GIPAProof, last *fr.Element) fr.Element {
	l := len(g.CommsAB) - 1
	ab, cc := &g.CommsAB[l], &g.CommsC[l]
	return newTranscript("gipa-extra-link").fr(last).g1(&g.FinalA).g2(&g.FinalB).g1(&g.FinalC).
		gt(&g.ZAB[l][0], &g.ZAB[l][1]).g1(&g.ZC[l][0], &g.ZC[l][1]).
		gt(&ab[0][0], &ab[0][1], &ab[1][0], &ab[1][1], &cc[0][0], &cc[0][1], &cc[1][0], &cc[1][1]).challenge()
}

// kzgPoint is the "random-z" challenge at which the final keys are opened: V1 binds the last
// round's challenge (first, once reversed) and the final keys, V2 the extra challenge, the keys
// and the final A, B, C.
func kzgPoint(g *GIPAProof, lastCh, extra *fr.Element, v Version) fr.Element {
	if v == V1 {
		return newTranscript("random-z").fr(lastCh).g2(&g.FinalVKey[0], &g.FinalVKey[1]).g1(&g.FinalWKey[0], &g.FinalWKey[1]).challenge()
	}
	return newTranscript("random-z").fr(extra).g2(&g.FinalVKey[0], &g.FinalVKey[1]).g1(&g.FinalWKey[0], &g.FinalWKey[1]).
		g1(&g.FinalA).g2(&g.FinalB).g1(&g.FinalC).challenge()
}

// runAll runs the functions concurrently and waits for them.
func runAll(fns []func()) {
	done := make(chan struct{}, len(fns))
	for _, f := range fns {
		go func() {
			defer func() { done <- struct{}{} }()
			f()
		}()
	}
	for range fns {
		<-done
	}
}
