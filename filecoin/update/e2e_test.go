package update

import (
	"context"
	crand "crypto/rand"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/post/bincode"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/internal/fuzzedit"
)

var (
	keyOnce sync.Once
	key     *sealer.Sector
	keyErr  error
)

// sectorKey seals one 2KiB sector with the Go sealer: the sector key new data is encoded into.
func sectorKey(t testing.TB) *sealer.Sector {
	t.Helper()
	keyOnce.Do(func() {
		p, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
		if err != nil {
			keyErr = err
			return
		}
		r := rand.NewChaCha8([32]byte{9})
		data, err := sealer.RandomData(r, p.SectorSize)
		if err != nil {
			keyErr = err
			return
		}
		key, keyErr = sealer.Seal(context.Background(), p, data, prooftypes.ProverID(1000), 4, [32]byte{1})
	})
	if keyErr != nil {
		t.Fatal(keyErr)
	}
	return key
}

func encoded(t testing.TB, poseidon bool) *Encoded {
	t.Helper()
	s := sectorKey(t)
	var p *Params
	var err error
	if poseidon {
		p, err = FromSectorSizePoseidon(s.Proof.SectorSize)
	} else {
		p, err = FromSectorSize(s.Proof.SectorSize)
	}
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sealer.RandomData(rand.NewChaCha8([32]byte{byte(len(p.Identifier()))}), s.Proof.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]c1.Domain, p.SectorNodes)
	for i := range data {
		copy(data[i][:], raw[32*i:])
	}
	e, err := Encode(context.Background(), p, p.HDefault(), s.TreeC.Root(), s.TreeR, data)
	if err != nil {
		t.Fatal(err)
	}
	if e.CommROld != s.CommR {
		t.Fatal("comm_r_old is not the sector key's comm_r")
	}
	return e
}

func TestSnapDealsFromSealer(t *testing.T) {
	for _, poseidon := range []bool{false, true} {
		e := encoded(t, poseidon)
		p := e.Params
		b, err := e.PartitionProof(0)
		if err != nil {
			t.Fatal(err)
		}
		c, inputs, err := p.Partition(b, e.Inputs(0))
		if err != nil {
			t.Fatalf("poseidon %v: %v", poseidon, err)
		}
		if !poseidon && !inputs[0].IsOne() {
			t.Errorf("2KiB k_and_h_select = %s, want 1 (k 0, h_select 1)", inputs[0].String())
		}
		checkSatisfied(t, c, inputs)
		if poseidon {
			// Names are checked on the small variant; the main 2KiB circuit has 1.7M rows.
			tcs := cs.NewTestConstraintSystem()
			if err := c.Synthesize(tcs); err != nil {
				t.Fatal(err)
			}
			if err := tcs.Check(); err != nil {
				t.Fatalf("circuit not satisfied: %v", err)
			}
			if tcs.InputName(1) != "h_select (public input)/input variable" || tcs.InputName(4) != "comm_r_new_input/input variable" {
				t.Errorf("inputs named %q, %q", tcs.InputName(1), tcs.InputName(4))
			}
		}
		// A witness that skips the vanilla checks (a wrong comm_c) leaves rows unsatisfied. (The
		// 1.7M-row main circuit is synthesized once only under the race detector.)
		if !raceEnabled || poseidon {
			bad := *c.Witness
			bad.CommC.SetUint64(5)
			pa, err := cs.SynthesizeProving(context.Background(), &Circuit{Params: p, Inputs: c.Inputs, Witness: &bad}, cs.Shape{})
			if err != nil {
				t.Fatal(err)
			}
			if firstUnsatisfied(pa) < 0 {
				t.Fatal("circuit with a wrong comm_c is satisfied")
			}
		}
		pp, err := p.DecodePartitionProof(b)
		if err != nil {
			t.Fatal(err)
		}
		re, _ := pp.Encode(poseidon)
		if string(re) != string(b) {
			t.Fatal("re-encoding differs")
		}
		// Other commitments or h are refused.
		in := e.Inputs(0)
		in.CommRNew = in.CommROld
		if _, _, err := p.Partition(b, in); !errors.Is(err, ErrInvalidVanilla) {
			t.Errorf("wrong comm_r_new: %v", err)
		}
		in = e.Inputs(0)
		in.CommDNew = in.CommROld
		if _, _, err := p.Partition(b, in); !errors.Is(err, ErrInvalidVanilla) {
			t.Errorf("wrong comm_d_new: %v", err)
		}
		if _, _, err := p.Partition(b, &PublicInputs{K: 0, H: 9}); err == nil {
			t.Error("h = 9 accepted at 2KiB")
		}
	}
}

func TestTamperedPartitionProofRefused(t *testing.T) {
	e := encoded(t, false)
	good, err := e.PartitionProof(0)
	if err != nil {
		t.Fatal(err)
	}
	stride := 13
	if raceEnabled {
		stride = 97
	}
	for off := 0; off < len(good); off += stride {
		b := append([]byte(nil), good...)
		b[off] ^= 0x01
		if _, _, err := e.Params.Partition(b, e.Inputs(0)); err == nil {
			t.Fatalf("partition proof with byte %d flipped accepted", off)
		}
	}
	if _, err := e.Params.DecodePartitionProof(append(good, 0)); err == nil {
		t.Error("trailing byte accepted")
	}
	if _, err := e.Params.DecodePartitionProof(good[:len(good)-3]); err == nil {
		t.Error("truncated proof accepted")
	}
}

func FuzzDecodePartitionProof(f *testing.F) {
	e := encoded(f, false)
	good, err := e.PartitionProof(0)
	if err != nil {
		f.Fatal(err)
	}
	bases := [][]byte{nil, good}
	for _, s := range []struct {
		base     uint8
		off, del uint32
		patch    []byte
	}{
		{1, 0, 0, nil},                       // the whole proof
		{1, 200, ^uint32(0), nil},            // truncated
		{1, uint32(len(good)), 0, []byte{0}}, // a trailing byte
		{1, 32, 8, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, // a huge apex-leaf count
		{0, 0, 0, []byte{}},
	} {
		f.Add(s.base, s.off, s.del, s.patch)
	}
	f.Fuzz(func(t *testing.T, base uint8, off, del uint32, patch []byte) {
		b := fuzzedit.Splice(bases[int(base)%len(bases)], off, del, patch)
		pp, err := e.Params.DecodePartitionProof(b)
		if err != nil {
			var de *bincode.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("decode error is not a bincode.DecodeError: %v", err)
			}
			return
		}
		re, err := pp.Encode(false)
		if err != nil || string(re) != string(b) {
			t.Fatalf("decoded proof does not re-encode to its bytes: %v", err)
		}
		_ = e.Params.Verify(pp, e.Inputs(0))
	})
}

// Groth16 end to end at 2KiB: the Poseidon variant (≈40K constraints) always outside -short and
// -race; the main circuit (1.7M constraints, minutes of CPU setup) with SNARKD_HEAVY_TESTS=1.
func TestSnapDealsGroth16(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("Groth16 setup and proving in -short / -race")
	}
	ctx := context.Background()
	for _, poseidon := range []bool{true, false} {
		if !poseidon && os.Getenv("SNARKD_HEAVY_TESTS") == "" {
			t.Log("main 2KiB SnapDeals circuit skipped; set SNARKD_HEAVY_TESTS=1")
			continue
		}
		e := encoded(t, poseidon)
		b, err := e.PartitionProof(0)
		if err != nil {
			t.Fatal(err)
		}
		c, inputs, err := e.Params.Partition(b, e.Inputs(0))
		if err != nil {
			t.Fatal(err)
		}
		pk, err := groth16.SetupFromSeed(ctx, Blank(e.Params), []byte(e.Params.ParamFile()))
		if err != nil {
			t.Fatal(err)
		}
		r, s, err := groth16.RandomRS(crand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		proof, err := groth16.ProveCircuit(ctx, pk, c, &r, &s)
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(&pk.VK, proof, inputs); err != nil {
			t.Fatalf("poseidon %v: %v", poseidon, err)
		}
		inputs[3] = inputs[1]
		if err := groth16.Verify(&pk.VK, proof, inputs); err == nil {
			t.Fatal("proof verified for another comm_r_new")
		}
	}
}

// checkSatisfied synthesizes c for proving and checks every row a·b = c and the public inputs.
func checkSatisfied(t *testing.T, c *Circuit, inputs []fr.Element) {
	t.Helper()
	pa, err := cs.SynthesizeProving(context.Background(), c, cs.Shape{})
	if err != nil {
		t.Fatal(err)
	}
	if row := firstUnsatisfied(pa); row >= 0 {
		t.Fatalf("row %d of %d not satisfied", row, len(pa.A))
	}
	if len(pa.Input) != len(inputs)+1 {
		t.Fatalf("%d inputs", len(pa.Input))
	}
	for i := range inputs {
		if !pa.Input[i+1].Equal(&inputs[i]) {
			t.Fatalf("input %d differs from the public input", i+1)
		}
	}
}

func firstUnsatisfied(pa *cs.ProvingAssignment) int {
	for i := range pa.A {
		var ab fr.Element
		ab.Mul(&pa.A[i], &pa.B[i])
		if !ab.Equal(&pa.C[i]) {
			return i
		}
	}
	return -1
}

func TestInputsFromCIDs(t *testing.T) {
	e := encoded(t, false)
	o, n, u, err := e.CIDs()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u.String(), "baga6ea4sea") || !strings.HasPrefix(o.String(), "bagboea4b5abc") {
		t.Errorf("CIDs %s %s", o, u)
	}
	in, err := e.Params.InputsFromCIDs(o, n, u, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := e.Inputs(0)
	if *in != *want {
		t.Fatalf("inputs %+v, want %+v", in, want)
	}
	if _, err := e.Params.InputsFromCIDs(u, n, u, 0); err == nil {
		t.Error("unsealed CID accepted as comm_r_old")
	}
}
