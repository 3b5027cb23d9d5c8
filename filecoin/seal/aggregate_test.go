package seal

import (
	"crypto/sha256"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

func TestAggregateInclude(t *testing.T) {
	ni, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep)
	if err != nil {
		t.Fatal(err)
	}
	inter, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg32GiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2 := [32]byte{1, 2, 3}, [32]byte{31: 9}
	s1, s2 := [32]byte{7}, [32]byte{8, 8}
	cat := func(parts ...[32]byte) [32]byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p[:]...)
		}
		return sha256.Sum256(b)
	}
	for _, tc := range []struct {
		name   string
		p      *prooftypes.SealProof
		commRs [][32]byte
		seeds  [][32]byte
		want   [32]byte
	}{
		{"ni one sector", ni, [][32]byte{r1}, nil, cat(r1)},
		{"ni ignores seeds", ni, [][32]byte{r1}, [][32]byte{s1}, cat(r1)},
		{"ni two sectors in order", ni, [][32]byte{r1, r2}, nil, cat(r1, r2)},
		{"ni none", ni, nil, nil, sha256.Sum256(nil)},
		{"interactive one sector", inter, [][32]byte{r1}, [][32]byte{s1}, cat(s1, r1)},
		{"interactive pairwise", inter, [][32]byte{r1, r2}, [][32]byte{s1, s2}, cat(s1, r1, s2, r2)},
		{"interactive zips to the shorter", inter, [][32]byte{r1, r2}, [][32]byte{s1}, cat(s1, r1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AggregateInclude(tc.p, tc.commRs, tc.seeds); got != tc.want {
				t.Fatalf("got %x, want %x", got, tc.want)
			}
		})
	}
}
