package porep

import (
	"encoding/binary"
	"math/bits"
)

// chachaRng is rand_chacha's ChaCha8Rng (rand 0.8): the original ChaCha layout (64-bit block
// counter in words 12–13, 64-bit stream id 0 in words 14–15), key = the 32-byte seed, output
// words consumed in order. next_u64 takes the low word first.
type chachaRng struct {
	rounds  int
	key     [8]uint32
	counter uint64
	buf     [16]uint32
	idx     int
}

func newChachaRng(seed [32]byte, rounds int) *chachaRng {
	c := &chachaRng{rounds: rounds, idx: 16}
	for i := range c.key {
		c.key[i] = binary.LittleEndian.Uint32(seed[4*i:])
	}
	return c
}

func quarter(a, b, c, d uint32) (uint32, uint32, uint32, uint32) {
	a += b
	d = bits.RotateLeft32(d^a, 16)
	c += d
	b = bits.RotateLeft32(b^c, 12)
	a += b
	d = bits.RotateLeft32(d^a, 8)
	c += d
	b = bits.RotateLeft32(b^c, 7)
	return a, b, c, d
}

func (c *chachaRng) block() {
	in := [16]uint32{0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
		c.key[0], c.key[1], c.key[2], c.key[3], c.key[4], c.key[5], c.key[6], c.key[7],
		uint32(c.counter), uint32(c.counter >> 32), 0, 0}
	x := in
	for r := 0; r < c.rounds; r += 2 {
		x[0], x[4], x[8], x[12] = quarter(x[0], x[4], x[8], x[12])
		x[1], x[5], x[9], x[13] = quarter(x[1], x[5], x[9], x[13])
		x[2], x[6], x[10], x[14] = quarter(x[2], x[6], x[10], x[14])
		x[3], x[7], x[11], x[15] = quarter(x[3], x[7], x[11], x[15])
		x[0], x[5], x[10], x[15] = quarter(x[0], x[5], x[10], x[15])
		x[1], x[6], x[11], x[12] = quarter(x[1], x[6], x[11], x[12])
		x[2], x[7], x[8], x[13] = quarter(x[2], x[7], x[8], x[13])
		x[3], x[4], x[9], x[14] = quarter(x[3], x[4], x[9], x[14])
	}
	for i := range x {
		c.buf[i] = x[i] + in[i]
	}
	c.counter++
	c.idx = 0
}

func (c *chachaRng) nextU32() uint32 {
	if c.idx == 16 {
		c.block()
	}
	v := c.buf[c.idx]
	c.idx++
	return v
}

func (c *chachaRng) nextU64() uint64 {
	lo := uint64(c.nextU32())
	return uint64(c.nextU32())<<32 | lo
}
