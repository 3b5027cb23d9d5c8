package itests

import (
	"context"
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
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/commcid"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/seal"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/rpcapi"
)

// aggregateParamDir is a parameter directory holding links to p's devnet .params, .vk and .meta
// files in src and a devnet SnarkPack SRS for up to maxProofs proofs from `snarkd params gen
// --srs` (the shared parameter directory is left as it is).
func aggregateParamDir(t *testing.T, bin, src string, p *prooftypes.SealProof, maxProofs int) string {
	t.Helper()
	dst := t.TempDir()
	for _, name := range []string{p.ParamsFile(), p.VKFile(), p.MetaFile()} {
		if err := os.Symlink(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(bin, "params", "gen", "--srs", "--srs-proofs", fmt.Sprint(maxProofs), "--dir", dst).CombinedOutput()
	if err != nil {
		t.Fatalf("params gen --srs: %v\n%s", err, out)
	}
	return dst
}

// aggregateInfoOf is the aggregate info Lotus builds for sectors of miner whose C1 outputs are
// outs (numbers in the same order).
func aggregateInfoOf(t *testing.T, p *prooftypes.SealProof, miner abi.ActorID, numbers []abi.SectorNumber, outs []*c1.Output, v abi.RegisteredAggregationProof) proof.AggregateSealVerifyProofAndInfos {
	t.Helper()
	info := proof.AggregateSealVerifyProofAndInfos{Miner: miner, SealProof: p.Proof, AggregateProof: v}
	for i, o := range outs {
		commR, err := commcid.SealedCID(o.CommR)
		if err != nil {
			t.Fatal(err)
		}
		commD, err := commcid.UnsealedCID(o.CommD)
		if err != nil {
			t.Fatal(err)
		}
		info.Infos = append(info.Infos, proof.AggregateSealVerifyInfo{Number: numbers[i], Randomness: append([]byte(nil), o.Ticket[:]...),
			InteractiveRandomness: append([]byte(nil), o.Seed[:]...), SealedCID: commR, UnsealedCID: commD})
	}
	return info
}

// verifySealAggregate checks an aggregate of the sectors' C2 proofs independently of the daemon:
// the .vk file `params gen` wrote, the SRS file, get_seal_inputs' public inputs of every sector's
// partitions (from their C1 outputs) padded to a power of two, and SHA-256 over each sector's
// seed and comm_r as the transcript's include.
func verifySealAggregate(t *testing.T, dir string, p *prooftypes.SealProof, miner abi.ActorID, numbers []abi.SectorNumber, phase1s [][]byte,
	v snarkpack.Version, agg []byte) error {
	t.Helper()
	ctx := context.Background()
	vk, err := groth16.OpenVerifyingKey(filepath.Join(dir, p.VKFile()), groth16.CheckSubgroup)
	if err != nil {
		t.Fatal(err)
	}
	var inputs [][]fr.Element
	var commRs, seeds [][32]byte
	for i, phase1 := range phase1s {
		c, err := seal.NewCommit2(ctx, phase1, numbers[i], miner, seal.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for k := range c.Partitions() {
			in, err := c.PublicInputs(k)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, in)
		}
		commRs, seeds = append(commRs, c.Output.CommR), append(seeds, c.Output.Seed)
	}
	n := snarkpack.TargetLen(len(inputs))
	kc := snarkpack.KeyCache{Path: filepath.Join(dir, snarkpack.SRSFile)}
	key, err := kc.Keys(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	padded, err := snarkpack.PadInputs(inputs)
	if err != nil {
		t.Fatal(err)
	}
	a, err := snarkpack.ParseAggregateProof(agg)
	if err != nil {
		return err
	}
	if a.NumProofs() != n {
		return fmt.Errorf("aggregate of %d proofs, want %d", a.NumProofs(), n)
	}
	include := seal.AggregateInclude(p, commRs, seeds)
	return snarkpack.Verify(ctx, key.Verifier(), vk, padded, a, include[:], v)
}

// TestAggregateSealsEndToEnd: Go-sealed sectors' C2 proofs, proved by the daemon with devnet
// parameters from `snarkd params gen`, aggregated by it (Prover.AggregateSealProofs, SnarkPack
// V1 and V2, with a devnet SRS from `params gen --srs`) into aggregates that verify on their
// own (the .vk, the SRS, get_seal_inputs' inputs) and through Prover.VerifyAggregateSeals; a
// changed seed, a changed aggregate byte and a changed C2 proof byte are refused; the CLI
// (`aggregate seals` from proof files, `aggregate verify`) does the same.
func TestAggregateSealsEndToEnd(t *testing.T) {
	p := porepProofType(t)
	testStart := time.Now()
	bin := buildDaemon(t)
	dir := aggregateParamDir(t, bin, devnetParams(t, bin, p.Name), p, 8)
	repo := t.TempDir()
	d := startDaemon(t, bin, repo, []string{"FIL_PROOFS_PARAMETER_CACHE=" + dir})
	api := d.client(t, false)
	ctx := context.Background()

	const miner = 1000
	numbers := []abi.SectorNumber{31, 32, 33}
	var outs []*c1.Output
	var phase1s, c2s [][]byte
	for i, n := range numbers {
		o := sealedC1(t, p, miner, n, byte(40+i))
		phase1 := encodeC1(t, o)
		start := time.Now()
		c2, err := api.SealCommitPhase2(ctx, phase1, n, miner)
		if err != nil {
			t.Fatal(err)
		}
		logTiming(t, fmt.Sprintf("C2 %s sector %d", p.Name, n), time.Since(start))
		outs, phase1s, c2s = append(outs, o), append(phase1s, phase1), append(c2s, c2)
	}
	proofs := len(numbers) * p.Partitions
	padded := snarkpack.TargetLen(proofs)

	aggs := map[abi.RegisteredAggregationProof][]byte{}
	for _, v := range []abi.RegisteredAggregationProof{abi.RegisteredAggregationProof_SnarkPackV1, abi.RegisteredAggregationProof_SnarkPackV2} {
		version, err := snarkpack.VersionOf(int64(v))
		if err != nil {
			t.Fatal(err)
		}
		info := aggregateInfoOf(t, p, miner, numbers, outs, v)
		start := time.Now()
		agg, err := api.AggregateSealProofs(ctx, info, c2s)
		if err != nil {
			t.Fatalf("%s: %v", version, err)
		}
		logTiming(t, fmt.Sprintf("aggregate %d %s sectors (%d proofs) %s", len(numbers), p.Name, padded, version), time.Since(start))
		if len(agg) != snarkpack.Size(padded) {
			t.Fatalf("%s: %d bytes, want the %d-byte aggregate of %d proofs", version, len(agg), snarkpack.Size(padded), padded)
		}
		if err := verifySealAggregate(t, dir, p, miner, numbers, phase1s, version, agg); err != nil {
			t.Fatalf("%s: the aggregate does not verify with %s and %s: %v", version, p.VKFile(), snarkpack.SRSFile, err)
		}
		other := snarkpack.V1
		if version == snarkpack.V1 {
			other = snarkpack.V2
		}
		if err := verifySealAggregate(t, dir, p, miner, numbers, phase1s, other, agg); err == nil {
			t.Fatalf("%s: the aggregate verifies as %s", version, other)
		}
		info.Proof = agg
		if ok, err := api.VerifyAggregateSeals(ctx, info); err != nil || !ok {
			t.Fatalf("%s: VerifyAggregateSeals = %v, %v", version, ok, err)
		}
		seed := aggregateInfoOf(t, p, miner, numbers, outs, v)
		seed.Proof = agg
		seed.Infos[1].InteractiveRandomness[0] ^= 1
		if ok, err := api.VerifyAggregateSeals(ctx, seed); err != nil || ok {
			t.Fatalf("%s: another seed of sector %d: %v, %v; want false", version, numbers[1], ok, err)
		}
		flipped := append([]byte(nil), agg...)
		flipped[len(flipped)-100] ^= 0x10
		info.Proof = flipped
		var br *rpcapi.ErrBadRequest
		if ok, err := api.VerifyAggregateSeals(ctx, info); ok || (err != nil && !errors.As(err, &br)) {
			t.Fatalf("%s: a changed aggregate byte: %v, %v", version, ok, err)
		}
		aggs[v] = agg
	}

	// A changed byte of one sector's C2 proof: the aggregation fails, naming that sector's proof.
	bad := append([][]byte(nil), c2s...)
	bad[2] = append([]byte(nil), c2s[2]...)
	bad[2][10] ^= 0x01
	_, err := api.AggregateSealProofs(ctx, aggregateInfoOf(t, p, miner, numbers, outs, 1), bad)
	var jf *rpcapi.ErrJobFailed
	if !errors.As(err, &jf) || !strings.Contains(jf.Message, "Proofs[2]") {
		t.Fatalf("a changed C2 proof byte: got %v, want a failed job naming Proofs[2]", err)
	}
	// Another sector's proof in its place: named by the self-check.
	swapped := [][]byte{c2s[0], c2s[2], c2s[1]}
	if _, err := api.AggregateSealProofs(ctx, aggregateInfoOf(t, p, miner, numbers, outs, 1), swapped); !errors.As(err, &jf) ||
		!strings.Contains(jf.Message, fmt.Sprintf("Proofs[1]: partition 0 of sector %d does not verify", numbers[1])) {
		t.Fatalf("swapped C2 proofs: got %v", err)
	}

	// The CLI: proof files in, an aggregate out that verifies; `aggregate verify` agrees.
	files := t.TempDir()
	info := aggregateInfoOf(t, p, miner, numbers, outs, abi.RegisteredAggregationProof_SnarkPackV2)
	infoPath := filepath.Join(files, "info.json")
	b, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(infoPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"aggregate", "seals", "--info", infoPath, "--out", filepath.Join(files, "agg")}
	for i, c2 := range c2s {
		f := filepath.Join(files, fmt.Sprintf("c2-%d", numbers[i]))
		if err := os.WriteFile(f, c2, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, f)
	}
	if out, err := runCLI(bin, repo, args...); err != nil {
		t.Fatalf("aggregate seals: %v\n%s", err, out)
	}
	agg, err := os.ReadFile(filepath.Join(files, "agg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := verifySealAggregate(t, dir, p, miner, numbers, phase1s, snarkpack.V2, agg); err != nil {
		t.Fatalf("the CLI's aggregate does not verify: %v", err)
	}
	out, err := runCLI(bin, repo, "aggregate", "verify", "--info", infoPath, "--proof", filepath.Join(files, "agg"))
	if err != nil || !strings.Contains(out, "valid: ") {
		t.Fatalf("aggregate verify: %v\n%s", err, out)
	}
	out, err = runCLI(bin, repo, "aggregate", "verify", "--info", infoPath, "--proof", filepath.Join(files, "agg"), "--aggregation", "v1")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out, "invalid: ") {
		t.Fatalf("aggregate verify as SnarkPackV1: %v\n%s", err, out)
	}
	logJobTimings(t, api, rpcapi.KindAggregateSeals)
	logTiming(t, "aggregate "+p.Name+" end to end (params, seals, C2s, aggregates, verifies)", time.Since(testStart))
}
