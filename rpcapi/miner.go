package rpcapi

import (
	"context"
	"net/http"

	"github.com/filecoin-project/go-jsonrpc"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/google/uuid"
)

// MinerNamespace is the lotus-miner API namespace.
const MinerNamespace = "Filecoin"

// Miner is the subset of lotus-miner's StorageMiner API a worker calls back: registration and
// token checks, the Return* callbacks of C2/PRU2, and the storage index a PoSt worker reads
// vanilla proofs through.
type Miner interface {
	// Version reports the miner's API version; a worker requires 1.5.x.
	Version(ctx context.Context) (MinerVersion, error) //perm:read
	// Session is the miner's process UUID; a change means the miner restarted.
	Session(ctx context.Context) (uuid.UUID, error) //perm:read
	// WorkerConnect asks the miner to dial a worker's API at url and add it.
	WorkerConnect(ctx context.Context, url string) error //perm:admin
	// AuthVerify returns the permissions a token grants.
	AuthVerify(ctx context.Context, token string) ([]Permission, error) //perm:read
	// ReturnSealCommit2 delivers a C2 result: a proof, or a CallError.
	ReturnSealCommit2(ctx context.Context, callID CallID, proof Proof, err *CallError) error //perm:admin
	// ReturnProveReplicaUpdate2 delivers a SnapDeals proof, or a CallError.
	ReturnProveReplicaUpdate2(ctx context.Context, callID CallID, proof ReplicaUpdateProof, err *CallError) error //perm:admin
	// StorageFindSector lists the storage paths holding a sector's files of types ft, with the
	// URLs of the nodes serving them; ssize and allowFetch only matter when fetching is allowed
	// (a PoSt worker passes 0 and false).
	StorageFindSector(ctx context.Context, sector abi.SectorID, ft SectorFileType, ssize abi.SectorSize, allowFetch bool) ([]SectorStorageInfo, error) //perm:admin
}

// NewMinerClient connects to a lotus-miner API at addr (http://host:port/rpc/v0).
func NewMinerClient(ctx context.Context, addr string, header http.Header, opts ...jsonrpc.Option) (Miner, jsonrpc.ClientCloser, error) {
	var c MinerStruct
	closer, err := jsonrpc.NewMergeClient(ctx, addr, MinerNamespace, []interface{}{&c.Internal}, header, opts...)
	if err != nil {
		return nil, nil, err
	}
	return &c, closer, nil
}
