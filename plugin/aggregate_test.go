package plugin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/filecoin/aggregate/aggregatetest"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestAggregateSealsOverJSONRPC: AggregateSealProofs runs as an aggregate-seals job (reported
// by Jobs and Status) and answers an aggregate that VerifyAggregateSeals accepts; another
// seed or a changed byte is refused (false, or ErrBadRequest for an aggregate that does not
// decode); malformed requests are refused at submission with ErrBadRequest naming the field, as
// typed errors over the wire; verification needs a write token.
func TestAggregateSealsOverJSONRPC(t *testing.T) {
	fx, err := aggregatetest.New(abi.RegisteredSealProof_StackedDrg2KiBV1_1, 1000, 20, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Prover.ParameterCache = t.TempDir()
	if err := fx.WriteKeys(cfg.Prover.ParameterCache, 4); err != nil {
		t.Fatal(err)
	}
	base, d := openDaemon(t, cfg)
	ctx := context.Background()
	api, closer, err := rpcapi.NewProverClient(ctx, base+RPCPath, token(t, d, rpcapi.PermWrite))
	if err != nil {
		t.Fatal(err)
	}
	defer closer()

	for _, v := range []abi.RegisteredAggregationProof{abi.RegisteredAggregationProof_SnarkPackV1, abi.RegisteredAggregationProof_SnarkPackV2} {
		info := fx.Info(v)
		agg, err := api.AggregateSealProofs(ctx, info, fx.Proofs)
		if err != nil {
			t.Fatalf("v%d: %v", v+1, err)
		}
		if len(agg) != snarkpack.Size(4) {
			t.Fatalf("v%d: %d bytes, want %d", v+1, len(agg), snarkpack.Size(4))
		}
		info.Proof = agg
		if ok, err := api.VerifyAggregateSeals(ctx, info); err != nil || !ok {
			t.Fatalf("v%d: VerifyAggregateSeals = %v, %v", v+1, ok, err)
		}
		seed := fx.Info(v)
		seed.Proof = agg
		seed.Infos[1].InteractiveRandomness = append([]byte{1}, seed.Infos[1].InteractiveRandomness[1:]...)
		if ok, err := api.VerifyAggregateSeals(ctx, seed); err != nil || ok {
			t.Fatalf("v%d: another seed: %v, %v; want false", v+1, ok, err)
		}
		other := fx.Info(1 - v)
		other.Proof = agg
		if ok, err := api.VerifyAggregateSeals(ctx, other); err != nil || ok {
			t.Fatalf("v%d: checked as the other version: %v, %v; want false", v+1, ok, err)
		}
	}
	jobs, err := api.Jobs(ctx, rpcapi.JobFilter{Kinds: []rpcapi.ProofKind{rpcapi.KindAggregateSeals}})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].State != rpcapi.JobDone || jobs[0].Partitions != 1 || jobs[0].Priority != rpcapi.PrioritySeal {
		t.Fatalf("aggregate-seals jobs: %+v", jobs)
	}
	st, err := api.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, q := range st.Queues {
		found = found || q.Kind == rpcapi.KindAggregateSeals
	}
	if !found {
		t.Fatalf("Status has no aggregate-seals queue: %+v", st.Queues)
	}

	// A byte of the aggregate changed: refused, as not decoding or not verifying.
	info := fx.Info(abi.RegisteredAggregationProof_SnarkPackV2)
	good, err := api.AggregateSealProofs(ctx, info, fx.Proofs)
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{0, 200, len(good) - 1} {
		info.Proof = append([]byte(nil), good...)
		info.Proof[off] ^= 1
		ok, err := api.VerifyAggregateSeals(ctx, info)
		var br *rpcapi.ErrBadRequest
		if ok || (err != nil && (!errors.As(err, &br) || br.Field != "Proof")) {
			t.Fatalf("byte %d changed: %v, %v", off, ok, err)
		}
	}

	bad := func(name string, req rpcapi.ProofRequest, field, reason string) {
		t.Helper()
		_, err := api.Submit(ctx, req)
		var br *rpcapi.ErrBadRequest
		if !errors.As(err, &br) || br.Field != field || !strings.Contains(br.Reason, reason) {
			t.Fatalf("%s: got %v (%T), want ErrBadRequest on %s saying %q", name, err, err, field, reason)
		}
	}
	req := func(edit func(r *rpcapi.ProofRequest)) rpcapi.ProofRequest {
		r := rpcapi.ProofRequest{Kind: rpcapi.KindAggregateSeals, RegisteredProof: int64(fx.Proof.Proof), MinerID: fx.Miner,
			Aggregate: &rpcapi.SealAggregate{AggregateProof: 1, Infos: fx.Info(1).Infos, Proofs: append([][]byte(nil), fx.Proofs...)}}
		edit(&r)
		return r
	}
	bad("no aggregate", req(func(r *rpcapi.ProofRequest) { r.Aggregate = nil }), "Aggregate", "required")
	bad("unknown seal proof", req(func(r *rpcapi.ProofRequest) { r.RegisteredProof = 77 }), "RegisteredProof", "77 is not a registered seal proof")
	bad("unknown aggregation", req(func(r *rpcapi.ProofRequest) { r.Aggregate.AggregateProof = 5 }), "Aggregate.AggregateProof", "5 is not a registered aggregation proof")
	bad("a proof missing", req(func(r *rpcapi.ProofRequest) { r.Aggregate.Proofs = r.Aggregate.Proofs[1:] }), "Aggregate.Proofs", "2 C2 proofs for 3 sectors")
	bad("a proof short", req(func(r *rpcapi.ProofRequest) { r.Aggregate.Proofs[2] = r.Aggregate.Proofs[2][:191] }), "Aggregate.Proofs[2]", "191 bytes")
	bad("a bad CID", req(func(r *rpcapi.ProofRequest) { r.Aggregate.Infos[0].UnsealedCID = cid.Undef }), "Aggregate.Infos[0].UnsealedCID", "undefined CID")
	bad("C1 output too", req(func(r *rpcapi.ProofRequest) { r.Phase1Out = []byte("{}") }), "Kind", "inputs of another kind")
	bad("sector size", req(func(r *rpcapi.ProofRequest) { r.SectorSize = 8 << 20 }), "SectorSize", "does not match seal proof")

	// Through the ffi-shaped call, a proof of another sector is named by the job's failure.
	swapped := [][]byte{fx.Proofs[0], fx.Proofs[2], fx.Proofs[1]}
	_, err = api.AggregateSealProofs(ctx, fx.Info(1), swapped)
	var jf *rpcapi.ErrJobFailed
	if !errors.As(err, &jf) || !strings.Contains(jf.Message, "Proofs[1]: partition 0 of sector 21 does not verify") {
		t.Fatalf("swapped proofs: got %v", err)
	}
	// Malformed infos for verification are a bad request, not a false.
	broken := fx.Info(1)
	broken.Proof = good
	broken.Infos = []proof.AggregateSealVerifyInfo{}
	var br *rpcapi.ErrBadRequest
	if _, err := api.VerifyAggregateSeals(ctx, broken); !errors.As(err, &br) || br.Field != "Infos" {
		t.Fatalf("no infos: got %v", err)
	}

	// Verification is write-only: a read token may not spend the daemon's CPU on it.
	ro, rcloser, err := rpcapi.NewProverClient(ctx, base+RPCPath, token(t, d, rpcapi.PermRead))
	if err != nil {
		t.Fatal(err)
	}
	defer rcloser()
	info.Proof = good
	if _, err := ro.VerifyAggregateSeals(ctx, info); !errors.As(err, new(*rpcapi.ErrPermission)) {
		t.Fatalf("read token: got %v, want a permission error", err)
	}
}
