package itests

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/seal"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/rpcapi"
)

// niProofType is the NI-PoRep seal proof type of interactive type p's sector size.
func niProofType(t *testing.T, p *prooftypes.SealProof) *prooftypes.SealProof {
	t.Helper()
	for _, q := range prooftypes.All() {
		if q.SectorSize == p.SectorSize && q.Feature == prooftypes.NonInteractive {
			return q
		}
	}
	t.Fatalf("no NI-PoRep type of %s's sector size", p.Name)
	return nil
}

// verifyNIPoRep checks an NI-PoRep C2 answer independently of the daemon: it must be the
// SnarkPack aggregate (V2) of one proof per partition padded to a power of two, verifying with
// the .vk file `params gen` wrote, the SRS file, get_seal_inputs' public inputs of every
// partition (padded the same way) and SHA-256(comm_r) as the transcript's include; a changed
// public input, include or proof byte is refused.
func verifyNIPoRep(t *testing.T, dir string, p *prooftypes.SealProof, phase1 []byte, miner abi.ActorID, sector abi.SectorNumber, proof []byte) {
	t.Helper()
	ctx := context.Background()
	n := snarkpack.TargetLen(p.Partitions)
	if len(proof) != snarkpack.Size(n) {
		t.Fatalf("answer of %d bytes, want the %d-byte aggregate of %d proofs", len(proof), snarkpack.Size(n), n)
	}
	vk, err := groth16.OpenVerifyingKey(filepath.Join(dir, p.VKFile()), groth16.CheckSubgroup)
	if err != nil {
		t.Fatal(err)
	}
	kc := snarkpack.KeyCache{Path: filepath.Join(dir, snarkpack.SRSFile)}
	key, err := kc.Keys(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	c, err := seal.NewCommit2(ctx, phase1, sector, miner, seal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	inputs := make([][]fr.Element, c.Partitions())
	for k := range inputs {
		if inputs[k], err = c.PublicInputs(k); err != nil {
			t.Fatal(err)
		}
	}
	padded, err := snarkpack.PadInputs(inputs)
	if err != nil {
		t.Fatal(err)
	}
	include := sha256.Sum256(c.Output.CommR[:])
	check := func(b []byte, inputs [][]fr.Element, include []byte) error {
		agg, err := snarkpack.ParseAggregateProof(b)
		if err != nil {
			return err
		}
		if agg.NumProofs() != n {
			return fmt.Errorf("aggregate of %d proofs, want %d", agg.NumProofs(), n)
		}
		return snarkpack.Verify(ctx, key.Verifier(), vk, inputs, agg, include, snarkpack.V2)
	}
	if err := check(proof, padded, include[:]); err != nil {
		t.Fatalf("the aggregate does not verify with %s and %s: %v", p.VKFile(), snarkpack.SRSFile, err)
	}
	wrongInput := append([][]fr.Element(nil), padded...)
	wrongInput[3] = append([]fr.Element(nil), padded[3]...)
	wrongInput[3][1].SetUint64(12345) // comm_r of partition 3
	wrongInclude := sha256.Sum256([]byte("another sector's comm_r"))
	flipped := append([]byte(nil), proof...)
	flipped[len(flipped)-100] ^= 0x10
	for what, err := range map[string]error{
		"a changed public input": check(proof, wrongInput, include[:]),
		"another include":        check(proof, padded, wrongInclude[:]),
		"a changed proof byte":   check(flipped, padded, include[:]),
	} {
		if err == nil {
			t.Errorf("the aggregate verifies with %s", what)
		}
	}
}

// linkParams makes a parameter directory holding links to p's .params, .vk and .meta files in
// src, and nothing else.
func linkParams(t *testing.T, src string, p *prooftypes.SealProof) string {
	t.Helper()
	dst := t.TempDir()
	for _, name := range []string{p.ParamsFile(), p.VKFile(), p.MetaFile()} {
		if err := os.Symlink(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestNIPoRepC2EndToEnd: a Go-sealed NI-PoRep sector's C1 output proved by the daemon through
// every front door — the native API's SealCommitPhase2 and Submit, the Lotus worker's
// SealCommit2 (→ ReturnSealCommit2) and the cuzk service's Prove as Curio sends it — answers
// the SnarkPack aggregate of its partition proofs that filecoin-ffi's SealCommitPhase2 would
// (verifyNIPoRep). Before the SRS is in the parameter directory the request fails naming the
// file and the command that fetches it; `snarkd params gen --srs` then writes a devnet SRS
// that the running daemon finds. The partition circuit and parameters are the interactive
// type's (SNARKD_ITEST_POREP picks the size as for TestPoRepC2EndToEnd).
func TestNIPoRepC2EndToEnd(t *testing.T) {
	inter := porepProofType(t)
	p := niProofType(t, inter)
	testStart := time.Now()
	bin := buildDaemon(t)
	dir := linkParams(t, devnetParams(t, bin, inter.Name), inter)
	m := newStandIn(t, 500*time.Millisecond)
	repo := t.TempDir()
	d := startDaemon(t, bin, repo, append([]string{"FIL_PROOFS_PARAMETER_CACHE=" + dir}, lotusEnv...),
		"--miner-api-info", m.apiInfo(), "--cuzk-listen", cuzkTarget(repo))
	api := d.client(t, true)
	c, err := dialCuzk(t, d)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const miner = 1000

	t.Run("missing SRS", func(t *testing.T) {
		phase1 := encodeC1(t, sealedC1(t, p, miner, 30, 30))
		start := time.Now()
		proof, err := api.SealCommitPhase2(ctx, phase1, 30, miner)
		var jf *rpcapi.ErrJobFailed
		if !errors.As(err, &jf) || proof != nil || !strings.Contains(jf.Message, filepath.Join(dir, snarkpack.SRSFile)) ||
			!strings.Contains(jf.Message, "snarkd params fetch --srs") {
			t.Fatalf("got %v, proof %d bytes; want a failed job naming the SRS file and how to fetch it", err, len(proof))
		}
		logTiming(t, "NI C2 refused without the SRS (loads the parameters)", time.Since(start))
		out, err := exec.Command(bin, "params", "gen", "--srs", "--srs-proofs", "16", "--dir", dir).CombinedOutput()
		if err != nil {
			t.Fatalf("params gen --srs: %v\n%s", err, out)
		}
		t.Logf("%s", strings.TrimSpace(string(out)))
	})
	if _, err := os.Stat(filepath.Join(dir, snarkpack.SRSFile)); err != nil {
		t.Fatalf("no SRS to go on with: %v", err)
	}

	t.Run("native SealCommitPhase2", func(t *testing.T) {
		const sector = 31
		phase1 := encodeC1(t, sealedC1(t, p, miner, sector, 31))
		start := time.Now()
		proof, err := api.SealCommitPhase2(ctx, phase1, sector, miner)
		if err != nil {
			t.Fatal(err)
		}
		logTiming(t, "NI C2 "+p.Name+" native SealCommitPhase2", time.Since(start))
		verifyNIPoRep(t, dir, p, phase1, miner, sector, proof)
	})

	t.Run("native Submit", func(t *testing.T) {
		const sector = 32
		phase1 := encodeC1(t, sealedC1(t, p, miner, sector, 32))
		ectx, cancel := context.WithCancel(ctx)
		defer cancel()
		events, err := api.Events(ectx, rpcapi.JobFilter{Kinds: []rpcapi.ProofKind{rpcapi.KindPoRepC2}})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		sub, err := api.Submit(ctx, rpcapi.ProofRequest{RequestID: "ni-porep-32", Kind: rpcapi.KindPoRepC2, RegisteredProof: int64(p.Proof),
			MinerID: miner, SectorNumber: sector, Phase1Out: phase1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := api.Await(ctx, sub.JobID)
		if err != nil || res.State != rpcapi.JobDone {
			t.Fatalf("job %s: %v %+v", sub.JobID, err, res.Job)
		}
		logTiming(t, "NI C2 "+p.Name+" native Submit to Await", time.Since(start))
		if res.Partitions != p.Partitions || res.PartitionsDone != p.Partitions {
			t.Errorf("job reports %d partitions (%d done), want %d", res.Partitions, res.PartitionsDone, p.Partitions)
		}
		verifyNIPoRep(t, dir, p, phase1, miner, sector, res.Proof)
		// The aggregation is a stage of its own, after the partition proofs are verified.
		var seen []rpcapi.EventType
		for ev := range events {
			if ev.JobID != sub.JobID {
				continue
			}
			seen = append(seen, ev.Type)
			if ev.Type == rpcapi.EventDone || ev.Type == rpcapi.EventFailed {
				break
			}
		}
		if k := len(seen); k < 3 || seen[k-3] != rpcapi.EventVerifying || seen[k-2] != rpcapi.EventAggregating || seen[k-1] != rpcapi.EventDone {
			t.Errorf("events %v; want verifying, aggregating, done at the end", seen)
		}
	})

	t.Run("Lotus SealCommit2", func(t *testing.T) {
		waitFor(t, "WorkerConnect", func() bool { _, ok := m.worker(); return ok })
		w, _ := m.worker()
		const sector = 33
		phase1 := encodeC1(t, sealedC1(t, p, miner, sector, 33))
		start := time.Now()
		call, err := w.API.SealCommit2(ctx, rpcapi.SectorRef{ID: abi.SectorID{Miner: miner, Number: sector}, ProofType: p.Proof}, phase1)
		if err != nil {
			t.Fatal(err)
		}
		ret := <-m.retCh
		if ret.Method != "Filecoin.ReturnSealCommit2" || ret.CallID != call || ret.Err != nil {
			t.Fatalf("return %s for %v: err %+v (call %v)", ret.Method, ret.CallID, ret.Err, call)
		}
		logTiming(t, "NI C2 "+p.Name+" Lotus SealCommit2 to ReturnSealCommit2", time.Since(start))
		verifyNIPoRep(t, dir, p, phase1, miner, sector, ret.Proof)
	})

	t.Run("cuzk", func(t *testing.T) {
		const sector = 34
		phase1 := encodeC1(t, sealedC1(t, p, miner, sector, 34))
		in, err := json.Marshal(c1.Commit2In{SectorNum: sector, Phase1Out: phase1, SectorSize: p.SectorSize})
		if err != nil {
			t.Fatal(err)
		}
		proof := cuzkProve(t, c, "NI C2 "+p.Name, &pb.SubmitProofRequest{RequestId: fmt.Sprintf("porep-%d-%d", miner, sector),
			ProofKind: pb.ProofKind_POREP_SEAL_COMMIT, SectorSize: p.SectorSize, RegisteredProof: uint64(p.Proof),
			Priority: pb.Priority_NORMAL, VanillaProof: in, SectorNumber: sector, MinerId: miner})
		verifyNIPoRep(t, dir, p, phase1, miner, sector, proof)
	})

	logJobTimings(t, api, rpcapi.KindPoRepC2)
	logTiming(t, "NI-PoRep "+p.Name+" end to end (params, seal, four C2s, verify)", time.Since(testStart))
}
