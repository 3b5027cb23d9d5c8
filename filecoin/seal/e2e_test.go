package seal

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/groth16"
)

// TestEndToEnd2KiB: a Go-sealed sector's C1 output → partition circuit → Groth16 proof with
// devnet parameters from our setup → verified against the vk with get_seal_inputs' public inputs.
// The setup of the 2.7M-constraint circuit is heavy, so it runs only with SNARKD_E2E=1;
// SNARKD_E2E_PROOF=6 seals and proves an 8MiB sector instead (3.8M constraints).
func TestEndToEnd2KiB(t *testing.T) {
	if os.Getenv("SNARKD_E2E") != "1" {
		t.Skip("set SNARKD_E2E=1 (Groth16 setup of the 2KiB PoRep circuit)")
	}
	ctx := context.Background()
	phase1 := sealed2KiB(t)
	if v := os.Getenv("SNARKD_E2E_PROOF"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		p, err := prooftypes.Lookup(abi.RegisteredSealProof(n))
		if err != nil {
			t.Fatal(err)
		}
		out, err := sealer.RandomC1(ctx, p, 1000, 5, rand.NewChaCha8([32]byte{12}))
		if err != nil {
			t.Fatal(err)
		}
		if phase1, err = out.Encode(); err != nil {
			t.Fatal(err)
		}
	}
	c, err := NewCommit2(ctx, phase1, 5, 1000, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	pk, err := GenerateParams(ctx, c.Proof, []byte("snarkd e2e test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("setup: %v (%d h, %d l, %d a, %d b points)", time.Since(t0), len(pk.H), len(pk.L), len(pk.A), len(pk.BG1))
	if err := CheckParams(ctx, c.Proof, pk); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteParams(dir, c.Proof, pk); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{c.Proof.ParamsFile(), c.Proof.VKFile(), c.Proof.MetaFile()} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	t0 = time.Now()
	pa, err := c.Synthesize(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("synthesis: %v", time.Since(t0))
	r, s, err := groth16.RandomRS(nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	proof, err := groth16.ProveAssignment(ctx, pk, pa, &r, &s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prove: %v", time.Since(t0))
	inputs, err := c.PublicInputs(0)
	if err != nil {
		t.Fatal(err)
	}
	pvk, err := groth16.Prepare(&pk.VK)
	if err != nil {
		t.Fatal(err)
	}
	if err := pvk.Verify(proof, inputs); err != nil {
		t.Fatalf("proof does not verify: %v", err)
	}
	inputs[5].SetUint64(3)
	if err := pvk.Verify(proof, inputs); err == nil {
		t.Fatal("proof verifies with a wrong public input")
	}
	if got := len(groth16.MarshalProofs([]*groth16.Proof{proof})); got != c.Proof.ProofBytes() {
		t.Fatalf("%d proof bytes", got)
	}
}
