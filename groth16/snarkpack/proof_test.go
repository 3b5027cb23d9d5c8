package snarkpack

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/snarkd/snarkd/internal/realrust"
)

// TestRealAggregateRoundTrip decodes the SnarkPack aggregate of 512 2KiB PoRep proofs that
// rust-fil-proofs commits and writes it back byte for byte.
func TestRealAggregateRoundTrip(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(realrust.Dir(t), "aggregate_proof_bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != Size(512) {
		t.Fatalf("file is %d bytes, Size(512) = %d", len(b), Size(512))
	}
	p, err := ParseAggregateProof(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.NumProofs() != 512 || len(p.GIPA.CommsAB) != 9 {
		t.Fatalf("%d proofs, %d rounds", p.NumProofs(), len(p.GIPA.CommsAB))
	}
	out, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, b) {
		t.Fatal("re-encoded aggregate differs from the file")
	}
	// Every GT field is checked on decode: a flipped byte inside one is refused.
	for _, off := range []int{0, GTCompressedSize + 17, 5*GTCompressedSize + 3, 5*GTCompressedSize + g1Size + 4 + 100, len(b) - 10} {
		bad := bytes.Clone(b)
		bad[off] ^= 0x01
		if _, err := ParseAggregateProof(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("byte %d flipped: %v, want ErrMalformed", off, err)
		}
	}
	if _, err := ParseAggregateProof(b[:len(b)-1]); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated: %v", err)
	}
}
