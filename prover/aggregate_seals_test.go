package prover

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/snarkd/snarkd/filecoin/aggregate"
	"github.com/snarkd/snarkd/filecoin/aggregate/aggregatetest"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/internal/groth16sim"
)

// aggregateFixture is n sealed 2KiB sectors of testMiner (10, 11, …) with C2 proofs from a
// simulated key, written as the proof type's .vk in dir.
type aggregateFixture struct {
	*aggregatetest.Fixture
	p   *prooftypes.SealProof
	dir string
	key *groth16sim.Key
}

func newAggregateFixture(t *testing.T, n int) *aggregateFixture {
	t.Helper()
	fx, err := aggregatetest.New(abi.RegisteredSealProof_StackedDrg2KiBV1_1, testMiner, 10, n, 9)
	if err != nil {
		t.Fatal(err)
	}
	f := &aggregateFixture{Fixture: fx, p: fx.Proof, dir: t.TempDir(), key: fx.Key}
	if err := fx.WriteKeys(f.dir, 0); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *aggregateFixture) set(t *testing.T, v abi.RegisteredAggregationProof, infos []proof.AggregateSealVerifyInfo) *aggregate.Set {
	t.Helper()
	s, err := aggregate.Decode(f.p.Proof, v, testMiner, infos)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAggregateSeals: three sectors' C2 proofs aggregate with each SnarkPack version into an
// aggregate that VerifySealAggregate accepts, after the SRS load (reported once), aggregating
// and verifying; other infos do not verify it, and an aggregate of another count is refused as
// input before any key is read.
func TestAggregateSeals(t *testing.T) {
	ctx := context.Background()
	f := newAggregateFixture(t, 3)
	writeDevnetSRS(t, f.dir, 4)
	params := NewParamCache("").WithFilecoinDir(f.dir)
	for i, v := range []abi.RegisteredAggregationProof{abi.RegisteredAggregationProof_SnarkPackV1, abi.RegisteredAggregationProof_SnarkPackV2} {
		s := f.set(t, v, f.Infos)
		var stages []Stage
		res, err := AggregateSeals(ctx, params, SealAggregateRequest{Set: s, Proofs: f.Proofs}, func(st Stage, _, _ int, _ ...string) {
			stages = append(stages, st)
		})
		if err != nil {
			t.Fatalf("%v: %v", s.Version, err)
		}
		want := []Stage{StageLoadingParams, StageAggregating, StageVerifying}
		if i > 0 { // the SRS is read once
			want = want[1:]
		}
		if !reflect.DeepEqual(stages, want) {
			t.Fatalf("%v: stages %v, want %v", s.Version, stages, want)
		}
		if len(res.Proof) != snarkpack.Size(4) || res.Partitions != 1 || res.Prove <= 0 || res.Verify <= 0 || res.Phases[PhaseAggregate] <= 0 {
			t.Fatalf("%v: result %d bytes, %+v", s.Version, len(res.Proof), res)
		}
		if (res.SRSLoad > 0) != (i == 0) {
			t.Fatalf("%v: SRS load %v", s.Version, res.SRSLoad)
		}
		if err := VerifySealAggregate(ctx, params, s, res.Proof); err != nil {
			t.Fatalf("%v: the aggregate does not verify: %v", s.Version, err)
		}
		seed := append([]proof.AggregateSealVerifyInfo(nil), f.Infos...)
		seed[2].InteractiveRandomness = append([]byte{seed[2].InteractiveRandomness[0] ^ 1}, seed[2].InteractiveRandomness[1:]...)
		if err := VerifySealAggregate(ctx, params, f.set(t, v, seed), res.Proof); !errors.Is(err, snarkpack.ErrInvalid) {
			t.Fatalf("%v: with another seed: got %v, want ErrInvalid", s.Version, err)
		}
		var ie *aggregate.InputError
		if err := VerifySealAggregate(ctx, params, f.set(t, v, f.Infos[:2]), res.Proof); !errors.As(err, &ie) || ie.Field != "Proof" {
			t.Fatalf("%v: two sectors' infos for an aggregate of four proofs: got %v", s.Version, err)
		}
	}
}

// TestAggregateSealsRefuses: a proof of another sector is named before an aggregate is
// answered; malformed proofs are refused before any key is read; missing keys and an SRS too
// small name what is missing.
func TestAggregateSealsRefuses(t *testing.T) {
	ctx := context.Background()
	f := newAggregateFixture(t, 3)
	s := f.set(t, abi.RegisteredAggregationProof_SnarkPackV2, f.Infos)
	run := func(params *ParamCache, proofs [][]byte) (Result, error) {
		return AggregateSeals(ctx, params, SealAggregateRequest{Set: s, Proofs: proofs}, nil)
	}
	empty := NewParamCache("").WithFilecoinDir(t.TempDir())
	bad := [][]byte{f.Proofs[0], append([]byte(nil), f.Proofs[1]...), f.Proofs[2]}
	bad[1][100] ^= 0x10
	if _, err := run(empty, bad); err == nil || !strings.HasPrefix(err.Error(), "Proofs[1]: partition 0: proof B") {
		t.Fatalf("a corrupt point: got %v", err)
	}
	if _, err := run(empty, f.Proofs[:2]); err == nil || !strings.Contains(err.Error(), "2 C2 proofs for 3 sectors") {
		t.Fatalf("a proof missing: got %v", err)
	}
	var mp *MissingParamsError
	if _, err := run(empty, f.Proofs); !errors.As(err, &mp) || mp.Path != filepath.Join(empty.FilecoinDir(), f.p.VKFile()) {
		t.Fatalf("no .vk: got %v, want a MissingParamsError naming it", err)
	}
	noSRS := NewParamCache("").WithFilecoinDir(f.dir)
	var ms *MissingSRSError
	if _, err := run(noSRS, f.Proofs); !errors.As(err, &ms) {
		t.Fatalf("no SRS: got %v, want a MissingSRSError", err)
	}
	writeDevnetSRS(t, f.dir, 2)
	small := NewParamCache("").WithFilecoinDir(f.dir)
	if _, err := run(small, f.Proofs); err == nil || !strings.Contains(err.Error(), "4 proofs need 8 SRS powers") {
		t.Fatalf("an SRS for 2 proofs: got %v", err)
	}

	writeDevnetSRS(t, f.dir, 4)
	params := NewParamCache("").WithFilecoinDir(f.dir)
	swapped := [][]byte{f.Proofs[0], f.Proofs[2], f.Proofs[1]}
	res, err := run(params, swapped)
	var ie *aggregate.InputError
	if !errors.As(err, &ie) || ie.Field != "Proofs[1]" || !strings.Contains(err.Error(), "partition 0 of sector 11 does not verify") {
		t.Fatalf("proofs of two sectors swapped: got %v (%T)", err, err)
	}
	if res.Proof != nil {
		t.Fatal("an aggregate came back with the error")
	}
	if _, err := run(params, f.Proofs); err != nil {
		t.Fatal(err)
	}
}

// TestSealVerifyingKey: the .vk is read without the parameters, and one of another circuit is
// refused.
func TestSealVerifyingKey(t *testing.T) {
	f := newAggregateFixture(t, 1)
	c := NewParamCache("").WithFilecoinDir(f.dir)
	vk, err := c.SealVerifyingKey(f.p)
	if err != nil {
		t.Fatal(err)
	}
	if string(vk.Bytes()) != string(f.key.VK.Bytes()) {
		t.Fatal("read another key")
	}
	other, err := groth16sim.NewKey(f.p.PublicInputs() + 1)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.Create(filepath.Join(f.dir, f.p.VKFile()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.VK.WriteTo(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var pm *ParamsMismatchError
	if _, err := c.SealVerifyingKey(f.p); !errors.As(err, &pm) {
		t.Fatalf("a key of another circuit: got %v", err)
	}
}
