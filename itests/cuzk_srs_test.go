package itests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
	"google.golang.org/grpc/codes"

	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
)

// TestCuzkSRS is the parameter life cycle Curio sees through the daemon: a WinningPoSt that
// fails for missing parameters, the same request ID retried once `snarkd params gen` has put
// them in place (proved this time), PreloadSRS loading them ahead of the proof (which then
// reports no SRS load), GetStatus listing them as winning-2k with their real size, EvictSRS
// dropping them, and the next proof loading them again.
func TestCuzkSRS(t *testing.T) {
	if testing.Short() {
		t.Skip("a devnet WinningPoSt setup in -short")
	}
	bin := buildDaemon(t)
	dir := t.TempDir()
	ctx := context.Background()
	const miner = 1000
	in, err := cuzktest.PoStInput(ctx, abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, miner, 1, 11)
	if err != nil {
		t.Fatal(err)
	}
	p, err := post.Lookup(in.Proof)
	if err != nil {
		t.Fatal(err)
	}
	req := func(id string) *pb.SubmitProofRequest {
		return &pb.SubmitProofRequest{RequestId: id, ProofKind: pb.ProofKind_WINNING_POST, SectorSize: p.SectorSize,
			RegisteredProof: uint64(in.Proof), Priority: pb.Priority_CRITICAL, VanillaProofs: in.Vanilla, MinerId: miner,
			Randomness: in.Randomness[:]}
	}
	_, c := startCuzkDaemon(t, []string{"FIL_PROOFS_PARAMETER_CACHE=" + dir}, nil)
	loaded := func() []*pb.SRSStatus {
		t.Helper()
		st, err := c.GetStatus(ctx, &pb.GetStatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return st.LoadedSrs
	}

	// Without parameters: the proof fails, PreloadSRS says what is missing.
	const id = "winpost-1000-0b0b0b0b0b0b0b0b"
	res, err := c.Prove(ctx, &pb.ProveRequest{Submit: req(id)})
	if err != nil || res.Result.Status != pb.AwaitProofResponse_FAILED || !strings.Contains(res.Result.ErrorMessage, "not found") {
		t.Fatalf("Prove without parameters: %v %v", res, err)
	}
	failedJob := res.Result.JobId
	_, err = c.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "winning-2k"})
	wantStatus(t, err, codes.FailedPrecondition, "parameters for StackedDrgWinning2KiBV1 not found")
	_, err = c.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "winning-3k"})
	wantStatus(t, err, codes.InvalidArgument, `circuit_id "winning-3k": unknown`)
	_, err = c.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "bogus"})
	wantStatus(t, err, codes.InvalidArgument, `circuit_id "bogus": unknown`)

	if out, err := exec.Command(bin, "params", "gen", "--proof", p.Name, "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("params gen %s: %v\n%s", p.Name, err, out)
	}
	fi, err := os.Stat(filepath.Join(dir, p.ParamFile()+".params"))
	if err != nil {
		t.Fatal(err)
	}
	size := uint64(fi.Size())

	if l := loaded(); len(l) != 0 {
		t.Fatalf("loaded_srs before any load: %v", l)
	}
	pre, err := c.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "winning-2k"})
	if err != nil || pre.AlreadyLoaded || pre.LoadTimeMs == 0 {
		t.Fatalf("PreloadSRS: %v %v; want a load", pre, err)
	}
	t.Logf("PreloadSRS winning-2k: %d ms for %d bytes", pre.LoadTimeMs, size)
	if l := loaded(); len(l) != 1 || l[0].CircuitId != "winning-2k" || l[0].Tier != pb.SRSStatus_HOT || l[0].SizeBytes != size || l[0].RefCount != 0 {
		t.Fatalf("loaded_srs after PreloadSRS: %v; want winning-2k HOT of %d bytes", l, size)
	}
	if pre, err := c.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "winning-2k"}); err != nil || !pre.AlreadyLoaded {
		t.Fatalf("second PreloadSRS: %v %v", pre, err)
	}

	// Curio retries the failed request with the same ID: it is proved now, with the parameters
	// already in memory.
	res, err = c.Prove(ctx, &pb.ProveRequest{Submit: req(id)})
	if err != nil || res.Result.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("retry after the parameters arrived: %v %v", res, err)
	}
	if res.Result.JobId == failedJob || res.Result.SrsLoadMs != 0 {
		t.Fatalf("retry: job %s (failed one %s), srs_load_ms %d; want a new job with no load", res.Result.JobId, failedJob, res.Result.SrsLoadMs)
	}
	verifyPoSt(t, dir, in, miner, 0, res.Result.Proof)
	// The same ID again is that finished job; the CPU proved it, so no GPU is named.
	sub, err := c.SubmitProof(ctx, req(id))
	if err != nil || sub.JobId != res.Result.JobId || sub.AssignedGpu != "" {
		t.Fatalf("SubmitProof of the proved request: %v %v", sub, err)
	}

	// The circuit's compiled R1CS is recorded in the background after its first proof and kept
	// with its parameters, counted in their size; eviction frees both.
	withCompiled := size
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if l := loaded(); len(l) == 1 && l[0].SizeBytes > size {
			withCompiled = l[0].SizeBytes
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("loaded_srs: %v; want the compiled circuit counted in winning-2k's size", loaded())
		}
	}
	ev, err := c.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "winning-2k"})
	if err != nil || !ev.WasLoaded || ev.FreedBytes != withCompiled {
		t.Fatalf("EvictSRS: %v %v; want %d bytes freed (parameters %d and the compiled circuit)", ev, err, withCompiled, size)
	}
	if l := loaded(); len(l) != 0 {
		t.Fatalf("loaded_srs after EvictSRS: %v", l)
	}
	if ev, err := c.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "winning-2k"}); err != nil || ev.WasLoaded || ev.FreedBytes != 0 {
		t.Fatalf("second EvictSRS: %v %v", ev, err)
	}
	res, err = c.Prove(ctx, &pb.ProveRequest{Submit: req("winpost-1000-0c0c0c0c0c0c0c0c")})
	if err != nil || res.Result.Status != pb.AwaitProofResponse_COMPLETED || res.Result.SrsLoadMs == 0 {
		t.Fatalf("Prove after EvictSRS: %v %v; want a proof that paid the load", res.GetResult().GetStatus(), err)
	}
	verifyPoSt(t, dir, in, miner, 0, res.Result.Proof)
	// The stored compiled circuit is read back in the background: with or without it yet.
	if l := loaded(); len(l) != 1 || l[0].CircuitId != "winning-2k" || (l[0].SizeBytes != size && l[0].SizeBytes != withCompiled) {
		t.Fatalf("loaded_srs after the reload: %v; want %d or %d bytes", l, size, withCompiled)
	}
}
