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

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/filecoin/update"
	"github.com/snarkd/snarkd/groth16"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/rpcapi"
)

// snapUpdate encodes new data into a Go-sealed sector key of sp's size for miner and returns
// the encoded update with one vanilla proof per partition.
func snapUpdate(t *testing.T, sp *prooftypes.SealProof, miner abi.ActorID, sector uint64) (*update.Encoded, [][]byte) {
	t.Helper()
	ctx := context.Background()
	r := rand.NewChaCha8([32]byte{byte(sector)})
	data, err := sealer.RandomData(r, sp.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	key, err := sealer.Seal(ctx, sp, data, prooftypes.ProverID(miner), sector, [32]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	logTiming(t, "seal sector key "+sp.Name, time.Since(start))
	ps, err := update.FromSectorSize(sp.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sealer.RandomData(r, sp.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	nodes := make([]c1.Domain, ps.SectorNodes)
	for i := range nodes {
		copy(nodes[i][:], raw[32*i:])
	}
	start = time.Now()
	e, err := update.Encode(ctx, ps, ps.HDefault(), key.TreeC.Root(), key.TreeR, nodes)
	if err != nil {
		t.Fatal(err)
	}
	var vanilla [][]byte
	for k := 0; k < ps.PartitionCount; k++ {
		b, err := e.PartitionProof(k)
		if err != nil {
			t.Fatal(err)
		}
		vanilla = append(vanilla, b)
	}
	logTiming(t, fmt.Sprintf("encode update + %d vanilla proofs", len(vanilla)), time.Since(start))
	return e, vanilla
}

// verifySnap checks an update proof with the .vk `params gen` wrote and the verifier's public
// inputs.
func verifySnap(t *testing.T, dir string, e *update.Encoded, vanilla [][]byte, b []byte) {
	t.Helper()
	ps := e.Params
	vk, err := groth16.OpenVerifyingKey(filepath.Join(dir, ps.ParamFile()+".vk"), groth16.CheckSubgroup)
	if err != nil {
		t.Fatal(err)
	}
	proofs, err := groth16.ParseProofs(b, ps.PartitionCount)
	if err != nil {
		t.Fatal(err)
	}
	for k, pr := range proofs {
		_, inputs, err := ps.Partition(vanilla[k], e.Inputs(k))
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(vk, pr, inputs); err != nil {
			t.Fatalf("partition %d does not verify with its .vk: %v", k, err)
		}
	}
}

// snapSealProof is the seal proof type whose sector the SnapDeals end-to-end test updates:
// SNARKD_ITEST_SNAP=1 (or 2KiB) for 2KiB, whose update circuit has 1.7M constraints, so its
// devnet setup takes many core-minutes; SNARKD_ITEST_SNAP=8MiB for 8MiB (4 partitions of 10.0M
// constraints: a GPU host's job). Unset, the test is skipped.
func snapSealProof(t *testing.T) *prooftypes.SealProof {
	t.Helper()
	size := os.Getenv("SNARKD_ITEST_SNAP")
	switch size {
	case "", "off":
		t.Skip("set SNARKD_ITEST_SNAP=1 (2KiB) or 8MiB: the devnet setup of the 1.7M-constraint SnapDeals 2KiB circuit takes minutes")
	case "1":
		size = "2KiB"
	}
	sp, err := prooftypes.LookupName("StackedDrg" + size + "V1_1")
	if err != nil {
		t.Fatalf("SNARKD_ITEST_SNAP=%s: %v", size, err)
	}
	return sp
}

// TestSnapDealsEndToEnd: a SnapDeals update of a Go-sealed sector key (size from
// SNARKD_ITEST_SNAP) proved by the daemon with `snarkd params gen` parameters through the native
// API (GenerateUpdateProofWithVanilla), the Lotus worker path (ProveReplicaUpdate2 →
// ReturnProveReplicaUpdate2) and the cuzk gRPC service with Curio's request (once through
// Prove, once through SubmitProof + AwaitProof); one daemon serves all three, every proof
// verifies with the generated .vk, and a tampered vanilla proof is refused. Stage timings are
// logged as "TIMING …" lines.
func TestSnapDealsEndToEnd(t *testing.T) {
	sp := snapSealProof(t)
	size := prooftypes.SectorSizeLabel(sp.SectorSize)
	upName := "UpdateStackedDrg" + size + "V1"
	var up abi.RegisteredUpdateProof
	for p := abi.RegisteredUpdateProof_StackedDrg2KiBV1; p <= abi.RegisteredUpdateProof_StackedDrg64GiBV1; p++ {
		if ps, err := update.ForProof(p); err == nil && ps.SectorSize() == sp.SectorSize {
			up = p
		}
	}
	testStart := time.Now()
	bin := buildDaemon(t)
	dir := devnetParams(t, bin, upName)
	const miner, sector = 1000, 4
	e, vanilla := snapUpdate(t, sp, miner, sector)
	oldSealed, newSealed, newUnsealed, err := e.CIDs()
	if err != nil {
		t.Fatal(err)
	}
	m := newStandIn(t, 500*time.Millisecond)
	repo := t.TempDir()
	d := startDaemon(t, bin, repo, append([]string{"FIL_PROOFS_PARAMETER_CACHE=" + dir}, lotusEnv...),
		"--miner-api-info", m.apiInfo(), "--cuzk-listen", cuzkTarget(repo))
	api := d.client(t, false)
	c, err := dialCuzk(t, d)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	t.Run("native", func(t *testing.T) {
		start := time.Now()
		b, err := api.GenerateUpdateProofWithVanilla(ctx, up, oldSealed, newSealed, newUnsealed, vanilla)
		if err != nil {
			t.Fatal(err)
		}
		logTiming(t, upName+" native GenerateUpdateProofWithVanilla (loads parameters)", time.Since(start))
		verifySnap(t, dir, e, vanilla, b)
		bad := [][]byte{bytes.Clone(vanilla[0])}
		bad[0][len(bad[0])-40] ^= 1
		bad = append(bad, vanilla[1:]...)
		_, err = api.GenerateUpdateProofWithVanilla(ctx, up, oldSealed, newSealed, newUnsealed, bad)
		if err == nil || !strings.Contains(err.Error(), "VanillaProofs: partition 0") {
			t.Fatalf("tampered vanilla proof: %v", err)
		}
	})

	t.Run("Lotus ProveReplicaUpdate2", func(t *testing.T) {
		waitFor(t, "WorkerConnect", func() bool { _, ok := m.worker(); return ok })
		w, _ := m.worker()
		start := time.Now()
		call, err := w.API.ProveReplicaUpdate2(ctx, rpcapi.SectorRef{ID: abi.SectorID{Miner: miner, Number: sector}, ProofType: sp.Proof},
			oldSealed, newSealed, newUnsealed, vanilla)
		if err != nil {
			t.Fatal(err)
		}
		ret := <-m.retCh
		if ret.Method != "Filecoin.ReturnProveReplicaUpdate2" || ret.CallID != call || ret.Err != nil {
			t.Fatalf("return %s for %v: err %+v (call %v)", ret.Method, ret.CallID, ret.Err, call)
		}
		logTiming(t, upName+" Lotus ProveReplicaUpdate2 to ReturnProveReplicaUpdate2", time.Since(start))
		verifySnap(t, dir, e, vanilla, ret.Proof)
	})

	t.Run("cuzk", func(t *testing.T) {
		// Curio's UpdateProve task with cuzk enabled: SNAP_DEALS_UPDATE at NORMAL priority, request ID
		// snap-<miner>-<sector>, the update proof type, one bincode PartitionProof per partition and
		// the raw 32-byte commitments behind the CIDs.
		req := func(id string) *pb.SubmitProofRequest {
			return &pb.SubmitProofRequest{RequestId: id, ProofKind: pb.ProofKind_SNAP_DEALS_UPDATE, SectorSize: uint64(sp.SectorSize),
				RegisteredProof: uint64(up), Priority: pb.Priority_NORMAL, VanillaProofs: vanilla, SectorNumber: sector, MinerId: miner,
				CommROld: bytes.Clone(e.CommROld[:]), CommRNew: bytes.Clone(e.CommRNew[:]), CommDNew: bytes.Clone(e.CommDNew[:])}
		}
		verifySnap(t, dir, e, vanilla, cuzkProve(t, c, upName, req(fmt.Sprintf("snap-%d-%d", miner, sector))))
		// The same update under another request ID (Curio's ProofShare tasks add their task ID)
		// is another job.
		verifySnap(t, dir, e, vanilla, cuzkSubmitAwait(t, c, upName, req(fmt.Sprintf("snap-%d-%d-task-2", miner, sector))))
	})
	logJobTimings(t, api, rpcapi.KindSnapProve)
	logTiming(t, "SnapDeals "+size+" end to end (params, sealing, encoding, all four proofs, verify)", time.Since(testStart))
}
