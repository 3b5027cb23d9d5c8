package post

import (
	"context"
	crand "crypto/rand"

	"errors"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/post/bincode"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/internal/fuzzedit"
)

var (
	sealOnce sync.Once
	sealed   []*sealer.Sector
	sealErr  error
)

// sealed2KiB seals three 2KiB sectors with the Go sealer (sector numbers 3, 5, 9).
func sealed2KiB(t testing.TB) []*sealer.Sector {
	t.Helper()
	sealOnce.Do(func() {
		p, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
		if err != nil {
			sealErr = err
			return
		}
		for i, num := range []uint64{3, 5, 9} {
			var seed [32]byte
			seed[0] = byte(i + 1)
			r := rand.NewChaCha8(seed)
			data, err := sealer.RandomData(r, p.SectorSize)
			if err != nil {
				sealErr = err
				return
			}
			var ticket [32]byte
			r.Read(ticket[:])
			s, err := sealer.Seal(context.Background(), p, data, prooftypes.ProverID(1000), num, ticket)
			if err != nil {
				sealErr = err
				return
			}
			sealed = append(sealed, s)
		}
	})
	if sealErr != nil {
		t.Fatal(sealErr)
	}
	return sealed
}

func testRandomness(b byte) [32]byte {
	var r [32]byte
	for i := range r {
		r[i] = b + byte(i)
	}
	r[31] &= 0x3f
	return r
}

// vanillaFor is what a storage node serves for GenerateSingleVanillaProof: the challenges of
// the sector at position sectorIndex, opened in its tree R.
func vanillaFor(t testing.TB, p *Proof, s *sealer.Sector, rnd [32]byte, sectorIndex int) []byte {
	t.Helper()
	b, err := GenerateSectorVanilla(p, s.SectorNumber, s.TreeC.Root(), s.TreeR, p.SectorChallenges(rnd, s.SectorNumber, sectorIndex))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkPartition(t *testing.T, part *Partition) *cs.TestConstraintSystem {
	t.Helper()
	tcs := cs.NewTestConstraintSystem()
	if err := part.Circuit.Synthesize(tcs); err != nil {
		t.Fatal(err)
	}
	if err := tcs.Check(); err != nil {
		t.Fatalf("circuit not satisfied: %v", err)
	}
	in := tcs.Inputs()
	if len(in) != len(part.Inputs)+1 || len(in) != part.Circuit.Config.PublicInputs() {
		t.Fatalf("%d circuit inputs, %d public inputs", len(in), len(part.Inputs))
	}
	for i := range part.Inputs {
		if !in[i+1].Equal(&part.Inputs[i]) {
			t.Fatalf("input %d (%s) differs", i+1, tcs.InputName(i+1))
		}
	}
	return tcs
}

func TestWindowPoStFromSealer(t *testing.T) {
	secs := sealed2KiB(t)
	rnd := testRandomness(7)
	var prover [32]byte
	copy(prover[:], func() []byte { id := prooftypes.ProverID(1000); return id[:] }())
	for _, pt := range []abi.RegisteredPoStProof{abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, abi.RegisteredPoStProof_StackedDrgWindow2KiBV1} {
		p, _ := Lookup(pt)
		// Three sectors: partition 0 holds sectors 3 and 5, partition 1 is short (sector 9 only).
		v := [][]byte{vanillaFor(t, p, secs[0], rnd, 0), vanillaFor(t, p, secs[1], rnd, 1), vanillaFor(t, p, secs[2], rnd, 2)}
		full, err := WindowPartition(p, rnd, prover, v[:2], 0)
		if err != nil {
			t.Fatalf("%s partition 0: %v", p.Name, err)
		}
		checkPartition(t, full)
		short, err := WindowPartition(p, rnd, prover, v[2:], 1)
		if err != nil {
			t.Fatalf("%s partition 1: %v", p.Name, err)
		}
		checkPartition(t, short)
		if len(short.SectorIDs) != 1 || short.SectorIDs[0] != 9 {
			t.Errorf("short partition sectors %v", short.SectorIDs)
		}
		// The wrong partition index changes the challenges under API 1.0.0 only.
		_, err = WindowPartition(p, rnd, prover, v[2:], 0)
		if p.APIVersion == prooftypes.APIVersion1_0_0 && !errors.Is(err, ErrInvalidVanilla) {
			t.Errorf("%s: vanilla proof accepted at the wrong position: %v", p.Name, err)
		}
		if p.APIVersion == prooftypes.APIVersion1_2_0 && err != nil {
			t.Errorf("%s: position-independent challenges refused: %v", p.Name, err)
		}
		if _, err := WindowPartition(p, testRandomness(8), prover, v[:2], 0); !errors.Is(err, ErrInvalidVanilla) {
			t.Errorf("%s: vanilla proofs accepted for other randomness: %v", p.Name, err)
		}
		if _, err := WindowPartition(p, rnd, prover, [][]byte{v[0], v[0]}, 0); !errors.Is(err, ErrDuplicateSector) && !errors.Is(err, ErrInvalidVanilla) {
			t.Errorf("%s: duplicate sector: %v", p.Name, err)
		}
		if _, err := WindowPartition(p, rnd, prover, v, 0); err == nil {
			t.Errorf("%s: three sectors in a partition of two accepted", p.Name)
		}
	}
}

func TestWinningPoStFromSealer(t *testing.T) {
	secs := sealed2KiB(t)
	rnd := testRandomness(3)
	prover := prooftypes.ProverID(1000)
	p, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1)
	idx, err := WinningSectorChallenge(rnd, prover, 0, uint64(len(secs)))
	if err != nil {
		t.Fatal(err)
	}
	s := secs[idx]
	v := vanillaFor(t, p, s, rnd, 0)
	part, err := WinningPartition(p, rnd, prover, [][]byte{v})
	if err != nil {
		t.Fatal(err)
	}
	tcs := checkPartition(t, part)
	if tcs.NumInputs() != 133 {
		t.Errorf("%d inputs", tcs.NumInputs())
	}
	if _, err := WinningPartition(p, rnd, prover, [][]byte{v, v}); err == nil {
		t.Error("two vanilla proofs accepted")
	}
	var loud [32]byte
	loud[31] = 0xff
	if _, err := WinningPartition(p, loud, prover, [][]byte{v}); err == nil {
		t.Error("non-canonical randomness accepted")
	}
}

// tamper flips one byte of a valid vanilla proof at each structurally significant place; the
// result must be refused, either by the decoder or by verification.
func TestTamperedVanillaRefused(t *testing.T) {
	secs := sealed2KiB(t)
	rnd := testRandomness(7)
	prover := prooftypes.ProverID(1000)
	p, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1)
	good := vanillaFor(t, p, secs[0], rnd, 0)
	if _, err := WindowPartition(p, rnd, prover, [][]byte{good}, 0); err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(good); off += 7 {
		b := append([]byte(nil), good...)
		b[off] ^= 0x01
		if _, err := WindowPartition(p, rnd, prover, [][]byte{b}, 0); err == nil {
			t.Fatalf("vanilla proof with byte %d flipped accepted", off)
		}
	}
	if _, err := DecodeSectorVanilla(p, append(good, 0)); err == nil {
		t.Error("trailing byte accepted")
	}
	var de *bincode.DecodeError
	if _, err := DecodeSectorVanilla(p, good[:len(good)-1]); !errors.As(err, &de) || !errors.Is(err, bincode.ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
	v, err := DecodeSectorVanilla(p, good)
	if err != nil {
		t.Fatal(err)
	}
	re, err := v.Encode()
	if err != nil || string(re) != string(good) {
		t.Fatalf("re-encoding differs: %v", err)
	}
	// Another proof type's shape (8MiB has more levels) is refused by the decoder.
	p8, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow8MiBV1_1)
	if _, err := DecodeSectorVanilla(p8, good); err == nil {
		t.Error("2KiB vanilla proof decoded as 8MiB")
	}
}

func FuzzDecodeSectorVanilla(f *testing.F) {
	secs := sealed2KiB(f)
	p, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1)
	good := vanillaFor(f, p, secs[0], testRandomness(7), 0)
	bases := [][]byte{nil, good}
	for _, s := range []struct {
		base     uint8
		off, del uint32
		patch    []byte
	}{
		{1, 0, 0, nil},                       // the whole proof
		{1, 100, ^uint32(0), nil},            // truncated
		{1, uint32(len(good)), 0, []byte{0}}, // a trailing byte
		{1, 40, 8, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, // a huge sector-proof count
		{0, 0, 0, []byte{}},
	} {
		f.Add(s.base, s.off, s.del, s.patch)
	}
	f.Fuzz(func(t *testing.T, base uint8, off, del uint32, patch []byte) {
		b := fuzzedit.Splice(bases[int(base)%len(bases)], off, del, patch)
		v, err := DecodeSectorVanilla(p, b)
		if err != nil {
			var de *bincode.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("decode error is not a bincode.DecodeError: %v", err)
			}
			return
		}
		re, err := v.Encode()
		if err != nil || string(re) != string(b) {
			t.Fatalf("decoded proof does not re-encode to its bytes: %v", err)
		}
		if err := p.VerifySector(v, testRandomness(7), 0); err != nil && !errors.Is(err, ErrInvalidVanilla) {
			t.Fatalf("verification error is not ErrInvalidVanilla: %v", err)
		}
	})
}

// Groth16 end to end at 2KiB: keys from a deterministic setup of the blank circuit, proofs from
// Go-sealed sectors, verified against the public inputs a verifier computes.
func TestPoStGroth16(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("Groth16 setup and proving in -short / -race")
	}
	secs := sealed2KiB(t)
	ctx := context.Background()
	rnd := testRandomness(11)
	prover := prooftypes.ProverID(1000)
	window, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1)
	winning, _ := Lookup(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1)
	cases := []struct {
		p    *Proof
		part func() (*Partition, error)
	}{
		{window, func() (*Partition, error) {
			return WindowPartition(window, rnd, prover, [][]byte{vanillaFor(t, window, secs[2], rnd, 2)}, 1)
		}},
		{winning, func() (*Partition, error) {
			return WinningPartition(winning, rnd, prover, [][]byte{vanillaFor(t, winning, secs[1], rnd, 0)})
		}},
	}
	for _, c := range cases {
		part, err := c.part()
		if err != nil {
			t.Fatal(err)
		}
		proveVerify(t, ctx, c.p, part)
	}
}

// proveVerify proves part with keys from a deterministic setup of p's blank circuit and checks
// the proof against the verifier's public inputs, and not against altered ones.
func proveVerify(t *testing.T, ctx context.Context, p *Proof, part *Partition) {
	t.Helper()
	pk, err := groth16.SetupFromSeed(ctx, Blank(p.Config()), []byte(p.Identifier()))
	if err != nil {
		t.Fatal(err)
	}
	pa, err := SynthesizeParallel(ctx, part.Circuit, 2)
	if err != nil {
		t.Fatal(err)
	}
	r, sr, err := groth16.RandomRS(crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := groth16.ProveAssignment(ctx, pk, pa, &r, &sr)
	if err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	if err := groth16.Verify(&pk.VK, proof, part.Inputs); err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	inputs := append([]fr.Element(nil), part.Inputs...)
	inputs[1].SetUint64(inputs[1].Uint64() ^ 1)
	if err := groth16.Verify(&pk.VK, proof, inputs); err == nil {
		t.Fatalf("%s: proof verified for another challenge", p.Name)
	}
	if b := groth16.MarshalProofs([]*groth16.Proof{proof}); len(b) != ProofBytes {
		t.Fatalf("%s: %d proof bytes", p.Name, len(b))
	}
}
