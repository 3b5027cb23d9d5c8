package poseidon

import (
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// grain is the self-shrinking Grain LFSR of the Poseidon reference scripts.
type grain struct {
	state [80]bool
	pos   int // index of the oldest bit in the ring
}

func newGrain(field, sbox, fieldSize, t, rf, rp uint) *grain {
	g := &grain{}
	i := 0
	put := func(n int, v uint) {
		for b := n - 1; b >= 0; b-- {
			g.state[i] = (v>>uint(b))&1 == 1
			i++
		}
	}
	put(2, field)
	put(4, sbox)
	put(12, fieldSize)
	put(12, t)
	put(10, rf)
	put(10, rp)
	put(30, 1<<30-1)
	for k := 0; k < 160; k++ {
		g.step()
	}
	return g
}

func (g *grain) bit(i int) bool { return g.state[(g.pos+i)%80] }

func (g *grain) step() bool {
	nb := g.bit(62) != g.bit(51)
	nb = nb != g.bit(38)
	nb = nb != g.bit(23)
	nb = nb != g.bit(13)
	nb = nb != g.bit(0)
	g.state[g.pos] = nb
	g.pos = (g.pos + 1) % 80
	return nb
}

// next returns the next output bit: pairs (a, b) yield b only when a is set.
func (g *grain) next() bool {
	for {
		if g.step() {
			return g.step()
		}
		g.step()
	}
}

// roundConstants draws (rf+rp)·t field elements of 255 bits each, most
// significant bit first, rejecting values not below the modulus.
func roundConstants(t, rf, rp int) []fr.Element {
	const n = 255
	g := newGrain(1, 1, n, uint(t), uint(rf), uint(rp))
	mod := fr.Modulus()
	out := make([]fr.Element, 0, (rf+rp)*t)
	v := new(big.Int)
	for len(out) < (rf+rp)*t {
		v.SetUint64(0)
		for k := 0; k < n; k++ {
			v.Lsh(v, 1)
			if g.next() {
				v.SetBit(v, 0, 1)
			}
		}
		if v.Cmp(mod) < 0 {
			var e fr.Element
			e.SetBigInt(v)
			out = append(out, e)
		}
	}
	return out
}
