package update

import (
	"encoding/hex"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/filecoin/c1"
)

// test_challenges_against_hardcoded (the vectors tools/check_update_challenges.py checks):
// comm_r_new = PoseidonDomain::random(XorShiftRng(TEST_SEED)).
func TestChallengeVectors(t *testing.T) {
	raw, _ := hex.DecodeString("101cbe4b9c42604f04c703c396f788c6cb2d6d7d58f45430b12eb2edd640076c")
	commRNew := c1.Domain(raw).MustElement()

	digest := HashGenRandomness(commRNew, zero())
	if got := hex.EncodeToString(func() []byte { d := c1.DomainOf(&digest); return d[:] }()); got != "f58c0f801cacc62a930e0a332c4253a93662416412bc1f9a0678e9cca731b661" {
		t.Fatalf("digest 0 = %s", got)
	}
	cases := []struct {
		nodes uint64
		k     int
		want  []uint64
	}{
		{1 << 5, 0, []uint64{21, 7, 3, 31, 0}},
		{1 << 6, 0, []uint64{53, 51, 56, 3, 0}},
		{1 << 7, 0, []uint64{117, 25, 62, 0, 72}},
		{1 << 8, 0, []uint64{245, 140, 15, 128, 28}},
		{1 << 9, 0, []uint64{245, 140, 15, 128, 28}},
		{1 << 9, 1, []uint64{286, 308, 493, 510, 508}},
		{1 << 10, 0, []uint64{245, 454, 3, 400, 193}},
		{1 << 10, 1, []uint64{542, 666, 955, 927, 911}},
		{1 << 18, 0, []uint64{36085, 32783, 44060, 10950, 3731}},
		{1 << 18, 1, []uint64{78878, 130797, 112892, 93994, 78379}},
		{1 << 19, 0, []uint64{101621, 16391, 109319, 25944, 41193}},
		{1 << 19, 1, []uint64{209950, 163702, 175679, 224741, 197410}},
		{1 << 24, 0, []uint64{1019125, 116736, 706220, 59698, 799498}},
		{1 << 24, 1, []uint64{2092548, 1213276, 1185483, 1164598, 1095197}},
		{1 << 24, 14, []uint64{15212432, 15665918, 15015423, 15012912, 15495223}},
		{1 << 24, 15, []uint64{16388544, 15794686, 16637142, 16319148, 16328348}},
		{1 << 30, 0, []uint64{1019125, 27985696, 15282860, 11586600, 44651330}},
		{1 << 30, 1, []uint64{109168525, 127316247, 80331041, 97065716, 72310052}},
		{1 << 30, 14, []uint64{990420169, 955146989, 968005601, 976863263, 944650706}},
		{1 << 30, 15, []uint64{1038629497, 1053983614, 1030421316, 1027373887, 1068685433}},
		{1 << 31, 0, []uint64{1019125, 13992848, 3820715, 18225541, 57316660}},
		{1 << 31, 1, []uint64{243386253, 197875851, 204632136, 171516766, 247789010}},
		{1 << 31, 14, []uint64{1997053129, 1920414070, 2003609080, 1900492803, 1963254685}},
		{1 << 31, 15, []uint64{2045262457, 2036941247, 2136653521, 2091356007, 2147167623}},
	}
	for _, c := range cases {
		p, err := FromSectorSize(c.nodes * 32)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Challenges(commRNew, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != p.ChallengeCount {
			t.Fatalf("nodes %d: %d challenges", c.nodes, len(got))
		}
		if !slices.Equal(got[:5], c.want) {
			t.Errorf("nodes 2^%d k=%d: %v, want %v", p.ChallengeBitLen, c.k, got[:5], c.want)
		}
		for _, ch := range got {
			if ch >= c.nodes || int(ch>>uint(p.ChallengeBitLen-p.PartitionBitLen)) != c.k {
				t.Fatalf("nodes %d k %d: challenge %d outside the partition", c.nodes, c.k, ch)
			}
		}
	}
	if _, err := FromSectorSize(4096 * 3); err == nil {
		t.Error("odd sector size accepted")
	}
}

func zero() (z fr.Element) { return }
