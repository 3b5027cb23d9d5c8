package cuzk

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/seal"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
)

// TestPoRep2KiBEndToEnd sends a Curio-shaped 2KiB PoRep request through Prove and checks the
// proof against the verifying key with the sector's public inputs, independently of the
// daemon's own check. The Groth16 setup of the 2.7M-constraint circuit is heavy, so it runs
// only with SNARKD_E2E=1.
func TestPoRep2KiBEndToEnd(t *testing.T) {
	if os.Getenv("SNARKD_E2E") != "1" {
		t.Skip("set SNARKD_E2E=1 (Groth16 setup of the 2KiB PoRep circuit)")
	}
	ctx := context.Background()
	spt := abi.RegisteredSealProof_StackedDrg2KiBV1_1
	p, err := prooftypes.Lookup(spt)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	pk, err := seal.GenerateParams(ctx, p, []byte("snarkd cuzk e2e test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("setup: %v", time.Since(t0))
	dir := t.TempDir()
	if err := seal.WriteParams(dir, p, pk); err != nil {
		t.Fatal(err)
	}
	in, err := cuzktest.Commit2In(ctx, spt, 1000, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, config.Cuzk{}, dir)
	t0 = time.Now()
	res, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: &pb.SubmitProofRequest{
		RequestId: "porep-1000-5", ProofKind: pb.ProofKind_POREP_SEAL_COMMIT, SectorSize: p.SectorSize,
		RegisteredProof: uint64(spt), Priority: pb.Priority_NORMAL, VanillaProof: in, SectorNumber: 5, MinerId: 1000,
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Result
	if r.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("Prove: %v %s", r.Status, r.ErrorMessage)
	}
	t.Logf("Prove: %v (synthesis %d ms, proving %d ms)", time.Since(t0), r.SynthesisMs, r.GpuComputeMs)
	if len(r.Proof) != 192*p.Partitions {
		t.Fatalf("proof of %d bytes, want %d", len(r.Proof), 192*p.Partitions)
	}
	var w c1.Commit2In
	if err := json.Unmarshal(in, &w); err != nil {
		t.Fatal(err)
	}
	c, err := seal.NewCommit2(ctx, w.Phase1Out, 5, 1000, seal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	proofs, err := groth16.ParseProofs(r.Proof, p.Partitions)
	if err != nil {
		t.Fatal(err)
	}
	for k, proof := range proofs {
		inputs, err := c.PublicInputs(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(&pk.VK, proof, inputs); err != nil {
			t.Fatalf("partition %d does not verify: %v", k, err)
		}
	}
}
