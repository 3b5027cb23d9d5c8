// Package xorshift reproduces the deterministic random streams of the Rust
// reference tests (rand_xorshift's XorShiftRng and blstrs' Scalar::random),
// so Go tests can rebuild the exact inputs those tests used.
package xorshift

import (
	"encoding/binary"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// TestSeed is neptune's and rust-fil-proofs' TEST_SEED.
var TestSeed = [16]byte{0x59, 0x62, 0xbe, 0x5d, 0x76, 0x3d, 0x31, 0x8d, 0x17, 0xdb, 0x37, 0x32, 0x54, 0x06, 0xbc, 0xe5}

// BellpepperSeed is the seed of bellpepper's sha256, num, multipack and lookup tests.
var BellpepperSeed = [16]byte{0x59, 0x62, 0xbe, 0x3d, 0x76, 0x3d, 0x31, 0x8d, 0x17, 0xdb, 0x37, 0x32, 0x54, 0x06, 0xbc, 0xe5}

// Rng is Marsaglia's xorshift128 as implemented by rand_xorshift.
type Rng struct{ x, y, z, w uint32 }

// New seeds the generator from 16 bytes read as four little-endian words.
func New(seed [16]byte) *Rng {
	r := &Rng{
		x: binary.LittleEndian.Uint32(seed[0:]),
		y: binary.LittleEndian.Uint32(seed[4:]),
		z: binary.LittleEndian.Uint32(seed[8:]),
		w: binary.LittleEndian.Uint32(seed[12:]),
	}
	if r.x == 0 && r.y == 0 && r.z == 0 && r.w == 0 {
		r.x, r.y, r.z, r.w = 0xBAD5EED, 0xBAD5EED, 0xBAD5EED, 0xBAD5EED
	}
	return r
}

// NextU32 returns the next 32-bit draw.
func (r *Rng) NextU32() uint32 {
	t := r.x ^ (r.x << 11)
	r.x, r.y, r.z = r.y, r.z, r.w
	r.w = r.w ^ (r.w >> 19) ^ (t ^ (t >> 8))
	return r.w
}

// NextU64 returns the next 64-bit draw, low half first.
func (r *Rng) NextU64() uint64 {
	lo := uint64(r.NextU32())
	hi := uint64(r.NextU32())
	return hi<<32 | lo
}

// Fill fills b like rand_core's fill_bytes_via_next: whole u64 draws
// (little-endian), then one u64 for a tail over 4 bytes or one u32 otherwise.
func (r *Rng) Fill(b []byte) {
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, r.NextU64())
		b = b[8:]
	}
	var tmp [8]byte
	switch {
	case len(b) > 4:
		binary.LittleEndian.PutUint64(tmp[:], r.NextU64())
		copy(b, tmp[:])
	case len(b) > 0:
		binary.LittleEndian.PutUint32(tmp[:], r.NextU32())
		copy(b, tmp[:])
	}
}

// Fr draws a field element like blstrs 0.7 Scalar::random: four u64 limbs,
// top bit cleared, rejected when not below the modulus.
func (r *Rng) Fr() fr.Element {
	mod := fr.Modulus()
	for {
		var limbs [4]uint64
		for i := range limbs {
			limbs[i] = r.NextU64()
		}
		limbs[3] &= ^uint64(0) >> 1
		var be [32]byte
		for i := 0; i < 4; i++ {
			binary.BigEndian.PutUint64(be[24-8*i:], limbs[i])
		}
		v := new(big.Int).SetBytes(be[:])
		if v.Cmp(mod) < 0 {
			var e fr.Element
			e.SetBigInt(v)
			return e
		}
	}
}
