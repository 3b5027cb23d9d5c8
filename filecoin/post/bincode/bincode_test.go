package bincode

import (
	"errors"
	"testing"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

func sampleProof(kind c1.ProofKind) c1.MerkleProof {
	lvl := func(arity int, idx uint64) c1.PathElement {
		pe := c1.PathElement{Index: idx, Hashes: make([]c1.Domain, arity-1)}
		for i := range pe.Hashes {
			pe.Hashes[i][0] = byte(i + 1)
		}
		return pe
	}
	p := c1.MerkleProof{Kind: kind, Base: []c1.PathElement{lvl(8, 3), lvl(8, 7)}}
	p.Root[0], p.Leaf[0] = 9, 10
	if kind != c1.Single {
		p.SubPath = []c1.PathElement{lvl(4, 2)}
	}
	if kind == c1.Top {
		p.TopPath = []c1.PathElement{lvl(2, 1)}
	}
	return p
}

func TestMerkleProofRoundTrip(t *testing.T) {
	shapes := map[c1.ProofKind]prooftypes.TreeShape{c1.Single: {Base: 8}, c1.Sub: {Base: 8, Sub: 4}, c1.Top: {Base: 8, Sub: 4, Top: 2}}
	for kind, shape := range shapes {
		p := sampleProof(kind)
		var w Writer
		if err := w.MerkleProof(&p); err != nil {
			t.Fatal(err)
		}
		r := NewReader(w.B)
		got, err := r.MerkleProof("p", shape, 2)
		if err != nil || r.End("p") != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		want := uint64(3 + 7*8)
		if kind != c1.Single {
			want += 2 * 64
		}
		if kind == c1.Top {
			want += 1 * 256
		}
		if PathIndex(&got, shape) != want {
			t.Errorf("%s: index %d, want %d", kind, PathIndex(&got, shape), want)
		}
		// Another shape, level count or a truncation is refused with a DecodeError.
		for name, f := range map[string]func() error{
			"shape":     func() error { _, err := NewReader(w.B).MerkleProof("p", prooftypes.TreeShape{Base: 2}, 2); return err },
			"levels":    func() error { _, err := NewReader(w.B).MerkleProof("p", shape, 3); return err },
			"truncated": func() error { _, err := NewReader(w.B[:len(w.B)-1]).MerkleProof("p", shape, 2); return err },
		} {
			var de *DecodeError
			if err := f(); !errors.As(err, &de) {
				t.Errorf("%s %s: %v", kind, name, err)
			}
		}
	}
	var w Writer
	if err := w.MerkleProof(&c1.MerkleProof{}); err == nil {
		t.Error("proof without a variant encoded")
	}
	// A length that cannot fit is refused before allocating.
	w = Writer{}
	w.U64(1 << 60)
	if _, err := NewReader(w.B).Len("x", 32); err == nil {
		t.Error("huge length accepted")
	}
	// Non-canonical domains are refused.
	bad := make([]byte, 32)
	for i := range bad {
		bad[i] = 0xff
	}
	if _, err := NewReader(bad).Domain("d"); err == nil {
		t.Error("non-canonical domain accepted")
	}
}

func FuzzMerkleProof(f *testing.F) {
	p := sampleProof(c1.Sub)
	var w Writer
	_ = w.MerkleProof(&p)
	f.Add(w.B)
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b)
		got, err := r.MerkleProof("p", prooftypes.TreeShape{Base: 8, Sub: 4}, 2)
		if err != nil {
			return
		}
		var out Writer
		if err := out.MerkleProof(&got); err != nil {
			t.Fatal(err)
		}
		if string(out.B) != string(b[:r.Offset()]) {
			t.Fatal("decoded proof does not re-encode to its bytes")
		}
	})
}
