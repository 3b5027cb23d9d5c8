package sha254

import (
	"encoding/hex"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
)

func h(b [32]byte) string { return hex.EncodeToString(b[:]) }

// Vectors of circuit-fingerprints.md §10.
func TestVectors(t *testing.T) {
	one := make([]byte, 64)
	one[0] = 1
	a := Sum(one)
	z6, _ := ZeroRoot(6)
	checks := []struct{ name, got, want string }{
		{"curio TestHashChunk", h(a), "16abab341fb7f370e27e4dadcf81766dd0dfd0ae64469477bb2cf6614938b22f"},
		{"curio TestHashChunk2L zero node", h(z6), "f5a5fd42d16a20302798ef6ed309979b43003d2320d9f0e8ea9831a92759fb0b"},
		{"curio TestHashChunk2L level 2", h(Node(a, z6)), "0dd6dae41c2f75550129594fb644e4a842cfafb316a2d59321e388fe84a1ec2f"},
	}
	for _, z := range []struct {
		log2 int
		want string
	}{
		{7, "3731bb99ac689f66eef5973e4a94da188f4ddcae580724fc6f3fd60dfd488333"},
		{11, "fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833"},
		{35, "077e5fde35c50a9303a55009e3498a4ebedff39c42b710b730d8ec7ac7afa63e"},
		{36, "e64005a6bfe3777953b8ad6ef93f0fca1049b2041654f2a411f7702799cece02"},
	} {
		r, err := ZeroRoot(z.log2)
		if err != nil {
			t.Fatal(err)
		}
		checks = append(checks, struct{ name, got, want string }{"zero root", h(r), z.want})
	}
	data := make([]byte, 2048)
	data[0] = 1
	r, err := Root(data)
	if err != nil {
		t.Fatal(err)
	}
	checks = append(checks, struct{ name, got, want string }{"curio Test2K", h(r), "ea995c54784720b449fc92b070adb6cf6635c2619a7a5e0054a24e88f252ec0d"})
	if !testing.Short() {
		data := make([]byte, 8<<20)
		data[0] = 1
		r, err := Root(data)
		if err != nil {
			t.Fatal(err)
		}
		checks = append(checks, struct{ name, got, want string }{"curio Test8MiB", h(r), "23404a8880f9cbc72039cb8614359c2834845570fe95190bbd4d934142e8252c"})
	}
	// Empty 2 KiB sector commD equals the zero root of 2^11 bytes.
	if r, _ := Root(make([]byte, 2048)); h(r) != "fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833" {
		t.Errorf("empty 2KiB root %s", h(r))
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %s want %s", c.name, c.got, c.want)
		}
	}
}

// curio Test2K / Test8MiB publish commD as CIDs; their roots match ours.
func TestCommDCIDs(t *testing.T) {
	for _, c := range []struct{ cid, root string }{
		{"baga6ea4seaqovgk4kr4eoifujh6jfmdqvw3m6zrvyjqzu6s6abkketui6jjoydi", "ea995c54784720b449fc92b070adb6cf6635c2619a7a5e0054a24e88f252ec0d"},
		{"baga6ea4seaqcgqckrcapts6hea44xbqugwocqneekvyp5fizbo6u3e2biluckla", "23404a8880f9cbc72039cb8614359c2834845570fe95190bbd4d934142e8252c"},
	} {
		r, err := CommDFromCID(c.cid)
		if err != nil || h(r) != c.root {
			t.Errorf("%s: %x (%v)", c.cid, r, err)
		}
	}
	// Upper-case base32 digits after the "b" were accepted before go-cid read the CID.
	if r, err := CommDFromCID("bAGA6EA4SEAQOVGK4KR4EOIFUJH6JFMDQVW3M6ZRVYJQZU6S6ABKKETUI6JJOYDI"); err != nil || h(r) != "ea995c54784720b449fc92b070adb6cf6635c2619a7a5e0054a24e88f252ec0d" {
		t.Errorf("upper-case digits: %x (%v)", r, err)
	}
	// A sealed CID, a raw sha2-256 CID, a CIDv0 and a multibase other than base32 are refused.
	sealedHash, err := multihash.Encode(make([]byte, 32), multihash.POSEIDON_BLS12_381_A1_FC1)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "zabc", "b!!", "bafkqaaa",
		cid.NewCidV1(cid.FilCommitmentSealed, sealedHash).String(),
		"bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku",
		"QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG",
		"zb2rhe5P4gXftAwvA4eXQ5HJwsER2owDyS9sKaQRRVQPn93bA"} {
		if _, err := CommDFromCID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzCommDFromCID(f *testing.F) {
	f.Add("baga6ea4seaqovgk4kr4eoifujh6jfmdqvw3m6zrvyjqzu6s6abkketui6jjoydi")
	f.Add("b")
	f.Add("bafy")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := CommDFromCID(s)
		if err != nil {
			return
		}
		mh, err := multihash.Encode(r[:], multihash.SHA2_256_TRUNC254_PADDED)
		if err != nil {
			t.Fatal(err)
		}
		again, err := CommDFromCID(cid.NewCidV1(cid.FilCommitmentUnsealed, mh).String())
		if err != nil || again != r {
			t.Fatalf("re-encoded CID of %q does not round-trip", s)
		}
	})
}

func TestBadInput(t *testing.T) {
	if _, err := Root(make([]byte, 96)); err == nil {
		t.Error("96 bytes accepted")
	}
	if _, err := ZeroRoot(4); err == nil {
		t.Error("2^4 accepted")
	}
	var bad [32]byte
	for i := range bad {
		bad[i] = 0xff
	}
	if _, err := ToFr(bad); err == nil {
		t.Error("non-canonical accepted")
	}
}

func FuzzToFr(f *testing.F) {
	f.Add(make([]byte, 32))
	f.Add([]byte("0123456789abcdef0123456789abcdef"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 32 {
			return
		}
		var a [32]byte
		copy(a[:], b)
		e, err := ToFr(a)
		if err != nil {
			return
		}
		if FromFr(&e) != a {
			t.Fatal("round trip")
		}
	})
}
