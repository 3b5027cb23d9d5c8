package groth16

import (
	"bytes"
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

// Splice builds a fuzz input from a base file: the del bytes at off (off taken modulo
// len(base)+1, del clamped to the end) are replaced by patch. Fuzzing the edit rather than the
// whole file keeps the fuzzer's own values small, so its mutation and minimization stay cheap
// however large a valid file is, while the decoder still reads complete, nearly valid files. A
// nil base fuzzes raw bytes.
func Splice(base []byte, off, del uint32, patch []byte) []byte {
	o := int(off % uint32(len(base)+1))
	e := o + int(min(del, uint32(len(base)-o)))
	out := make([]byte, 0, len(base)-(e-o)+len(patch))
	return append(append(append(out, base[:o]...), patch...), base[e:]...)
}

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
	bases := [][]byte{nil, buf.Bytes()}
	raw := bases[1]
	for _, s := range []struct {
		base     uint8
		off, del uint32
		patch    []byte
	}{
		{1, 0, 0, nil},                                         // the whole file
		{1, uint32(len(raw) - 1), 1, nil},                      // one byte short
		{1, VerifyingKeyHeaderSize, ^uint32(0), nil},           // the verifying key's header only
		{1, VerifyingKeyHeaderSize - 4, 4, []byte{0, 0, 0, 9}}, // more ic points than the file holds
		{0, 0, 0, []byte{}},
	} {
		f.Add(s.base, s.off, s.del, s.patch)
	}
	opts := ReadOptions{Check: CheckOnCurve, VKCheck: CheckOnCurve}
	f.Fuzz(func(t *testing.T, base uint8, off, del uint32, patch []byte) {
		data := Splice(bases[int(base)%len(bases)], off, del, patch)
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
