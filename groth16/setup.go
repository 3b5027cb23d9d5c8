package groth16

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

// Toxic is the secret of a key generation. Whoever knows it can forge proofs.
type Toxic struct {
	Tau, Alpha, Beta, Gamma, Delta fr.Element
}

// SeededReader is a deterministic byte stream: SHA-256(tag ‖ seed ‖ u64be(counter)) blocks.
// It is for reproducible tests and devnets only.
type SeededReader struct {
	seed    []byte
	counter uint64
	buf     []byte
}

// NewSeededReader returns the stream for seed.
func NewSeededReader(seed []byte) *SeededReader {
	return &SeededReader{seed: append([]byte(nil), seed...)}
}

// Read fills p; it never fails.
func (s *SeededReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.buf) == 0 {
			h := sha256.New()
			h.Write([]byte("snarkd/groth16 insecure setup v1"))
			h.Write(s.seed)
			var c [8]byte
			binary.BigEndian.PutUint64(c[:], s.counter)
			h.Write(c[:])
			s.counter++
			s.buf = h.Sum(nil)
		}
		k := copy(p[n:], s.buf)
		s.buf = s.buf[k:]
		n += k
	}
	return n, nil
}

// NewToxic draws non-zero secrets from rng.
func NewToxic(rng io.Reader) (*Toxic, error) {
	t := new(Toxic)
	for _, e := range []*fr.Element{&t.Tau, &t.Alpha, &t.Beta, &t.Gamma, &t.Delta} {
		for e.IsZero() {
			if err := randomElement(rng, e); err != nil {
				return nil, fmt.Errorf("groth16: drawing setup secrets: %w", err)
			}
		}
	}
	return t, nil
}

// SetupFromSeed generates bellperson-format parameters for circuit from seed.
//
// INSECURE: anyone who knows the seed can forge proofs. For tests and devnets only; mainnet
// Filecoin uses the parameters of its trusted-setup ceremony.
func SetupFromSeed(ctx context.Context, circuit cs.Circuit, seed []byte) (*Parameters, error) {
	t, err := NewToxic(NewSeededReader(seed))
	if err != nil {
		return nil, err
	}
	return SetupWithToxic(ctx, circuit, t)
}

// SetupWithToxic generates parameters for circuit from explicit secrets, as bellperson's
// generate_parameters: the input rows input_i·0=0 are appended, A and B queries keep only
// variables with a non-zero coefficient (the density rules), ic and l divide by γ and δ.
func SetupWithToxic(ctx context.Context, circuit cs.Circuit, t *Toxic) (*Parameters, error) {
	setupTrackerFrom(ctx).Begin(SetupSynthesis, 0)
	r1cs, err := cs.RecordR1CS(ctx, circuit)
	if err != nil {
		return nil, err
	}
	return SetupR1CS(ctx, r1cs, t)
}

// SetupR1CS generates parameters for recorded constraints (which must include the input rows,
// as cs.RecordR1CS produces).
func SetupR1CS(ctx context.Context, r1cs *cs.R1CS, t *Toxic) (*Parameters, error) {
	n := r1cs.NumConstraints()
	m := cs.Shape{NumConstraints: n}.DomainSize()
	ni, na := r1cs.NumInputs, r1cs.NumAux
	if ni == 0 {
		return nil, errors.New("groth16: setup needs the ONE input")
	}
	// The tracker (a progress display's) counts the matrix rows evaluated, then the points.
	tr := setupTrackerFrom(ctx)
	defer tr.End()
	tr.Begin(SetupEvaluation, 3*int64(n))

	// Lagrange basis at τ over the domain of bellperson's ω:
	// L_k(τ) = (τ^m − 1)/m · ω^k/(τ − ω^k).
	dom := Domain(uint64(m))
	var tm, one fr.Element
	one.SetOne()
	tm.Exp(t.Tau, new(big.Int).SetUint64(uint64(m)))
	var zt fr.Element
	zt.Sub(&tm, &one) // t(τ) = τ^m − 1
	if zt.IsZero() {
		return nil, errors.New("groth16: τ is in the evaluation domain")
	}
	lag := make([]fr.Element, m)
	omega := fr.One()
	for k := 0; k < m; k++ {
		lag[k].Sub(&t.Tau, &omega)
		omega.Mul(&omega, &dom.Generator)
	}
	lag = fr.BatchInvert(lag)
	var scale fr.Element
	scale.Mul(&zt, &dom.CardinalityInv)
	omega.SetOne()
	for k := 0; k < m; k++ {
		lag[k].Mul(&lag[k], &omega).Mul(&lag[k], &scale)
		omega.Mul(&omega, &dom.Generator)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// u, v, w per variable: inputs at [0, ni), aux at [ni, ni+na).
	nv := ni + na
	u, v, w := make([]fr.Element, nv), make([]fr.Element, nv), make([]fr.Element, nv)
	idx := func(x cs.Variable) int {
		if x.IsInput() {
			return x.Index()
		}
		return ni + x.Index()
	}
	var tmp fr.Element
	for _, mat := range []struct {
		m   *cs.Matrix
		dst []fr.Element
	}{{&r1cs.A, u}, {&r1cs.B, v}, {&r1cs.C, w}} {
		for k := 0; k < n; k++ {
			for _, term := range mat.m.Row(k) {
				tmp.Mul(&term.Coeff, &lag[k])
				j := idx(term.Var)
				mat.dst[j].Add(&mat.dst[j], &tmp)
			}
			if k&4095 == 4095 {
				tr.Add(4096)
			}
		}
		tr.Add(int64(n & 4095))
	}
	lag = nil
	aAux, bIn, bAux := r1cs.Densities()

	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&t.Gamma)
	deltaInv.Inverse(&t.Delta)
	// β·u + α·v + w, divided by γ (inputs) or δ (aux).
	lc := make([]fr.Element, nv)
	for j := 0; j < nv; j++ {
		var x, y fr.Element
		x.Mul(&t.Beta, &u[j])
		y.Mul(&t.Alpha, &v[j])
		x.Add(&x, &y).Add(&x, &w[j])
		if j < ni {
			lc[j].Mul(&x, &gammaInv)
		} else {
			lc[j].Mul(&x, &deltaInv)
		}
	}
	w = nil

	aScalars := make([]fr.Element, 0, ni+aAux.Count())
	aScalars = append(aScalars, u[:ni]...)
	for j := 0; j < na; j++ {
		if aAux.IsSet(j) {
			aScalars = append(aScalars, u[ni+j])
		}
	}
	bScalars := make([]fr.Element, 0, bIn.Count()+bAux.Count())
	for i := 0; i < ni; i++ {
		if bIn.IsSet(i) {
			bScalars = append(bScalars, v[i])
		}
	}
	for j := 0; j < na; j++ {
		if bAux.IsSet(j) {
			bScalars = append(bScalars, v[ni+j])
		}
	}
	u, v = nil, nil

	hScalars := make([]fr.Element, m-1)
	var pw fr.Element
	pw.Mul(&zt, &deltaInv)
	for i := range hScalars {
		hScalars[i] = pw
		pw.Mul(&pw, &t.Tau)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	_, _, g1, g2 := bls.Generators()
	p := new(Parameters)
	mul1 := func(s *fr.Element) bls.G1Affine {
		var out bls.G1Affine
		var b big.Int
		out.ScalarMultiplication(&g1, s.BigInt(&b))
		return out
	}
	mul2 := func(s *fr.Element) bls.G2Affine {
		var out bls.G2Affine
		var b big.Int
		out.ScalarMultiplication(&g2, s.BigInt(&b))
		return out
	}
	p.VK.Alpha1 = mul1(&t.Alpha)
	p.VK.Beta1 = mul1(&t.Beta)
	p.VK.Beta2 = mul2(&t.Beta)
	p.VK.Gamma2 = mul2(&t.Gamma)
	p.VK.Delta1 = mul1(&t.Delta)
	p.VK.Delta2 = mul2(&t.Delta)
	// One G1 table serves all five G1 vectors, sized for their total.
	nG1 := len(lc) + len(aScalars) + len(bScalars) + len(hScalars)
	tr.Begin(SetupG1, int64(nG1))
	t1, err := newG1FixedBase(ctx, &g1, fbWindow(nG1, bls.SizeOfG1AffineUncompressed))
	if err != nil {
		return nil, err
	}
	for _, v := range []struct {
		dst *[]bls.G1Affine
		s   []fr.Element
	}{{&p.VK.IC, lc[:ni]}, {&p.L, lc[ni:]}, {&p.A, aScalars}, {&p.BG1, bScalars}, {&p.H, hScalars}} {
		if *v.dst, err = t1.mul(ctx, v.s); err != nil {
			return nil, err
		}
	}
	t1 = nil // release the table before the G2 one is built
	tr.Begin(SetupG2, int64(len(bScalars)))
	t2, err := newG2FixedBase(ctx, &g2, fbWindow(len(bScalars), bls.SizeOfG2AffineUncompressed))
	if err != nil {
		return nil, err
	}
	if p.BG2, err = t2.mul(ctx, bScalars); err != nil {
		return nil, err
	}

	for _, s := range []struct {
		name string
		pts  []bls.G1Affine
	}{{"ic", p.VK.IC}, {"l", p.L}, {"a", p.A}, {"b_g1", p.BG1}, {"h", p.H}} {
		for i := range s.pts {
			if s.pts[i].IsInfinity() {
				return nil, fmt.Errorf("groth16: setup produced the identity at %s[%d] (a variable that no constraint uses?)", s.name, i)
			}
		}
	}
	return p, nil
}
