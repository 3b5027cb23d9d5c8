package post

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/merkle"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

func TestProofTypes(t *testing.T) {
	// Identifier hashes from the published parameters.json (circuit-fingerprints §9); input
	// counts from §8 and groth16-bellperson §10.4.
	cases := []struct {
		p      abi.RegisteredPoStProof
		hash   string
		inputs int
		api    prooftypes.APIVersion
	}{
		{abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, "3ea05428", 133, prooftypes.APIVersion1_0_0},
		{abi.RegisteredPoStProof_StackedDrgWinning8MiBV1, "50c7368d", 133, prooftypes.APIVersion1_0_0},
		{abi.RegisteredPoStProof_StackedDrgWinning512MiBV1, "7d739b8c", 133, prooftypes.APIVersion1_0_0},
		{abi.RegisteredPoStProof_StackedDrgWinning32GiBV1, "559e581f", 133, prooftypes.APIVersion1_0_0},
		{abi.RegisteredPoStProof_StackedDrgWinning64GiBV1, "b6209862", 133, prooftypes.APIVersion1_0_0},
		{abi.RegisteredPoStProof_StackedDrgWindow2KiBV1, "0170db1f", 23, prooftypes.APIVersion1_0_0},
		{abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, "0170db1f", 23, prooftypes.APIVersion1_2_0},
		{abi.RegisteredPoStProof_StackedDrgWindow8MiBV1_1, "5294475d", 23, prooftypes.APIVersion1_2_0},
		{abi.RegisteredPoStProof_StackedDrgWindow512MiBV1_1, "0cfb4f17", 23, prooftypes.APIVersion1_2_0},
		{abi.RegisteredPoStProof_StackedDrgWindow32GiBV1_1, "0377ded6", 25840, prooftypes.APIVersion1_2_0},
		{abi.RegisteredPoStProof_StackedDrgWindow64GiBV1_1, "2627e400", 25301, prooftypes.APIVersion1_2_0},
		{abi.RegisteredPoStProof_StackedDrgWindow64GiBV1, "2627e400", 25301, prooftypes.APIVersion1_0_0},
	}
	for _, c := range cases {
		p, err := Lookup(c.p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(p.Identifier()))
		if got := hex.EncodeToString(sum[:4]); got != c.hash {
			t.Errorf("%s: identifier %q hashes to %s…, want %s…", p.Name, p.Identifier(), got, c.hash)
		}
		if !strings.HasSuffix(p.ParamFile(), hex.EncodeToString(sum[:])) {
			t.Errorf("%s: param file %s", p.Name, p.ParamFile())
		}
		if p.PublicInputs() != c.inputs || p.Config().PublicInputs() != c.inputs {
			t.Errorf("%s: %d public inputs, want %d", p.Name, p.PublicInputs(), c.inputs)
		}
		if p.APIVersion != c.api {
			t.Errorf("%s: API %s, want %s", p.Name, p.APIVersion, c.api)
		}
	}
	if len(All()) != 15 {
		t.Errorf("%d proof types, want 15", len(All()))
	}
	if _, err := Lookup(99); !errors.Is(err, ErrUnknownProof) {
		t.Errorf("unknown type: %v", err)
	}
}

func TestLeafChallenge(t *testing.T) {
	// Different sectors and indices give different leaves within the sector; the value is
	// reduced mod the node count.
	var rnd [32]byte
	rnd[0] = 1
	seen := map[uint64]bool{}
	for i := uint64(0); i < 64; i++ {
		c := LeafChallenge(rnd, 7, i, 64)
		if c >= 64 {
			t.Fatalf("challenge %d out of range", c)
		}
		seen[c] = true
	}
	if len(seen) < 20 {
		t.Errorf("only %d distinct leaves of 64 draws", len(seen))
	}
	p, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1)
	p12, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1)
	if p.ChallengeIndex(3, 10, 4) != 34 || p12.ChallengeIndex(3, 10, 4) != 4 {
		t.Errorf("challenge indices %d, %d", p.ChallengeIndex(3, 10, 4), p12.ChallengeIndex(3, 10, 4))
	}
	if _, err := WinningSectorChallenge(rnd, rnd, 0, 0); err == nil {
		t.Error("empty sector set accepted")
	}
}

// Known answers from a real 32GiB WindowPoSt vanilla proof made by rust-fil-proofs (curio's
// lib/proof/testgolden: randomness 0, sector 1, prover 1000): the leaves it opens and its
// comm_r = Poseidon(comm_c, comm_r_last).
func TestRustVanillaKnownAnswers(t *testing.T) {
	p, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow32GiBV1)
	want := []uint64{707914199, 439148358, 967788220, 548708700, 1061661429, 6202012, 1055504637, 389535735, 1000069704, 600088878}
	if got := p.SectorChallenges([32]byte{}, 1, 0); !slices.Equal(got, want) {
		t.Errorf("challenges %v, want %v", got, want)
	}
	h := func(s string) c1.Domain {
		b, _ := hex.DecodeString(s)
		return c1.Domain(b)
	}
	commR, err := merkle.Poseidon([]c1.Domain{h("9941e59d24a2a05877558ac5fa1aab256bd12a3e88ef51ee79f58b8d80adb94e"), h("f56b7f7f318d88ac4d72e5d94efd7de7f1df501b98b01a8564fa4cb4983b9e4b")})
	if err != nil {
		t.Fatal(err)
	}
	if commR != h("df691086e3c673c95a45908713d4c5938e5ced43f21b888bd9bc6e181c9f326b") {
		t.Errorf("comm_r %x", commR)
	}
}

func TestFallbackChallenges(t *testing.T) {
	p, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1)
	rnd := testRandomness(1)
	m, err := p.FallbackChallenges(rnd, []uint64{5, 9, 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || !slices.Equal(m[2], p.SectorChallenges(rnd, 2, 2)) || !slices.Equal(m[9], p.SectorChallenges(rnd, 9, 1)) {
		t.Errorf("challenges %v", m)
	}
	w, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1)
	if m, err := w.FallbackChallenges(rnd, []uint64{4, 6}); err != nil || len(m) != 1 || len(m[4]) != 66 {
		t.Errorf("winning challenges %v, %v", m, err)
	}
	if _, err := p.FallbackChallenges(rnd, []uint64{1, 1}); !errors.Is(err, ErrDuplicateSector) {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := p.FallbackChallenges(rnd, nil); err == nil {
		t.Error("empty sector list accepted")
	}
}
