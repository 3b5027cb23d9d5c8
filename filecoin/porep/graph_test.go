package porep

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"golang.org/x/crypto/chacha20"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// With 20 rounds the block function must equal the IETF ChaCha20 keystream (nonce 0), which
// pins the state layout and word order shared with the 8-round generator.
func TestChachaMatchesChaCha20(t *testing.T) {
	var key [32]byte
	for i := range key {
		key[i] = byte(i*7 + 3)
	}
	c, err := chacha20.NewUnauthenticatedCipher(key[:], make([]byte, 12))
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 64*5)
	c.XORKeyStream(want, want)
	rng := newChachaRng(key, 20)
	got := make([]byte, 0, len(want))
	for len(got) < len(want) {
		v := rng.nextU64()
		for i := 0; i < 8; i++ {
			got = append(got, byte(v>>(8*i)))
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("keystream mismatch\n got %x\nwant %x", got[:64], want[:64])
	}
}

// parent_cache.json of rust-fil-proofs: SHA-256 of the parent cache file per cache name.
var publishedParentCaches = map[string]string{
	"v28-sdr-parent-3f0eef38bb48af1f48ad65e14eb85b4ebfc167cec18cd81764f6d998836c9899": "3da49221e2ed55371b86d0bf3d6526fcf128af61bed904f966428db1b531750d",
	"v28-sdr-parent-494d91dc80f2df5272c4b9e129bc7ade9405225993af9fe34e6542a39a47554b": "840057702eea7652cf97e04306c30fe57174714d90de156a25eddd6075c25b97",
	"v28-sdr-parent-5eed212119fd91aa6220a27f31a8966444a9381842bceb3a1ea61525bd47a5b5": "03cd13565ded97c240a5f52e54295ad127bd0461b57904cb3a4d79b097bbecab",
	"v28-sdr-parent-dcdabb0fbe4364bf0ac28b6a18c66de246409fa1a9020a00f33fb3e3053da6dc": "a76604f2f59f2744c7151653bbb1d8596b6b57d295e6fa6c1f0c41d725b502ce",
}

// The DRG and expander parents of every node must reproduce the published parent caches: this
// pins the ChaCha8 bucket sampling, the V1.0/V1.1 parent order and the Feistel permutation.
func TestParentCacheDigests(t *testing.T) {
	tests := []abi.RegisteredSealProof{
		abi.RegisteredSealProof_StackedDrg2KiBV1,
		abi.RegisteredSealProof_StackedDrg2KiBV1_1,
		abi.RegisteredSealProof_StackedDrg8MiBV1,
		abi.RegisteredSealProof_StackedDrg8MiBV1_1,
	}
	for _, pt := range tests {
		p, _ := prooftypes.Lookup(pt)
		t.Run(p.Name, func(t *testing.T) {
			if (testing.Short() || raceEnabled) && p.SectorSize > prooftypes.SectorSize2KiB {
				t.Skip("8MiB parent cache (262,144 nodes) skipped with -short or -race")
			}
			g, err := NewGraph(p)
			if err != nil {
				t.Fatal(err)
			}
			name := g.ParentCacheName()
			want, ok := publishedParentCaches[name]
			if !ok {
				t.Fatalf("cache name %s is not published", name)
			}
			d := g.ParentCacheDigest()
			if got := hex.EncodeToString(d[:]); got != want {
				t.Fatalf("digest %s, want %s", got, want)
			}
		})
	}
}

func TestParentsShape(t *testing.T) {
	p, _ := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg32GiBV1_1)
	g, err := NewGraph(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range []uint32{2, 3, 1000, 1 << 29, 1<<30 - 1} {
		var ps [prooftypes.Degree]uint32
		g.Parents(node, &ps)
		if ps[0] != node-1 {
			t.Fatalf("node %d: first parent %d", node, ps[0])
		}
		for i, x := range ps {
			if uint64(x) >= g.Nodes() || (i < prooftypes.BaseDegree && x >= node) {
				t.Fatalf("node %d: parent %d = %d", node, i, x)
			}
		}
	}
}
