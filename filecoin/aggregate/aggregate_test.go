package aggregate

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/commcid"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/seal"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/internal/groth16sim"
)

const testMiner = 1000

func lookup(t testing.TB, spt abi.RegisteredSealProof) *prooftypes.SealProof {
	t.Helper()
	p, err := prooftypes.Lookup(spt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sealedSector is a Go-sealed small sector: its C1 output and the aggregate info Lotus would
// build for it.
type sealedSector struct {
	out  *c1.Output
	info proof.AggregateSealVerifyInfo
}

var (
	sealedMu    sync.Mutex
	sealedCache = map[string]sealedSector{}
)

// sealed seals sector number n of proof type p for testMiner (cached per test binary).
func sealed(t testing.TB, p *prooftypes.SealProof, n abi.SectorNumber) sealedSector {
	t.Helper()
	sealedMu.Lock()
	defer sealedMu.Unlock()
	key := fmt.Sprintf("%d/%d", p.Proof, n)
	if s, ok := sealedCache[key]; ok {
		return s
	}
	o, err := sealer.RandomC1(context.Background(), p, testMiner, n, mrand.NewChaCha8([32]byte{byte(n), byte(p.Proof)}))
	if err != nil {
		t.Fatal(err)
	}
	commR, err := commcid.SealedCID(o.CommR)
	if err != nil {
		t.Fatal(err)
	}
	commD, err := commcid.UnsealedCID(o.CommD)
	if err != nil {
		t.Fatal(err)
	}
	s := sealedSector{out: o, info: proof.AggregateSealVerifyInfo{Number: n, Randomness: o.Ticket[:], InteractiveRandomness: o.Seed[:],
		SealedCID: commR, UnsealedCID: commD}}
	sealedCache[key] = s
	return s
}

func infosOf(t testing.TB, p *prooftypes.SealProof, sectors ...abi.SectorNumber) []proof.AggregateSealVerifyInfo {
	t.Helper()
	out := make([]proof.AggregateSealVerifyInfo, len(sectors))
	for i, n := range sectors {
		out[i] = sealed(t, p, n).info
	}
	return out
}

// simKey proves any public inputs without a setup (groth16sim).
type simKey struct{ *groth16sim.Key }

func newSimKey(t testing.TB, inputs int) simKey {
	t.Helper()
	k, err := groth16sim.NewKey(inputs)
	if err != nil {
		t.Fatal(err)
	}
	return simKey{k}
}

// c2Proofs proves every partition of every sector of s with k and returns the C2 outputs.
func (k simKey) c2Proofs(t testing.TB, s *Set) [][]byte {
	t.Helper()
	inputs, err := s.PublicInputs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	parts := s.Proof.Partitions
	out := make([][]byte, len(s.Sectors))
	for i := range out {
		ps := make([]*groth16.Proof, parts)
		for j := range ps {
			if ps[j], err = k.Prove(inputs[i*parts+j]); err != nil {
				t.Fatal(err)
			}
		}
		out[i] = groth16.MarshalProofs(ps)
	}
	return out
}

func decode(t testing.TB, p *prooftypes.SealProof, v abi.RegisteredAggregationProof, infos []proof.AggregateSealVerifyInfo) *Set {
	t.Helper()
	s, err := Decode(p.Proof, v, testMiner, infos)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDecodeRefuses: every malformed or inconsistent aggregate info is an InputError naming
// its field.
func TestDecodeRefuses(t *testing.T) {
	p := lookup(t, abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	good := infosOf(t, p, 1, 2)
	edit := func(fn func(in []proof.AggregateSealVerifyInfo)) []proof.AggregateSealVerifyInfo {
		in := append([]proof.AggregateSealVerifyInfo(nil), good...)
		fn(in)
		return in
	}
	zeroR, err := commcid.SealedCID(c1.Domain{})
	if err != nil {
		t.Fatal(err)
	}
	many := func(n int) []proof.AggregateSealVerifyInfo {
		in := make([]proof.AggregateSealVerifyInfo, n)
		for i := range in {
			in[i] = good[i%2]
		}
		return in
	}
	for _, tc := range []struct {
		name  string
		spt   abi.RegisteredSealProof
		agg   abi.RegisteredAggregationProof
		infos []proof.AggregateSealVerifyInfo
		field string
		want  string
	}{
		{"unknown seal proof", 999, 0, good, "SealProof", "999 is not a registered seal proof"},
		{"unknown aggregation", p.Proof, 2, good, "AggregateProof", "2 is not a registered aggregation proof"},
		{"no sectors", p.Proof, 0, nil, "Infos", "empty"},
		{"too many NI-PoRep sectors", abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep, 1, many(66), "Infos", "66 StackedDrg2KiBV1_2_Feat_NonInteractivePoRep sectors: FIP-0090 aggregates 1 to 65"},
		{"too many proofs for the SRS", abi.RegisteredSealProof_StackedDrg32GiBV1_1, 1, many(1639), "Infos", "16390 proofs (32768 once padded to a power of two): a SnarkPack aggregate holds at most 16384"},
		{"undefined comm_r", p.Proof, 0, edit(func(in []proof.AggregateSealVerifyInfo) { in[1].SealedCID = cid.Undef }), "Infos[1].SealedCID", "undefined CID"},
		{"comm_d as comm_r", p.Proof, 0, edit(func(in []proof.AggregateSealVerifyInfo) { in[0].SealedCID = in[0].UnsealedCID }), "Infos[0].SealedCID", "has codec 0xf101, want 0xf102"},
		{"comm_r as comm_d", p.Proof, 0, edit(func(in []proof.AggregateSealVerifyInfo) { in[1].UnsealedCID = in[1].SealedCID }), "Infos[1].UnsealedCID", "has codec 0xf102, want 0xf101"},
		{"zero comm_r", p.Proof, 0, edit(func(in []proof.AggregateSealVerifyInfo) { in[0].SealedCID = zeroR }), "Infos[0].SealedCID", "all-zero comm_r"},
		{"short ticket", p.Proof, 0, edit(func(in []proof.AggregateSealVerifyInfo) { in[1].Randomness = in[1].Randomness[:31] }), "Infos[1].Randomness", "31 bytes"},
		{"no seed", p.Proof, 0, edit(func(in []proof.AggregateSealVerifyInfo) { in[0].InteractiveRandomness = nil }), "Infos[0].InteractiveRandomness", "0 bytes"},
		{"long seed", p.Proof, 0, edit(func(in []proof.AggregateSealVerifyInfo) {
			in[0].InteractiveRandomness = append(append([]byte(nil), in[0].InteractiveRandomness...), 0)
		}), "Infos[0].InteractiveRandomness", "33 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.spt, tc.agg, testMiner, tc.infos)
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field != tc.field || !strings.Contains(ie.Reason, tc.want) {
				t.Fatalf("got %v (%T), want an InputError on %s saying %q", err, err, tc.field, tc.want)
			}
			if strings.HasPrefix(ie.Reason, tc.field) {
				t.Fatalf("reason %q repeats the field", ie.Reason)
			}
		})
	}

	// Within the bounds, NI-PoRep needs no seed; one NI-PoRep sector is outside FIP-0090's
	// count (its own C2 aggregate) and passes too.
	ni := lookup(t, abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep)
	noSeed := edit(func(in []proof.AggregateSealVerifyInfo) { in[0].InteractiveRandomness = nil })
	for _, in := range [][]proof.AggregateSealVerifyInfo{noSeed, noSeed[:1], many(65)} {
		if _, err := Decode(ni.Proof, abi.RegisteredAggregationProof_SnarkPackV2, testMiner, in); err != nil {
			t.Fatalf("NI-PoRep, %d sectors: %v", len(in), err)
		}
	}
	s := decode(t, p, abi.RegisteredAggregationProof_SnarkPackV1, good)
	if s.Version != snarkpack.V1 || s.Proofs() != 2 || s.Padded() != 2 || s.Sectors[1].Number != 2 {
		t.Fatalf("decoded %+v", s)
	}
	if s := decode(t, p, abi.RegisteredAggregationProof_SnarkPackV2, good[:1]); s.Version != snarkpack.V2 || s.Padded() != 2 {
		t.Fatalf("one proof: version %v, padded %d; want V2 and 2", s.Version, s.Padded())
	}
}

// TestCheckProofs: the number of C2 proofs and their lengths are checked before any decoding.
func TestCheckProofs(t *testing.T) {
	p := lookup(t, abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep) // 13 partitions
	s := decode(t, p, 1, infosOf(t, p, 1, 2))
	ok := make([]byte, 13*192)
	for _, tc := range []struct {
		name   string
		proofs [][]byte
		want   string
	}{
		{"one missing", [][]byte{ok}, "Proofs: 1 C2 proofs for 2 sectors"},
		{"one too many", [][]byte{ok, ok, ok}, "Proofs: 3 C2 proofs for 2 sectors"},
		{"a partition short", [][]byte{ok, ok[:12*192]}, "Proofs[1]: 2304 bytes; a StackedDrg2KiBV1_2_Feat_NonInteractivePoRep C2 proof is 2496 (13 partitions × 192)"},
		{"an NI-PoRep C2 answer", [][]byte{make([]byte, snarkpack.Size(16)), ok}, "Proofs[0]:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.CheckProofs(tc.proofs); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	if err := s.CheckProofs([][]byte{ok, ok}); err != nil {
		t.Fatal(err)
	}
}

// TestPublicInputsMatchC2: the public inputs recomputed from an aggregate info are those the C2
// of the sector's C1 output proves, for every PoRep variant.
func TestPublicInputsMatchC2(t *testing.T) {
	for _, spt := range []abi.RegisteredSealProof{abi.RegisteredSealProof_StackedDrg2KiBV1, abi.RegisteredSealProof_StackedDrg2KiBV1_1,
		abi.RegisteredSealProof_StackedDrg2KiBV1_1_Feat_SyntheticPoRep, abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep} {
		p := lookup(t, spt)
		t.Run(p.Name, func(t *testing.T) {
			s := decode(t, p, 1, infosOf(t, p, 3, 4))
			got, err := s.PublicInputs(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2*p.Partitions {
				t.Fatalf("%d input vectors for 2 sectors of %d partitions", len(got), p.Partitions)
			}
			for i, n := range []abi.SectorNumber{3, 4} {
				c, err := seal.Commit2From(context.Background(), sealed(t, p, n).out, p, n, testMiner, seal.Options{})
				if err != nil {
					t.Fatal(err)
				}
				for k := range p.Partitions {
					want, err := c.PublicInputs(k)
					if err != nil {
						t.Fatal(err)
					}
					in := got[i*p.Partitions+k]
					if len(in) != len(want) || len(in) != p.PublicInputs()-1 {
						t.Fatalf("sector %d partition %d: %d inputs, want %d", n, k, len(in), len(want))
					}
					for j := range in {
						if !in[j].Equal(&want[j]) {
							t.Fatalf("sector %d partition %d: input %d differs from the C2's", n, k, j)
						}
					}
				}
			}
		})
	}
}

// TestInclude: interactive aggregates bind each seed and comm_r, NI-PoRep ones comm_r only.
func TestInclude(t *testing.T) {
	for _, spt := range []abi.RegisteredSealProof{abi.RegisteredSealProof_StackedDrg2KiBV1_1, abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep} {
		p := lookup(t, spt)
		infos := infosOf(t, p, 1, 2)
		base := decode(t, p, 1, infos).Include()
		infos[1].InteractiveRandomness = append([]byte{infos[1].InteractiveRandomness[0] ^ 1}, infos[1].InteractiveRandomness[1:]...)
		seedChanged := decode(t, p, 1, infos).Include()
		if (p.Feature == prooftypes.NonInteractive) != (base == seedChanged) {
			t.Fatalf("%s: a changed seed changes the include: %v", p.Name, base != seedChanged)
		}
	}
}

// TestParseProofs: C2 proofs decode into the partition proofs in order; a point that is not a
// valid compressed point is named by sector and partition.
func TestParseProofs(t *testing.T) {
	p := lookup(t, abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep)
	s := decode(t, p, 1, infosOf(t, p, 1, 2))
	k := newSimKey(t, p.PublicInputs())
	c2 := k.c2Proofs(t, s)
	got, err := s.ParseProofs(context.Background(), c2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 26 {
		t.Fatalf("%d proofs, want 26", len(got))
	}
	for j, pr := range got {
		b := pr.Bytes()
		if string(b[:]) != string(c2[j/13][j%13*192:(j%13+1)*192]) {
			t.Fatalf("proof %d is not partition %d of sector %d", j, j%13, j/13)
		}
	}
	bad := [][]byte{c2[0], append([]byte(nil), c2[1]...)}
	bad[1][5*192+50] ^= 0x40 // partition 5's B
	if _, err := s.ParseProofs(context.Background(), bad); err == nil || !strings.HasPrefix(err.Error(), "Proofs[1]: partition 5: proof B") {
		t.Fatalf("got %v, want Proofs[1] partition 5's B named", err)
	}
}

// TestDiagnose: a proof of another sector, or an info that does not describe the sector, is
// found and named.
func TestDiagnose(t *testing.T) {
	ctx := context.Background()
	p := lookup(t, abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep)
	s := decode(t, p, 1, infosOf(t, p, 1, 2, 3))
	k := newSimKey(t, p.PublicInputs())
	c2 := k.c2Proofs(t, s)
	proofs, err := s.ParseProofs(ctx, c2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Diagnose(ctx, k.VK, proofs); err != nil {
		t.Fatalf("good proofs: %v", err)
	}
	swapped, err := s.ParseProofs(ctx, [][]byte{c2[0], c2[2], c2[1]})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Diagnose(ctx, k.VK, swapped); err == nil || !strings.HasPrefix(err.Error(), "Proofs[1]: partition 0 of sector 2 does not verify") {
		t.Fatalf("swapped sectors: got %v", err)
	}
	// One partition of another sector among the right ones.
	mixed := append([]byte(nil), c2[2]...)
	copy(mixed[7*192:8*192], c2[1][7*192:8*192])
	if err := s.Diagnose(ctx, k.VK, mustParse(t, s, [][]byte{c2[0], c2[1], mixed})); err == nil || !strings.HasPrefix(err.Error(), "Proofs[2]: partition 7 of sector 3") {
		t.Fatalf("one partition swapped: got %v", err)
	}
	other := newSimKey(t, p.PublicInputs()-1)
	if err := s.Diagnose(ctx, other.VK, proofs); err == nil || !strings.Contains(err.Error(), "a key of another circuit") {
		t.Fatalf("key of another circuit: got %v", err)
	}
}

func mustParse(t testing.TB, s *Set, c2 [][]byte) []*groth16.Proof {
	t.Helper()
	ps, err := s.ParseProofs(context.Background(), c2)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestAggregateVerify aggregates several sectors' C2 proofs with a devnet SRS, with both
// SnarkPack versions, for interactive and NI-PoRep sectors, and verifies the aggregates as
// VerifyAggregateSeals does; another seed, another ticket, other proofs, another version or a
// changed byte of the aggregate are refused.
func TestAggregateVerify(t *testing.T) {
	ctx := context.Background()
	srs, err := snarkpack.DevnetSRS(ctx, 32, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spt     abi.RegisteredSealProof
		sectors []abi.SectorNumber
	}{
		{abi.RegisteredSealProof_StackedDrg2KiBV1_1, []abi.SectorNumber{1}},       // 1 proof, padded to 2
		{abi.RegisteredSealProof_StackedDrg2KiBV1_1, []abi.SectorNumber{1, 2, 3}}, // 3, padded to 4
		{abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep, []abi.SectorNumber{1, 2}},
	} {
		p := lookup(t, tc.spt)
		k := newSimKey(t, p.PublicInputs())
		for _, v := range []abi.RegisteredAggregationProof{abi.RegisteredAggregationProof_SnarkPackV1, abi.RegisteredAggregationProof_SnarkPackV2} {
			t.Run(fmt.Sprintf("%s/%d sectors/v%d", p.Name, len(tc.sectors), v+1), func(t *testing.T) {
				infos := infosOf(t, p, tc.sectors...)
				s := decode(t, p, v, infos)
				c2 := k.c2Proofs(t, s)
				pk, _, err := srs.Specialize(s.Padded())
				if err != nil {
					t.Fatal(err)
				}
				b, err := s.Aggregate(ctx, pk, mustParse(t, s, c2))
				if err != nil {
					t.Fatal(err)
				}
				if len(b) != snarkpack.Size(s.Padded()) {
					t.Fatalf("aggregate of %d proofs: %d bytes, want %d", s.Padded(), len(b), snarkpack.Size(s.Padded()))
				}
				verify := func(s *Set, b []byte) error {
					agg, err := s.ParseAggregate(b)
					if err != nil {
						return err
					}
					return s.Verify(ctx, pk.Verifier(), k.VK, agg)
				}
				if err := verify(s, b); err != nil {
					t.Fatalf("aggregate does not verify: %v", err)
				}

				invalid := func(what string, s *Set, b []byte) {
					t.Helper()
					if err := verify(s, b); !errors.Is(err, snarkpack.ErrInvalid) {
						t.Fatalf("%s: got %v, want ErrInvalid", what, err)
					}
				}
				edited := func(fn func(in []proof.AggregateSealVerifyInfo), ver abi.RegisteredAggregationProof) *Set {
					in := append([]proof.AggregateSealVerifyInfo(nil), infos...)
					fn(in)
					return decode(t, p, ver, in)
				}
				flip := func(b []byte) []byte { b = append([]byte(nil), b...); b[0] ^= 1; return b }
				last := len(infos) - 1
				if p.Feature != prooftypes.NonInteractive {
					invalid("another seed", edited(func(in []proof.AggregateSealVerifyInfo) {
						in[last].InteractiveRandomness = flip(in[last].InteractiveRandomness)
					}, v), b)
				}
				invalid("another ticket", edited(func(in []proof.AggregateSealVerifyInfo) { in[0].Randomness = flip(in[0].Randomness) }, v), b)
				invalid("another sector number", edited(func(in []proof.AggregateSealVerifyInfo) { in[0].Number++ }, v), b)
				invalid("another version", edited(func([]proof.AggregateSealVerifyInfo) {}, 1-v), b)
				if len(infos) > 1 {
					invalid("sectors in another order", edited(func(in []proof.AggregateSealVerifyInfo) { in[0], in[1] = in[1], in[0] }, v), b)
				}
				// Other proofs of the same sectors (fresh randomness) verify on their own, not
				// under this aggregate; a proof of another sector's inputs is not aggregated into
				// one that verifies.
				other := k.c2Proofs(t, s)
				ob, err := s.Aggregate(ctx, pk, mustParse(t, s, other))
				if err != nil {
					t.Fatal(err)
				}
				if err := verify(s, ob); err != nil {
					t.Fatalf("aggregate of other valid proofs: %v", err)
				}
				wrong := append([][]byte(nil), c2...)
				wrong[last] = k.c2Proofs(t, edited(func(in []proof.AggregateSealVerifyInfo) { in[last].Randomness = flip(in[last].Randomness) }, v))[last]
				wb, err := s.Aggregate(ctx, pk, mustParse(t, s, wrong))
				if err != nil {
					t.Fatal(err)
				}
				invalid("a proof of other inputs", s, wb)
				for _, off := range []int{0, len(b) / 2, len(b) - 1} {
					c := append([]byte(nil), b...)
					c[off] ^= 1
					if err := verify(s, c); err == nil {
						t.Fatalf("byte %d of the aggregate changed: still verifies", off)
					}
				}
			})
		}
	}
}

// TestParseAggregateCount: an aggregate of another number of proofs than the sectors have is
// refused before any verification, naming both counts.
func TestParseAggregateCount(t *testing.T) {
	ctx := context.Background()
	p := lookup(t, abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	s := decode(t, p, 1, infosOf(t, p, 1, 2, 3))
	k := newSimKey(t, p.PublicInputs())
	srs, err := snarkpack.DevnetSRS(ctx, 8, 3)
	if err != nil {
		t.Fatal(err)
	}
	pk, _, err := srs.Specialize(4)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Aggregate(ctx, pk, mustParse(t, s, k.c2Proofs(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	two := decode(t, p, 1, infosOf(t, p, 1, 2))
	if _, err := two.ParseAggregate(b); err == nil || !strings.Contains(err.Error(), "Proof: aggregates 4 proofs; 2 StackedDrg2KiBV1_1 sectors of 1 partitions are 2 proofs, 2 once padded") {
		t.Fatalf("got %v", err)
	}
	if _, err := s.ParseAggregate(nil); err == nil || !strings.Contains(err.Error(), "Proof: empty") {
		t.Fatalf("empty aggregate: got %v", err)
	}
	if _, err := s.ParseAggregate(b[:len(b)-1]); err == nil || !strings.HasPrefix(err.Error(), "Proof: ") {
		t.Fatalf("short aggregate: got %v", err)
	}
	// A key for another count is refused rather than used.
	pk8, _, err := srs.Specialize(8)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Aggregate(ctx, pk8, mustParse(t, s, k.c2Proofs(t, s))); err == nil || !strings.Contains(err.Error(), "key for 8 proofs, the aggregate holds 4") {
		t.Fatalf("key for 8: got %v", err)
	}
}
