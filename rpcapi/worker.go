package rpcapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/filecoin-project/go-jsonrpc"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/google/uuid"
	"github.com/ipfs/go-cid"
)

// WorkerNamespace is the namespace of the Lotus worker API ("Filecoin.SealCommit2", ...).
const WorkerNamespace = "Filecoin"

// Worker is the Lotus worker API v1.7.0 (lotus api.Worker) as snarkd serves it. Every method
// needs admin, as in Lotus. Methods snarkd does not implement answer ErrNotSupported; their
// parameters that need sector files or streams are accepted as raw JSON.
type Worker interface {
	// Version is the worker API version, 1.7.0 (67328).
	Version(ctx context.Context) (APIVersion, error) //perm:admin
	// TaskTypes lists the enabled task types as keys of an object with empty values.
	TaskTypes(ctx context.Context) (map[TaskType]struct{}, error) //perm:admin
	// Paths lists local storage paths; snarkd has none.
	Paths(ctx context.Context) ([]StoragePath, error) //perm:admin
	// Info describes the machine; it answers at once even when every device is busy.
	Info(ctx context.Context) (WorkerInfo, error) //perm:admin

	// DataCid needs piece data; not supported.
	DataCid(ctx context.Context, pieceSize abi.UnpaddedPieceSize, pieceData json.RawMessage) (CallID, error) //perm:admin
	// AddPiece needs sector storage; not supported.
	AddPiece(ctx context.Context, sector SectorRef, pieceSizes []abi.UnpaddedPieceSize, newPieceSize abi.UnpaddedPieceSize, pieceData json.RawMessage) (CallID, error) //perm:admin
	// SealPreCommit1 needs sector storage; not supported.
	SealPreCommit1(ctx context.Context, sector SectorRef, ticket abi.SealRandomness, pieces []abi.PieceInfo) (CallID, error) //perm:admin
	// SealPreCommit2 needs sector storage; not supported.
	SealPreCommit2(ctx context.Context, sector SectorRef, pc1o []byte) (CallID, error) //perm:admin
	// SealCommit1 needs sector storage; not supported.
	SealCommit1(ctx context.Context, sector SectorRef, ticket abi.SealRandomness, seed abi.InteractiveSealRandomness, pieces []abi.PieceInfo, cids SectorCids) (CallID, error) //perm:admin
	// SealCommit2 queues a PoRep C2 and returns its CallID at once; the proof (or a CallError)
	// goes back through the miner's ReturnSealCommit2.
	SealCommit2(ctx context.Context, sector SectorRef, c1o Commit1Out) (CallID, error) //perm:admin
	// FinalizeSector needs sector storage; not supported.
	FinalizeSector(ctx context.Context, sector SectorRef) (CallID, error) //perm:admin
	// FinalizeReplicaUpdate needs sector storage; not supported.
	FinalizeReplicaUpdate(ctx context.Context, sector SectorRef) (CallID, error) //perm:admin
	// ReplicaUpdate needs sector storage; not supported.
	ReplicaUpdate(ctx context.Context, sector SectorRef, pieces []abi.PieceInfo) (CallID, error) //perm:admin
	// ProveReplicaUpdate1 needs sector storage; not supported.
	ProveReplicaUpdate1(ctx context.Context, sector SectorRef, sectorKey, newSealed, newUnsealed cid.Cid) (CallID, error) //perm:admin
	// ProveReplicaUpdate2 queues a SnapDeals proof and returns its CallID at once; the result
	// goes back through the miner's ReturnProveReplicaUpdate2.
	ProveReplicaUpdate2(ctx context.Context, sector SectorRef, sectorKey, newSealed, newUnsealed cid.Cid, vanillaProofs ReplicaVanillaProofs) (CallID, error) //perm:admin
	// GenerateSectorKeyFromData needs sector storage; not supported.
	GenerateSectorKeyFromData(ctx context.Context, sector SectorRef, commD cid.Cid) (CallID, error) //perm:admin
	// ReleaseUnsealed needs sector storage; not supported.
	ReleaseUnsealed(ctx context.Context, sector SectorRef, keepUnsealed json.RawMessage) (CallID, error) //perm:admin
	// MoveStorage needs sector storage; not supported.
	MoveStorage(ctx context.Context, sector SectorRef, types json.RawMessage) (CallID, error) //perm:admin
	// UnsealPiece needs sector storage; not supported.
	UnsealPiece(ctx context.Context, sector SectorRef, offset uint64, size abi.UnpaddedPieceSize, ticket abi.SealRandomness, commd cid.Cid) (CallID, error) //perm:admin
	// Fetch needs sector storage; not supported.
	Fetch(ctx context.Context, sector SectorRef, fileType json.RawMessage, pathType json.RawMessage, mode json.RawMessage) (CallID, error) //perm:admin
	// DownloadSectorData needs sector storage; not supported.
	DownloadSectorData(ctx context.Context, sector SectorRef, finalized bool, src json.RawMessage) (CallID, error) //perm:admin

	// GenerateWinningPoSt proves a WinningPoSt on a worker in winningpost mode: it reads each
	// sector's vanilla proof from the miner's storage (StorageFindSector, then
	// POST {BaseURL}/vanilla/single) and answers with the proof; a sector that cannot be read
	// fails the call.
	GenerateWinningPoSt(ctx context.Context, ppt abi.RegisteredPoStProof, mid abi.ActorID, sectors []PostSectorChallenge, randomness abi.PoStRandomness) ([]proof.PoStProof, error) //perm:admin
	// GenerateWindowPoSt proves one WindowPoSt partition on a worker in windowpost mode, reading
	// vanilla proofs as GenerateWinningPoSt does. Sectors that cannot be read are answered in
	// Skipped, without a proof and without an error, as lotus-worker does; the miner retries
	// without them.
	GenerateWindowPoSt(ctx context.Context, ppt abi.RegisteredPoStProof, mid abi.ActorID, sectors []PostSectorChallenge, partitionIdx int, randomness abi.PoStRandomness) (WindowPoStResult, error) //perm:admin

	// TaskDisable stops advertising a task type.
	TaskDisable(ctx context.Context, tt TaskType) error //perm:admin
	// TaskEnable advertises a task type again.
	TaskEnable(ctx context.Context, tt TaskType) error //perm:admin

	// Remove is a no-op: snarkd stores no sector files.
	Remove(ctx context.Context, sector abi.SectorID) error //perm:admin

	// StorageLocal lists local storage; snarkd has none.
	StorageLocal(ctx context.Context) (map[string]string, error) //perm:admin
	// StorageAddLocal is not supported: snarkd stores no sector files.
	StorageAddLocal(ctx context.Context, path string) error //perm:admin
	// StorageDetachLocal is not supported.
	StorageDetachLocal(ctx context.Context, path string) error //perm:admin
	// StorageDetachAll detaches nothing.
	StorageDetachAll(ctx context.Context) error //perm:admin
	// StorageRedeclareLocal redeclares nothing.
	StorageRedeclareLocal(ctx context.Context, id *string, dropMissing bool) error //perm:admin

	// SetEnabled marks the worker enabled or disabled; while disabled Session fails.
	SetEnabled(ctx context.Context, enabled bool) error //perm:admin
	// Enabled reports SetEnabled's state.
	Enabled(ctx context.Context) (bool, error) //perm:admin
	// WaitQuiet blocks until no Lotus call is queued or running.
	WaitQuiet(ctx context.Context) error //perm:admin
	// ProcessSession is a random UUID made when the daemon starts.
	ProcessSession(ctx context.Context) (uuid.UUID, error) //perm:admin
	// Session is ProcessSession, but fails while the worker is disabled.
	Session(ctx context.Context) (uuid.UUID, error) //perm:admin
	// Shutdown stops the daemon.
	Shutdown(ctx context.Context) error //perm:admin
}

// NewWorkerClient connects to a Lotus worker API (snarkd's or a lotus-worker's) at addr.
func NewWorkerClient(ctx context.Context, addr string, header http.Header, opts ...jsonrpc.Option) (Worker, jsonrpc.ClientCloser, error) {
	var c WorkerStruct
	opts = append([]jsonrpc.Option{jsonrpc.WithErrors(RPCErrors)}, opts...)
	closer, err := jsonrpc.NewMergeClient(ctx, addr, WorkerNamespace, []interface{}{&c.Internal}, header, opts...)
	if err != nil {
		return nil, nil, err
	}
	return &c, closer, nil
}
