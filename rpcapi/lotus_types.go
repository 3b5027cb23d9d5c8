package rpcapi

import (
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/google/uuid"
	"github.com/ipfs/go-cid"
)

// The types in this file mirror lotus/storage/sealer/storiface and lotus/api field for field:
// Lotus JSON uses Go field names as keys, so names and order here are the wire format.

// APIVersion is Lotus's binary semver: major<<16 | minor<<8 | patch.
type APIVersion uint32

// NewAPIVersion packs a semantic version the way Lotus does.
func NewAPIVersion(major, minor, patch uint8) APIVersion {
	return APIVersion(uint32(major)<<16 | uint32(minor)<<8 | uint32(patch))
}

// EqMajorMinor reports whether two versions agree on major and minor, Lotus's compatibility rule.
func (v APIVersion) EqMajorMinor(o APIVersion) bool { return v&0xffff00 == o&0xffff00 }

func (v APIVersion) String() string {
	return fmt.Sprintf("%d.%d.%d", uint32(v)>>16&0xff, uint32(v)>>8&0xff, uint32(v)&0xff)
}

var (
	// WorkerAPIVersion0 is the Lotus worker API version snarkd speaks (1.7.0 = 67328).
	WorkerAPIVersion0 = NewAPIVersion(1, 7, 0)
	// MinerAPIVersion0 is the lotus-miner API version a worker expects (1.5.0 = 66816).
	MinerAPIVersion0 = NewAPIVersion(1, 5, 0)
)

// MinerVersion answers the miner's Version call (lotus api.APIVersion).
type MinerVersion struct {
	Version    string
	APIVersion APIVersion
	BlockDelay uint64
	Agent      string
}

// TaskType is a Lotus sealing task type string (sealtasks.TaskType).
type TaskType string

// Task types snarkd can advertise, with their Lotus wire strings.
const (
	TTCommit2             TaskType = "seal/v0/commit/2"
	TTProveReplicaUpdate2 TaskType = "seal/v0/provereplicaupdate/2"
	TTGenerateWindowPoSt  TaskType = "post/v0/windowproof"
	TTGenerateWinningPoSt TaskType = "post/v0/winningproof"
)

// SectorRef names a sector and its seal proof type (storiface.SectorRef).
type SectorRef struct {
	ID        abi.SectorID
	ProofType abi.RegisteredSealProof
}

// Commit1Out is the JSON of rust-fil-proofs' SealCommitPhase1Output, base64 on the wire.
type Commit1Out []byte

// Proof is one or more concatenated 192-byte Groth16 proofs, base64 on the wire.
type Proof []byte

// ReplicaUpdateProof is a SnapDeals update proof, base64 on the wire.
type ReplicaUpdateProof []byte

// ReplicaVanillaProofs holds one bincode PartitionProof per SnapDeals partition.
type ReplicaVanillaProofs [][]byte

// CallID names one asynchronous worker call (storiface.CallID).
type CallID struct {
	Sector abi.SectorID
	ID     uuid.UUID
}

// String renders the call as Lotus does: miner-number-uuid.
func (c CallID) String() string {
	return fmt.Sprintf("%d-%d-%s", c.Sector.Miner, c.Sector.Number, c.ID)
}

// UndefCall is the zero CallID, returned alongside errors.
var UndefCall CallID

// ErrorCode classifies a CallError (storiface.ErrorCode).
type ErrorCode int

// Lotus call error codes; 100 and up are temporary failures the miner may retry.
const (
	ErrUnknown           ErrorCode = 0
	ErrTempUnknown       ErrorCode = 100
	ErrTempWorkerRestart ErrorCode = 101
	ErrTempAllocateSpace ErrorCode = 102
)

// CallError is the failure half of a Return* callback (storiface.CallError).
type CallError struct {
	Code    ErrorCode
	Message string
}

func (c *CallError) Error() string {
	return fmt.Sprintf("storage call error %d: %s", c.Code, c.Message)
}

// NewCallError builds a CallError from an error, as storiface.Err does.
func NewCallError(code ErrorCode, err error) *CallError {
	return &CallError{Code: code, Message: err.Error()}
}

// WorkerInfo answers Filecoin.Info (storiface.WorkerInfo).
type WorkerInfo struct {
	Hostname string
	// IgnoreResources tells the miner's scheduler to skip its resource checks (all but
	// MaxConcurrent) and send what it has; snarkd sets it only with Lotus.IgnoreResources.
	IgnoreResources bool
	Resources       WorkerResources
}

// WorkerResources describes the worker's machine (storiface.WorkerResources).
type WorkerResources struct {
	MemPhysical uint64
	MemUsed     uint64
	MemSwap     uint64
	MemSwapUsed uint64

	CPUs uint64
	GPUs []string

	// Resources overrides the miner's default resource table, per task type and seal proof
	// type (JSON keys: the task type string, the proof number as a string); nil means use the
	// defaults, as does a missing entry.
	Resources map[TaskType]map[abi.RegisteredSealProof]Resources
}

// Resources is one entry of Lotus's resource table (storiface.Resources).
type Resources struct {
	MinMemory         uint64
	MaxMemory         uint64
	GPUUtilization    float64
	MaxParallelism    int
	MaxParallelismGPU int
	BaseMinMemory     uint64
	MaxConcurrent     int
}

// StoragePath is one local storage path of a worker (storiface.StoragePath); snarkd has none.
type StoragePath struct {
	ID        string
	Weight    uint64
	LocalPath string
	CanSeal   bool
	CanStore  bool
}

// SectorCids are a sector's commitments (storiface.SectorCids).
type SectorCids struct {
	Unsealed cid.Cid
	Sealed   cid.Cid
}

// PostSectorChallenge is one sector's PoSt challenge (storiface.PostSectorChallenge).
type PostSectorChallenge struct {
	SealProof    abi.RegisteredSealProof
	SectorNumber abi.SectorNumber
	SealedCID    cid.Cid
	Challenge    []uint64
	Update       bool
}

// WindowPoStResult answers GenerateWindowPoSt (storiface.WindowPoStResult).
type WindowPoStResult struct {
	PoStProofs proof.PoStProof
	Skipped    []abi.SectorID
}

// SectorFileType is a bit set of sector file kinds (storiface.SectorFileType), a JSON number.
type SectorFileType int

// Sector file types with Lotus's bit values.
const (
	FTUnsealed SectorFileType = 1 << iota
	FTSealed
	FTCache
	FTUpdate
	FTUpdateCache
)

// StorageID names a storage path in the miner's index (storiface.ID, a UUID string).
type StorageID string

// SectorStorageInfo is one storage path holding a sector's files, as StorageFindSector answers
// it (storiface.SectorStorageInfo). BaseURLs are the /remote endpoints of the nodes serving the
// path; vanilla proofs are read from BaseURL + "/vanilla/single".
type SectorStorageInfo struct {
	ID       StorageID
	URLs     []string
	BaseURLs []string
	Weight   uint64

	CanSeal  bool
	CanStore bool

	Primary bool

	AllowTypes  []string
	DenyTypes   []string
	AllowMiners []string
	DenyMiners  []string
}

// SingleVanillaParams is the JSON body of POST {BaseURL}/vanilla/single, the request for one
// sector's PoSt vanilla proof (lotus storage/paths SingleVanillaParams). The answer is the
// bincode vanilla proof as the body of a 200 response.
type SingleVanillaParams struct {
	Miner     abi.ActorID
	Sector    PostSectorChallenge
	ProofType abi.RegisteredPoStProof
}
