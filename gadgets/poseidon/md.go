package poseidon

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/num"
)

// MDArity is the arity of filecoin-hashers' Merkle–Damgård Poseidon (PoseidonMDArity).
const MDArity = 36

// HashMD chains arity-36 MerkleTree hashes: acc = x0, then for each chunk of
// 35 following elements acc = H(acc ‖ chunk), a short chunk zero-padded.
func HashMD(input []fr.Element) (fr.Element, error) {
	if len(input) < 2 {
		return fr.Element{}, fmt.Errorf("poseidon: hash_md of %d elements (need at least 2)", len(input))
	}
	c := MustMerkle(MDArity)
	acc := input[0]
	pre := make([]fr.Element, MDArity)
	for start := 1; start < len(input); start += MDArity - 1 {
		end := min(start+MDArity-1, len(input))
		clear(pre)
		pre[0] = acc
		copy(pre[1:], input[start:end])
		h, err := c.Hash(pre)
		if err != nil {
			return fr.Element{}, err
		}
		acc = h
	}
	return acc, nil
}

// HashMDCircuit is filecoin-hashers' hash_md_circuit: padding elements of a
// short last chunk are allocated as "padding i" (zero), each hash runs in
// namespace "hash md k".
func HashMDCircuit(sys cs.ConstraintSystem, elements []num.AllocatedNum) (num.AllocatedNum, error) {
	if len(elements) < 2 {
		return num.AllocatedNum{}, fmt.Errorf("poseidon: hash_md_circuit of %d elements (need at least 2)", len(elements))
	}
	c := MustMerkle(MDArity)
	hash := elements[0]
	pre := make([]num.AllocatedNum, MDArity)
	for k, start := 0, 1; start < len(elements); k, start = k+1, start+MDArity-1 {
		end := min(start+MDArity-1, len(elements))
		pre[0] = hash
		copy(pre[1:], elements[start:end])
		for i := end - start + 1; i < MDArity; i++ {
			sys.PushIndexed("padding ", i)
			z, err := num.Alloc(sys, fr.Element{})
			sys.Pop()
			if err != nil {
				return num.AllocatedNum{}, err
			}
			pre[i] = z
		}
		sys.PushIndexed("hash md ", k)
		h, err := HashCircuit(sys, pre, c)
		sys.Pop()
		if err != nil {
			return num.AllocatedNum{}, err
		}
		hash = h
	}
	return hash, nil
}
