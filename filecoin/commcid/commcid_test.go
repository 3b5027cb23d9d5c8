package commcid

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/snarkd/snarkd/filecoin/c1"
)

func mk(t *testing.T, codec, mh uint64, digest []byte) cid.Cid {
	t.Helper()
	h, err := multihash.Encode(digest, mh)
	if err != nil {
		t.Fatal(err)
	}
	return cid.NewCidV1(codec, h)
}

func TestDecode(t *testing.T) {
	var d c1.Domain
	d[0], d[31] = 7, 0x0f
	big := make([]byte, 32)
	for i := range big {
		big[i] = 0xff
	}
	for _, tc := range []struct {
		name   string
		c      cid.Cid
		sealed bool
		err    string
	}{
		{"sealed", mk(t, CodecSealed, HashPoseidon, d[:]), true, ""},
		{"unsealed", mk(t, CodecUnsealed, HashSha254, d[:]), false, ""},
		{"undefined", cid.Undef, true, "undefined CID"},
		{"unsealed codec as sealed", mk(t, CodecUnsealed, HashPoseidon, d[:]), true, "codec 0xf101, want 0xf102"},
		{"sealed codec as unsealed", mk(t, CodecSealed, HashSha254, d[:]), false, "codec 0xf102, want 0xf101"},
		{"wrong multihash", mk(t, CodecSealed, HashSha254, d[:]), true, "multihash 0x1012 of 32 bytes, want 0xb401"},
		{"short digest", mk(t, CodecSealed, HashPoseidon, d[:31]), true, "of 31 bytes"},
		{"not a field element", mk(t, CodecSealed, HashPoseidon, big), true, "comm_r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got c1.Domain
			var err error
			if tc.sealed {
				got, err = Sealed(tc.c, "comm_r")
			} else {
				got, err = Unsealed(tc.c, "comm_d")
			}
			if tc.err == "" {
				if err != nil || got != d {
					t.Fatalf("got %x, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	var d c1.Domain
	d[3] = 42
	s, err := SealedCID(d)
	if err != nil {
		t.Fatal(err)
	}
	u, err := UnsealedCID(d)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Sealed(s, "s"); err != nil || got != d {
		t.Fatalf("sealed round trip: %x %v", got, err)
	}
	if got, err := Unsealed(u, "u"); err != nil || got != d {
		t.Fatalf("unsealed round trip: %x %v", got, err)
	}
	if !strings.HasPrefix(u.String(), "baga6ea4sea") || !strings.HasPrefix(s.String(), "bagboea4b5abc") {
		t.Errorf("CIDs %s, %s do not have Filecoin's prefixes", u, s)
	}
}

// TestGoldenCIDs pins the CIDs to what go-fil-commcid (Lotus, Curio) produces: the byte layout
// CIDv1 ‖ codec ‖ multihash code ‖ 32 ‖ commitment, and published unsealed CIDs (Curio's
// Test2K and Test8MiB pieces) whose comm_d is known.
func TestGoldenCIDs(t *testing.T) {
	var d c1.Domain
	for i := range d {
		d[i] = byte(i)
	}
	d[31] &= 0x3f
	for _, tc := range []struct {
		name   string
		encode func(c1.Domain) (cid.Cid, error)
		prefix string
	}{
		{"sealed", SealedCID, "0182e20381e80220"},
		{"unsealed", UnsealedCID, "0181e203922020"},
	} {
		c, err := tc.encode(d)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := hex.EncodeToString(c.Bytes()), tc.prefix+hex.EncodeToString(d[:]); got != want {
			t.Errorf("%s CID bytes %s, want %s", tc.name, got, want)
		}
	}
	for _, tc := range []struct{ cid, commD string }{
		{"baga6ea4seaqovgk4kr4eoifujh6jfmdqvw3m6zrvyjqzu6s6abkketui6jjoydi", "ea995c54784720b449fc92b070adb6cf6635c2619a7a5e0054a24e88f252ec0d"},
		{"baga6ea4seaqcgqckrcapts6hea44xbqugwocqneekvyp5fizbo6u3e2biluckla", "23404a8880f9cbc72039cb8614359c2834845570fe95190bbd4d934142e8252c"},
	} {
		var want c1.Domain
		if _, err := hex.Decode(want[:], []byte(tc.commD)); err != nil {
			t.Fatal(err)
		}
		c, err := UnsealedCID(want)
		if err != nil || c.String() != tc.cid {
			t.Errorf("UnsealedCID(%s) = %s, %v; want %s", tc.commD, c, err, tc.cid)
		}
		parsed, err := cid.Decode(tc.cid)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Unsealed(parsed, "comm_d"); err != nil || got != want {
			t.Errorf("Unsealed(%s) = %x, %v; want %s", tc.cid, got, err, tc.commD)
		}
	}
}
