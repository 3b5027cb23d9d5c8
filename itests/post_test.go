package itests

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/snarkd/snarkd/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/groth16"
)

// verifyPoSt checks a PoSt proof with the .vk `params gen` wrote and the public inputs a
// verifier computes from the vanilla proofs, independently of the daemon.
func verifyPoSt(t *testing.T, dir string, in *cuzktest.PoSt, miner abi.ActorID, partition int, b []byte) {
	t.Helper()
	p, err := post.Lookup(in.Proof)
	if err != nil {
		t.Fatal(err)
	}
	var part *post.Partition
	if p.Kind == post.Winning {
		part, err = post.WinningPartition(p, in.Randomness, prooftypes.ProverID(miner), in.Vanilla)
	} else {
		part, err = post.WindowPartition(p, in.Randomness, prooftypes.ProverID(miner), in.Vanilla, partition)
	}
	if err != nil {
		t.Fatal(err)
	}
	vk, err := groth16.OpenVerifyingKey(filepath.Join(dir, p.ParamFile()+".vk"), groth16.CheckSubgroup)
	if err != nil {
		t.Fatal(err)
	}
	proofs, err := groth16.ParseProofs(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(vk, proofs[0], part.Inputs); err != nil {
		t.Fatalf("%s proof does not verify with its .vk: %v", p.Name, err)
	}
}

// TestPoSt2KiBEndToEnd: WinningPoSt and a WindowPoSt partition short of a sector, from
// Go-sealed 2KiB sectors, proved by the daemon with `snarkd params gen` parameters through the
// native API and the cuzk gRPC API; every proof verifies with the generated .vk, and a tampered
// vanilla proof is refused with an error naming it.
func TestPoSt2KiBEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("devnet PoSt setups and proofs in -short")
	}
	bin := buildDaemon(t)
	dir := t.TempDir()
	for _, name := range []string{"StackedDrgWinning2KiBV1", "StackedDrgWindow2KiBV1_1"} {
		if out, err := exec.Command(bin, "params", "gen", "--proof", name, "--dir", dir).CombinedOutput(); err != nil {
			t.Fatalf("params gen %s: %v\n%s", name, err, out)
		}
	}
	ctx := context.Background()
	const miner = 1000
	win, err := cuzktest.PoStInput(ctx, abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, miner, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := cuzktest.PoStInput(ctx, abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, miner, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	d, c := startCuzkDaemon(t, []string{"FIL_PROOFS_PARAMETER_CACHE=" + dir}, nil)
	api := d.client(t, false)

	t.Run("native", func(t *testing.T) {
		wp, err := api.GenerateWinningPoStWithVanilla(ctx, win.Proof, miner, win.Randomness[:], win.Vanilla)
		if err != nil {
			t.Fatal(err)
		}
		if len(wp) != 1 || wp[0].PoStProof != win.Proof {
			t.Fatalf("WinningPoSt answer %+v", wp)
		}
		verifyPoSt(t, dir, win, miner, 0, wp[0].ProofBytes)

		var pp proof.PoStProof
		if pp, err = api.GenerateSinglePartitionWindowPoStWithVanilla(ctx, wd.Proof, miner, wd.Randomness[:], wd.Vanilla, 0); err != nil {
			t.Fatal(err)
		}
		verifyPoSt(t, dir, wd, miner, 0, pp.ProofBytes)

		bad := bytes.Clone(win.Vanilla[0])
		bad[len(bad)-40] ^= 1
		_, err = api.GenerateWinningPoStWithVanilla(ctx, win.Proof, miner, win.Randomness[:], [][]byte{bad})
		if err == nil || !strings.Contains(err.Error(), "VanillaProofs") {
			t.Fatalf("tampered vanilla proof: %v", err)
		}
		t.Logf("tampered vanilla proof refused: %v", err)
	})

	t.Run("cuzk", func(t *testing.T) {
		for _, tc := range []struct {
			req *pb.SubmitProofRequest
			in  *cuzktest.PoSt
		}{
			{&pb.SubmitProofRequest{RequestId: "winpost-e2e", ProofKind: pb.ProofKind_WINNING_POST, SectorSize: 2048, RegisteredProof: uint64(win.Proof),
				Priority: pb.Priority_CRITICAL, VanillaProofs: win.Vanilla, MinerId: miner, Randomness: win.Randomness[:]}, win},
			{&pb.SubmitProofRequest{RequestId: "wdpost-e2e", ProofKind: pb.ProofKind_WINDOW_POST_PARTITION, SectorSize: 2048, RegisteredProof: uint64(wd.Proof),
				Priority: pb.Priority_HIGH, VanillaProofs: wd.Vanilla, MinerId: miner, Randomness: wd.Randomness[:]}, wd},
		} {
			res, err := c.Prove(ctx, &pb.ProveRequest{Submit: tc.req})
			if err != nil || res.Result.Status != pb.AwaitProofResponse_COMPLETED {
				t.Fatalf("%s: %v %v", tc.req.RequestId, res, err)
			}
			verifyPoSt(t, dir, tc.in, miner, 0, res.Result.Proof)
		}
	})
}
