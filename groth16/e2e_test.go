package groth16_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/testcircuit"
)

func el(v int64) fr.Element {
	var e fr.Element
	e.SetInt64(v)
	return e
}

// shapeCircuit builds circuits that exercise the density corner cases the acceptance list names.
type shapeCircuit struct {
	name   string
	inputs []fr.Element
	build  func(s cs.ConstraintSystem, in []cs.Variable) error
}

func (c *shapeCircuit) Synthesize(s cs.ConstraintSystem) error {
	vars := make([]cs.Variable, len(c.inputs))
	for i := range c.inputs {
		v, err := s.AllocInputValue("in", &c.inputs[i])
		if err != nil {
			return err
		}
		vars[i] = v
	}
	return c.build(s, vars)
}

func shapes() []*shapeCircuit {
	return []*shapeCircuit{
		{
			// inputs absent from B; aux absent from A (only in B and C)
			name:   "inputs-not-in-B",
			inputs: []fr.Element{el(3), el(9)},
			build: func(s cs.ConstraintSystem, in []cs.Variable) error {
				a, _ := s.AllocValue("a", ptr(el(3)))
				b, _ := s.AllocValue("b", ptr(el(27)))
				s.Enforce("x*x=y", cs.LCOf(in[0]), cs.LCOf(cs.One).AddCoeff(2, cs.One).Sub(cs.One).Sub(cs.One), cs.LCOf(a)) // 3·1 = a
				s.Enforce("a*y=b", cs.LCOf(in[1]), cs.LCOf(a), cs.LCOf(b))
				return nil
			},
		},
		{
			// zero coefficients and a cancelled term; ONE in B; 0/1 witness
			name:   "zero-coefficients",
			inputs: []fr.Element{el(1)},
			build: func(s cs.ConstraintSystem, in []cs.Variable) error {
				bitsv := make([]cs.Variable, 16)
				for i := range bitsv {
					v := el(int64(i % 2))
					bitsv[i], _ = s.AllocValue("bit", &v)
					s.Enforce("bool", cs.LCOf(cs.One).Sub(bitsv[i]), cs.LCOf(bitsv[i]), nil)
				}
				zero := fr.Element{}
				lc := cs.NewLC(0).AddTerm(&zero, bitsv[3]).Add(in[0])
				s.Enforce("zero coeff", lc, cs.LCOf(cs.One), cs.LCOf(in[0]))
				cancel := cs.NewLC(0).Add(bitsv[5]).Sub(bitsv[5]).Add(cs.One)
				s.Enforce("cancel", cs.LCOf(bitsv[1]), cancel, cs.LCOf(bitsv[1]))
				return nil
			},
		},
		{
			// no public inputs besides ONE, a single constraint
			name: "tiny",
			build: func(s cs.ConstraintSystem, _ []cs.Variable) error {
				x, _ := s.AllocValue("x", ptr(el(5)))
				s.Enforce("x*x", cs.LCOf(x), cs.LCOf(x), cs.NewLC(0).AddCoeff(25, cs.One))
				return nil
			},
		},
	}
}

func ptr(e fr.Element) *fr.Element { return &e }

type proveCase struct {
	name    string
	circuit cs.Circuit
	inputs  []fr.Element
}

func cases(t *testing.T) []proveCase {
	var out []proveCase
	for _, s := range shapes() {
		out = append(out, proveCase{s.name, s, s.inputs})
	}
	for _, n := range []int{testcircuit.MinConstraints, 64, 300, 1 << 10} {
		c := testcircuit.New(n, uint64(n))
		out = append(out, proveCase{"testcircuit", c, c.PublicInputs()})
	}
	return out
}

func TestSetupProveVerify(t *testing.T) {
	ctx := context.Background()
	for _, tc := range cases(t) {
		t.Run(tc.name, func(t *testing.T) {
			pk, err := groth16.SetupFromSeed(ctx, tc.circuit, []byte(tc.name))
			if err != nil {
				t.Fatal(err)
			}
			r, s := el(11), el(13)
			proof, err := groth16.ProveCircuit(ctx, pk, tc.circuit, &r, &s)
			if err != nil {
				t.Fatal(err)
			}
			pvk, err := groth16.Prepare(&pk.VK)
			if err != nil {
				t.Fatal(err)
			}
			if err := pvk.Verify(proof, tc.inputs); err != nil {
				t.Fatalf("valid proof rejected: %v", err)
			}
			if err := textbookCheck(&pk.VK, proof, tc.inputs); err != nil {
				t.Fatalf("textbook pairing check: %v", err)
			}
			// Same r, s → identical bytes.
			again, err := groth16.ProveCircuit(ctx, pk, tc.circuit, &r, &s)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := proof.Bytes(), again.Bytes(); !bytes.Equal(a[:], b[:]) {
				t.Error("same r, s gave different proofs")
			}
			// Different randomness → different bytes, still valid.
			rnd, err := groth16.Prove(ctx, pk, tc.circuit)
			if err != nil {
				t.Fatal(err)
			}
			if err := pvk.Verify(rnd, tc.inputs); err != nil {
				t.Errorf("random proof rejected: %v", err)
			}
			// Wrong public input.
			if len(tc.inputs) > 0 {
				bad := append([]fr.Element(nil), tc.inputs...)
				bad[0].Add(&bad[0], ptr(el(1)))
				if err := pvk.Verify(proof, bad); !errors.Is(err, groth16.ErrInvalidProof) {
					t.Errorf("wrong input accepted: %v", err)
				}
			}
			// Tampered proof: swap A with another valid point.
			tampered := *proof
			_, _, g1, _ := bls.Generators()
			tampered.A.Add(&tampered.A, &g1)
			if err := pvk.Verify(&tampered, tc.inputs); !errors.Is(err, groth16.ErrInvalidProof) {
				t.Errorf("tampered proof accepted: %v", err)
			}
			// Encoding round trip.
			b := proof.Bytes()
			back, err := groth16.ParseProof(b[:])
			if err != nil {
				t.Fatal(err)
			}
			if bb := back.Bytes(); bb != b {
				t.Error("proof round trip differs")
			}
		})
	}
}

// textbookCheck verifies e(A,B) = e(α,β)·e(Σ x_i·IC_i, γ)·e(C, δ) directly with gnark-crypto
// pairings, independently of the package's verifier.
func textbookCheck(vk *groth16.VerifyingKey, p *groth16.Proof, inputs []fr.Element) error {
	var acc bls.G1Jac
	acc.FromAffine(&vk.IC[0])
	for i := range inputs {
		var t bls.G1Affine
		t.ScalarMultiplication(&vk.IC[i+1], inputs[i].BigInt(new(bigInt)))
		acc.AddMixed(&t)
	}
	var accAff bls.G1Affine
	accAff.FromJacobian(&acc)
	lhs, err := bls.Pair([]bls.G1Affine{p.A}, []bls.G2Affine{p.B})
	if err != nil {
		return err
	}
	ab, _ := bls.Pair([]bls.G1Affine{vk.Alpha1}, []bls.G2Affine{vk.Beta2})
	xg, _ := bls.Pair([]bls.G1Affine{accAff}, []bls.G2Affine{vk.Gamma2})
	cd, _ := bls.Pair([]bls.G1Affine{p.C}, []bls.G2Affine{vk.Delta2})
	var rhs bls.GT
	rhs.Mul(&ab, &xg).Mul(&rhs, &cd)
	if !lhs.Equal(&rhs) {
		return errors.New("e(A,B) ≠ e(α,β)·e(acc,γ)·e(C,δ)")
	}
	return nil
}

func TestBatchVerify(t *testing.T) {
	ctx := context.Background()
	c0 := testcircuit.New(128, 1)
	pk, err := groth16.SetupFromSeed(ctx, c0, []byte("batch"))
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := testcircuit.NewWithWitness(128, 1, 77), testcircuit.NewWithWitness(128, 1, 78)
	circuits := []cs.Circuit{c0, c1, c2}
	rs := []fr.Element{el(1), el(2), el(3)}
	ss := []fr.Element{el(4), el(5), el(6)}
	proofs, err := groth16.ProveBatch(ctx, pk, circuits, rs, ss)
	if err != nil {
		t.Fatal(err)
	}
	inputs := [][]fr.Element{c0.PublicInputs(), c1.PublicInputs(), c2.PublicInputs()}
	pvk, _ := groth16.Prepare(&pk.VK)
	if err := pvk.VerifyBatch(proofs, inputs, nil); err != nil {
		t.Fatalf("valid batch rejected: %v", err)
	}
	for j := range proofs {
		single, _ := groth16.ProveCircuit(ctx, pk, circuits[j], &rs[j], &ss[j])
		if a, b := single.Bytes(), proofs[j].Bytes(); a != b {
			t.Errorf("batch proof %d differs from the single proof with the same r, s", j)
		}
	}
	// One bad proof (C of proof 1 replaced by proof 0's) fails the batch.
	bad := []*groth16.Proof{proofs[0], {A: proofs[1].A, B: proofs[1].B, C: proofs[0].C}, proofs[2]}
	if err := pvk.VerifyBatch(bad, inputs, nil); !errors.Is(err, groth16.ErrInvalidProof) {
		t.Errorf("batch with a bad proof: %v", err)
	}
	// One wrong public input fails the batch.
	wrong := [][]fr.Element{inputs[0], inputs[1], append([]fr.Element(nil), inputs[2]...)}
	wrong[2][3].SetUint64(1)
	if err := pvk.VerifyBatch(proofs, wrong, nil); !errors.Is(err, groth16.ErrInvalidProof) {
		t.Errorf("batch with a wrong input: %v", err)
	}
	if err := pvk.VerifyBatch(proofs[:2], inputs, nil); err == nil {
		t.Error("mismatched proof and input counts accepted")
	}
	if err := pvk.VerifyBatch(proofs[:1], inputs[:1], nil); err != nil {
		t.Errorf("batch of one: %v", err)
	}
	if err := pvk.Verify(proofs[0], inputs[0][:2]); err == nil || errors.Is(err, groth16.ErrInvalidProof) {
		t.Errorf("wrong input count should be a usage error, got %v", err)
	}
}

func TestProveRejectsMismatchedParameters(t *testing.T) {
	ctx := context.Background()
	pk, err := groth16.SetupFromSeed(ctx, testcircuit.New(64, 1), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	r, s := el(1), el(2)
	_, err = groth16.ProveCircuit(ctx, pk, testcircuit.New(200, 1), &r, &s)
	var sm *groth16.ShapeMismatchError
	if !errors.As(err, &sm) {
		t.Fatalf("want a shape mismatch, got %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := groth16.ProveCircuit(cctx, pk, testcircuit.New(64, 1), &r, &s); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled prove: %v", err)
	}
}

func TestDummyParametersShape(t *testing.T) {
	ctx := context.Background()
	c := testcircuit.New(300, 2)
	pk, err := groth16.DummyParameters(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pk.BG2 {
		if !pk.BG2[i].IsOnCurve() || !pk.BG2[i].IsInSubGroup() {
			t.Fatalf("b_g2[%d] is not a valid point", i)
		}
	}
	r, s := el(1), el(2)
	if _, err := groth16.ProveCircuit(ctx, pk, c, &r, &s); err != nil {
		t.Fatalf("dummy parameters must fit the circuit: %v", err)
	}
}

// TestStepsComposeToProve checks the contract other backends rely on: ComputeH, the two MSM steps
// and Assemble, run separately, give the same proof bytes as ProveAssignment.
func TestStepsComposeToProve(t *testing.T) {
	ctx := context.Background()
	c := testcircuit.New(512, 9)
	pk, err := groth16.SetupFromSeed(ctx, c, []byte("steps"))
	if err != nil {
		t.Fatal(err)
	}
	r, s := el(5), el(6)
	want, err := groth16.ProveCircuit(ctx, pk, c, &r, &s)
	if err != nil {
		t.Fatal(err)
	}
	pa, err := cs.SynthesizeProving(ctx, c, groth16.CapacityFor(pk))
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.CheckShape(pk, pa); err != nil {
		t.Fatal(err)
	}
	var res groth16.MSMResults
	if err := groth16.ComputeWitnessMSMs(ctx, pk, pa, &res); err != nil {
		t.Fatal(err)
	}
	h, err := groth16.ComputeH(ctx, pa.A, pa.B, pa.C)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.ComputeHMSM(ctx, pk, h, &res); err != nil {
		t.Fatal(err)
	}
	got, err := groth16.Assemble(&pk.VK, &res, &r, &s)
	if err != nil {
		t.Fatal(err)
	}
	if got.Bytes() != want.Bytes() {
		t.Fatal("steps run separately give a different proof")
	}
	all, err := groth16.ComputeMSMs(ctx, pk, pa, h)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := groth16.Assemble(&pk.VK, all, &r, &s); again.Bytes() != want.Bytes() {
		t.Fatal("ComputeMSMs differs from the separate MSM steps")
	}
}
