package poseidon

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Permute applies the permutation to a full state (Width elements) in place.
func (c *Constants) Permute(state []fr.Element) error {
	if len(state) != c.Width {
		return fmt.Errorf("poseidon: state of %d elements for width %d", len(state), c.Width)
	}
	c.permuteOptimized(state)
	return nil
}

// SpongeHash hashes a ConstantLength(L) preimage of any length L with
// neptune's simplex sponge (rate = arity, capacity 1): each element is added
// into the rate part, a full rate triggers a permutation, and a final
// partial block has the rest of the rate zeroed before the last permutation.
// For L ≤ arity it equals Hash.
func (c *Constants) SpongeHash(input []fr.Element) (fr.Element, error) {
	if c.Type.Kind != ConstantLength || uint64(len(input)) != c.Type.Param || len(input) == 0 {
		return fr.Element{}, fmt.Errorf("poseidon: sponge needs a ConstantLength(%d) type for %d elements (have %v)", len(input), len(input), c.Type)
	}
	st := make([]fr.Element, c.Width)
	st[0] = c.DomainTag
	pos := 0
	for i := range input {
		st[1+pos].Add(&st[1+pos], &input[i])
		pos++
		if pos == c.Arity {
			c.permuteOptimized(st)
			pos = 0
		}
	}
	if pos > 0 {
		for j := 1 + pos; j < c.Width; j++ {
			st[j].SetZero()
		}
		c.permuteOptimized(st)
	}
	return st[1], nil
}
