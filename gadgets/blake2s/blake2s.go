// Package blake2s is bellpepper's BLAKE2s-256 circuit (MultiEq-batched
// additions, bits little-endian within each 32-bit word) together with a
// native BLAKE2s-256 with an 8-byte personalization for witnesses and tests.
package blake2s

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gadgets/boolean"
	"github.com/snarkd/snarkd/gadgets/u32"
)

const (
	r1, r2, r3, r4 = 16, 12, 8, 7
)

var sigma = [10][16]int{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	{14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
	{11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
	{7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
	{9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
	{2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
	{12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
	{13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
	{6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
	{10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
}

var iv = [8]uint32{0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19}

// Sum256 is native unkeyed BLAKE2s with a 32-byte digest and the given
// personalization (RFC 7693 parameter block).
func Sum256(data []byte, personalization [8]byte) [32]byte {
	var h [8]uint32
	copy(h[:], iv[:])
	h[0] ^= 0x01010000 ^ 32
	h[6] ^= binary.LittleEndian.Uint32(personalization[0:])
	h[7] ^= binary.LittleEndian.Uint32(personalization[4:])
	var t uint64
	for len(data) > 64 {
		t += 64
		compress(&h, data[:64], t, false)
		data = data[64:]
	}
	var last [64]byte
	copy(last[:], data)
	t += uint64(len(data))
	compress(&h, last[:], t, true)
	var out [32]byte
	for i, w := range h {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}

func compress(h *[8]uint32, block []byte, t uint64, final bool) {
	var m [16]uint32
	for i := range m {
		m[i] = binary.LittleEndian.Uint32(block[4*i:])
	}
	var v [16]uint32
	copy(v[:8], h[:])
	copy(v[8:], iv[:])
	v[12] ^= uint32(t)
	v[13] ^= uint32(t >> 32)
	if final {
		v[14] = ^v[14]
	}
	g := func(a, b, c, d int, x, y uint32) {
		v[a] = v[a] + v[b] + x
		v[d] = bits.RotateLeft32(v[d]^v[a], -r1)
		v[c] = v[c] + v[d]
		v[b] = bits.RotateLeft32(v[b]^v[c], -r2)
		v[a] = v[a] + v[b] + y
		v[d] = bits.RotateLeft32(v[d]^v[a], -r3)
		v[c] = v[c] + v[d]
		v[b] = bits.RotateLeft32(v[b]^v[c], -r4)
	}
	for i := 0; i < 10; i++ {
		s := sigma[i]
		g(0, 4, 8, 12, m[s[0]], m[s[1]])
		g(1, 5, 9, 13, m[s[2]], m[s[3]])
		g(2, 6, 10, 14, m[s[4]], m[s[5]])
		g(3, 7, 11, 15, m[s[6]], m[s[7]])
		g(0, 5, 10, 15, m[s[8]], m[s[9]])
		g(1, 6, 11, 12, m[s[10]], m[s[11]])
		g(2, 7, 8, 13, m[s[12]], m[s[13]])
		g(3, 4, 9, 14, m[s[14]], m[s[15]])
	}
	for i := range h {
		h[i] ^= v[i] ^ v[i+8]
	}
}

func addNS(sys cs.ConstraintSystem, m *u32.MultiEq, name string, ops ...u32.UInt32) (u32.UInt32, error) {
	sys.Push(name)
	defer sys.Pop()
	return u32.AddMany(sys, m, ops)
}

func xorNS(sys cs.ConstraintSystem, name string, a, b u32.UInt32) (u32.UInt32, error) {
	sys.Push(name)
	defer sys.Pop()
	return a.Xor(sys, b)
}

func mixingG(sys cs.ConstraintSystem, m *u32.MultiEq, v []u32.UInt32, a, b, c, d int, x, y u32.UInt32) error {
	var err error
	steps := []func() error{
		func() error { v[a], err = addNS(sys, m, "mixing step 1", v[a], v[b], x); return err },
		func() error { v[d], err = xorNS(sys, "mixing step 2", v[d], v[a]); v[d] = v[d].Rotr(r1); return err },
		func() error { v[c], err = addNS(sys, m, "mixing step 3", v[c], v[d]); return err },
		func() error { v[b], err = xorNS(sys, "mixing step 4", v[b], v[c]); v[b] = v[b].Rotr(r2); return err },
		func() error { v[a], err = addNS(sys, m, "mixing step 5", v[a], v[b], y); return err },
		func() error { v[d], err = xorNS(sys, "mixing step 6", v[d], v[a]); v[d] = v[d].Rotr(r3); return err },
		func() error { v[c], err = addNS(sys, m, "mixing step 7", v[c], v[d]); return err },
		func() error { v[b], err = xorNS(sys, "mixing step 8", v[b], v[c]); v[b] = v[b].Rotr(r4); return err },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

var gIdx = [8][4]int{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}, {0, 5, 10, 15}, {1, 6, 11, 12}, {2, 7, 8, 13}, {3, 4, 9, 14}}

func compression(sys cs.ConstraintSystem, h []u32.UInt32, msg []u32.UInt32, t uint64, final bool) error {
	v := make([]u32.UInt32, 16)
	copy(v, h)
	for i := range iv {
		v[8+i] = u32.Constant(iv[i])
	}
	var err error
	if v[12], err = xorNS(sys, "first xor", v[12], u32.Constant(uint32(t))); err != nil {
		return err
	}
	if v[13], err = xorNS(sys, "second xor", v[13], u32.Constant(uint32(t>>32))); err != nil {
		return err
	}
	if final {
		if v[14], err = xorNS(sys, "third xor", v[14], u32.Constant(^uint32(0))); err != nil {
			return err
		}
	}
	meq := u32.NewMultiEq(sys)
	for i := 0; i < 10; i++ {
		sys.PushIndexed("round ", i)
		s := sigma[i]
		for k, g := range gIdx {
			sys.PushIndexed("mixing invocation ", k+1)
			err = mixingG(sys, meq, v, g[0], g[1], g[2], g[3], msg[s[2*k]], msg[s[2*k+1]])
			sys.Pop()
			if err != nil {
				sys.Pop()
				return err
			}
		}
		sys.Pop()
	}
	meq.Flush()
	for i := 0; i < 8; i++ {
		sys.Push(fmt.Sprintf("h[%d] ^ v[%d] ^ v[%d + 8]", i, i, i))
		h[i], err = xorNS(sys, "first xor", h[i], v[i])
		if err == nil {
			h[i], err = xorNS(sys, "second xor", h[i], v[i+8])
		}
		sys.Pop()
		if err != nil {
			return err
		}
	}
	return nil
}

// Hash is the BLAKE2s-256 circuit over input bits (whole bytes, each byte
// least significant bit first) with an 8-byte personalization. It returns
// 256 bits, least significant bit of each word first.
func Hash(sys cs.ConstraintSystem, input []boolean.Boolean, personalization [8]byte) ([]boolean.Boolean, error) {
	if len(input)%8 != 0 {
		return nil, fmt.Errorf("blake2s: input of %d bits is not whole bytes", len(input))
	}
	h := []u32.UInt32{
		u32.Constant(iv[0] ^ 0x01010000 ^ 32),
		u32.Constant(iv[1]), u32.Constant(iv[2]), u32.Constant(iv[3]), u32.Constant(iv[4]), u32.Constant(iv[5]),
		u32.Constant(iv[6] ^ binary.LittleEndian.Uint32(personalization[0:])),
		u32.Constant(iv[7] ^ binary.LittleEndian.Uint32(personalization[4:])),
	}
	var blocks [][]u32.UInt32
	for start := 0; start < len(input); start += 512 {
		block := input[start:min(start+512, len(input))]
		var words []u32.UInt32
		for w := 0; w < len(block); w += 32 {
			word := make([]boolean.Boolean, 32)
			for k := range word {
				if w+k < len(block) {
					word[k] = block[w+k]
				} else {
					word[k] = boolean.Constant(false)
				}
			}
			words = append(words, u32.FromBits(word))
		}
		for len(words) < 16 {
			words = append(words, u32.Constant(0))
		}
		blocks = append(blocks, words)
	}
	if len(blocks) == 0 {
		words := make([]u32.UInt32, 16)
		for i := range words {
			words[i] = u32.Constant(0)
		}
		blocks = append(blocks, words)
	}
	for i, b := range blocks[:len(blocks)-1] {
		sys.PushIndexed("block ", i)
		err := compression(sys, h, b, uint64(i+1)*64, false)
		sys.Pop()
		if err != nil {
			return nil, err
		}
	}
	sys.Push("final block")
	err := compression(sys, h, blocks[len(blocks)-1], uint64(len(input)/8), true)
	sys.Pop()
	if err != nil {
		return nil, err
	}
	out := make([]boolean.Boolean, 0, 256)
	for _, w := range h {
		out = append(out, w.Bits[:]...)
	}
	return out, nil
}
