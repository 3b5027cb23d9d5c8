package post

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
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

// TestWindowPartitionDeferred: with the hashing deferred, a valid partition is laid out exactly
// as WindowPartition lays it out and its verification passes; on every bad input the error,
// whether it comes at once (decoding, repeats, a proof's shape) or from the deferred
// verification (a comm_r or a path that does not hash to its root), is WindowPartition's.
func TestWindowPartitionDeferred(t *testing.T) {
	ctx := context.Background()
	for _, pt := range []abi.RegisteredPoStProof{abi.RegisteredPoStProof_StackedDrgWindow2KiBV1, abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1} {
		p, err := Lookup(pt)
		if err != nil {
			t.Fatal(err)
		}
		var rnd [32]byte
		rnd[0] = 11
		src := rand.NewChaCha8(rnd)
		var good [][]byte
		for i := range p.SectorCount {
			v, err := SyntheticSectorVanilla(p, uint64(2000+i), rnd, i, src)
			if err != nil {
				t.Fatal(err)
			}
			good = append(good, v)
		}
		other := rnd
		other[1] = 1
		wrongChallenges, err := SyntheticSectorVanilla(p, 2001, other, 1, src)
		if err != nil {
			t.Fatal(err)
		}
		// tamper re-encodes sector i's proof after edit.
		tamper := func(i int, edit func(v *SectorVanilla)) [][]byte {
			v, err := DecodeSectorVanilla(p, good[i])
			if err != nil {
				t.Fatal(err)
			}
			edit(v)
			b, err := v.Encode()
			if err != nil {
				t.Fatal(err)
			}
			out := append([][]byte(nil), good...)
			out[i] = b
			return out
		}
		last := len(good) - 1
		badCommR := tamper(0, func(v *SectorVanilla) { v.CommR[0] ^= 1 })
		badLeaf := tamper(last, func(v *SectorVanilla) { v.Sectors[0].InclusionProofs[0].Leaf[0] ^= 1 })
		bothBad := append([][]byte(nil), badLeaf...) // sector 0's comm_r and the last one's path: sector 0's error
		bothBad[0] = badCommR[0]
		for _, tc := range []struct {
			name     string
			vanilla  [][]byte
			deferred bool // the error comes from verify, not at once
		}{
			{"valid", good, false},
			{"repeated sector", [][]byte{good[0], good[0]}, false},
			{"undecodable", [][]byte{good[0], []byte("not a vanilla proof")}, false},
			{"wrong challenges", [][]byte{good[0], wrongChallenges}, false},
			{"wrong challenges after a bad comm_r", [][]byte{badCommR[0], wrongChallenges}, false},
			{"comm_r does not hash", badCommR, true},
			{"path does not hash", badLeaf, true},
			{"two bad sectors", bothBad, true},
		} {
			want, wantErr := WindowPartition(p, rnd, [32]byte{}, tc.vanilla, 0)
			got, verify, err := WindowPartitionDeferred(p, rnd, [32]byte{}, tc.vanilla, 0)
			if err == nil {
				if verify == nil || got == nil {
					t.Fatalf("%s, %s: no partition or verify without an error", p.Name, tc.name)
				}
				err = verify(ctx)
				if err == nil && !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s: the deferred layout differs from WindowPartition's", p.Name, tc.name)
				}
			} else if tc.deferred {
				t.Errorf("%s, %s: refused at once (%v), want the refusal from verify", p.Name, tc.name, err)
			}
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || errors.Is(err, ErrDuplicateSector) != errors.Is(wantErr, ErrDuplicateSector) {
				t.Errorf("%s, %s: error %v, WindowPartition's %v", p.Name, tc.name, err, wantErr)
			}
			if tc.name != "valid" && err == nil {
				t.Errorf("%s, %s: accepted", p.Name, tc.name)
			}
		}
		// A cancelled verification says so.
		_, verify, err := WindowPartitionDeferred(p, rnd, [32]byte{}, good, 0)
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := verify(cctx); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: verify after cancel: %v", p.Name, err)
		}
	}
}
