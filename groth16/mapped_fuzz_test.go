package groth16

import (
	"bytes"
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

// FuzzParseMapped checks the mmap decoder (ScanLayout + in-place section decoding) against the
// streaming decoder: both accept or both reject, and accepted input re-encodes to itself.
func FuzzParseMapped(f *testing.F) {
	circuit := cs.CircuitFunc(func(s cs.ConstraintSystem) error {
		x, _ := s.AllocInputValue("x", new(fr.Element).SetUint64(3))
		y, _ := s.AllocValue("y", new(fr.Element).SetUint64(9))
		s.Enforce("sq", cs.LCOf(x), cs.LCOf(x), cs.LCOf(y))
		return nil
	})
	pk, err := SetupFromSeed(context.Background(), circuit, []byte("fuzz"))
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := pk.WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	raw := buf.Bytes()
	f.Add(raw)
	f.Add(raw[:len(raw)-1])
	f.Add(raw[:VerifyingKeyHeaderSize])
	opts := ReadOptions{Check: CheckOnCurve, VKCheck: CheckOnCurve}
	f.Fuzz(func(t *testing.T, data []byte) {
		p1, err1 := parseMapped(data, opts)
		p2, err2 := ParseParameters(data, opts)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("mmap decoder: %v; stream decoder: %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		var b1, b2 bytes.Buffer
		p1.WriteTo(&b1)
		p2.WriteTo(&b2)
		if !bytes.Equal(b1.Bytes(), data) || !bytes.Equal(b2.Bytes(), data) {
			t.Fatal("accepted parameters do not re-encode to the input")
		}
	})
}
