//go:build cgo

package groth16

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	blst "github.com/supranational/blst/bindings/go"
)

// TestEncodingsMatchBlst checks that gnark-crypto's point encodings (and our decoders) agree
// byte for byte with blst, the library bellperson serializes with.
func TestEncodingsMatchBlst(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	g1b, g2b := blst.P1Generator(), blst.P2Generator()
	for i := 0; i < 32; i++ {
		var k fr.Element
		k.SetUint64(rng.Uint64())
		if i%2 == 1 {
			k.SetRandom()
		}
		if i == 0 {
			k.SetOne()
		}
		le := k.Bytes() // big-endian
		var leBytes [32]byte
		for j := range le {
			leBytes[j] = le[31-j]
		}
		var kb big.Int
		k.BigInt(&kb)

		var p1 bls.G1Affine
		p1.ScalarMultiplicationBase(&kb)
		b1 := g1b.Mult(leBytes[:], 256).ToAffine()
		raw := p1.RawBytes()
		if !bytes.Equal(raw[:], b1.Serialize()) {
			t.Fatalf("G1 uncompressed differs for k=%s", k.String())
		}
		comp := p1.Bytes()
		if !bytes.Equal(comp[:], b1.Compress()) {
			t.Fatalf("G1 compressed differs for k=%s", k.String())
		}
		var back bls.G1Affine
		if err := decodeG1Uncompressed(&back, b1.Serialize(), CheckSubgroup); err != nil || !back.Equal(&p1) {
			t.Fatalf("decoding blst G1: %v", err)
		}
		if err := decodeG1Compressed(&back, b1.Compress(), CheckSubgroup); err != nil || !back.Equal(&p1) {
			t.Fatalf("decoding blst compressed G1: %v", err)
		}

		var p2 bls.G2Affine
		p2.ScalarMultiplicationBase(&kb)
		b2 := g2b.Mult(leBytes[:], 256).ToAffine()
		raw2 := p2.RawBytes()
		if !bytes.Equal(raw2[:], b2.Serialize()) {
			t.Fatalf("G2 uncompressed differs for k=%s", k.String())
		}
		comp2 := p2.Bytes()
		if !bytes.Equal(comp2[:], b2.Compress()) {
			t.Fatalf("G2 compressed differs for k=%s", k.String())
		}
		var back2 bls.G2Affine
		if err := decodeG2Uncompressed(&back2, b2.Serialize(), CheckSubgroup); err != nil || !back2.Equal(&p2) {
			t.Fatalf("decoding blst G2: %v", err)
		}
		if err := decodeG2Compressed(&back2, b2.Compress(), CheckSubgroup); err != nil || !back2.Equal(&p2) {
			t.Fatalf("decoding blst compressed G2: %v", err)
		}
		// blst must accept what we write.
		if new(blst.P1Affine).Deserialize(raw[:]) == nil || new(blst.P2Affine).Uncompress(comp2[:]) == nil {
			t.Fatal("blst rejects our encoding")
		}
	}
	// Infinity.
	var inf1 bls.G1Affine
	var inf2 bls.G2Affine
	r1, r2 := inf1.RawBytes(), inf2.RawBytes()
	c1, c2 := inf1.Bytes(), inf2.Bytes()
	zero1 := new(blst.P1Affine)
	zero2 := new(blst.P2Affine)
	if !bytes.Equal(r1[:], zero1.Serialize()) || !bytes.Equal(c1[:], zero1.Compress()) ||
		!bytes.Equal(r2[:], zero2.Serialize()) || !bytes.Equal(c2[:], zero2.Compress()) {
		t.Fatal("infinity encodings differ from blst")
	}
}
