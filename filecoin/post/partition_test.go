package post

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
)

// TestWindowPartitionErrorOrder: the sectors are checked in parallel, and the error is the one
// a check in order meets first: a sector's decoding, then a repeated sector, then its
// verification (for both API versions: in V1 a repeated sector also fails its challenges at its
// second position, and the duplicate is still what is reported).
func TestWindowPartitionErrorOrder(t *testing.T) {
	for _, pt := range []abi.RegisteredPoStProof{abi.RegisteredPoStProof_StackedDrgWindow2KiBV1, abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1} {
		p, err := Lookup(pt)
		if err != nil {
			t.Fatal(err)
		}
		var rnd [32]byte
		rnd[0] = 9
		src := rand.NewChaCha8(rnd)
		v0, err := SyntheticSectorVanilla(p, 1000, rnd, 0, src)
		if err != nil {
			t.Fatal(err)
		}
		v1, err := SyntheticSectorVanilla(p, 1001, rnd, 1, src)
		if err != nil {
			t.Fatal(err)
		}
		other := rnd
		other[1] = 1
		wrong, err := SyntheticSectorVanilla(p, 1001, other, 1, src) // opens another randomness's challenges
		if err != nil {
			t.Fatal(err)
		}
		garbage := []byte("not a vanilla proof")
		if _, err := WindowPartition(p, rnd, [32]byte{}, [][]byte{v0, v1}, 0); err != nil {
			t.Fatalf("%s: valid sectors: %v", p.Name, err)
		}
		for _, tc := range []struct {
			name    string
			vanilla [][]byte
			dup     bool
			want    string
		}{
			{"repeated sector", [][]byte{v0, v0}, true, ""},
			{"second undecodable", [][]byte{v0, garbage}, false, "vanilla proof 1"},
			{"first undecodable", [][]byte{garbage, v1}, false, "vanilla proof 0"},
			{"undecodable before a repeat", [][]byte{garbage, garbage}, false, "vanilla proof 0"},
			{"second fails its challenges", [][]byte{v0, wrong}, false, "sector 1001"},
		} {
			_, err := WindowPartition(p, rnd, [32]byte{}, tc.vanilla, 0)
			if err == nil || errors.Is(err, ErrDuplicateSector) != tc.dup || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s, %s: %v", p.Name, tc.name, err)
			}
		}
	}
}
