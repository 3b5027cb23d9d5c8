package itests

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
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
	"github.com/snarkd/snarkd/rpcapi"
)

// snapUpdate encodes new data into a Go-sealed 2KiB sector key of miner and returns the
// encoded update with one vanilla proof per partition.
func snapUpdate(t *testing.T, miner abi.ActorID, sector uint64) (*update.Encoded, [][]byte) {
	t.Helper()
	ctx := context.Background()
	sp, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.NewChaCha8([32]byte{byte(sector)})
	data, err := sealer.RandomData(r, sp.SectorSize)
	if err != nil {
		t.Fatal(err)
	}
	key, err := sealer.Seal(ctx, sp, data, prooftypes.ProverID(miner), sector, [32]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := update.ForProof(abi.RegisteredUpdateProof_StackedDrg2KiBV1)
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

// TestSnapDeals2KiBEndToEnd: a SnapDeals update of a Go-sealed 2KiB sector key proved by the
// daemon with `snarkd params gen` parameters through the native API
// (GenerateUpdateProofWithVanilla) and the Lotus worker path (ProveReplicaUpdate2 →
// ReturnProveReplicaUpdate2); both proofs verify with the generated .vk, and a tampered vanilla
// proof is refused. The 2KiB circuit has 1.7M constraints, so its devnet setup takes many
// core-minutes: the test runs only with SNARKD_ITEST_SNAP set.
func TestSnapDeals2KiBEndToEnd(t *testing.T) {
	if os.Getenv("SNARKD_ITEST_SNAP") == "" {
		t.Skip("set SNARKD_ITEST_SNAP=1: the devnet setup of the 1.7M-constraint SnapDeals 2KiB circuit takes minutes")
	}
	bin := buildDaemon(t)
	dir := t.TempDir()
	if out, err := exec.Command(bin, "params", "gen", "--proof", "UpdateStackedDrg2KiBV1", "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("params gen: %v\n%s", err, out)
	}
	const miner = 1000
	e, vanilla := snapUpdate(t, miner, 4)
	oldSealed, newSealed, newUnsealed, err := e.CIDs()
	if err != nil {
		t.Fatal(err)
	}
	m := newStandIn(t, 500*time.Millisecond)
	d := startDaemon(t, bin, t.TempDir(), append([]string{"FIL_PROOFS_PARAMETER_CACHE=" + dir}, lotusEnv...), "--miner-api-info", m.apiInfo())
	api := d.client(t, false)
	ctx := context.Background()

	t.Run("native", func(t *testing.T) {
		b, err := api.GenerateUpdateProofWithVanilla(ctx, abi.RegisteredUpdateProof_StackedDrg2KiBV1, oldSealed, newSealed, newUnsealed, vanilla)
		if err != nil {
			t.Fatal(err)
		}
		verifySnap(t, dir, e, vanilla, b)
		bad := [][]byte{bytes.Clone(vanilla[0])}
		bad[0][len(bad[0])-40] ^= 1
		_, err = api.GenerateUpdateProofWithVanilla(ctx, abi.RegisteredUpdateProof_StackedDrg2KiBV1, oldSealed, newSealed, newUnsealed, bad)
		if err == nil || !strings.Contains(err.Error(), "VanillaProofs: partition 0") {
			t.Fatalf("tampered vanilla proof: %v", err)
		}
	})

	t.Run("Lotus ProveReplicaUpdate2", func(t *testing.T) {
		waitFor(t, "WorkerConnect", func() bool { _, ok := m.worker(); return ok })
		w, _ := m.worker()
		call, err := w.API.ProveReplicaUpdate2(ctx, rpcapi.SectorRef{ID: abi.SectorID{Miner: miner, Number: 4}, ProofType: abi.RegisteredSealProof_StackedDrg2KiBV1_1},
			oldSealed, newSealed, newUnsealed, vanilla)
		if err != nil {
			t.Fatal(err)
		}
		ret := <-m.retCh
		if ret.Method != "Filecoin.ReturnProveReplicaUpdate2" || ret.CallID != call || ret.Err != nil {
			t.Fatalf("return %s for %v: err %+v (call %v)", ret.Method, ret.CallID, ret.Err, call)
		}
		verifySnap(t, dir, e, vanilla, ret.Proof)
	})
}
