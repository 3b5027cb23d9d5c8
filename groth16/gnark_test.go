package groth16_test

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	gcs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/snarkd/snarkd/cs"
)

// toGnark rebuilds a recorded R1CS as a gnark BLS12-381 R1CS with the same rows: our inputs
// become gnark public variables (ONE first, as gnark's constant wire) and our aux variables
// secret variables, so gnark's solver only checks the rows and its prover works on exactly
// the same constraints.
func toGnark(r *cs.R1CS) *gcs.R1CS {
	g := gcs.NewR1CS(r.NumConstraints())
	bp := g.AddBlueprint(&constraint.BlueprintGenericR1C{})
	for i := 0; i < r.NumInputs; i++ {
		g.AddPublicVariable(fmt.Sprintf("x%d", i))
	}
	for j := 0; j < r.NumAux; j++ {
		g.AddSecretVariable(fmt.Sprintf("w%d", j))
	}
	wire := func(v cs.Variable) int {
		if v.IsInput() {
			return v.Index()
		}
		return r.NumInputs + v.Index()
	}
	le := func(terms []cs.Term) constraint.LinearExpression {
		out := make(constraint.LinearExpression, 0, len(terms))
		for _, t := range terms {
			if t.Coeff.IsZero() {
				continue
			}
			var u constraint.U64
			copy(u[:], t.Coeff[:])
			out = append(out, g.MakeTerm(u, wire(t.Var)))
		}
		return out
	}
	for k := 0; k < r.NumConstraints(); k++ {
		g.AddR1C(constraint.R1C{L: le(r.A.Row(k)), R: le(r.B.Row(k)), O: le(r.C.Row(k))}, bp)
	}
	return g
}

// gnarkWitness is the full witness (public inputs without ONE, then aux).
func gnarkWitness(inputs, aux []fr.Element) (witness.Witness, error) {
	w, err := witness.New(ecc.BLS12_381.ScalarField())
	if err != nil {
		return nil, err
	}
	ch := make(chan any, 1024)
	go func() {
		defer close(ch)
		for i := 1; i < len(inputs); i++ {
			ch <- inputs[i]
		}
		for j := range aux {
			ch <- aux[j]
		}
	}()
	if err := w.Fill(len(inputs)-1, len(aux), ch); err != nil {
		return nil, err
	}
	return w, nil
}
