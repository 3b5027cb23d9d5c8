package prover

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/seal"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/testcircuit"
)

const (
	testMiner  = 1000
	testSector = 7
)

// sealed2KiB seals a random 2KiB sector in Go and returns its C1 output.
func sealed2KiB(t *testing.T, seed byte) (*prooftypes.SealProof, *c1.Output) {
	t.Helper()
	p, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	o, err := sealer.RandomC1(context.Background(), p, testMiner, testSector, rand.NewChaCha8([32]byte{seed}))
	if err != nil {
		t.Fatal(err)
	}
	return p, o
}

func encode(t *testing.T, o *c1.Output) []byte {
	t.Helper()
	b, err := o.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func porepRequest(p *prooftypes.SealProof, phase1 []byte) Request {
	return Request{PoRep: &PoRepRequest{RegisteredProof: p.Proof, MinerID: testMiner, SectorNumber: testSector, Phase1Out: phase1}}
}

// TestPoRepRefusesInconsistentC1: tampered C1 outputs, a C1 output of another sector and a
// request naming another sector size are refused before parameters are even looked for, with an
// InputError naming what is inconsistent.
func TestPoRepRefusesInconsistentC1(t *testing.T) {
	p, o := sealed2KiB(t, 1)
	good := encode(t, o)
	pipe := New(CPUBackend{}, NewParamCache("").WithFilecoinDir(t.TempDir()))
	for _, tc := range []struct {
		name   string
		tamper func(o *c1.Output)
		req    func(r *PoRepRequest)
		want   string
	}{
		{name: "flipped label", tamper: func(o *c1.Output) {
			o.Partitions()[0][1].ReplicaColumnProofs.CX.Column.Rows[1][0] ^= 1
		}, want: "partition 0 challenge 1: replica_column_proofs.c_x"},
		{name: "wrong tree R path", tamper: func(o *c1.Output) {
			o.Partitions()[0][1].CommRLastProof.Base[0].Hashes[6][0] ^= 1
		}, want: "comm_r_last_proof"},
		{name: "wrong tree D path", tamper: func(o *c1.Output) {
			o.Partitions()[0][0].CommDProofs.Base[2].Hashes[0][5] ^= 1
		}, want: "comm_d_proofs: merkle path does not lead to the root"},
		{name: "wrong comm_r", tamper: func(o *c1.Output) { o.CommR[0] ^= 1 }, want: "comm_r: is not Poseidon(comm_c, comm_r_last)"},
		{name: "another miner's sector", req: func(r *PoRepRequest) { r.MinerID++ }, want: "replica_id"},
		{name: "another sector number", req: func(r *PoRepRequest) { r.SectorNumber++ }, want: "replica_id"},
		{name: "other sector size", req: func(r *PoRepRequest) { r.RegisteredProof = abi.RegisteredSealProof_StackedDrg8MiBV1_1 }, want: "StackedDrg8MiBV1_1 (6) does not match the C1 output's StackedDrg2KiBV1_1"},
		{name: "not JSON", req: func(r *PoRepRequest) { r.Phase1Out = []byte("{") }, want: "malformed C1 output JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, err := c1.Decode(good)
			if err != nil {
				t.Fatal(err)
			}
			if tc.tamper != nil {
				tc.tamper(o)
			}
			req := porepRequest(p, encode(t, o))
			if tc.req != nil {
				tc.req(req.PoRep)
			}
			res, err := pipe.Prove(context.Background(), req, nil)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (%T), want an InputError naming %q", err, err, tc.want)
			}
			if res.Proof != nil {
				t.Fatal("a proof came back with the error")
			}
		})
	}
}

// TestPoRepMissingParams: the error names the exact file expected and how to get it, and a
// file put in place afterwards is picked up without a restart (the failure is not cached).
func TestPoRepMissingParams(t *testing.T) {
	p, o := sealed2KiB(t, 2)
	dir := t.TempDir()
	pipe := New(CPUBackend{}, NewParamCache("").WithFilecoinDir(dir))
	_, err := pipe.Prove(context.Background(), porepRequest(p, encode(t, o)), nil)
	var me *MissingParamsError
	if !errors.As(err, &me) {
		t.Fatalf("got %v, want MissingParamsError", err)
	}
	want := filepath.Join(dir, p.ParamsFile())
	if me.Path != want || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "snarkd params gen --proof StackedDrg2KiBV1_1") {
		t.Fatalf("error %q does not name %s and the params gen hint", err, want)
	}
	if len(pipe.Params().Loaded()) != 0 {
		t.Fatalf("failed load cached: %+v", pipe.Params().Loaded())
	}
	// A .params file without its .vk is still incomplete, and says so.
	if err := os.WriteFile(want, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = pipe.Params().Seal(context.Background(), p)
	if !errors.As(err, &me) || me.Path != filepath.Join(dir, p.VKFile()) {
		t.Fatalf("got %v, want the .vk file named", err)
	}
}

// TestPoRepParamsOfAnotherCircuit: parameters under the right file names but from another
// circuit are refused naming the vector that does not fit, before any synthesis (only the
// parameter load is reported).
func TestPoRepParamsOfAnotherCircuit(t *testing.T) {
	p, o := sealed2KiB(t, 3)
	dir := t.TempDir()
	pk, err := testcircuit.DevnetParameters(context.Background(), 64, 1, DevnetParamSeed)
	if err != nil {
		t.Fatal(err)
	}
	if err := seal.WriteParams(dir, p, pk); err != nil {
		t.Fatal(err)
	}
	pipe := New(CPUBackend{}, NewParamCache("").WithFilecoinDir(dir))
	var stages []Stage
	_, err = pipe.Prove(context.Background(), porepRequest(p, encode(t, o)), func(s Stage, _, _ int, _ ...string) { stages = append(stages, s) })
	var mm *seal.ParamsMismatchError
	if !errors.As(err, &mm) || !strings.Contains(err.Error(), filepath.Join(dir, p.ParamsFile())) {
		t.Fatalf("got %v, want ParamsMismatchError naming the file", err)
	}
	// The load is reported (it is what the request waited for), nothing after it.
	if len(stages) != 1 || stages[0] != StageLoadingParams {
		t.Fatalf("stages %v ran with mismatched parameters", stages)
	}

	// A .vk from another setup than the .params is refused too.
	other, err := testcircuit.DevnetParameters(context.Background(), 64, 1, []byte("another seed"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, p.VKFile()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.VK.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := pipe.Params().Seal(context.Background(), p); err == nil || !strings.Contains(err.Error(), "is not the verifying key of") {
		t.Fatalf("got %v, want the .vk/.params disagreement", err)
	}
}
