package commcid

import (
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
