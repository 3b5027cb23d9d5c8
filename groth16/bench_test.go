package groth16_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	gg "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/testcircuit"
)

// TestGnarkBridge proves the same R1CS with gnark and checks that gnark accepts our witness,
// so the benchmark compares like with like.
func TestGnarkBridge(t *testing.T) {
	ctx := context.Background()
	c := testcircuit.New(1<<8, 3)
	r1cs, err := cs.RecordR1CS(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	pa, err := cs.SynthesizeProving(ctx, c, cs.Shape{})
	if err != nil {
		t.Fatal(err)
	}
	g := toGnark(r1cs)
	if g.GetNbConstraints() != r1cs.NumConstraints() {
		t.Fatalf("gnark has %d constraints, we have %d", g.GetNbConstraints(), r1cs.NumConstraints())
	}
	w, err := gnarkWitness(pa.Input, pa.Aux)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.IsSolved(w); err != nil {
		t.Fatalf("gnark rejects our witness: %v", err)
	}
	var pk gg.ProvingKey
	var vk gg.VerifyingKey
	if err := gg.Setup(g, &pk, &vk); err != nil {
		t.Fatal(err)
	}
	proof, err := gg.Prove(g, &pk, w)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := w.Public()
	if err := gg.Verify(proof, &vk, pub.Vector().(fr.Vector)); err != nil {
		t.Fatalf("gnark proof of our R1CS does not verify: %v", err)
	}
}

// BenchmarkProve compares our prover with gnark's groth16.Prove on the same R1CS (the synthetic
// circuit: about 7/8 boolean wires). "ours-prove" starts from a synthesized assignment;
// "ours-synth+prove" includes synthesis, as gnark's Prove includes solving the witness.
// Keys are dummies of the right shape (proving time does not depend on their values).
func BenchmarkProve(b *testing.B) {
	ctx := context.Background()
	for _, logn := range []int{16, 18, 20} {
		n := 1 << logn
		c := testcircuit.New(n, 1)
		pk, err := groth16.DummyParameters(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		r, s, _ := groth16.RandomRS(nil)
		b.Run(fmt.Sprintf("2^%d/ours-prove", logn), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				pa, err := cs.SynthesizeProving(ctx, c, groth16.CapacityFor(pk))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := groth16.ProveAssignment(ctx, pk, pa, &r, &s); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("2^%d/ours-synth+prove", logn), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := groth16.ProveCircuit(ctx, pk, c, &r, &s); err != nil {
					b.Fatal(err)
				}
			}
		})
		pk = nil

		r1cs, err := cs.RecordR1CS(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		pa, err := cs.SynthesizeProving(ctx, c, cs.Shape{})
		if err != nil {
			b.Fatal(err)
		}
		g := toGnark(r1cs)
		r1cs = nil
		w, err := gnarkWitness(pa.Input, pa.Aux)
		if err != nil {
			b.Fatal(err)
		}
		pa = nil
		var gpk gg.ProvingKey
		if err := gg.DummySetup(g, &gpk); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("2^%d/gnark", logn), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := gg.Prove(g, &gpk, w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
