// Package lotus makes snarkd a Lotus worker: it serves the worker API (namespace Filecoin) a
// lotus-miner drives after WorkerConnect, turns SealCommit2 and ProveReplicaUpdate2 into jobs
// answered by CallID at once, delivers their results through the miner's Return* methods with
// retries (also after a restart), and keeps the daemon registered with the miner. In a PoSt
// mode it is a PoSt worker instead: GenerateWindowPoSt and GenerateWinningPoSt read vanilla
// proofs from the miner's storage nodes and prove them synchronously.
package lotus

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/google/uuid"
	"github.com/ipfs/go-cid"
	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/filecoin/commcid"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/rpcapi"
)

var log = logging.Logger("snarkd/lotus")

// DefaultTaskTypes are the task types snarkd advertises: the two SNARK steps that need no
// sector files.
var DefaultTaskTypes = []rpcapi.TaskType{rpcapi.TTCommit2, rpcapi.TTProveReplicaUpdate2}

// WorkerAPI implements rpcapi.Worker. Version, Session, Info and TaskTypes touch only atomics
// and a small mutex, never the job queue or the disk, so the miner's heartbeat is answered at
// once however busy the provers are.
type WorkerAPI struct {
	jobs     *jobs.Manager
	name     string
	gpus     []string
	session  uuid.UUID
	disabled atomic.Bool
	shutdown func()

	mu        sync.Mutex
	tasks     map[rpcapi.TaskType]bool // the mode's task types, true while enabled
	mode      Mode
	vanilla   *VanillaFetcher // PoSt modes only
	resources ResourceConfig
}

// NewWorkerAPI serves Lotus calls through m as a sealing worker (SetMode makes it a PoSt
// worker). name is the worker's Hostname, gpus the device names reported in Info, shutdown
// stops the daemon.
func NewWorkerAPI(m *jobs.Manager, name string, gpus []string, shutdown func()) *WorkerAPI {
	w := &WorkerAPI{jobs: m, name: name, gpus: gpus, session: uuid.New(), shutdown: shutdown, tasks: map[rpcapi.TaskType]bool{}, mode: ModeSeal}
	for _, t := range DefaultTaskTypes {
		w.tasks[t] = true
	}
	return w
}

// RestartMessage is the CallError message for calls in flight when the daemon stopped; Lotus
// words it "worker [name: %s] restarted".
func RestartMessage(name string) string { return fmt.Sprintf("worker [name: %s] restarted", name) }

var _ rpcapi.Worker = (*WorkerAPI)(nil)

// Version is 1.7.0.
func (w *WorkerAPI) Version(context.Context) (rpcapi.APIVersion, error) {
	return rpcapi.WorkerAPIVersion0, nil
}

// TaskTypes lists enabled task types.
func (w *WorkerAPI) TaskTypes(context.Context) (map[rpcapi.TaskType]struct{}, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[rpcapi.TaskType]struct{}{}
	for t, on := range w.tasks {
		if on {
			out[t] = struct{}{}
		}
	}
	return out, nil
}

// Paths is empty: snarkd keeps no sector files.
func (w *WorkerAPI) Paths(context.Context) ([]rpcapi.StoragePath, error) {
	return []rpcapi.StoragePath{}, nil
}

// Info reports the machine (memory, CPUs, one GPU name per device, which is how Lotus counts
// GPUs) and, unless ResourceConfig.IgnoreResources is set, a resource table for the mode's task
// types that lets the miner's scheduler run at most the configured number of each at once here
// (ResourceTable). Its MaxMemory entries are sized from the memory free now: the miner reads
// Info once per WorkerConnect and keeps its answer.
func (w *WorkerAPI) Info(context.Context) (rpcapi.WorkerInfo, error) {
	mem := readMeminfo()
	gpus := w.gpus
	if gpus == nil {
		gpus = []string{}
	}
	res := rpcapi.WorkerResources{
		MemPhysical: mem["MemTotal"], MemUsed: sub(mem["MemTotal"], mem["MemAvailable"]),
		MemSwap: mem["SwapTotal"], MemSwapUsed: sub(mem["SwapTotal"], mem["SwapFree"]),
		CPUs: uint64(runtime.NumCPU()), GPUs: gpus,
	}
	w.mu.Lock()
	rc := w.resources
	w.mu.Unlock()
	if rc.IgnoreResources {
		return rpcapi.WorkerInfo{Hostname: w.name, IgnoreResources: true, Resources: res}, nil
	}
	tts := w.modeTaskTypes()
	res.Resources = ResourceTable(res, tts, rc)
	caps := make([]any, 0, 2*len(tts))
	for _, tt := range tts {
		caps = append(caps, string(tt), rc.Concurrency(tt, len(gpus)))
	}
	log.Infow("reporting resources to the miner: at most this many calls at once per task type", caps...)
	return rpcapi.WorkerInfo{Hostname: w.name, Resources: res}, nil
}

// sub is a-b, or 0 where /proc/meminfo's figures would make it negative.
func sub(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// readMeminfo reads /proc/meminfo in bytes; on other systems it returns zeros.
func readMeminfo() map[string]uint64 {
	out := map[string]uint64{}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			n *= 1024
		}
		out[k] = n
	}
	return out
}

// taskReady says why a call of task type tt cannot run here: the worker's mode has no such
// task (a PoSt worker runs no sealing tasks), or it is disabled.
func (w *WorkerAPI) taskReady(tt rpcapi.TaskType) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	on, ok := w.tasks[tt]
	switch {
	case !ok:
		return fmt.Errorf("worker %s is a %s worker (Lotus.WorkerMode): it does not run %s", w.name, w.mode, tt)
	case !on:
		return fmt.Errorf("task type %s is disabled on worker %s", tt, w.name)
	}
	return nil
}

// submit queues a Lotus call as a job and returns its CallID. Proof kinds without a circuit are
// queued too: they fail through the normal path and the miner gets a Return* with a CallError.
func (w *WorkerAPI) submit(sector rpcapi.SectorRef, tt rpcapi.TaskType, req rpcapi.ProofRequest) (rpcapi.CallID, error) {
	if err := w.taskReady(tt); err != nil {
		return rpcapi.UndefCall, err
	}
	call := rpcapi.CallID{Sector: sector.ID, ID: uuid.New()}
	req.RequestID = "lotus:" + call.String()
	req.MinerID = sector.ID.Miner
	req.SectorNumber = sector.ID.Number
	res, err := w.jobs.Submit(req, jobs.SubmitOpts{Origin: rpcapi.OriginLotus, CallID: &call, Deferred: true})
	if err != nil {
		return rpcapi.UndefCall, err
	}
	log.Infow("Lotus call queued", "task", tt, "call", call.String(), "job", res.JobID)
	return call, nil
}

// SealCommit2 queues a PoRep C2.
func (w *WorkerAPI) SealCommit2(_ context.Context, sector rpcapi.SectorRef, c1o rpcapi.Commit1Out) (rpcapi.CallID, error) {
	return w.submit(sector, rpcapi.TTCommit2, rpcapi.ProofRequest{
		Kind: rpcapi.KindPoRepC2, RegisteredProof: int64(sector.ProofType), Phase1Out: c1o,
	})
}

// ProveReplicaUpdate2 queues a SnapDeals proof.
func (w *WorkerAPI) ProveReplicaUpdate2(_ context.Context, sector rpcapi.SectorRef, sectorKey, newSealed, newUnsealed cid.Cid, vanilla rpcapi.ReplicaVanillaProofs) (rpcapi.CallID, error) {
	upt, err := sector.ProofType.RegisteredUpdateProof()
	if err != nil {
		return rpcapi.UndefCall, &rpcapi.ErrBadRequest{Field: "ProofType", Reason: err.Error()}
	}
	comms, err := UpdateCommitments(sectorKey, newSealed, newUnsealed, [3]string{"sectorKey", "newSealed", "newUnsealed"})
	if err != nil {
		return rpcapi.UndefCall, err
	}
	return w.submit(sector, rpcapi.TTProveReplicaUpdate2, rpcapi.ProofRequest{
		Kind: rpcapi.KindSnapProve, RegisteredProof: int64(upt), VanillaProofs: vanilla,
		CommROld: comms[0], CommRNew: comms[1], CommDNew: comms[2],
	})
}

// UpdateCommitments checks the three CIDs of a SnapDeals update — the sector key and the new
// sealed CID (fil-commitment-sealed, Poseidon), the new unsealed CID (fil-commitment-unsealed,
// sha2-256-trunc254-padded) — and returns their 32-byte commitments, or an *rpcapi.ErrBadRequest
// naming the field (names gives the API's argument names).
func UpdateCommitments(oldSealed, newSealed, newUnsealed cid.Cid, names [3]string) ([][]byte, error) {
	out := make([][]byte, 3)
	for i, c := range []cid.Cid{oldSealed, newSealed, newUnsealed} {
		decode := commcid.Sealed
		if i == 2 {
			decode = commcid.Unsealed
		}
		d, err := decode(c, names[i])
		if err != nil {
			return nil, &rpcapi.ErrBadRequest{Field: names[i], Reason: err.Error()}
		}
		out[i] = append([]byte(nil), d[:]...)
	}
	return out, nil
}

// TaskDisable stops advertising a task type.
func (w *WorkerAPI) TaskDisable(_ context.Context, tt rpcapi.TaskType) error {
	return w.setTask(tt, false)
}

// TaskEnable advertises a task type again.
func (w *WorkerAPI) TaskEnable(_ context.Context, tt rpcapi.TaskType) error {
	return w.setTask(tt, true)
}

func (w *WorkerAPI) setTask(tt rpcapi.TaskType, on bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.tasks[tt]; !ok {
		known := make([]string, 0, len(w.tasks))
		for t := range w.tasks {
			known = append(known, string(t))
		}
		sort.Strings(known)
		return fmt.Errorf("task type %q is not handled by this worker (it handles %s)", tt, strings.Join(known, ", "))
	}
	w.tasks[tt] = on
	return nil
}

// Remove is a no-op.
func (w *WorkerAPI) Remove(context.Context, abi.SectorID) error { return nil }

// StorageLocal is empty.
func (w *WorkerAPI) StorageLocal(context.Context) (map[string]string, error) {
	return map[string]string{}, nil
}

// StorageAddLocal is not supported.
func (w *WorkerAPI) StorageAddLocal(context.Context, string) error { return rpcapi.ErrNotSupported }

// StorageDetachLocal is not supported.
func (w *WorkerAPI) StorageDetachLocal(context.Context, string) error {
	return rpcapi.ErrNotSupported
}

// StorageDetachAll detaches nothing.
func (w *WorkerAPI) StorageDetachAll(context.Context) error { return nil }

// StorageRedeclareLocal redeclares nothing.
func (w *WorkerAPI) StorageRedeclareLocal(context.Context, *string, bool) error { return nil }

// SetEnabled toggles Session's answer.
func (w *WorkerAPI) SetEnabled(_ context.Context, enabled bool) error {
	w.disabled.Store(!enabled)
	return nil
}

// Enabled reports SetEnabled's state.
func (w *WorkerAPI) Enabled(context.Context) (bool, error) { return !w.disabled.Load(), nil }

// WaitQuiet returns once no Lotus call is queued or running.
func (w *WorkerAPI) WaitQuiet(ctx context.Context) error { return w.jobs.WaitQuiet(ctx) }

// ProcessSession is the UUID made at start.
func (w *WorkerAPI) ProcessSession(context.Context) (uuid.UUID, error) { return w.session, nil }

// Session is ProcessSession, failing while disabled (Lotus: "worker disabled").
func (w *WorkerAPI) Session(context.Context) (uuid.UUID, error) {
	if w.disabled.Load() {
		return uuid.UUID{}, errors.New("worker disabled")
	}
	return w.session, nil
}

// Shutdown stops the daemon.
func (w *WorkerAPI) Shutdown(context.Context) error {
	log.Warn("shutdown requested through the worker API")
	if w.shutdown != nil {
		go w.shutdown()
	}
	return nil
}

// The rest of the worker API needs sector files snarkd does not have.

// DataCid is not supported.
func (w *WorkerAPI) DataCid(context.Context, abi.UnpaddedPieceSize, json.RawMessage) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// AddPiece is not supported.
func (w *WorkerAPI) AddPiece(context.Context, rpcapi.SectorRef, []abi.UnpaddedPieceSize, abi.UnpaddedPieceSize, json.RawMessage) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// SealPreCommit1 is not supported.
func (w *WorkerAPI) SealPreCommit1(context.Context, rpcapi.SectorRef, abi.SealRandomness, []abi.PieceInfo) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// SealPreCommit2 is not supported.
func (w *WorkerAPI) SealPreCommit2(context.Context, rpcapi.SectorRef, []byte) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// SealCommit1 is not supported.
func (w *WorkerAPI) SealCommit1(context.Context, rpcapi.SectorRef, abi.SealRandomness, abi.InteractiveSealRandomness, []abi.PieceInfo, rpcapi.SectorCids) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// FinalizeSector is not supported.
func (w *WorkerAPI) FinalizeSector(context.Context, rpcapi.SectorRef) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// FinalizeReplicaUpdate is not supported.
func (w *WorkerAPI) FinalizeReplicaUpdate(context.Context, rpcapi.SectorRef) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// ReplicaUpdate is not supported.
func (w *WorkerAPI) ReplicaUpdate(context.Context, rpcapi.SectorRef, []abi.PieceInfo) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// ProveReplicaUpdate1 is not supported.
func (w *WorkerAPI) ProveReplicaUpdate1(context.Context, rpcapi.SectorRef, cid.Cid, cid.Cid, cid.Cid) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// GenerateSectorKeyFromData is not supported.
func (w *WorkerAPI) GenerateSectorKeyFromData(context.Context, rpcapi.SectorRef, cid.Cid) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// ReleaseUnsealed is not supported.
func (w *WorkerAPI) ReleaseUnsealed(context.Context, rpcapi.SectorRef, json.RawMessage) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// MoveStorage is not supported.
func (w *WorkerAPI) MoveStorage(context.Context, rpcapi.SectorRef, json.RawMessage) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// UnsealPiece is not supported.
func (w *WorkerAPI) UnsealPiece(context.Context, rpcapi.SectorRef, uint64, abi.UnpaddedPieceSize, abi.SealRandomness, cid.Cid) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// Fetch is not supported.
func (w *WorkerAPI) Fetch(context.Context, rpcapi.SectorRef, json.RawMessage, json.RawMessage, json.RawMessage) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}

// DownloadSectorData is not supported.
func (w *WorkerAPI) DownloadSectorData(context.Context, rpcapi.SectorRef, bool, json.RawMessage) (rpcapi.CallID, error) {
	return rpcapi.UndefCall, rpcapi.ErrNotSupported
}
