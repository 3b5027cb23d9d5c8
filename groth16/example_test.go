package groth16_test

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
)

// Prove x·x = y for a public y, then verify and encode the proof.
func Example() {
	ctx := context.Background()
	circuit := cs.CircuitFunc(func(s cs.ConstraintSystem) error {
		y, err := s.AllocInputValue("y", new(fr.Element).SetUint64(49))
		if err != nil {
			return err
		}
		x, err := s.AllocValue("x", new(fr.Element).SetUint64(7))
		if err != nil {
			return err
		}
		s.Enforce("x*x=y", cs.LCOf(x), cs.LCOf(x), cs.LCOf(y))
		return nil
	})
	pk, err := groth16.SetupFromSeed(ctx, circuit, []byte("example (insecure)"))
	if err != nil {
		panic(err)
	}
	proof, err := groth16.Prove(ctx, pk, circuit)
	if err != nil {
		panic(err)
	}
	inputs := []fr.Element{fr.NewElement(49)}
	fmt.Println("valid:", groth16.Verify(&pk.VK, proof, inputs) == nil)
	b := proof.Bytes()
	fmt.Println("bytes:", len(b))
	// Output:
	// valid: true
	// bytes: 192
}
