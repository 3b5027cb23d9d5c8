// Package groth16sim makes Groth16 verifying keys whose trapdoor is known, and with them proofs
// that verify against any public inputs without a circuit or a setup: for tests of what is
// built on proofs (aggregation, verification, their wire formats) where a real setup would
// take minutes. Anyone holding a Key can forge proofs: never use one outside tests.
package groth16sim

import (
	"fmt"
	"math/big"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/groth16"
)

// Key is a verifying key with α = β = γ = δ = 1 (the generators) and ic_i = s_i·G₁ for random
// s_i, which a proof for public inputs x satisfies with A = a·G₁, B = b·G₂ and
// C = (ab − 1 − s₀ − Σ xᵢ·sᵢ₊₁)·G₁ for any a, b.
type Key struct {
	VK *groth16.VerifyingKey
	s  []fr.Element
}

// NewKey returns a key for circuits of inputs public inputs, ONE included (len(VK.IC)).
func NewKey(inputs int) (*Key, error) {
	if inputs < 1 {
		return nil, fmt.Errorf("groth16sim: %d public inputs: want at least 1 (ONE)", inputs)
	}
	_, _, g1, g2 := bls.Generators()
	k := &Key{s: make([]fr.Element, inputs)}
	for i := range k.s {
		if _, err := k.s[i].SetRandom(); err != nil {
			return nil, fmt.Errorf("groth16sim: %w", err)
		}
	}
	k.VK = &groth16.VerifyingKey{Alpha1: g1, Beta1: g1, Beta2: g2, Gamma2: g2, Delta1: g1, Delta2: g2,
		IC: bls.BatchScalarMultiplicationG1(&g1, k.s)}
	return k, nil
}

// Prove returns a fresh proof (random a, b) that verifies against inputs (ONE excluded).
func (k *Key) Prove(inputs []fr.Element) (*groth16.Proof, error) {
	if len(inputs) != len(k.s)-1 {
		return nil, fmt.Errorf("groth16sim: %d public inputs, the key has %d", len(inputs), len(k.s)-1)
	}
	var a, b, c, x fr.Element
	if _, err := a.SetRandom(); err != nil {
		return nil, fmt.Errorf("groth16sim: %w", err)
	}
	if _, err := b.SetRandom(); err != nil {
		return nil, fmt.Errorf("groth16sim: %w", err)
	}
	one := fr.One()
	c.Mul(&a, &b)
	c.Sub(&c, &one)
	c.Sub(&c, &k.s[0])
	for i := range inputs {
		x.Mul(&inputs[i], &k.s[i+1])
		c.Sub(&c, &x)
	}
	p := new(groth16.Proof)
	p.A.ScalarMultiplicationBase(a.BigInt(new(big.Int)))
	p.B.ScalarMultiplicationBase(b.BigInt(new(big.Int)))
	p.C.ScalarMultiplicationBase(c.BigInt(new(big.Int)))
	return p, nil
}
