// Package sha254 is Filecoin's SHA-256 truncated to 254 bits (the last
// digest byte masked with 0x3f), used for tree D / CommD / CommP, with
// zero-tree commitments and binary tree roots over 32-byte leaves.
package sha254

import (
	"crypto/sha256"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Sum returns SHA-256(data) with digest[31] &= 0x3f.
func Sum(data []byte) [32]byte {
	d := sha256.Sum256(data)
	d[31] &= 0x3f
	return d
}

// Node hashes two 32-byte children.
func Node(left, right [32]byte) [32]byte {
	var buf [64]byte
	copy(buf[:32], left[:])
	copy(buf[32:], right[:])
	return Sum(buf[:])
}

// ZeroRoot returns the root of an all-zero tree of 2^log2Size bytes
// (log2Size ≥ 5; 5 is a single zero leaf).
func ZeroRoot(log2Size int) ([32]byte, error) {
	if log2Size < 5 || log2Size > 64 {
		return [32]byte{}, fmt.Errorf("sha254: zero tree of 2^%d bytes out of range", log2Size)
	}
	var cur [32]byte
	for k := 6; k <= log2Size; k++ {
		cur = Node(cur, cur)
	}
	return cur, nil
}

// Root returns the binary tree root over data split into 32-byte leaves;
// len(data) must be 32·2^k.
func Root(data []byte) ([32]byte, error) {
	n := len(data) / 32
	if len(data)%32 != 0 || n == 0 || n&(n-1) != 0 {
		return [32]byte{}, fmt.Errorf("sha254: data of %d bytes is not 32·2^k", len(data))
	}
	level := make([][32]byte, n)
	for i := range level {
		copy(level[i][:], data[32*i:])
	}
	for len(level) > 1 {
		next := make([][32]byte, len(level)/2)
		for i := range next {
			next[i] = Node(level[2*i], level[2*i+1])
		}
		level = next
	}
	return level[0], nil
}

// ToFr reads 32 bytes as a little-endian field element (sha254 output is
// always below 2^254, hence canonical).
func ToFr(b [32]byte) (fr.Element, error) {
	var be [32]byte
	for i := range b {
		be[i] = b[31-i]
	}
	var e fr.Element
	if err := e.SetBytesCanonical(be[:]); err != nil {
		return e, fmt.Errorf("sha254: bytes not a canonical field element: %w", err)
	}
	return e, nil
}

// FromFr returns the 32-byte little-endian encoding of e.
func FromFr(e *fr.Element) [32]byte {
	be := e.Bytes()
	var le [32]byte
	for i := range be {
		le[i] = be[31-i]
	}
	return le
}

// HashFr hashes field elements as Filecoin's Sha256Hasher does: sha254 over
// the concatenated little-endian encodings, read back as a field element.
func HashFr(elems []fr.Element) fr.Element {
	buf := make([]byte, 0, 32*len(elems))
	for i := range elems {
		b := FromFr(&elems[i])
		buf = append(buf, b[:]...)
	}
	d := Sum(buf)
	e, err := ToFr(d)
	if err != nil {
		panic(err) // unreachable: masked digests are below the modulus
	}
	return e
}
