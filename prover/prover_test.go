package prover

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/rpcapi"
	"github.com/snarkd/snarkd/testcircuit"
)

const testSize = 64

func TestTestKindProvesAndVerifies(t *testing.T) {
	dir := t.TempDir()
	p := New(CPUBackend{}, NewParamCache(dir))
	var stages []Stage
	res, err := p.Prove(context.Background(), Request{Test: &TestRequest{Constraints: testSize, Partitions: 2, Seed: 7}},
		func(s Stage, part, n int, _ ...string) { stages = append(stages, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Proof) != 2*groth16.ProofSize || res.Partitions != 2 {
		t.Fatalf("proof %d bytes, %d partitions", len(res.Proof), res.Partitions)
	}
	want := []Stage{StageLoadingParams, StageSynthesizing, StageProving, StageSynthesizing, StageProving, StageVerifying}
	if fmt.Sprint(stages) != fmt.Sprint(want) {
		t.Fatalf("stages %v, want %v", stages, want)
	}
	// An independent check: parse the bytes and verify against freshly loaded parameters.
	pk, err := groth16.OpenParameters(filepath.Join(dir, "test-64-7.params"), groth16.ReadOptions{})
	if err != nil {
		t.Fatalf("cached parameters: %v", err)
	}
	proofs, err := groth16.ParseProofs(res.Proof, 2)
	if err != nil {
		t.Fatal(err)
	}
	inputs := testcircuit.New(testSize, 7).PublicInputs()
	for i, pr := range proofs {
		if err := groth16.Verify(&pk.VK, pr, inputs); err != nil {
			t.Fatalf("partition %d: %v", i, err)
		}
	}
	// Wrong public inputs must not verify (the check above can fail).
	bad := testcircuit.New(testSize, 8).PublicInputs()
	if err := groth16.Verify(&pk.VK, proofs[0], bad); err == nil {
		t.Fatal("proof verified against other inputs")
	}
	if got := p.Params().Loaded(); len(got) != 1 || !got[0].Loaded || got[0].Bytes == 0 {
		t.Fatalf("loaded params %+v", got)
	}
	// A second cache loads from disk rather than regenerating: same verifying key.
	p2 := NewParamCache(dir)
	pk2, err := p2.Test(context.Background(), testSize, 7)
	if err != nil || string(pk2.VK.Bytes()) != string(pk.VK.Bytes()) {
		t.Fatalf("reloaded params differ: %v", err)
	}
}

// corrupt proves honestly, then breaks C: the pipeline must refuse to return it.
type corrupt struct{ CPUBackend }

func (corrupt) Prove(ctx context.Context, _ PartitionInfo, pk *groth16.Parameters, pa *cs.ProvingAssignment, r, s *fr.Element) (*groth16.Proof, error) {
	pr, err := groth16.ProveAssignment(ctx, pk, pa, r, s)
	if err != nil {
		return nil, err
	}
	pr.C = pr.A
	return pr, nil
}

func TestSelfCheckRejectsBadProof(t *testing.T) {
	p := New(corrupt{}, NewParamCache(""))
	_, err := p.Prove(context.Background(), Request{Test: &TestRequest{Constraints: testSize, Seed: 1}}, nil)
	if err == nil || !errors.Is(err, groth16.ErrInvalidProof) {
		t.Fatalf("bad proof not caught: %v", err)
	}
}

func TestFilecoinKindsSupported(t *testing.T) {
	p := New(CPUBackend{}, NewParamCache(""))
	for _, k := range []Kind{rpcapi.KindPoRepC2, rpcapi.KindWinningPoSt, rpcapi.KindWindowPoSt, rpcapi.KindSnapProve} {
		if err := p.Supports(k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if err := p.Supports("nonsense"); err == nil {
		t.Error("unknown kind supported")
	}
}

func TestCancelledProve(t *testing.T) {
	p := New(CPUBackend{}, NewParamCache(""))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Prove(ctx, Request{Test: &TestRequest{Constraints: testSize, Seed: 3}}, nil); err == nil {
		t.Fatal("cancelled prove succeeded")
	}
	// The failed generation is not cached: the next request works.
	if _, err := p.Prove(context.Background(), Request{Test: &TestRequest{Constraints: testSize, Seed: 3}}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestRequestKind: a request is of the one kind whose inputs it carries, PoSt by its proof
// type; none or several is no kind, and the pipeline refuses it.
func TestRequestKind(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		want Kind
	}{
		{"porep", Request{PoRep: &PoRepRequest{}}, rpcapi.KindPoRepC2},
		{"winning", Request{PoSt: &PoStRequest{RegisteredProof: abi.RegisteredPoStProof_StackedDrgWinning32GiBV1}}, rpcapi.KindWinningPoSt},
		{"window", Request{PoSt: &PoStRequest{RegisteredProof: abi.RegisteredPoStProof_StackedDrgWindow32GiBV1_1}}, rpcapi.KindWindowPoSt},
		{"snap", Request{Snap: &SnapRequest{}}, rpcapi.KindSnapProve},
		{"test", Request{Test: &TestRequest{}}, rpcapi.KindTest},
		{"none", Request{}, ""},
		{"two", Request{PoRep: &PoRepRequest{}, Test: &TestRequest{}}, ""},
	} {
		if got := tc.req.Kind(); got != tc.want {
			t.Errorf("%s: kind %q, want %q", tc.name, got, tc.want)
		}
	}
	p := New(CPUBackend{}, NewParamCache(""))
	if _, err := p.Prove(context.Background(), Request{PoRep: &PoRepRequest{}, Test: &TestRequest{}}, nil); err == nil || !strings.Contains(err.Error(), "exactly one proof kind") {
		t.Fatalf("a request of two kinds: %v", err)
	}
}

// TestFromAPI: an API request becomes the typed request of its kind, with its job's priority.
func TestFromAPI(t *testing.T) {
	prio := rpcapi.PriorityWinningPoSt
	c1 := &DecodedC1{}
	got := FromAPI(rpcapi.ProofRequest{Kind: rpcapi.KindPoRepC2, RegisteredProof: 8, MinerID: 1000, SectorNumber: 7,
		Phase1Out: []byte("{}"), Priority: &prio}, c1)
	if got.PoRep == nil || got.PoRep.RegisteredProof != 8 || got.PoRep.MinerID != 1000 || got.PoRep.SectorNumber != 7 ||
		string(got.PoRep.Phase1Out) != "{}" || got.PoRep.C1 != c1 || got.Job.Priority == nil || *got.Job.Priority != prio || got.Kind() != rpcapi.KindPoRepC2 {
		t.Fatalf("porep: %+v", got)
	}
	win := FromAPI(rpcapi.ProofRequest{Kind: rpcapi.KindWinningPoSt, RegisteredProof: int64(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1),
		Randomness: []byte{1}, VanillaProofs: [][]byte{{2}}}, nil)
	if win.PoSt == nil || win.Kind() != rpcapi.KindWinningPoSt || len(win.PoSt.VanillaProofs) != 1 || win.Job.Priority != nil {
		t.Fatalf("winning: %+v", win)
	}
	snap := FromAPI(rpcapi.ProofRequest{Kind: rpcapi.KindSnapProve, CommROld: []byte{1}, CommDNew: []byte{2}, CommRNew: []byte{3}}, nil)
	if snap.Snap == nil || snap.Snap.CommRNew[0] != 3 || snap.Kind() != rpcapi.KindSnapProve {
		t.Fatalf("snap: %+v", snap)
	}
	test := FromAPI(rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 100, Partitions: 2, Seed: 3}}, nil)
	if test.Test == nil || *test.Test != (TestRequest{Constraints: 100, Partitions: 2, Seed: 3}) {
		t.Fatalf("test: %+v", test)
	}
}

// TestLoadingParamsStage: a request whose parameters are not in memory reports
// StageLoadingParams, saying whether they are generated or read and which circuit, before its
// first synthesis; one whose parameters are in memory goes straight to synthesis. The wait is
// part of Result.SRSLoad either way.
func TestLoadingParamsStage(t *testing.T) {
	dir := t.TempDir()
	first := New(CPUBackend{}, NewParamCache(dir))
	for _, tc := range []struct {
		name   string
		p      *Pipeline
		detail string // "" for no loading stage
	}{
		{"first use: generated", first, "generate test-64-11"},
		{"in memory", first, ""},
		{"on disk, not in memory: read", New(CPUBackend{}, NewParamCache(dir)), "load test-64-11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type report struct {
				stage  Stage
				detail string
			}
			var got []report
			_, err := tc.p.Prove(context.Background(), Request{Test: &TestRequest{Constraints: testSize, Seed: 11}},
				func(s Stage, _, _ int, detail ...string) { got = append(got, report{s, strings.Join(detail, "; ")}) })
			if err != nil {
				t.Fatal(err)
			}
			want := []report{{StageSynthesizing, ""}, {StageProving, ""}, {StageVerifying, ""}}
			if tc.detail != "" {
				want = append([]report{{StageLoadingParams, tc.detail}}, want...)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("reports %v, want %v", got, want)
			}
		})
	}
}

// TestParamLoadString: the loading stage's detail names load or generate first, then the
// circuit, the proof type where it says more, and a load another request started.
func TestParamLoadString(t *testing.T) {
	for _, tc := range []struct {
		l    ParamLoad
		want string
	}{
		{ParamLoad{Circuit: "test-64-1", Proof: "test-64-1", Generate: true}, "generate test-64-1"},
		{ParamLoad{Circuit: "v28-x.params", Proof: "StackedDrg2KiBV1_1"}, "load v28-x.params (StackedDrg2KiBV1_1)"},
		{ParamLoad{Circuit: "v28-x.params", Shared: true}, "load v28-x.params, started by another job"},
	} {
		if got := tc.l.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.l, got, tc.want)
		}
	}
}
