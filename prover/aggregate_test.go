package prover

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/sealer"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/testcircuit"
)

// writeDevnetSRS writes a devnet SnarkPack SRS for up to maxProofs proofs into dir.
func writeDevnetSRS(t *testing.T, dir string, maxProofs int) {
	t.Helper()
	s, err := snarkpack.DevnetSRS(context.Background(), maxProofs, 1)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := s.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, snarkpack.SRSFile), b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAggregation: the proofs of a request aggregate into one SnarkPack proof of the padded
// count, which verifies against the same public inputs and include and against nothing else;
// the aggregate is checked before it is returned (wrong public inputs are a self-check error,
// or a counted unverified result with WithUnverifiedProofs), and its steps are timed.
func TestAggregation(t *testing.T) {
	const constraints, seed, n = 64, 3, 3
	ctx := context.Background()
	dir := t.TempDir()
	writeDevnetSRS(t, dir, 4)
	var mu sync.Mutex
	observed := map[string]int{}
	pipe := New(CPUBackend{}, NewParamCache("").WithFilecoinDir(dir)).WithPhaseObserver(func(_ Kind, phase string, _ time.Duration) {
		mu.Lock()
		observed[phase]++
		mu.Unlock()
	})
	res, err := pipe.Prove(ctx, Request{Test: &TestRequest{Constraints: constraints, Partitions: n, Seed: seed}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	proofs, err := groth16.ParseProofs(res.Proof, n)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := pipe.Params().Test(ctx, constraints, seed)
	if err != nil {
		t.Fatal(err)
	}
	in := testcircuit.New(constraints, seed).PublicInputs()
	inputs := [][]fr.Element{in, in, in}
	include := []byte("include of three proofs")

	agg, err := pipe.newAggregation(ctx, n, include, snarkpack.V2)
	if err != nil {
		t.Fatal(err)
	}
	ph := &Phases{}
	var out Result
	b, err := agg.run(ctx, pipe, "test", &pk.VK, proofs, inputs, ph, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != snarkpack.Size(4) {
		t.Fatalf("aggregate of %d bytes, want %d (4 proofs)", len(b), snarkpack.Size(4))
	}
	if ph.snapshot()[PhaseAggregate] <= 0 || out.Verify <= 0 || observed[PartitionAggregate] != 1 || observed[PartitionAggregateVerify] != 1 {
		t.Fatalf("phases %v, verify %v, observed %v", ph.snapshot(), out.Verify, observed)
	}
	padded, _ := snarkpack.PadInputs(inputs)
	verify := func(b []byte, inputs [][]fr.Element, include []byte) error {
		p, err := snarkpack.ParseAggregateProof(b)
		if err != nil {
			return err
		}
		return snarkpack.Verify(ctx, agg.key.Verifier(), &pk.VK, inputs, p, include, snarkpack.V2)
	}
	if err := verify(b, padded, include); err != nil {
		t.Fatalf("the aggregate does not verify: %v", err)
	}
	changed := [][]fr.Element{append([]fr.Element(nil), in...), in, in, in}
	changed[0][0].SetUint64(7)
	flipped := append([]byte(nil), b...)
	flipped[len(flipped)/2] ^= 1
	for name, err := range map[string]error{
		"changed public input": verify(b, changed, include),
		"other include":        verify(b, padded, []byte("another include")),
		"version 1": func() error {
			p, _ := snarkpack.ParseAggregateProof(b)
			return snarkpack.Verify(ctx, agg.key.Verifier(), &pk.VK, padded, p, include, snarkpack.V1)
		}(),
		"changed proof byte": verify(flipped, padded, include),
	} {
		if err == nil {
			t.Errorf("%s: the aggregate verifies", name)
		}
	}

	// The self-check: proofs that do not fit the inputs aggregate, but are never answered.
	bad := [][]fr.Element{changed[0], in, in}
	if b, err := agg.run(ctx, pipe, "test", &pk.VK, proofs, bad, &Phases{}, &Result{}); b != nil || !errors.Is(err, snarkpack.ErrInvalid) || !strings.Contains(err.Error(), "self-check") {
		t.Fatalf("wrong inputs: %d bytes, %v", len(b), err)
	}
	pipe.WithUnverifiedProofs()
	var counted Result
	if b, err := agg.run(ctx, pipe, "test", &pk.VK, proofs, bad, &Phases{}, &counted); err != nil || len(b) != snarkpack.Size(4) || counted.Unverified != 1 {
		t.Fatalf("unverified allowed: %d bytes, %v, %d unverified", len(b), err, counted.Unverified)
	}
}

// TestAggregationKeys: the SRS is read from the Filecoin parameter directory once; a missing
// file names itself and the commands that provide it, and is found once put in place; an SRS
// too small for the count is refused.
func TestAggregationKeys(t *testing.T) {
	ctx := context.Background()
	if _, err := NewParamCache("").AggregationKeys(ctx, 16); err == nil || !strings.Contains(err.Error(), "no Filecoin parameter directory") {
		t.Fatalf("no directory: %v", err)
	}
	dir := t.TempDir()
	c := NewParamCache("").WithFilecoinDir(dir)
	var reports []ParamLoad
	rctx := withLoadReport(ctx, func(l ParamLoad) { reports = append(reports, l) })
	_, err := c.AggregationKeys(rctx, 16)
	var ms *MissingSRSError
	want := filepath.Join(dir, snarkpack.SRSFile)
	if !errors.As(err, &ms) || ms.Path != want || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "snarkd params fetch --srs") || !strings.Contains(err.Error(), "snarkd params gen --srs") {
		t.Fatalf("got %v, want a MissingSRSError naming %s and both commands", err, want)
	}
	writeDevnetSRS(t, dir, 16)
	reports = nil
	pk, err := c.AggregationKeys(rctx, 16)
	if err != nil || pk.N != 16 {
		t.Fatalf("after the file appeared: %v", err)
	}
	if len(reports) != 1 || reports[0].Circuit != snarkpack.SRSFile {
		t.Fatalf("load reports %+v, want the SRS read once", reports)
	}
	// Read once: removing the file changes nothing for counts it holds.
	if err := os.Remove(want); err != nil {
		t.Fatal(err)
	}
	reports = nil
	if pk2, err := c.AggregationKeys(rctx, 4); err != nil || pk2.N != 4 || len(reports) != 0 {
		t.Fatalf("from memory: %v, reports %+v", err, reports)
	}
	if _, err := c.AggregationKeys(rctx, 32); err == nil || !strings.Contains(err.Error(), "32 proofs") {
		t.Fatalf("beyond the SRS: %v", err)
	}
}

// TestPoRepNonInteractiveMissingSRS: an NI-PoRep C2 without the SRS fails at planning (before
// any partition is synthesized) naming the file, rather than after proving every partition.
func TestPoRepNonInteractiveMissingSRS(t *testing.T) {
	p, err := prooftypes.Lookup(abi.RegisteredSealProof_StackedDrg2KiBV1_2_Feat_NiPoRep)
	if err != nil {
		t.Fatal(err)
	}
	o, err := sealer.RandomC1(context.Background(), p, testMiner, testSector, rand.NewChaCha8([32]byte{4}))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pipe := New(CPUBackend{}, NewParamCache("").WithFilecoinDir(dir))
	// Parameters in memory (of another circuit: planning does not get as far as using them).
	pk, err := testcircuit.DevnetParameters(context.Background(), 64, 1, DevnetParamSeed)
	if err != nil {
		t.Fatal(err)
	}
	if err := pipe.Params().PutSeal(context.Background(), p, &SealParams{PK: pk, VK: &pk.VK}); err != nil {
		t.Fatal(err)
	}
	var stages []Stage
	_, err = pipe.Prove(context.Background(), porepRequest(p, encode(t, o)), func(s Stage, _, _ int, _ ...string) { stages = append(stages, s) })
	var ms *MissingSRSError
	if !errors.As(err, &ms) || !strings.Contains(err.Error(), p.Name) || !strings.Contains(err.Error(), filepath.Join(dir, snarkpack.SRSFile)) {
		t.Fatalf("got %v, want a MissingSRSError", err)
	}
	for _, s := range stages {
		if s != StageLoadingParams {
			t.Fatalf("stages %v: work started without the SRS", stages)
		}
	}
}
