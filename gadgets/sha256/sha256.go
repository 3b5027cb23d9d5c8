// Package sha256 is bellpepper's SHA-256 circuit: the compression function
// with MultiEq-batched additions and deferred a/e sums, and the padded hash.
// Bits are big-endian within each 32-bit word, as SHA-256 defines them.
package sha256

import (
	"fmt"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/u32"
)

var roundConstants = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

var iv = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}

// IV returns the SHA-256 initial hash value as constant words.
func IV() []u32.UInt32 {
	r := make([]u32.UInt32, 8)
	for i, v := range iv {
		r[i] = u32.Constant(v)
	}
	return r
}

// Hash pads input (a whole number of bytes, big-endian bits) and hashes it,
// one compression per 512-bit block in namespace "block i". It returns the
// 256 digest bits, big-endian.
func Hash(sys cs.ConstraintSystem, input []boolean.Boolean) ([]boolean.Boolean, error) {
	if len(input)%8 != 0 {
		return nil, fmt.Errorf("sha256: input of %d bits is not whole bytes", len(input))
	}
	padded := make([]boolean.Boolean, 0, len(input)+576)
	padded = append(padded, input...)
	l := uint64(len(input))
	padded = append(padded, boolean.Constant(true))
	for (len(padded)+64)%512 != 0 {
		padded = append(padded, boolean.Constant(false))
	}
	for i := 63; i >= 0; i-- {
		padded = append(padded, boolean.Constant(l>>uint(i)&1 == 1))
	}
	cur := IV()
	for i := 0; i*512 < len(padded); i++ {
		sys.PushIndexed("block ", i)
		next, err := Compress(sys, padded[i*512:(i+1)*512], cur)
		sys.Pop()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return wordsToBits(cur), nil
}

// BlockNoPadding compresses one 512-bit block with the IV, without padding.
func BlockNoPadding(sys cs.ConstraintSystem, input []boolean.Boolean) ([]boolean.Boolean, error) {
	out, err := Compress(sys, input, IV())
	if err != nil {
		return nil, err
	}
	return wordsToBits(out), nil
}

func wordsToBits(ws []u32.UInt32) []boolean.Boolean {
	r := make([]boolean.Boolean, 0, 32*len(ws))
	for _, w := range ws {
		r = append(r, w.BitsBE()...)
	}
	return r
}

// maybe is a word either known or deferred as the addends of one AddMany. The addends live in
// the value itself, rewritten every round: a word is a kilobyte of bits, and lists allocated per
// round made most of the PoRep witness's garbage.
type maybe struct {
	ops      [8]u32.UInt32 // the first n are the deferred addends; one more fits for the final sum
	n        int
	concrete u32.UInt32
	isDef    bool
}

// deferTo makes m the sum of ops (in this order).
func (m *maybe) deferTo(ops ...*u32.UInt32) {
	for i, op := range ops {
		m.ops[i] = *op
	}
	m.n, m.isDef = len(ops), true
}

// compute returns m's word, adding its deferred addends (and extra, if not nil, last).
func (m *maybe) compute(sys cs.ConstraintSystem, meq *u32.MultiEq, name string, extra *u32.UInt32) (u32.UInt32, error) {
	if !m.isDef {
		return m.concrete, nil
	}
	ops := m.ops[:m.n]
	if extra != nil {
		m.ops[m.n] = *extra
		ops = m.ops[:m.n+1]
	}
	sys.Push(name)
	defer sys.Pop()
	return u32.AddMany(sys, meq, ops)
}

// round is one compression round: it computes the new e and a from their deferred sums, and
// defers the next ones (h + Σ1 + ch + k + w, plus d for e, plus Σ0 + maj for a).
func round(sys cs.ConstraintSystem, meq *u32.MultiEq, a, e *maybe, b, c, d, f, g, h *u32.UInt32, k u32.UInt32, w *u32.UInt32) (newE, newA u32.UInt32, err error) {
	if newE, err = e.compute(sys, meq, "deferred e computation", nil); err != nil {
		return
	}
	s1, err := xor3(sys, newE, 6, 11, newE.Rotr(25), "first xor for s1", "second xor for s1")
	if err != nil {
		return
	}
	sys.Push("ch")
	ch, err := u32.Sha256Ch(sys, newE, *f, *g)
	sys.Pop()
	if err != nil {
		return
	}
	if newA, err = a.compute(sys, meq, "deferred a computation", nil); err != nil {
		return
	}
	s0, err := xor3(sys, newA, 2, 13, newA.Rotr(22), "first xor for s0", "second xor for s0")
	if err != nil {
		return
	}
	sys.Push("maj")
	maj, err := u32.Sha256Maj(sys, newA, *b, *c)
	sys.Pop()
	if err != nil {
		return
	}
	e.deferTo(h, &s1, &ch, &k, w, d)
	a.deferTo(h, &s1, &ch, &k, w, &s0, &maj)
	return newE, newA, nil
}

func xor3(sys cs.ConstraintSystem, x u32.UInt32, r1, r2 int, third u32.UInt32, n1, n2 string) (u32.UInt32, error) {
	s := x.Rotr(r1)
	sys.Push(n1)
	s, err := s.Xor(sys, x.Rotr(r2))
	sys.Pop()
	if err != nil {
		return s, err
	}
	sys.Push(n2)
	s, err = s.Xor(sys, third)
	sys.Pop()
	return s, err
}

// Compress runs the compression function on a 512-bit block (big-endian bits)
// and the current hash value, returning the next hash value.
func Compress(sys cs.ConstraintSystem, input []boolean.Boolean, current []u32.UInt32) ([]u32.UInt32, error) {
	if len(input) != 512 || len(current) != 8 {
		return nil, fmt.Errorf("sha256: compression of %d bits with %d words", len(input), len(current))
	}
	w := make([]u32.UInt32, 0, 64)
	for i := 0; i < 16; i++ {
		w = append(w, u32.FromBitsBE(input[32*i:32*(i+1)]))
	}
	meq := u32.NewMultiEq(sys)
	for i := 16; i < 64; i++ {
		sys.PushIndexed("w extension ", i)
		s0, err := xor3(sys, w[i-15], 7, 18, w[i-15].Shr(3), "first xor for s0", "second xor for s0")
		if err != nil {
			sys.Pop()
			return nil, err
		}
		s1, err := xor3(sys, w[i-2], 17, 19, w[i-2].Shr(10), "first xor for s1", "second xor for s1")
		if err != nil {
			sys.Pop()
			return nil, err
		}
		sys.Push("computation of w[i]")
		tmp, err := u32.AddMany(sys, meq, []u32.UInt32{w[i-16], s0, w[i-7], s1})
		sys.Pop()
		sys.Pop()
		if err != nil {
			return nil, err
		}
		w = append(w, tmp)
	}

	// a and e are deferred sums between rounds, kept in place (they are large).
	var a, e maybe
	a.concrete, e.concrete = current[0], current[4]
	b, c, d := current[1], current[2], current[3]
	f, g, h := current[5], current[6], current[7]
	for i := 0; i < 64; i++ {
		sys.PushIndexed("compression round ", i)
		newE, newA, err := round(sys, meq, &a, &e, &b, &c, &d, &f, &g, &h, u32.Constant(roundConstants[i]), &w[i])
		sys.Pop()
		if err != nil {
			return nil, err
		}
		h, g, f = g, f, newE
		d, c, b = c, b, newA
	}

	out := make([]u32.UInt32, 8)
	var err error
	add := func(k int, name string, x u32.UInt32) {
		if err != nil {
			return
		}
		sys.Push(name)
		out[k], err = u32.AddMany(sys, meq, []u32.UInt32{current[k], x})
		sys.Pop()
	}
	out[0], err = a.compute(sys, meq, "deferred h0 computation", &current[0])
	add(1, "new h1", b)
	add(2, "new h2", c)
	add(3, "new h3", d)
	if err == nil {
		out[4], err = e.compute(sys, meq, "deferred h4 computation", &current[4])
	}
	add(5, "new h5", f)
	add(6, "new h6", g)
	add(7, "new h7", h)
	if err != nil {
		return nil, err
	}
	meq.Flush()
	return out, nil
}
