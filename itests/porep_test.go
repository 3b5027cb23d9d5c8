package itests

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/snarkd/snarkd/filecoin/seal"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/groth16"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/rpcapi"
)

// sealedC1 seals a random sector of p's size in Go (as lotus-miner's C1 would produce) and
// returns its C1 output.
func sealedC1(t *testing.T, p *prooftypes.SealProof, miner abi.ActorID, sector abi.SectorNumber, seed byte) *c1.Output {
	t.Helper()
	start := time.Now()
	o, err := sealer.RandomC1(context.Background(), p, miner, sector, rand.NewChaCha8([32]byte{seed}))
	if err != nil {
		t.Fatal(err)
	}
	logTiming(t, fmt.Sprintf("seal+C1 %s sector %d", p.Name, sector), time.Since(start))
	return o
}

func encodeC1(t *testing.T, o *c1.Output) []byte {
	t.Helper()
	b, err := o.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verifyPoRep checks a C2 proof independently of the daemon: the .vk file `params gen` wrote,
// and the public inputs rust-fil-proofs' get_seal_inputs computes from the C1 output.
func verifyPoRep(t *testing.T, dir string, p *prooftypes.SealProof, phase1 []byte, miner abi.ActorID, sector abi.SectorNumber, proof []byte) {
	t.Helper()
	if len(proof) != p.ProofBytes() {
		t.Fatalf("proof of %d bytes, want %d", len(proof), p.ProofBytes())
	}
	vk, err := groth16.OpenVerifyingKey(filepath.Join(dir, p.VKFile()), groth16.CheckSubgroup)
	if err != nil {
		t.Fatal(err)
	}
	c, err := seal.NewCommit2(context.Background(), phase1, sector, miner, seal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	proofs, err := groth16.ParseProofs(proof, c.Partitions())
	if err != nil {
		t.Fatal(err)
	}
	for k, pr := range proofs {
		inputs, err := c.PublicInputs(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(vk, pr, inputs); err != nil {
			t.Fatalf("partition %d does not verify with %s: %v", k, p.VKFile(), err)
		}
		// The same proof must not verify for another sector's inputs.
		inputs[1].SetUint64(12345)
		if err := groth16.Verify(vk, pr, inputs); err == nil {
			t.Fatalf("partition %d verifies with a wrong comm_r input", k)
		}
	}
}

// porepProofType is the proof type of the end-to-end test: 2KiB by default, which needs a
// devnet setup of 2.7M constraints (about 2 minutes on 2 cores with the fixed-base setup), or the
// proof type named by SNARKD_ITEST_POREP (e.g. StackedDrg8MiBV1_1: a 3.8M-constraint setup and
// proof; a sector size such as 8MiB names its V1_1 type); SNARKD_ITEST_POREP=off skips it.
func porepProofType(t *testing.T) *prooftypes.SealProof {
	t.Helper()
	name := os.Getenv("SNARKD_ITEST_POREP")
	switch name {
	case "off":
		t.Skip("SNARKD_ITEST_POREP=off")
	case "", "1":
		name = "StackedDrg2KiBV1_1"
	}
	p, err := prooftypes.LookupName(name)
	if err != nil {
		if p, err = prooftypes.LookupName("StackedDrg" + name + "V1_1"); err != nil {
			t.Fatalf("SNARKD_ITEST_POREP=%s: %v", name, err)
		}
	}
	return p
}

// TestPoRepC2EndToEnd: a Go-sealed sector's C1 output proved by the daemon with devnet
// parameters from `snarkd params gen`, through the native API (SealCommitPhase2), through the
// Lotus worker path (SealCommit2 → ReturnSealCommit2 to the miner stand-in) and through the
// cuzk gRPC service as Curio sends it (Commit2In; Prove, then SubmitProof + AwaitProof); every
// proof verifies with the generated .vk and get_seal_inputs' public inputs. One daemon serves
// all of them, so the parameters are loaded once (the first C2's time includes loading them).
// Stage timings are logged as "TIMING …" lines.
func TestPoRepC2EndToEnd(t *testing.T) {
	p := porepProofType(t)
	testStart := time.Now()
	bin := buildDaemon(t)
	dir := devnetParams(t, bin, p.Name)
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

	t.Run("native SealCommitPhase2", func(t *testing.T) {
		const miner, sector = 1000, 11
		phase1 := encodeC1(t, sealedC1(t, p, miner, sector, 1))
		start := time.Now()
		proof, err := api.SealCommitPhase2(ctx, phase1, sector, miner)
		if err != nil {
			t.Fatal(err)
		}
		logTiming(t, "C2 "+p.Name+" native SealCommitPhase2", time.Since(start))
		verifyPoRep(t, dir, p, phase1, miner, sector, proof)
	})

	t.Run("Lotus SealCommit2", func(t *testing.T) {
		waitFor(t, "WorkerConnect", func() bool { _, ok := m.worker(); return ok })
		w, _ := m.worker()
		const miner, sector = 1000, 12
		phase1 := encodeC1(t, sealedC1(t, p, miner, sector, 2))
		start := time.Now()
		call, err := w.API.SealCommit2(ctx, rpcapi.SectorRef{ID: abi.SectorID{Miner: miner, Number: sector}, ProofType: p.Proof}, phase1)
		if err != nil {
			t.Fatal(err)
		}
		// No deadline of our own: proving speed is not under test here (go test -timeout is).
		ret := <-m.retCh
		if ret.Method != "Filecoin.ReturnSealCommit2" || ret.CallID != call || ret.Err != nil {
			t.Fatalf("return %s for %v: err %+v (call %v)", ret.Method, ret.CallID, ret.Err, call)
		}
		logTiming(t, "C2 "+p.Name+" Lotus SealCommit2 to ReturnSealCommit2", time.Since(start))
		verifyPoRep(t, dir, p, phase1, miner, sector, ret.Proof)
	})

	t.Run("cuzk", func(t *testing.T) {
		// Curio's PoRep task with cuzk enabled: POREP_SEAL_COMMIT at NORMAL priority, request ID
		// porep-<miner>-<sector>, the C1 output in its Commit2In envelope, once through Prove and
		// once (another sector) through SubmitProof + AwaitProof.
		const miner = 1000
		for i, send := range []func(*testing.T, pb.ProvingEngineClient, string, *pb.SubmitProofRequest) []byte{cuzkProve, cuzkSubmitAwait} {
			sector := abi.SectorNumber(13 + i)
			phase1 := encodeC1(t, sealedC1(t, p, miner, sector, byte(4+i)))
			in, err := json.Marshal(c1.Commit2In{SectorNum: int64(sector), Phase1Out: phase1, SectorSize: uint64(p.SectorSize)})
			if err != nil {
				t.Fatal(err)
			}
			proof := send(t, c, "C2 "+p.Name, &pb.SubmitProofRequest{RequestId: fmt.Sprintf("porep-%d-%d", miner, sector),
				ProofKind: pb.ProofKind_POREP_SEAL_COMMIT, SectorSize: uint64(p.SectorSize), RegisteredProof: uint64(p.Proof),
				Priority: pb.Priority_NORMAL, VanillaProof: in, SectorNumber: uint64(sector), MinerId: miner})
			verifyPoRep(t, dir, p, phase1, miner, sector, proof)
		}
	})

	st, err := api.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var loaded bool
	for _, ps := range st.Params {
		loaded = loaded || (ps.Circuit == p.ParamsFile() && ps.Loaded)
	}
	if !loaded {
		t.Errorf("Status does not list %s as loaded: %+v", p.ParamsFile(), st.Params)
	}
	logJobTimings(t, api, rpcapi.KindPoRepC2)
	logTiming(t, "PoRep "+p.Name+" end to end (params, seal, all four C2s, verify)", time.Since(testStart))
}

// TestPoRepC2Refused: C1 outputs that cannot yield a valid proof are refused with an error
// naming the inconsistency, through both APIs, and no proof comes back; a missing parameter
// file is named with its path and the `snarkd params gen` hint. None of this needs parameters
// (the C1 output is checked first), so it runs quickly.
func TestPoRepC2Refused(t *testing.T) {
	bin := buildDaemon(t)
	p, err := prooftypes.LookupName("StackedDrg2KiBV1_1")
	if err != nil {
		t.Fatal(err)
	}
	paramDir := t.TempDir()
	m := newStandIn(t, 500*time.Millisecond)
	d := startDaemon(t, bin, t.TempDir(), append([]string{"FIL_PROOFS_PARAMETER_CACHE=" + paramDir}, lotusEnv...), "--miner-api-info", m.apiInfo())
	api := d.client(t, false)
	ctx := context.Background()
	const miner, sector = 1000, 21
	good := encodeC1(t, sealedC1(t, p, miner, sector, 3))

	tampered := []struct {
		name   string
		tamper func(o *c1.Output)
		want   string
	}{
		{"flipped label", func(o *c1.Output) { o.Partitions()[0][1].ReplicaColumnProofs.CX.Column.Rows[1][0] ^= 1 },
			"partition 0 challenge 1: replica_column_proofs.c_x"},
		{"wrong path", func(o *c1.Output) { o.Partitions()[0][0].CommDProofs.Base[2].Hashes[0][5] ^= 1 },
			"comm_d_proofs: merkle path does not lead to the root"},
		{"wrong comm_r", func(o *c1.Output) { o.CommR[0] ^= 1 }, "comm_r: is not Poseidon(comm_c, comm_r_last)"},
	}
	tamperedC1 := func(t *testing.T, tamper func(o *c1.Output)) []byte {
		o, _, err := c1.Decode(good)
		if err != nil {
			t.Fatal(err)
		}
		tamper(o)
		return encodeC1(t, o)
	}
	for _, tc := range tampered {
		t.Run("native "+tc.name, func(t *testing.T) {
			proof, err := api.SealCommitPhase2(ctx, tamperedC1(t, tc.tamper), sector, miner)
			var jf *rpcapi.ErrJobFailed
			if !errors.As(err, &jf) || !strings.Contains(jf.Message, tc.want) || proof != nil {
				t.Fatalf("got %v (%T), proof %d bytes; want a failed job naming %q", err, err, len(proof), tc.want)
			}
		})
	}
	t.Run("Lotus", func(t *testing.T) {
		waitFor(t, "WorkerConnect", func() bool { _, ok := m.worker(); return ok })
		w, _ := m.worker()
		calls := map[rpcapi.CallID]string{}
		for _, tc := range tampered {
			call, err := w.API.SealCommit2(ctx, rpcapi.SectorRef{ID: abi.SectorID{Miner: miner, Number: sector}, ProofType: p.Proof}, tamperedC1(t, tc.tamper))
			if err != nil {
				t.Fatal(err)
			}
			calls[call] = tc.want
		}
		for range tampered {
			ret := <-m.retCh
			want, ok := calls[ret.CallID]
			if !ok || ret.Proof != nil || ret.Err == nil || ret.Err.Code != rpcapi.ErrUnknown || !strings.Contains(ret.Err.Message, want) {
				t.Fatalf("return %+v; want a CallError naming %q", ret, want)
			}
		}
	})
	t.Run("another miner", func(t *testing.T) {
		_, err := api.SealCommitPhase2(ctx, good, sector, miner+1)
		if err == nil || !strings.Contains(err.Error(), "replica_id") {
			t.Fatalf("got %v; want the replica ID named", err)
		}
	})
	t.Run("missing parameters", func(t *testing.T) {
		_, err := api.SealCommitPhase2(ctx, good, sector, miner)
		want := filepath.Join(paramDir, p.ParamsFile())
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "snarkd params gen --proof "+p.Name) {
			t.Fatalf("got %v; want %s and the params gen hint", err, want)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		bad := strings.Replace(string(good), `"comm_r":[`, `"comm_r":[999,`, 1)
		_, err := api.SealCommitPhase2(ctx, []byte(bad), sector, miner)
		var br *rpcapi.ErrBadRequest
		if !errors.As(err, &br) || !strings.HasPrefix(br.Field, "Phase1Out") {
			t.Fatalf("got %v (%T); want a bad request naming Phase1Out", err, err)
		}
	})
}
