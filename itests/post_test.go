package itests

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/rpcapi"
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

// postSize is the sector size of the PoSt end-to-end test: 2KiB by default, or the size
// SNARKD_ITEST_POST names (8MiB: WinningPoSt of 230,670 constraints, WindowPoSt of 64,266, and
// Go-sealed 8MiB sectors); SNARKD_ITEST_POST=off skips it.
func postSize(t *testing.T) string {
	t.Helper()
	switch size := os.Getenv("SNARKD_ITEST_POST"); size {
	case "off":
		t.Skip("SNARKD_ITEST_POST=off")
	case "", "1":
		return "2KiB"
	default:
		return size
	}
	return ""
}

// postProofs returns the WinningPoSt and the current WindowPoSt proof types of a sector size.
func postProofs(t *testing.T, size string) (winning, window *post.Proof) {
	t.Helper()
	for _, p := range post.All() {
		switch p.Name {
		case "StackedDrgWinning" + size + "V1":
			winning = p
		case "StackedDrgWindow" + size + "V1_1":
			window = p
		}
	}
	if winning == nil || window == nil {
		t.Fatalf("no PoSt proof types for sector size %q", size)
	}
	return winning, window
}

// postInput seals sectors Go-sealed sectors of pt's size for miner and returns the vanilla
// proofs a storage node would serve for pt and the randomness derived from seed
// (cuzktest.PoStInput, for any sector size).
func postInput(t *testing.T, pt *post.Proof, miner abi.ActorID, sectors int, seed uint64) *cuzktest.PoSt {
	t.Helper()
	ctx := context.Background()
	sp, err := prooftypes.ForSectorSize(pt.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), 31: 0xc5})
	in := &cuzktest.PoSt{Proof: pt.Proof}
	_, _ = r.Read(in.Randomness[:])
	in.Randomness[31] &= 0x3f // a field element, as chain randomness is after reduction
	for i := 0; i < sectors; i++ {
		data, err := sealer.RandomData(r, sp.SectorSize)
		if err != nil {
			t.Fatal(err)
		}
		var ticket [32]byte
		_, _ = r.Read(ticket[:])
		num := uint64(i + 1)
		start := time.Now()
		s, err := sealer.Seal(ctx, sp, data, prooftypes.ProverID(miner), num, ticket)
		if err != nil {
			t.Fatalf("sealing sector %d: %v", num, err)
		}
		logTiming(t, fmt.Sprintf("seal %s sector %d (for %s)", sp.Name, num, pt.Name), time.Since(start))
		b, err := post.GenerateSectorVanilla(pt, num, s.TreeC.Root(), s.TreeR, pt.SectorChallenges(in.Randomness, num, i))
		if err != nil {
			t.Fatal(err)
		}
		in.Vanilla = append(in.Vanilla, b)
	}
	return in
}

// TestPoStEndToEnd: WinningPoSt and a WindowPoSt partition short of a sector (one sector where
// the circuit holds two), from Go-sealed sectors of the size SNARKD_ITEST_POST selects (2KiB by
// default), proved by the daemon with `snarkd params gen` parameters through the native API and
// the cuzk gRPC API; every proof verifies with the generated .vk, and a tampered vanilla proof
// is refused with an error naming it. Stage timings are logged as "TIMING …" lines.
func TestPoStEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("devnet PoSt setups and proofs in -short")
	}
	size := postSize(t)
	winP, wdP := postProofs(t, size)
	testStart := time.Now()
	bin := buildDaemon(t)
	dir := devnetParams(t, bin, winP.Name, wdP.Name)
	ctx := context.Background()
	const miner = 1000
	win := postInput(t, winP, miner, 1, 2)
	if wdP.SectorCount < 2 {
		t.Fatalf("%s holds %d sectors per partition; the short partition needs 2 or more", wdP.Name, wdP.SectorCount)
	}
	wd := postInput(t, wdP, miner, wdP.SectorCount-1, 3)
	d, c := startCuzkDaemon(t, []string{"FIL_PROOFS_PARAMETER_CACHE=" + dir}, nil)
	api := d.client(t, false)

	t.Run("native", func(t *testing.T) {
		start := time.Now()
		wp, err := api.GenerateWinningPoStWithVanilla(ctx, win.Proof, miner, win.Randomness[:], win.Vanilla)
		if err != nil {
			t.Fatal(err)
		}
		logTiming(t, winP.Name+" native (first: loads parameters)", time.Since(start))
		if len(wp) != 1 || wp[0].PoStProof != win.Proof {
			t.Fatalf("WinningPoSt answer %+v", wp)
		}
		verifyPoSt(t, dir, win, miner, 0, wp[0].ProofBytes)

		var pp proof.PoStProof
		start = time.Now()
		if pp, err = api.GenerateSinglePartitionWindowPoStWithVanilla(ctx, wd.Proof, miner, wd.Randomness[:], wd.Vanilla, 0); err != nil {
			t.Fatal(err)
		}
		logTiming(t, fmt.Sprintf("%s native (%d of %d sectors; first: loads parameters)", wdP.Name, len(wd.Vanilla), wdP.SectorCount), time.Since(start))
		verifyPoSt(t, dir, wd, miner, 0, pp.ProofBytes)

		// A WindowPoSt vanilla proof whose hashes do not add up (here its comm_c) passes
		// planning and is refused by the hashing that runs while the partition proves.
		badWd := append([][]byte(nil), wd.Vanilla...)
		badWd[0] = bytes.Clone(badWd[0])
		badWd[0][len(badWd[0])-40] ^= 1
		_, err = api.GenerateSinglePartitionWindowPoStWithVanilla(ctx, wd.Proof, miner, wd.Randomness[:], badWd, 0)
		if err == nil || !strings.Contains(err.Error(), "VanillaProofs") || !strings.Contains(err.Error(), "is not comm_r") {
			t.Fatalf("tampered WindowPoSt vanilla proof: %v", err)
		}
		t.Logf("tampered WindowPoSt vanilla proof refused: %v", err)

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
			{&pb.SubmitProofRequest{RequestId: "winpost-e2e", ProofKind: pb.ProofKind_WINNING_POST, SectorSize: winP.SectorSize, RegisteredProof: uint64(win.Proof),
				Priority: pb.Priority_CRITICAL, VanillaProofs: win.Vanilla, MinerId: miner, Randomness: win.Randomness[:]}, win},
			{&pb.SubmitProofRequest{RequestId: "wdpost-e2e", ProofKind: pb.ProofKind_WINDOW_POST_PARTITION, SectorSize: wdP.SectorSize, RegisteredProof: uint64(wd.Proof),
				Priority: pb.Priority_HIGH, VanillaProofs: wd.Vanilla, MinerId: miner, Randomness: wd.Randomness[:]}, wd},
		} {
			start := time.Now()
			res, err := c.Prove(ctx, &pb.ProveRequest{Submit: tc.req})
			if err != nil || res.Result.Status != pb.AwaitProofResponse_COMPLETED {
				t.Fatalf("%s: %v %v", tc.req.RequestId, res, err)
			}
			logTiming(t, fmt.Sprintf("%s cuzk %s", size, tc.req.RequestId), time.Since(start))
			verifyPoSt(t, dir, tc.in, miner, 0, res.Result.Proof)
		}
	})
	logJobTimings(t, api, rpcapi.KindWinningPoSt)
	logJobTimings(t, api, rpcapi.KindWindowPoSt)
	logTiming(t, "PoSt "+size+" end to end (params, sealing, proofs, verify)", time.Since(testStart))
}
