package groth16

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/internal/cores"
)

var log = logging.Logger("snarkd/groth16")

// ErrUnexpectedIdentity is bellperson's error for a key whose δ is the identity.
var ErrUnexpectedIdentity = errors.New("groth16: delta is the identity")

// ShapeMismatchError reports parameters that do not belong to the synthesized circuit.
type ShapeMismatchError struct {
	What    string
	Params  int
	Circuit int
}

func (e *ShapeMismatchError) Error() string {
	return fmt.Sprintf("groth16: parameters do not match the circuit: %s is %d in the parameters, %d in the circuit",
		e.What, e.Params, e.Circuit)
}

// CheckShape verifies that pk fits the assignment (bellperson asserts the same lengths).
func CheckShape(pk *Parameters, pa *cs.ProvingAssignment) error {
	m := cs.Shape{NumConstraints: pa.Rows()}.DomainSize()
	checks := []struct {
		what string
		p, c int
	}{
		{"inputs (ic length)", len(pk.VK.IC), len(pa.Input)},
		{"h length (domain − 1)", len(pk.H), m - 1},
		{"l length (aux count)", len(pk.L), len(pa.Aux)},
		{"a length (inputs + A-aux density)", len(pk.A), len(pa.Input) + pa.AAuxDensity.Count()},
		{"b_g1 length (B densities)", len(pk.BG1), pa.BInputDensity.Count() + pa.BAuxDensity.Count()},
		{"b_g2 length (B densities)", len(pk.BG2), pa.BInputDensity.Count() + pa.BAuxDensity.Count()},
	}
	for _, c := range checks {
		if c.p != c.c {
			return &ShapeMismatchError{What: c.what, Params: c.p, Circuit: c.c}
		}
	}
	if pa.Deferred() == nil && (len(pa.B) != len(pa.A) || len(pa.C) != len(pa.A)) {
		return fmt.Errorf("groth16: a, b, c have lengths %d, %d, %d", len(pa.A), len(pa.B), len(pa.C))
	}
	return nil
}

var domains sync.Map // uint64 → *domain

// precomputeMaxSize is the largest domain whose twiddle and coset tables are kept (about 3m
// field elements: 384 MiB at 2^22). Larger domains compute them on the fly: at Filecoin sizes
// (2^27) the tables would outweigh a, b and c.
var precomputeMaxSize uint64 = 1 << 22

type domain struct {
	*fft.Domain
	precomputed bool
}

// Domain returns the (cached) radix-2 domain of size m; its ω is bellperson's (both derive it
// from the same 2^32-th root of unity) and the coset generator is 7, bellperson's
// MULTIPLICATIVE_GENERATOR.
func Domain(m uint64) *fft.Domain { return getDomain(m).Domain }

func getDomain(m uint64) *domain {
	if d, ok := domains.Load(m); ok {
		return d.(*domain)
	}
	d := &domain{precomputed: m <= precomputeMaxSize}
	if d.precomputed {
		d.Domain = fft.NewDomain(m)
	} else {
		d.Domain = fft.NewDomain(m, fft.WithoutPrecompute())
	}
	v, _ := domains.LoadOrStore(m, d)
	return v.(*domain)
}

// scalePowers multiplies v[i] by g^i, in parallel chunks without a table.
func scalePowers(v []fr.Element, g fr.Element) {
	_ = parallelFor(len(v), func(lo, hi int) error {
		var w fr.Element
		w.Exp(g, big.NewInt(int64(lo)))
		for i := lo; i < hi; i++ {
			v[i].Mul(&v[i], &w)
			w.Mul(&w, &g)
		}
		return nil
	})
}

// padTo returns v extended with zeros to length m, in place when its capacity allows.
func padTo(v []fr.Element, m int) []fr.Element {
	n := len(v)
	if cap(v) >= m {
		v = v[:m]
	} else {
		w := make([]fr.Element, m)
		copy(w, v)
		v = w
	}
	clear(v[n:])
	return v
}

// ComputeH computes the coefficients of h(X) = (A(X)·B(X) − C(X)) / Z(X) as bellperson does
// (evaluations on the coset g·H with generator 7, divided by the constant Z(g·X) there) and
// returns the first m − 1 of them. Since C has degree < m, transforming (a·b − c)/Z back from
// the coset equals transforming a·b back minus C's coefficients, both over Z: c only needs its
// inverse FFT (six transforms instead of seven, the same result). It overwrites a, b and c;
// the result aliases a's storage.
func ComputeH(ctx context.Context, a, b, c []fr.Element) ([]fr.Element, error) {
	n := len(a)
	if len(b) != n || len(c) != n {
		return nil, fmt.Errorf("groth16: a, b, c have lengths %d, %d, %d", len(a), len(b), len(c))
	}
	m := cs.Shape{NumConstraints: n}.DomainSize()
	if m == 1 {
		return a[:0], nil // a one-point domain has no h coefficients (bellperson's h query is empty)
	}
	dom := getDomain(uint64(m))
	a, b, c = padTo(a, m), padTo(b, m), padTo(c, m)
	nb := fft.WithNbTasks(cores.N())
	g := dom.FrMultiplicativeGen
	for _, v := range [][]fr.Element{a, b} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Evaluations → coefficients → ·g^i → evaluations on the coset g·H. With tables, gnark
		// scales bit-reversed coefficients itself and returns natural order; without, the
		// coefficients are put back in order, scaled here, and the evaluations stay
		// bit-reversed (the same order for a and b, which is all a·b needs).
		dom.FFTInverse(v, fft.DIF, nb)
		if dom.precomputed {
			dom.FFT(v, fft.DIT, fft.OnCoset(), nb)
		} else {
			fft.BitReverse(v)
			scalePowers(v, g)
			dom.FFT(v, fft.DIF, nb)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// C's coefficients, bit-reversed.
	dom.FFTInverse(c, fft.DIF, nb)
	_ = parallelFor(m, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			a[i].Mul(&a[i], &b[i])
		}
		return nil
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Coset evaluations of A·B → coefficients (scaled by g^−i): bit-reversed with tables, like
	// c's; natural order without, where c is put in order instead.
	if dom.precomputed {
		dom.FFTInverse(a, fft.DIF, fft.OnCoset(), nb)
	} else {
		dom.FFTInverse(a, fft.DIT, nb)
		scalePowers(a, dom.FrMultiplicativeGenInv)
		fft.BitReverse(c)
	}
	// Z(gX) = g^m·X^m − 1 = g^m − 1 on the coset (X^m = 1).
	var zInv fr.Element
	zInv.Exp(g, new(big.Int).SetUint64(uint64(m)))
	one := fr.One()
	zInv.Sub(&zInv, &one).Inverse(&zInv)
	_ = parallelFor(m, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			a[i].Sub(&a[i], &c[i]).Mul(&a[i], &zInv)
		}
		return nil
	})
	if dom.precomputed {
		fft.BitReverse(a)
	}
	return a[:m-1], nil
}

// MSMResults are the five multi-scalar multiplications of a proof, before r and s are applied.
type MSMResults struct {
	H  bls.G1Jac // Σ h_i·H_i
	L  bls.G1Jac // Σ aux_j·L_j
	A  bls.G1Jac // Σ input_i·A_i + Σ_{A-dense aux} aux_j·A_j
	B1 bls.G1Jac // B query in G1 over the B densities
	B2 bls.G2Jac // B query in G2 over the B densities

	// Timings records how long each MSM took.
	Timings []StageTiming
	hTiming StageTiming
}

// StageTiming is the duration of one named prover step.
type StageTiming struct {
	Name     string
	Duration time.Duration
}

func msmConfig() ecc.MultiExpConfig { return ecc.MultiExpConfig{NbTasks: cores.N()} }

// ComputeHMSM runs the h MSM (Σ h_i·H_i) into res.H.
func ComputeHMSM(ctx context.Context, pk *Parameters, h []fr.Element, res *MSMResults) error {
	if len(h) != len(pk.H) {
		return &ShapeMismatchError{What: "h length", Params: len(pk.H), Circuit: len(h)}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t0 := time.Now()
	if _, err := res.H.MultiExp(pk.H, h, msmConfig()); err != nil {
		return fmt.Errorf("groth16: h MSM: %w", err)
	}
	res.hTiming = StageTiming{Name: "msm h", Duration: time.Since(t0)}
	return nil
}

// ComputeWitnessMSMs runs the MSMs that need only the assignment (l, a, b_g1, b_g2) into res;
// they do not depend on h, so they can run while h is computed.
func ComputeWitnessMSMs(ctx context.Context, pk *Parameters, pa *cs.ProvingAssignment, res *MSMResults) error {
	ni := len(pa.Input)
	pin := pa.BInputDensity.Count()
	aux := func(d *cs.Density) scalarSource { return scalarSource{vals: pa.Aux, dens: d} }
	steps := []struct {
		name string
		run  func() error
	}{
		{"l", func() error { return msmG1(&res.L, pk.L, aux(nil)) }},
		{"a", func() error {
			var in bls.G1Jac
			if err := msmG1(&in, pk.A[:ni], scalarSource{vals: pa.Input}); err != nil {
				return err
			}
			if err := msmG1(&res.A, pk.A[ni:], aux(pa.AAuxDensity)); err != nil {
				return err
			}
			res.A.AddAssign(&in)
			return nil
		}},
		{"b", func() error {
			inputs := scalarSource{vals: pa.Input, dens: pa.BInputDensity}
			var in1 bls.G1Jac
			var in2 bls.G2Jac
			if err := msmG1(&in1, pk.BG1[:pin], inputs); err != nil {
				return err
			}
			if err := msmG1(&res.B1, pk.BG1[pin:], aux(pa.BAuxDensity)); err != nil {
				return err
			}
			res.B1.AddAssign(&in1)
			if err := msmG2(&in2, pk.BG2[:pin], inputs); err != nil {
				return err
			}
			if err := msmG2(&res.B2, pk.BG2[pin:], aux(pa.BAuxDensity)); err != nil {
				return err
			}
			res.B2.AddAssign(&in2)
			return nil
		}},
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 := time.Now()
		if err := s.run(); err != nil {
			return fmt.Errorf("groth16: %s MSM: %w", s.name, err)
		}
		res.Timings = append(res.Timings, StageTiming{Name: "msm " + s.name, Duration: time.Since(t0)})
	}
	return nil
}

// ComputeMSMs runs all five MSMs of one circuit against pk, one after the other.
func ComputeMSMs(ctx context.Context, pk *Parameters, pa *cs.ProvingAssignment, h []fr.Element) (*MSMResults, error) {
	res := new(MSMResults)
	if err := ComputeHMSM(ctx, pk, h, res); err != nil {
		return nil, err
	}
	if err := ComputeWitnessMSMs(ctx, pk, pa, res); err != nil {
		return nil, err
	}
	res.Timings = append([]StageTiming{res.hTiming}, res.Timings...)
	return res, nil
}

// Assemble builds the proof from the MSM results with bellperson's formulas:
// A = α₁ + r·δ₁ + A', B = β₂ + s·δ₂ + B2', C = s·A' + r·B1' + r·s·δ₁ + s·α₁ + r·β₁ + H + L.
func Assemble(vk *VerifyingKey, m *MSMResults, r, s *fr.Element) (*Proof, error) {
	if vk.Delta1.IsInfinity() || vk.Delta2.IsInfinity() {
		return nil, ErrUnexpectedIdentity
	}
	var rb, sb, rsb big.Int
	r.BigInt(&rb)
	s.BigInt(&sb)
	var rs fr.Element
	rs.Mul(r, s)
	rs.BigInt(&rsb)

	var a, c, t bls.G1Jac
	a.FromAffine(&vk.Delta1)
	a.ScalarMultiplication(&a, &rb)
	a.AddMixed(&vk.Alpha1)
	a.AddAssign(&m.A)

	var b bls.G2Jac
	b.FromAffine(&vk.Delta2)
	b.ScalarMultiplication(&b, &sb)
	b.AddMixed(&vk.Beta2)
	b.AddAssign(&m.B2)

	c.ScalarMultiplication(&m.A, &sb)
	t.ScalarMultiplication(&m.B1, &rb)
	c.AddAssign(&t)
	t.FromAffine(&vk.Delta1)
	t.ScalarMultiplication(&t, &rsb)
	c.AddAssign(&t)
	t.FromAffine(&vk.Alpha1)
	t.ScalarMultiplication(&t, &sb)
	c.AddAssign(&t)
	t.FromAffine(&vk.Beta1)
	t.ScalarMultiplication(&t, &rb)
	c.AddAssign(&t)
	c.AddAssign(&m.H)
	c.AddAssign(&m.L)

	p := new(Proof)
	p.A.FromJacobian(&a)
	p.B.FromJacobian(&b)
	p.C.FromJacobian(&c)
	return p, nil
}

// ProveAssignment proves one synthesized circuit with the given r and s (deterministic; bellperson's
// create_proof). It consumes pa's a, b and c vectors (they are reused and set to nil).
func ProveAssignment(ctx context.Context, pk *Parameters, pa *cs.ProvingAssignment, r, s *fr.Element) (*Proof, error) {
	p, _, err := ProveAssignmentTimed(ctx, pk, pa, r, s)
	return p, err
}

// ProveAssignmentTimed is ProveAssignment that also reports the duration of each step
// ("h", "msm h", "msm l", "msm a", "msm b", "assemble"). The h path (FFTs, then the h MSM) runs
// concurrently with the witness MSMs, as they are independent; their durations overlap.
func ProveAssignmentTimed(ctx context.Context, pk *Parameters, pa *cs.ProvingAssignment, r, s *fr.Element) (*Proof, []StageTiming, error) {
	if err := CheckShape(pk, pa); err != nil {
		return nil, nil, err
	}
	// An assignment whose products were left to a device gets them here.
	if err := pa.FinishDeferred(ctx, 0); err != nil {
		return nil, nil, err
	}
	res := new(MSMResults)
	var hTime time.Duration
	var hErr error
	done := make(chan struct{})
	hPath := func() {
		defer close(done)
		t0 := time.Now()
		h, err := ComputeH(ctx, pa.A, pa.B, pa.C)
		hTime = time.Since(t0)
		if err != nil {
			hErr = fmt.Errorf("groth16: computing h: %w", err)
			return
		}
		hErr = ComputeHMSM(ctx, pk, h, res)
	}
	var wErr error
	if sequentialProve {
		hPath()
		wErr = ComputeWitnessMSMs(ctx, pk, pa, res)
	} else {
		go hPath()
		wErr = ComputeWitnessMSMs(ctx, pk, pa, res)
		<-done
	}
	pa.A, pa.B, pa.C = nil, nil, nil
	if hErr != nil {
		return nil, nil, hErr
	}
	if wErr != nil {
		return nil, nil, wErr
	}
	timings := append([]StageTiming{{Name: "h", Duration: hTime}, res.hTiming}, res.Timings...)
	t0 := time.Now()
	proof, err := Assemble(&pk.VK, res, r, s)
	timings = append(timings, StageTiming{Name: "assemble", Duration: time.Since(t0)})
	return proof, timings, err
}

// RandomRS draws r and s uniformly (crypto/rand when rng is nil).
func RandomRS(rng io.Reader) (r, s fr.Element, err error) {
	if rng == nil {
		rng = rand.Reader
	}
	for _, e := range []*fr.Element{&r, &s} {
		if err = randomElement(rng, e); err != nil {
			return r, s, fmt.Errorf("groth16: drawing randomness: %w", err)
		}
	}
	return r, s, nil
}

// randomElement draws a uniform element by rejection of 255-bit values (no modular bias).
func randomElement(rng io.Reader, e *fr.Element) error {
	var b [fr.Bytes]byte
	for {
		if _, err := io.ReadFull(rng, b[:]); err != nil {
			return err
		}
		b[0] &= 0x7f
		if err := e.SetBytesCanonical(b[:]); err == nil {
			return nil
		}
	}
}

// Prove synthesizes circuit and proves it with fresh randomness.
func Prove(ctx context.Context, pk *Parameters, circuit cs.Circuit) (*Proof, error) {
	r, s, err := RandomRS(nil)
	if err != nil {
		return nil, err
	}
	return ProveCircuit(ctx, pk, circuit, &r, &s)
}

// CapacityFor returns the synthesis capacity that lets a circuit of pk's shape synthesize and
// prove without regrowing any vector (a, b, c get room for the whole FFT domain).
func CapacityFor(pk *Parameters) cs.Shape {
	return cs.Shape{NumInputs: len(pk.VK.IC), NumAux: len(pk.L), NumConstraints: len(pk.H) + 1}
}

// ProveCircuit synthesizes circuit and proves it with the given r and s.
func ProveCircuit(ctx context.Context, pk *Parameters, circuit cs.Circuit, r, s *fr.Element) (*Proof, error) {
	pa, err := cs.SynthesizeProving(ctx, circuit, CapacityFor(pk))
	if err != nil {
		return nil, err
	}
	return ProveAssignment(ctx, pk, pa, r, s)
}

// ProveBatch proves circuits of one shape with per-circuit r and s (bellperson's
// create_proof_batch); nil rs and ss draw fresh randomness. Circuits are synthesized and proved
// one after the other, so memory stays that of one circuit.
func ProveBatch(ctx context.Context, pk *Parameters, circuits []cs.Circuit, rs, ss []fr.Element) ([]*Proof, error) {
	if (rs == nil) != (ss == nil) || (rs != nil && (len(rs) != len(circuits) || len(ss) != len(circuits))) {
		return nil, fmt.Errorf("groth16: batch of %d circuits needs as many r and s values (got %d, %d)",
			len(circuits), len(rs), len(ss))
	}
	proofs := make([]*Proof, len(circuits))
	for i, c := range circuits {
		var r, s fr.Element
		if rs != nil {
			r, s = rs[i], ss[i]
		} else {
			var err error
			if r, s, err = RandomRS(nil); err != nil {
				return nil, err
			}
		}
		p, err := ProveCircuit(ctx, pk, c, &r, &s)
		if err != nil {
			return nil, fmt.Errorf("circuit %d of batch: %w", i, err)
		}
		log.Debugw("proved circuit of batch", "index", i, "of", len(circuits))
		proofs[i] = p
	}
	return proofs, nil
}

var randReader io.Reader = rand.Reader

// sequentialProve runs the h path before the witness MSMs instead of alongside (for measurements).
var sequentialProve = false
