package snarkpack

import (
	"errors"
	"fmt"
	"math/big"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// GTCompressedSize is a target-group element in blstrs' torus compression: one Fp6 (six Fp,
// little-endian).
const GTCompressedSize = 6 * fp.Bytes

// gtTranscriptSize is a GT element as bincode writes it into the transcript: twelve Fp,
// little-endian, in tower order (c0.b0.a0, c0.b0.a1, … c1.b2.a1).
const gtTranscriptSize = 12 * fp.Bytes

// ErrNotInGT marks a compressed target-group element that does not decode to an element of
// order r.
var ErrNotInGT = errors.New("not an element of the pairing target group")

func putFpLE(dst []byte, x *fp.Element) {
	b := x.Bytes()
	for i := range fp.Bytes {
		dst[i] = b[fp.Bytes-1-i]
	}
}

func fpFromLE(src []byte) (fp.Element, error) {
	var be [fp.Bytes]byte
	for i := range fp.Bytes {
		be[i] = src[fp.Bytes-1-i]
	}
	var x fp.Element
	if err := x.SetBytesCanonical(be[:]); err != nil {
		return x, fmt.Errorf("field element not below the modulus: %w", err)
	}
	return x, nil
}

func e6Coords(x *bls.E6) [6]*fp.Element {
	return [6]*fp.Element{&x.B0.A0, &x.B0.A1, &x.B1.A0, &x.B1.A1, &x.B2.A0, &x.B2.A1}
}

// compressGT writes blstrs' Gt::write_compressed: b = (c0 + 1)/c1 for x = c0 + c1·w, which
// loses nothing for elements of the cyclotomic subgroup (x·x̄ = 1).
func compressGT(dst []byte, x *bls.GT) error {
	if x.C1.IsZero() {
		return errors.New("cannot compress a target-group element with c1 = 0")
	}
	var b, inv bls.E6
	b.Set(&x.C0)
	var one fp.Element
	one.SetOne()
	b.B0.A0.Add(&b.B0.A0, &one)
	inv.Inverse(&x.C1)
	b.Mul(&b, &inv)
	for i, c := range e6Coords(&b) {
		putFpLE(dst[i*fp.Bytes:], c)
	}
	return nil
}

// decompressGT reads blstrs' Gt::read_compressed: x = (b + w)/(b − w), accepted only if it
// has order r.
func decompressGT(x *bls.GT, src []byte) error {
	var b bls.E6
	for i, c := range e6Coords(&b) {
		v, err := fpFromLE(src[i*fp.Bytes:])
		if err != nil {
			return err
		}
		*c = v
	}
	var num, den bls.E12
	num.C0.Set(&b)
	num.C1.SetOne()
	den.C0.Set(&b)
	den.C1.SetOne()
	den.C1.Neg(&den.C1)
	if den.IsZero() {
		return ErrNotInGT
	}
	den.Inverse(&den)
	x.Mul(&num, &den)
	if !inGT(x) {
		return ErrNotInGT
	}
	return nil
}

// inGT reports whether x^r = 1 (blst's fp12_in_group: cyclotomic and of order r).
func inGT(x *bls.GT) bool {
	var y bls.GT
	y.Exp(*x, fr.Modulus())
	return y.IsOne()
}

// putGTTranscript writes x as bincode serialises blstrs' Fp12 (576 bytes).
func putGTTranscript(dst []byte, x *bls.GT) {
	for i, c := range e6Coords(&x.C0) {
		putFpLE(dst[i*fp.Bytes:], c)
	}
	for i, c := range e6Coords(&x.C1) {
		putFpLE(dst[(6+i)*fp.Bytes:], c)
	}
}

// gtExp returns x^k for a scalar k.
func gtExp(x *bls.GT, k *fr.Element) bls.GT {
	var bi big.Int
	k.BigInt(&bi)
	var y bls.GT
	y.CyclotomicExp(*x, &bi)
	return y
}
