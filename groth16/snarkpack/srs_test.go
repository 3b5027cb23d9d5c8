package snarkpack

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSRSRoundTripAndSpecialize(t *testing.T) {
	ctx := context.Background()
	s, err := DevnetSRS(ctx, 8, 3)
	if err != nil {
		t.Fatal(err)
	}
	if s.Powers() != 16 || s.MaxProofs() != 8 {
		t.Fatalf("powers %d, max proofs %d", s.Powers(), s.MaxProofs())
	}
	again, _ := DevnetSRS(ctx, 8, 3)
	other, _ := DevnetSRS(ctx, 8, 4)
	if !again.GAlpha[5].Equal(&s.GAlpha[5]) || other.GAlpha[5].Equal(&s.GAlpha[5]) {
		t.Fatal("devnet SRS is not a function of its seed")
	}
	var buf bytes.Buffer
	n, err := s.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) || n != 4*4+16*(2*g1Size+2*g2Size) {
		t.Fatalf("WriteTo: %d bytes (buffer %d), %v", n, buf.Len(), err)
	}
	back, err := ReadSRS(bytes.NewReader(buf.Bytes()), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.HBeta {
		if !back.HBeta[i].Equal(&s.HBeta[i]) || !back.GBeta[i].Equal(&s.GBeta[i]) {
			t.Fatalf("point %d differs after the round trip", i)
		}
	}
	// A prefix, as filecoin-proofs reads the published file: the rest of each vector skipped.
	short, err := ReadSRS(bytes.NewReader(buf.Bytes()), 4)
	if err != nil || short.Powers() != 4 || !short.HAlpha[3].Equal(&s.HAlpha[3]) {
		t.Fatalf("prefix read: %v", err)
	}
	pk, vk, err := s.Specialize(4)
	if err != nil {
		t.Fatal(err)
	}
	if len(pk.WKeyA) != 4 || !pk.WKeyA[0].Equal(&s.GAlpha[4]) || !vk.HBeta.Equal(&s.HBeta[1]) || pk.Verifier() != vk {
		t.Fatal("specialised keys are not the SRS's slices")
	}
	for _, n := range []int{1, 3, 16} {
		if _, _, err := s.Specialize(n); err == nil {
			t.Errorf("Specialize(%d) accepted", n)
		}
	}
	// Corruption: a bad point, a huge length, a truncated file.
	bad := bytes.Clone(buf.Bytes())
	bad[4+g1Size+5] ^= 0xff
	if _, err := ReadSRS(bytes.NewReader(bad), 0); err == nil || !strings.Contains(err.Error(), "g_alpha_powers point 1") {
		t.Errorf("bad point: %v", err)
	}
	huge := bytes.Clone(buf.Bytes())
	binary.BigEndian.PutUint32(huge, MaxSRSVector+1)
	if _, err := ReadSRS(bytes.NewReader(huge), 0); err == nil {
		t.Error("oversized vector accepted")
	}
	if _, err := ReadSRS(bytes.NewReader(buf.Bytes()[:buf.Len()-1]), 0); err == nil {
		t.Error("truncated SRS accepted")
	}
}

func TestKeyCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := &KeyCache{Path: filepath.Join(dir, SRSFile)}
	if _, err := c.Keys(ctx, 4); err == nil || !strings.Contains(err.Error(), "params fetch --srs") {
		t.Fatalf("missing SRS: %v", err)
	}
	s, _ := DevnetSRS(ctx, 4, 1)
	f, err := os.Create(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	pk, err := c.Keys(ctx, 4)
	if err != nil || pk.N != 4 {
		t.Fatalf("Keys(4): %v", err)
	}
	if again, _ := c.Keys(ctx, 4); again != pk {
		t.Error("keys not cached")
	}
	if _, err := c.Keys(ctx, 8); err == nil {
		t.Error("8 proofs accepted from an SRS of 8 powers")
	}
}

// TestSizeMatchesBellperson: bellperson's test_proof_io writes a 4-proof aggregate in 8,212
// bytes; the NI-PoRep sizes are 14,164 (16 proofs) and 23,092 (128).
func TestSizeMatchesBellperson(t *testing.T) {
	for n, want := range map[int]int{4: 8212, 16: 14164, 128: 23092, 512: 29044} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %d, want %d", n, got, want)
		}
	}
}

func FuzzParseAggregateProof(f *testing.F) {
	fx := newFixture(f, 2)
	pk, _, _ := fx.srs.Specialize(2)
	agg, err := Aggregate(context.Background(), pk, nil, fx.proofs, V2)
	if err != nil {
		f.Fatal(err)
	}
	b, _ := agg.MarshalBinary()
	f.Add(b)
	f.Add(b[:100])
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseAggregateProof(b)
		if err != nil {
			return
		}
		out, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, b) {
			t.Fatal("decoded aggregate does not re-encode to its bytes")
		}
	})
}

func FuzzReadSRS(f *testing.F) {
	s, _ := DevnetSRS(context.Background(), 2, 1)
	var buf bytes.Buffer
	s.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ReadSRS(bytes.NewReader(b), 8)
	})
}
