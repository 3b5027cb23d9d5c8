package groth16

import (
	"errors"
	"fmt"
	"io"
	"math/big"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// ErrInvalidProof is returned when a proof (or a batch) does not verify.
var ErrInvalidProof = errors.New("groth16: proof is invalid")

// PreparedVerifyingKey caches what verification needs (bellperson's prepare_verifying_key).
type PreparedVerifyingKey struct {
	VK        *VerifyingKey
	AlphaBeta bls.GT
	NegGamma2 bls.G2Affine
	NegDelta2 bls.G2Affine
}

// Prepare precomputes e(α₁, β₂), −γ₂ and −δ₂.
func Prepare(vk *VerifyingKey) (*PreparedVerifyingKey, error) {
	ab, err := bls.Pair([]bls.G1Affine{vk.Alpha1}, []bls.G2Affine{vk.Beta2})
	if err != nil {
		return nil, fmt.Errorf("groth16: preparing verifying key: %w", err)
	}
	p := &PreparedVerifyingKey{VK: vk, AlphaBeta: ab}
	p.NegGamma2.Neg(&vk.Gamma2)
	p.NegDelta2.Neg(&vk.Delta2)
	return p, nil
}

// inputAccumulator returns Σ w_i·ic[i+1] + w0·ic[0] computed as one MSM.
func (p *PreparedVerifyingKey) inputAccumulator(inputs []fr.Element, w0 *fr.Element) (bls.G1Affine, error) {
	scalars := make([]fr.Element, 0, len(inputs)+1)
	scalars = append(scalars, *w0)
	scalars = append(scalars, inputs...)
	var acc bls.G1Affine
	if _, err := acc.MultiExp(p.VK.IC, scalars, msmConfig()); err != nil {
		return acc, err
	}
	return acc, nil
}

// Verify checks one proof against its public inputs (ONE excluded), bellperson's verify_proof:
// e(A, B)·e(acc, −γ₂)·e(C, −δ₂) = e(α₁, β₂) with acc = ic[0] + Σ inputs_i·ic[i+1].
func (p *PreparedVerifyingKey) Verify(proof *Proof, inputs []fr.Element) error {
	if len(inputs)+1 != len(p.VK.IC) {
		return fmt.Errorf("groth16: %d public inputs given, the key expects %d", len(inputs), len(p.VK.IC)-1)
	}
	one := fr.One()
	acc, err := p.inputAccumulator(inputs, &one)
	if err != nil {
		return fmt.Errorf("groth16: input accumulator: %w", err)
	}
	ml, err := bls.MillerLoop([]bls.G1Affine{proof.A, acc, proof.C}, []bls.G2Affine{proof.B, p.NegGamma2, p.NegDelta2})
	if err != nil {
		return fmt.Errorf("groth16: miller loop: %w", err)
	}
	got := bls.FinalExponentiation(&ml)
	if !got.Equal(&p.AlphaBeta) {
		return ErrInvalidProof
	}
	return nil
}

// Verify is a convenience that prepares vk and verifies one proof.
func Verify(vk *VerifyingKey, proof *Proof, inputs []fr.Element) error {
	p, err := Prepare(vk)
	if err != nil {
		return err
	}
	return p.Verify(proof, inputs)
}

// VerifyBatch checks several proofs at once with random 128-bit weights z_j (bellperson's
// verify_proofs_batch, Zcash protocol spec B.2):
// Π e(z_j·A_j, B_j) · e(Σ z_j·C_j, −δ₂) · e(Σ_i (Σ_j z_j·x_{j,i})·ic_{i+1} + (Σ z_j)·ic_0, −γ₂) = e(α₁, β₂)^(Σ z_j).
// rng supplies the weights (crypto/rand when nil). Fewer than two proofs use Verify.
func (p *PreparedVerifyingKey) VerifyBatch(proofs []*Proof, inputs [][]fr.Element, rng io.Reader) error {
	if len(proofs) != len(inputs) {
		return fmt.Errorf("groth16: %d proofs but %d input vectors", len(proofs), len(inputs))
	}
	if len(proofs) == 0 {
		return errors.New("groth16: empty batch")
	}
	if len(proofs) == 1 {
		return p.Verify(proofs[0], inputs[0])
	}
	ni := len(p.VK.IC) - 1
	for j := range inputs {
		if len(inputs[j]) != ni {
			return fmt.Errorf("groth16: proof %d has %d public inputs, the key expects %d", j, len(inputs[j]), ni)
		}
	}
	if rng == nil {
		rng = randReader
	}
	z := make([]fr.Element, len(proofs))
	var buf [16]byte
	for j := range z {
		if _, err := io.ReadFull(rng, buf[:]); err != nil {
			return fmt.Errorf("groth16: drawing batch weights: %w", err)
		}
		z[j].SetBytes(buf[:]) // < 2^128 < r
	}
	var zSum fr.Element
	combined := make([]fr.Element, ni)
	var t fr.Element
	for j := range proofs {
		zSum.Add(&zSum, &z[j])
		for i := 0; i < ni; i++ {
			t.Mul(&z[j], &inputs[j][i])
			combined[i].Add(&combined[i], &t)
		}
	}
	acc, err := p.inputAccumulator(combined, &zSum)
	if err != nil {
		return fmt.Errorf("groth16: input accumulator: %w", err)
	}
	as := make([]bls.G1Affine, len(proofs))
	cs := make([]bls.G1Affine, len(proofs))
	for j, pr := range proofs {
		as[j] = pr.A
		cs[j] = pr.C
	}
	var cSum bls.G1Affine
	if _, err := cSum.MultiExp(cs, z, msmConfig()); err != nil {
		return fmt.Errorf("groth16: batch C: %w", err)
	}
	g1 := make([]bls.G1Affine, 0, len(proofs)+2)
	g2 := make([]bls.G2Affine, 0, len(proofs)+2)
	var zb big.Int
	for j := range proofs {
		var za bls.G1Affine
		za.ScalarMultiplication(&as[j], z[j].BigInt(&zb))
		g1 = append(g1, za)
		g2 = append(g2, proofs[j].B)
	}
	g1 = append(g1, cSum, acc)
	g2 = append(g2, p.NegDelta2, p.NegGamma2)
	ml, err := bls.MillerLoop(g1, g2)
	if err != nil {
		return fmt.Errorf("groth16: miller loop: %w", err)
	}
	got := bls.FinalExponentiation(&ml)
	var want bls.GT
	want.Exp(p.AlphaBeta, zSum.BigInt(&zb))
	if !got.Equal(&want) {
		return ErrInvalidProof
	}
	return nil
}
