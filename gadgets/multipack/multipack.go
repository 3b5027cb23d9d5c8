// Package multipack packs bits into field elements the way bellperson does:
// chunks of Fr::CAPACITY = 254 bits, least significant bit first.
package multipack

import (
	"strconv"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/num"
)

// Capacity is the number of bits per packed element.
const Capacity = 254

func pack(bits []boolean.Boolean) num.Num {
	n := num.Num{LC: cs.NewLC(len(bits) + 1)}
	coeff := fr.One()
	for _, b := range bits {
		n.LC = b.AddToLC(n.LC, &coeff)
		if b.Value() {
			n.Value.Add(&n.Value, &coeff)
		}
		coeff.Double(&coeff)
	}
	return n
}

// PackIntoInputs allocates one public input "input i" per 254-bit chunk with
// "packing constraint i": Σ 2^j·bit_j · 1 = input.
func PackIntoInputs(sys cs.ConstraintSystem, bits []boolean.Boolean) error {
	for i := 0; i*Capacity < len(bits); i++ {
		end := min((i+1)*Capacity, len(bits))
		n := pack(bits[i*Capacity : end])
		in, err := sys.AllocInputValue("input "+strconv.Itoa(i), &n.Value)
		if err != nil {
			return err
		}
		sys.Enforce("packing constraint "+strconv.Itoa(i), n.LC, cs.LCOf(cs.One), cs.LCOf(in))
	}
	return nil
}

// PackBits packs the first 254 bits into the aux variable "input/num" with
// "packing constraint".
func PackBits(sys cs.ConstraintSystem, bits []boolean.Boolean) (num.AllocatedNum, error) {
	if len(bits) > Capacity {
		bits = bits[:Capacity]
	}
	n := pack(bits)
	sys.Push("input")
	a, err := num.Alloc(sys, n.Value)
	sys.Pop()
	if err != nil {
		return num.AllocatedNum{}, err
	}
	sys.Enforce("packing constraint", n.LC, cs.LCOf(cs.One), cs.LCOf(a.Var))
	return a, nil
}

// ComputeMultipacking is the host-side mirror of PackIntoInputs.
func ComputeMultipacking(bits []bool) []fr.Element {
	var out []fr.Element
	for i := 0; i*Capacity < len(bits); i++ {
		end := min((i+1)*Capacity, len(bits))
		var cur fr.Element
		coeff := fr.One()
		for _, b := range bits[i*Capacity : end] {
			if b {
				cur.Add(&cur, &coeff)
			}
			coeff.Double(&coeff)
		}
		out = append(out, cur)
	}
	return out
}

// BytesToBits expands bytes most significant bit first.
func BytesToBits(b []byte) []bool {
	out := make([]bool, 0, 8*len(b))
	for _, v := range b {
		for i := 7; i >= 0; i-- {
			out = append(out, v>>uint(i)&1 == 1)
		}
	}
	return out
}

// BytesToBitsLE expands bytes least significant bit first.
func BytesToBitsLE(b []byte) []bool {
	out := make([]bool, 0, 8*len(b))
	for _, v := range b {
		for i := 0; i < 8; i++ {
			out = append(out, v>>uint(i)&1 == 1)
		}
	}
	return out
}
