// Package rpcapi holds snarkd's JSON-RPC contracts: the interfaces served under /rpc/v0, their
// go-jsonrpc proxy structs, wire types and client constructors. No daemon code lives here.
package rpcapi

import (
	"context"
	"net/http"

	"github.com/filecoin-project/go-jsonrpc"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"
)

//go:generate go run ./gen -out ../docs/api.md

// ProverNamespace is the JSON-RPC namespace of the native API ("Prover.Version", ...).
const ProverNamespace = "Prover"

// Prover is snarkd's native proving API. Each method's comment ends with its permission tag.
type Prover interface {
	// Version reports the daemon's build, API version and proving backend.
	Version(ctx context.Context) (VersionInfo, error) //perm:read
	// Status reports devices, queues, loaded parameters and totals.
	Status(ctx context.Context) (StatusInfo, error) //perm:read
	// Submit queues a proof request and returns its job at once. The same RequestID again
	// returns the same job; with different content it is refused while that job is queued,
	// running or done (and retained, Jobs.Retention). The ID of a failed or cancelled job is
	// free again: it queues a new job, with any content, and SubmitResult.Replaces names the
	// old one. (Through Curio's cuzk API a done job's ID is free for new content too.)
	Submit(ctx context.Context, req ProofRequest) (SubmitResult, error) //perm:write
	// Await blocks until the job is final and returns it with its proof.
	Await(ctx context.Context, id JobID) (JobResult, error) //perm:read
	// Prove submits and awaits.
	Prove(ctx context.Context, req ProofRequest) (JobResult, error) //perm:write
	// Cancel stops a queued or running job; it reports whether the job was running.
	Cancel(ctx context.Context, id JobID) (bool, error) //perm:write
	// Jobs lists jobs, newest first.
	Jobs(ctx context.Context, filter JobFilter) ([]Job, error) //perm:read
	// Events streams job progress (websocket only) until ctx ends.
	Events(ctx context.Context, filter JobFilter) (<-chan JobEvent, error) //perm:read
	// MinerAttach registers the daemon with a lotus-miner (WorkerConnect) and keeps it
	// registered; minerAPIInfo is TOKEN:MULTIADDR with an admin token, workerURL the address the
	// miner dials back ("" derives it from the listen address).
	MinerAttach(ctx context.Context, minerAPIInfo string, workerURL string) error //perm:admin
	// Stop makes the daemon drain and exit (as SIGTERM does): it refuses new work, lets running
	// jobs finish within Jobs.DrainGrace, hands back the rest and exits 0. It returns at once
	// with the drain's state; a second Stop while draining skips the rest of the grace.
	Stop(ctx context.Context) (DrainStatus, error) //perm:admin

	// SealCommitPhase2 mirrors filecoin-ffi: a PoRep proof from a C1 output.
	SealCommitPhase2(ctx context.Context, phase1Out []byte, sectorNum abi.SectorNumber, minerID abi.ActorID) ([]byte, error) //perm:write
	// GenerateWinningPoStWithVanilla mirrors filecoin-ffi.
	GenerateWinningPoStWithVanilla(ctx context.Context, proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error) //perm:write
	// GenerateSinglePartitionWindowPoStWithVanilla mirrors filecoin-ffi.
	GenerateSinglePartitionWindowPoStWithVanilla(ctx context.Context, proofType abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte, partitionIndex uint) (proof.PoStProof, error) //perm:write
	// GenerateUpdateProofWithVanilla mirrors filecoin-ffi's SectorUpdate function.
	GenerateUpdateProofWithVanilla(ctx context.Context, proofType abi.RegisteredUpdateProof, oldSealed, newSealed, unsealed cid.Cid, vanillaProofs [][]byte) ([]byte, error) //perm:write
	// AggregateSealProofs mirrors filecoin-ffi: the SnarkPack aggregate of the sectors' C2 proofs
	// (one per info, in aggregateInfo.Infos' order; aggregateInfo.Proof is not read), proved as
	// an aggregate-seals job and verified before it is returned.
	AggregateSealProofs(ctx context.Context, aggregateInfo proof.AggregateSealVerifyProofAndInfos, proofs [][]byte) ([]byte, error) //perm:write
	// VerifyAggregateSeals mirrors filecoin-ffi: whether aggregate.Proof is a valid SnarkPack
	// aggregate of the proofs of aggregate.Infos' sectors. It runs at once, outside the job
	// queue; malformed infos or aggregate bytes answer ErrBadRequest.
	VerifyAggregateSeals(ctx context.Context, aggregate proof.AggregateSealVerifyProofAndInfos) (bool, error) //perm:write
}

// VersionInfo answers Prover.Version.
type VersionInfo struct {
	// Version is the daemon build, e.g. "v0.1.0 (go1.26.8)".
	Version string
	// APIVersion is the semantic version of this API; clients check the major part.
	APIVersion string
	// Backend is the proving backend in use: "cpu" or "cuda".
	Backend string
}

// NewProverClient connects to a daemon's native API at addr (http://host:port/rpc/v0, or ws://
// for Events). header usually carries "Authorization: Bearer <token>".
func NewProverClient(ctx context.Context, addr string, header http.Header, opts ...jsonrpc.Option) (Prover, jsonrpc.ClientCloser, error) {
	var c ProverStruct
	opts = append([]jsonrpc.Option{jsonrpc.WithErrors(RPCErrors)}, opts...)
	closer, err := jsonrpc.NewMergeClient(ctx, addr, ProverNamespace, []interface{}{&c.Internal}, header, opts...)
	if err != nil {
		return nil, nil, err
	}
	return &c, closer, nil
}
