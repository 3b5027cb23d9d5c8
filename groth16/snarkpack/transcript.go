package snarkpack

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math/big"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// transcript is bellperson's aggregate Transcript: SHA-256 over "snarkpack-v1", a tag and the
// bincode encoding of each value written (Fr as 32 little-endian bytes, curve points
// compressed, GT as twelve little-endian Fp, byte slices with a u64 length).
type transcript struct {
	h   hash.Hash
	buf [gtTranscriptSize]byte
}

func newTranscript(tag string) *transcript {
	t := &transcript{h: sha256.New()}
	t.h.Write([]byte("snarkpack-v1"))
	t.h.Write([]byte(tag))
	return t
}

func (t *transcript) fr(xs ...*fr.Element) *transcript {
	for _, x := range xs {
		b := x.Bytes()
		for i := range fr.Bytes {
			t.buf[i] = b[fr.Bytes-1-i]
		}
		t.h.Write(t.buf[:fr.Bytes])
	}
	return t
}

func (t *transcript) g1(ps ...*bls.G1Affine) *transcript {
	for _, p := range ps {
		b := p.Bytes()
		t.h.Write(b[:])
	}
	return t
}

func (t *transcript) g2(ps ...*bls.G2Affine) *transcript {
	for _, p := range ps {
		b := p.Bytes()
		t.h.Write(b[:])
	}
	return t
}

func (t *transcript) gt(xs ...*bls.GT) *transcript {
	for _, x := range xs {
		putGTTranscript(t.buf[:], x)
		t.h.Write(t.buf[:])
	}
	return t
}

func (t *transcript) bytes(b []byte) *transcript {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
	t.h.Write(n[:])
	t.h.Write(b)
	return t
}

// challenge is Transcript::into_challenge: append a counter (u64 big-endian, from 1) and hash
// until the digest, read little-endian with its top bit cleared, is a field element other
// than 0 and 1. The counters accumulate in the hash state.
func (t *transcript) challenge() fr.Element {
	var ctr [8]byte
	var le [sha256.Size]byte
	for nonce := uint64(1); ; nonce++ {
		binary.BigEndian.PutUint64(ctr[:], nonce)
		t.h.Write(ctr[:])
		d := t.h.Sum(le[:0])
		d[31] &= 0x7f
		var be [32]byte
		for i := range 32 {
			be[i] = d[31-i]
		}
		v := new(big.Int).SetBytes(be[:])
		if v.Cmp(fr.Modulus()) >= 0 {
			continue
		}
		var c fr.Element
		c.SetBigInt(v)
		if c.IsOne() || c.IsZero() {
			continue
		}
		return c
	}
}
