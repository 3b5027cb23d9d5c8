package update

import (
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/gadgets/poseidon"
)

// frCapacity is Fr::CAPACITY, the bits of a digest a challenge may draw from.
const frCapacity = 254

var genRandomness = func() *poseidon.Constants {
	c, err := poseidon.New(2, poseidon.Standard, poseidon.SnapDealsType)
	if err != nil {
		panic(err)
	}
	return c
}()

// HashGenRandomness is Poseidon over (a, b) with the SnapDeals domain tag 2^40
// (POSEIDON_CONSTANTS_GEN_RANDOMNESS): challenge digests, phi and rho.
func HashGenRandomness(a, b fr.Element) fr.Element {
	h, err := genRandomness.Hash([]fr.Element{a, b})
	if err != nil {
		panic(err) // arity 2 is always valid
	}
	return h
}

// challengeLayout is what both challenge generators share.
type challengeLayout struct {
	randomBits   int // bits drawn per challenge
	perDigest    int
	digestsPerPt int
	count        int
}

func (p *Params) layout() challengeLayout {
	rb := p.ChallengeBitLen - p.PartitionBitLen
	per := frCapacity / rb
	return challengeLayout{randomBits: rb, perDigest: per, digestsPerPt: (p.ChallengeCount + per - 1) / per, count: p.ChallengeCount}
}

// Challenges is storage-proofs-update's Challenges iterator for partition k (all of the
// Poseidon variant's challenges when p.Poseidon): the challenged node indices.
func (p *Params) Challenges(commRNew fr.Element, k int) ([]uint64, error) {
	if k < 0 || k >= p.PartitionCount {
		return nil, fmt.Errorf("partition %d of %d", k, p.PartitionCount)
	}
	l := p.layout()
	out := make([]uint64, 0, l.count)
	digest := uint64(k * l.digestsPerPt)
	var bi big.Int
	for len(out) < l.count {
		d := HashGenRandomness(commRNew, fr.NewElement(digest))
		d.BigInt(&bi)
		for i := 0; i < l.perDigest && len(out) < l.count; i++ {
			var c uint64
			for b := 0; b < l.randomBits; b++ {
				c |= uint64(bi.Bit(i*l.randomBits+b)) << b
			}
			out = append(out, c|uint64(k)<<l.randomBits)
		}
		digest++
	}
	return out, nil
}

// Phi is phi = Poseidon_{2^40}(comm_d_new, comm_r_old).
func Phi(commDNew, commROld fr.Element) fr.Element { return HashGenRandomness(commDNew, commROld) }

// Rho is rho(phi, high) = Poseidon_{2^40}(phi, high), high the top h bits of a node index.
func Rho(phi fr.Element, high uint64) fr.Element { return HashGenRandomness(phi, fr.NewElement(high)) }

// HighBits is the top h bits of node c of a sector of 2^bitLen nodes.
func HighBits(c uint64, bitLen, h int) uint64 { return c >> uint(bitLen-h) }

// PublicInputs are a partition's public inputs in circuit order (ONE excluded).
type PublicInputs struct {
	K                            int
	H                            int
	CommROld, CommDNew, CommRNew fr.Element
}

// Vector returns [k_and_h_select (h_select in the Poseidon variant), comm_r_old, comm_d_new,
// comm_r_new] as the verifier computes them.
func (p *Params) Vector(in *PublicInputs) ([]fr.Element, error) {
	if in.K < 0 || in.K >= p.PartitionCount {
		return nil, fmt.Errorf("partition %d of %d", in.K, p.PartitionCount)
	}
	hs, err := p.HSelect(in.H)
	if err != nil {
		return nil, err
	}
	sel := uint64(in.K) | hs<<uint(p.PartitionBitLen)
	return []fr.Element{fr.NewElement(sel), in.CommROld, in.CommDNew, in.CommRNew}, nil
}
