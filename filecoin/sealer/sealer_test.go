package sealer

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/porep"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

func rng(seed uint64) *rand.ChaCha8 {
	var s [32]byte
	s[0] = byte(seed)
	return rand.NewChaCha8(s)
}

func seal(t testing.TB, pt abi.RegisteredSealProof, seed uint64) (*Sector, *c1.Output) {
	t.Helper()
	p, err := prooftypes.Lookup(pt)
	if err != nil {
		t.Fatal(err)
	}
	r := rng(seed)
	data, err := RandomData(r, p.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	var ticket, cseed [32]byte
	r.Read(ticket[:])
	r.Read(cseed[:])
	s, err := Seal(context.Background(), p, data, prooftypes.ProverID(1000), 7, ticket)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Commit1(context.Background(), cseed)
	if err != nil {
		t.Fatal(err)
	}
	return s, out
}

func TestSeal2KiBRoundTripAndVerify(t *testing.T) {
	for _, pt := range []abi.RegisteredSealProof{abi.RegisteredSealProof_StackedDrg2KiBV1_1, abi.RegisteredSealProof_StackedDrg2KiBV1} {
		s, out := seal(t, pt, 1)
		b, err := out.Encode()
		if err != nil {
			t.Fatal(err)
		}
		dec, p, err := c1.Decode(b)
		if err != nil {
			t.Fatalf("decode of sealed output: %v", err)
		}
		if p != s.Proof {
			t.Fatalf("proof type %s", p.Name)
		}
		b2, _ := dec.Encode()
		if string(b) != string(b2) {
			t.Fatal("re-encoding differs")
		}
		id := &porep.SectorIdentity{ProverID: prooftypes.ProverID(1000), SectorNumber: 7}
		if err := porep.Verify(context.Background(), dec, p, id); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if err := porep.Verify(context.Background(), dec, p, &porep.SectorIdentity{ProverID: prooftypes.ProverID(1001), SectorNumber: 7}); err == nil || !strings.Contains(err.Error(), "replica_id") {
			t.Fatalf("wrong miner accepted: %v", err)
		}
		if !strings.Contains(string(b), `"_h":null`) || !strings.HasPrefix(string(b), `{"registered_proof":"`+p.Name+`","vanilla_proofs":{"StackedDrg2KiBV1":[[{"comm_d_proofs":{"data":{"Single":{"root":[`) {
			t.Fatalf("unexpected JSON layout: %.200s", b)
		}
	}
}

func TestTamperedOutputsRefused(t *testing.T) {
	_, out := seal(t, abi.RegisteredSealProof_StackedDrg2KiBV1_1, 2)
	b, _ := out.Encode()
	tests := []struct {
		name   string
		tamper func(o *c1.Output)
		want   string
	}{
		{"flipped label", func(o *c1.Output) {
			o.Partitions()[0][1].ReplicaColumnProofs.CX.Column.Rows[1][0] ^= 1
		}, "partition 0 challenge 1: replica_column_proofs.c_x"},
		{"flipped parent label", func(o *c1.Output) {
			o.Partitions()[0][0].ReplicaColumnProofs.DRGParents[2].Column.Rows[0][3] ^= 4
		}, "replica_column_proofs.drg_parents[2].inclusion_proof.leaf"},
		{"wrong tree D path", func(o *c1.Output) {
			o.Partitions()[0][0].CommDProofs.Base[2].Hashes[0][5] ^= 1
		}, "comm_d_proofs: merkle path does not lead to the root"},
		{"wrong tree R path", func(o *c1.Output) {
			o.Partitions()[0][1].CommRLastProof.Base[0].Hashes[6][0] ^= 1
		}, "comm_r_last_proof"},
		{"wrong comm_r", func(o *c1.Output) { o.CommR[0] ^= 1 }, "comm_r: is not Poseidon(comm_c, comm_r_last)"},
		{"wrong seed", func(o *c1.Output) { o.Seed[0] ^= 1 }, "the derived challenge"},
		{"wrong data leaf", func(o *c1.Output) {
			// a different leaf with a matching path is not constructible; the path check fires first
			o.Partitions()[0][0].CommDProofs.Leaf[0] ^= 1
		}, "comm_d_proofs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, p, err := c1.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			tc.tamper(o)
			err = porep.Verify(context.Background(), o, p, nil)
			if !errors.Is(err, porep.ErrInconsistent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an inconsistency naming %q", err, tc.want)
			}
		})
	}
}

func TestSeal8MiB(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("8MiB seal skipped with -short or -race")
	}
	s, out := seal(t, abi.RegisteredSealProof_StackedDrg8MiBV1_1, 3)
	if err := porep.Verify(context.Background(), out, s.Proof, &porep.SectorIdentity{ProverID: s.ProverID, SectorNumber: 7}); err != nil {
		t.Fatal(err)
	}
}

func TestSyntheticC1(t *testing.T) {
	sizes := []abi.RegisteredSealProof{abi.RegisteredSealProof_StackedDrg2KiBV1_1, abi.RegisteredSealProof_StackedDrg512MiBV1}
	if !testing.Short() && !raceEnabled {
		// about 50 MB of JSON each; slow under the race detector
		sizes = append(sizes, abi.RegisteredSealProof_StackedDrg32GiBV1_1, abi.RegisteredSealProof_StackedDrg64GiBV1_1)
	}
	for _, pt := range sizes {
		p, _ := prooftypes.Lookup(pt)
		t.Run(p.Name, func(t *testing.T) {
			r := rng(9)
			var ticket, seed [32]byte
			r.Read(ticket[:])
			r.Read(seed[:])
			out, err := SyntheticC1(context.Background(), p, prooftypes.ProverID(42), 3, ticket, seed, r)
			if err != nil {
				t.Fatal(err)
			}
			b, err := out.Encode()
			if err != nil {
				t.Fatal(err)
			}
			dec, dp, err := c1.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if err := porep.Verify(context.Background(), dec, dp, &porep.SectorIdentity{ProverID: prooftypes.ProverID(42), SectorNumber: 3}); err != nil {
				t.Fatal(err)
			}
			if got := len(dec.Partitions()); got != p.Partitions {
				t.Fatalf("%d partitions", got)
			}
		})
	}
	ni, _ := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg32GiBV1_2_Feat_NiPoRep)
	if _, err := SyntheticC1(context.Background(), ni, [32]byte{}, 0, [32]byte{}, [32]byte{1}, rng(1)); !errors.Is(err, ErrSyntheticUnsupported) {
		t.Fatalf("NI synthetic: %v", err)
	}
}

func TestSealErrors(t *testing.T) {
	p, _ := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	if _, err := Seal(context.Background(), p, make([]byte, 100), [32]byte{}, 0, [32]byte{}); err == nil {
		t.Fatal("short data accepted")
	}
	bad := make([]byte, 2048)
	bad[63] = 0xff
	if _, err := Seal(context.Background(), p, bad, [32]byte{}, 0, [32]byte{}); err == nil || !strings.Contains(err.Error(), "node 1") {
		t.Fatalf("unpadded data: %v", err)
	}
	big, _ := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg32GiBV1_1)
	if _, err := Seal(context.Background(), big, nil, [32]byte{}, 0, [32]byte{}); err == nil {
		t.Fatal("32GiB accepted")
	}
}

// Synthetic and NI-PoRep C1 outputs come from the same sealed sector with their own challenge
// derivation (from comm_r), and verify.
func TestSealSyntheticAndNI(t *testing.T) {
	for _, pt := range []abi.RegisteredSealProof{abi.RegisteredSealProof_StackedDrg2KiBV1_1_Feat_SyntheticPoRep, abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep} {
		s, out := seal(t, pt, 4)
		b, err := out.Encode()
		if err != nil {
			t.Fatal(err)
		}
		dec, p, err := c1.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(dec.Partitions()) != p.Partitions {
			t.Fatalf("%s: %d partitions", p.Name, len(dec.Partitions()))
		}
		if err := porep.Verify(context.Background(), dec, p, &porep.SectorIdentity{ProverID: s.ProverID, SectorNumber: 7}); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		// Another comm_r is refused (it no longer hashes from comm_c and comm_r_last).
		dec.CommR[0] ^= 1
		if err := porep.Verify(context.Background(), dec, p, nil); !errors.Is(err, porep.ErrInconsistent) {
			t.Fatalf("%s with another comm_r: %v", p.Name, err)
		}
	}
}

func TestRandomC1(t *testing.T) {
	for _, pt := range []abi.RegisteredSealProof{abi.RegisteredSealProof_StackedDrg2KiBV1_1, abi.RegisteredSealProof_StackedDrg512MiBV1_1} {
		p, _ := prooftypes.Lookup(pt)
		out, err := RandomC1(context.Background(), p, 1000, 12, rng(5))
		if err != nil {
			t.Fatal(err)
		}
		if err := porep.Verify(context.Background(), out, p, &porep.SectorIdentity{ProverID: prooftypes.ProverID(1000), SectorNumber: 12}); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
	}
}
