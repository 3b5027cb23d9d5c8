package prover

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

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
	res, err := p.Prove(context.Background(), Request{Kind: rpcapi.KindTest, TestConstraints: testSize, TestPartitions: 2, TestSeed: 7},
		func(s Stage, part, n int, _ ...string) { stages = append(stages, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Proof) != 2*groth16.ProofSize || res.Partitions != 2 {
		t.Fatalf("proof %d bytes, %d partitions", len(res.Proof), res.Partitions)
	}
	want := []Stage{StageSynthesizing, StageProving, StageSynthesizing, StageProving, StageVerifying}
	if len(stages) != len(want) {
		t.Fatalf("stages %v", stages)
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
	_, err := p.Prove(context.Background(), Request{Kind: rpcapi.KindTest, TestConstraints: testSize, TestSeed: 1}, nil)
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
	if _, err := p.Prove(ctx, Request{Kind: rpcapi.KindTest, TestConstraints: testSize, TestSeed: 3}, nil); err == nil {
		t.Fatal("cancelled prove succeeded")
	}
	// The failed generation is not cached: the next request works.
	if _, err := p.Prove(context.Background(), Request{Kind: rpcapi.KindTest, TestConstraints: testSize, TestSeed: 3}, nil); err != nil {
		t.Fatal(err)
	}
}
