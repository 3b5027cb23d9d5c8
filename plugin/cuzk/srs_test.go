package cuzk

import (
	"context"
	"strings"
	"testing"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/filecoin-project/go-state-types/abi"
	"google.golang.org/grpc/codes"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/update"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestCircuitIDs: every cuzk circuit ID names exactly one parameter file, the one the
// pipeline loads for that kind and sector size, and reads back from its kind and size.
func TestCircuitIDs(t *testing.T) {
	win32, _ := post.Lookup(abi.RegisteredPoStProof_StackedDrgWinning32GiBV1)
	wd32, _ := post.Lookup(abi.RegisteredPoStProof_StackedDrgWindow32GiBV1_1)
	wd32v1, _ := post.Lookup(abi.RegisteredPoStProof_StackedDrgWindow32GiBV1)
	seal32, _ := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg32GiBV1_1)
	seal32v1, _ := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg32GiBV1)
	snap32, err := update.ForProof(abi.RegisteredUpdateProof_StackedDrg32GiBV1)
	if err != nil {
		t.Fatal(err)
	}
	// The reference's IDs, with the files rust-fil-proofs names for them. PoRep V1 and V1_1
	// and WindowPoSt V1 and V1_1 prove the same circuits.
	if seal32.ParamsFile() != seal32v1.ParamsFile() || wd32.ParamFile() != wd32v1.ParamFile() {
		t.Fatal("proof type versions no longer share parameters; revisit the circuit ID mapping")
	}
	cache := prover.NewParamCache("")
	for _, c := range []struct{ id, file string }{
		{"porep-32g", seal32.ParamsFile()},
		{"wpost-32g", wd32.ParamFile() + ".params"},
		{"winning-32g", win32.ParamFile() + ".params"},
		{"snap-32g", snap32.ParamFile() + ".params"},
	} {
		kind, size, ok := ParseCircuitID(c.id)
		if !ok || size != prooftypes.SectorSize32GiB {
			t.Fatalf("ParseCircuitID(%q) = %s, %d, %v", c.id, kind, size, ok)
		}
		if name, err := cache.ParamName(kind, size); err != nil || name != c.file {
			t.Errorf("%s names %q, %v; want %s", c.id, name, err, c.file)
		}
	}
	files := map[string]string{}
	for _, k := range []string{"porep", "snap", "wpost", "winning"} {
		for _, s := range []string{"2k", "8m", "512m", "32g", "64g"} {
			id := k + "-" + s
			kind, size, ok := ParseCircuitID(id)
			if !ok {
				t.Fatalf("ParseCircuitID(%q) refused", id)
			}
			if back, ok := CircuitID(kind, size); !ok || back != id {
				t.Errorf("CircuitID(%s, %d) = %q, %v; want %s", kind, size, back, ok, id)
			}
			name, err := cache.ParamName(kind, size)
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if other, dup := files[name]; dup {
				t.Errorf("%s and %s name the same parameters %s", id, other, name)
			}
			files[name] = id
		}
	}
	for _, id := range []string{"", "porep", "porep-32G", "porep-16g", "post-32g", "test-64-1", " porep-32g"} {
		if _, _, ok := ParseCircuitID(id); ok {
			t.Errorf("ParseCircuitID(%q) accepted", id)
		}
	}
	if _, ok := CircuitID(rpcapi.KindTest, 0); ok {
		t.Error("the test circuit has a cuzk ID")
	}
}

// writeFakeWinning2K puts parameters of the 2KiB WinningPoSt circuit's shape (not usable to
// prove) in dir and returns their in-memory size.
func writeFakeWinning2K(t *testing.T, dir string) uint64 {
	t.Helper()
	p, err := post.Lookup(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1)
	if err != nil {
		t.Fatal(err)
	}
	_, _, g1, g2 := bls.Generators()
	g1s := func(n int) []bls.G1Affine {
		out := make([]bls.G1Affine, n)
		for i := range out {
			out[i] = g1
		}
		return out
	}
	pk := &groth16.Parameters{
		VK: groth16.VerifyingKey{Alpha1: g1, Beta1: g1, Beta2: g2, Gamma2: g2, Delta1: g1, Delta2: g2, IC: g1s(p.PublicInputs())},
		H:  g1s(16), L: g1s(16), A: g1s(16), BG1: g1s(16), BG2: []bls.G2Affine{g2, g2, g2, g2, g2, g2, g2, g2, g2, g2, g2, g2, g2, g2, g2, g2},
	}
	if err := prover.WriteFilecoinParams(dir, p.ParamFile(), p.SectorSize, pk); err != nil {
		t.Fatal(err)
	}
	return uint64(pk.ParametersSize())
}

// TestSRS: PreloadSRS, EvictSRS and GetStatus's loaded_srs on the parameter cache, by cuzk's
// circuit IDs.
func TestSRS(t *testing.T) {
	dir := t.TempDir()
	size := writeFakeWinning2K(t, dir)
	h := newHarnessWith(t, config.Cuzk{}, dir)
	ctx := context.Background()
	status := func() []*pb.SRSStatus {
		t.Helper()
		st, err := h.client.GetStatus(ctx, &pb.GetStatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return st.LoadedSrs
	}
	if l := status(); len(l) != 0 {
		t.Fatalf("loaded_srs before any load: %v", l)
	}
	for _, c := range []struct {
		id   string
		code codes.Code
		msg  string
	}{
		{"porep-32g", codes.FailedPrecondition, "parameters for StackedDrg32GiBV1_1 not found"},
		{"wpost-2k", codes.FailedPrecondition, "snarkd params gen --proof StackedDrgWindow2KiBV1_1"},
		{"bogus", codes.InvalidArgument, `circuit_id "bogus": unknown; want porep, snap, wpost or winning`},
		{"", codes.InvalidArgument, `circuit_id "": unknown`},
		{"porep-16g", codes.InvalidArgument, "e.g. porep-32g"},
	} {
		_, err := h.client.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: c.id})
		wantCode(t, err, c.code, c.msg)
		if c.code == codes.InvalidArgument {
			_, err := h.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: c.id})
			wantCode(t, err, c.code, c.msg)
		}
	}

	pre, err := h.client.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "winning-2k"})
	if err != nil || pre.AlreadyLoaded {
		t.Fatalf("PreloadSRS winning-2k: %v %v", pre, err)
	}
	l := status()
	if len(l) != 1 || l[0].CircuitId != "winning-2k" || l[0].Tier != pb.SRSStatus_HOT || l[0].SizeBytes != size || l[0].RefCount != 0 {
		t.Fatalf("loaded_srs after PreloadSRS: %v; want winning-2k HOT of %d bytes", l, size)
	}
	pre, err = h.client.PreloadSRS(ctx, &pb.PreloadSrsRequest{CircuitId: "winning-2k"})
	if err != nil || !pre.AlreadyLoaded || pre.LoadTimeMs != 0 {
		t.Fatalf("second PreloadSRS: %v %v", pre, err)
	}

	// A proof in flight holds its parameters: ref_count counts it, and eviction leaves it its
	// copy.
	p, _ := post.Lookup(abi.RegisteredPoStProof_StackedDrgWinning2KiBV1)
	uctx, use := prover.WithUsage(ctx)
	held, err := h.params.PoSt(uctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if l := status(); len(l) != 1 || l[0].RefCount != 1 {
		t.Fatalf("loaded_srs with a proof holding the set: %v", l)
	}
	ev, err := h.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "winning-2k"})
	if err != nil || !ev.WasLoaded || ev.FreedBytes != size {
		t.Fatalf("EvictSRS: %v %v; want %d bytes", ev, err, size)
	}
	if len(held.PK.VK.IC) != p.PublicInputs() {
		t.Fatal("the held parameters changed")
	}
	use.Release()
	if l := status(); len(l) != 0 {
		t.Fatalf("loaded_srs after EvictSRS: %v", l)
	}
	ev, err = h.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "winning-2k"})
	if err != nil || ev.WasLoaded || ev.FreedBytes != 0 {
		t.Fatalf("second EvictSRS: %v %v", ev, err)
	}
	// The daemon's own name for a set (as loaded_srs shows it) works too.
	if _, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("t", testN, 4, pb.Priority_NORMAL)}); err != nil {
		t.Fatal(err)
	}
	l = status()
	if len(l) != 1 || l[0].CircuitId != "test-64-4" || l[0].SizeBytes == 0 {
		t.Fatalf("loaded_srs after a test proof: %v", l)
	}
	if ev, err := h.client.EvictSRS(ctx, &pb.EvictSrsRequest{CircuitId: "test-64-4"}); err != nil || !ev.WasLoaded || ev.FreedBytes != l[0].SizeBytes {
		t.Fatalf("EvictSRS test-64-4: %v %v", ev, err)
	}
}

// TestProofTimings: AwaitProof reports the time a proof waited for its parameters (none when
// they are in memory), and assigned_gpu names the GPUs that proved a finished job (empty for
// the CPU).
func TestProofTimings(t *testing.T) {
	h := newHarness(t, config.Cuzk{})
	ctx := context.Background()
	h.runner.mu.Lock()
	h.runner.gpus[6] = []int{1}
	h.runner.mu.Unlock()
	first, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("a", testN, 5, pb.Priority_NORMAL)})
	if err != nil || first.Result.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("Prove: %v %v", first, err)
	}
	if first.Result.SrsLoadMs == 0 {
		t.Error("srs_load_ms = 0 for a proof that generated its parameters")
	}
	second, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("b", testN, 5, pb.Priority_NORMAL)})
	if err != nil || second.Result.Status != pb.AwaitProofResponse_COMPLETED || second.Result.SrsLoadMs != 0 {
		t.Fatalf("Prove with parameters in memory: %v %v; want srs_load_ms 0", second, err)
	}
	sub, err := h.client.SubmitProof(ctx, testReq("b", testN, 5, pb.Priority_NORMAL))
	if err != nil || sub.JobId != second.Result.JobId || sub.AssignedGpu != "" {
		t.Fatalf("SubmitProof of a job the CPU proved: %v %v", sub, err)
	}
	gpu, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: testReq("g", testN, 6, pb.Priority_NORMAL)})
	if err != nil || gpu.Result.Status != pb.AwaitProofResponse_COMPLETED {
		t.Fatalf("Prove: %v %v", gpu, err)
	}
	sub, err = h.client.SubmitProof(ctx, testReq("g", testN, 6, pb.Priority_NORMAL))
	if err != nil || sub.AssignedGpu != "1" {
		t.Fatalf("SubmitProof of a job GPU 1 proved: %v %v", sub, err)
	}
	if got := AssignedGPU([]int{0, 2}); got != "0,2" {
		t.Errorf("AssignedGPU = %q", got)
	}
}

// TestRetryAfterFailure: Curio retries a failed proof with the same request ID; once the cause
// is fixed (here: the parameters put in place), the retry is proved instead of answering the
// old failure.
func TestRetryAfterFailure(t *testing.T) {
	dir := t.TempDir()
	h := newHarnessWith(t, config.Cuzk{}, dir)
	ctx := context.Background()
	in, err := cuzktest.PoStInput(ctx, abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, 1000, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	req := &pb.SubmitProofRequest{
		RequestId: "winpost-1000-0102030405060708", ProofKind: pb.ProofKind_WINNING_POST, Priority: pb.Priority_CRITICAL,
		RegisteredProof: uint64(in.Proof), SectorSize: prooftypes.SectorSize2KiB, MinerId: 1000,
		Randomness: in.Randomness[:], VanillaProofs: in.Vanilla,
	}
	res, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: req})
	if err != nil || res.Result.Status != pb.AwaitProofResponse_FAILED || !strings.Contains(res.Result.ErrorMessage, "not found") {
		t.Fatalf("Prove without parameters: %v %v; want FAILED for missing parameters", res, err)
	}
	failed := res.Result.JobId
	writeFakeWinning2K(t, dir)
	res, err = h.client.Prove(ctx, &pb.ProveRequest{Submit: req})
	if err != nil {
		t.Fatal(err)
	}
	if res.Result.JobId == failed {
		t.Fatalf("the retry answered the old failed job: %v", res.Result)
	}
	// The fake parameters cannot prove: the retry ran and failed on its own account.
	if res.Result.Status != pb.AwaitProofResponse_FAILED || strings.Contains(res.Result.ErrorMessage, "not found") {
		t.Fatalf("retry: %v", res.Result)
	}
	old, err := h.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: failed})
	if err != nil || old.Status != pb.AwaitProofResponse_FAILED {
		t.Fatalf("the failed job by its ID: %v %v", old, err)
	}
}
