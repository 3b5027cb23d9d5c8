package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/filecoin-project/go-jsonrpc"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"
	"github.com/ipfs/go-cid"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/plugin/auth"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/plugin/lotus"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// ProverAPI implements rpcapi.Prover on the job manager.
type ProverAPI struct {
	// Backend is the proving backend the daemon resolved at start ("cpu" or "cuda").
	Backend string

	jobs      *jobs.Manager
	params    *prover.ParamCache
	attacher  *lotus.Attacher
	workerURL string
	// listen is the API's address when it is every interface's and no worker URL is
	// configured: deriveWorkerURL finds the address for each miner; nil otherwise.
	listen    net.Addr
	started   time.Time
	devices   []rpcapi.DeviceStatus
	gpuStatus func() gpu.Status
	remember  func(apiInfo, workerURL string) error
	// stop starts the daemon's drain (Daemon.Stop); nil in processes that serve no daemon.
	stop func() rpcapi.DrainStatus
	// writeQuota and adminQuota bound test jobs of callers without and with admin permission.
	writeQuota, adminQuota *jobs.TestQuota
}

// testQuotas are the test-kind quotas of cfg: one for callers that may write (tokens granting
// write or sign, and the in-process cuzk service), one for admin tokens.
func testQuotas(cfg config.Jobs) (write, admin *jobs.TestQuota) {
	write = &jobs.TestQuota{Class: "a write token", MaxConstraints: cfg.MaxTestConstraints, MaxPartitions: cfg.MaxTestPartitions,
		ConstraintsSetting: "Jobs.MaxTestConstraints", PartitionsSetting: "Jobs.MaxTestPartitions",
		Hint: fmt.Sprintf("an admin token may ask for up to %d constraints and %d partitions (Jobs.AdminMaxTestConstraints, Jobs.AdminMaxTestPartitions)",
			cfg.AdminMaxTestConstraints, cfg.AdminMaxTestPartitions)}
	admin = &jobs.TestQuota{Class: "an admin token", MaxConstraints: cfg.AdminMaxTestConstraints, MaxPartitions: cfg.AdminMaxTestPartitions,
		ConstraintsSetting: "Jobs.AdminMaxTestConstraints", PartitionsSetting: "Jobs.AdminMaxTestPartitions"}
	return write, admin
}

// submitOpts are the options of a submission from the caller of ctx: the test quota of its
// token's class, and its front door: native, unless an in-process service (cuzk) marked ctx
// with its own (jobs.WithOrigin), whose request-ID rules then apply.
func (p *ProverAPI) submitOpts(ctx context.Context) jobs.SubmitOpts {
	q := p.writeQuota
	if auth.HasPerm(ctx, rpcapi.PermAdmin) {
		q = p.adminQuota
	}
	return jobs.SubmitOpts{Origin: jobs.OriginOf(ctx, rpcapi.OriginNative), TestQuota: q}
}

var _ rpcapi.Prover = (*ProverAPI)(nil)

// Version reports the daemon build, API version and backend.
func (p *ProverAPI) Version(context.Context) (rpcapi.VersionInfo, error) {
	return rpcapi.VersionInfo{
		Version:    buildinfo.String(),
		APIVersion: buildinfo.APIVersion,
		Backend:    p.Backend,
	}, nil
}

// Status reports devices, queues, parameters and totals.
func (p *ProverAPI) Status(context.Context) (rpcapi.StatusInfo, error) {
	st, _ := p.status()
	return st, nil
}

// status is Status with the GPU scheduler's snapshot it was built from (zero without GPUs), for
// callers that need more of the devices than StatusInfo carries, from the same moment.
func (p *ProverAPI) status() (rpcapi.StatusInfo, gpu.Status) {
	var gs gpu.Status
	if p.jobs == nil {
		return rpcapi.StatusInfo{Version: buildinfo.String(), Backend: p.Backend, StartedAt: p.started}, gs
	}
	snap := p.jobs.Snapshot()
	st := rpcapi.StatusInfo{Version: buildinfo.String(), Backend: p.Backend, StartedAt: p.started}
	if p.gpuStatus != nil {
		gs = p.gpuStatus()
		st.Devices = gpuDevices(gs)
		st.PinnedHostBytes = gs.Pinned.Held
	} else {
		for _, d := range p.devices {
			d.WorkersBusy = len(snap.RunningIDs)
			d.Workers = snap.Workers
			d.CurrentJobIDs = snap.RunningIDs
			st.Devices = append(st.Devices, d)
		}
	}
	for _, k := range rpcapi.Kinds {
		st.Queues = append(st.Queues, rpcapi.QueueStatus{Kind: k, Queued: snap.Queued[k], Running: snap.Running[k]})
	}
	for _, pi := range p.params.Loaded() {
		st.Params = append(st.Params, rpcapi.ParamStatus{Circuit: pi.Circuit, Bytes: pi.Bytes, Loaded: pi.Loaded})
	}
	for _, v := range snap.Stats.Completed {
		st.Completed += v
	}
	for _, v := range snap.Stats.Failed {
		st.Failed += v
	}
	for _, v := range snap.Stats.Cancelled {
		st.Cancelled += v
	}
	if p.attacher != nil {
		st.Miner = p.attacher.Status()
	}
	st.Draining = snap.Drain
	return st, gs
}

// Stop makes the daemon drain and exit (Daemon.Stop).
func (p *ProverAPI) Stop(context.Context) (rpcapi.DrainStatus, error) {
	if p.stop == nil {
		return rpcapi.DrainStatus{}, errors.New("this prover cannot be stopped through its API")
	}
	return p.stop(), nil
}

// Submit queues a request.
func (p *ProverAPI) Submit(ctx context.Context, req rpcapi.ProofRequest) (rpcapi.SubmitResult, error) {
	return p.jobs.Submit(req, p.submitOpts(ctx))
}

// Await waits for a job.
func (p *ProverAPI) Await(ctx context.Context, id rpcapi.JobID) (rpcapi.JobResult, error) {
	return p.jobs.Await(ctx, id)
}

// Prove submits and awaits; a job that fails or is cancelled answers a typed error.
func (p *ProverAPI) Prove(ctx context.Context, req rpcapi.ProofRequest) (rpcapi.JobResult, error) {
	res, err := p.jobs.Submit(req, p.submitOpts(ctx))
	if err != nil {
		return rpcapi.JobResult{}, err
	}
	out, err := p.jobs.Await(ctx, res.JobID)
	if err != nil {
		return out, err
	}
	return out, jobError(out.Job)
}

// jobError turns a final job without a proof into the typed error of the API.
func jobError(j rpcapi.Job) error {
	switch j.State {
	case rpcapi.JobFailed:
		return &rpcapi.ErrJobFailed{JobID: j.ID, Message: j.Error}
	case rpcapi.JobCancelled:
		return &rpcapi.ErrJobCancelled{JobID: j.ID}
	}
	return nil
}

// Cancel stops a job.
func (p *ProverAPI) Cancel(_ context.Context, id rpcapi.JobID) (bool, error) {
	return p.jobs.Cancel(id)
}

// Jobs lists jobs.
func (p *ProverAPI) Jobs(_ context.Context, f rpcapi.JobFilter) ([]rpcapi.Job, error) {
	return p.jobs.Jobs(f), nil
}

// Events streams job events over a websocket.
func (p *ProverAPI) Events(ctx context.Context, f rpcapi.JobFilter) (<-chan rpcapi.JobEvent, error) {
	if jsonrpc.GetConnectionType(ctx) == jsonrpc.ConnectionTypeHTTP {
		return nil, errors.New("Events needs a websocket connection (ws://…/rpc/v0)")
	}
	return p.jobs.Subscribe(ctx, f), nil
}

// MinerAttach registers with a lotus-miner and keeps the registration.
func (p *ProverAPI) MinerAttach(ctx context.Context, minerAPIInfo, workerURL string) error {
	if p.attacher == nil {
		return errors.New("this daemon has no Lotus worker API")
	}
	// An explicit URL is remembered as given; a derived one is derived again at the next start,
	// whose listen address may differ.
	explicit := workerURL
	if workerURL == "" {
		workerURL = p.workerURL
	}
	if workerURL == "" && p.listen != nil {
		var err error
		if workerURL, err = p.deriveWorkerURL(ctx, minerAPIInfo); err != nil {
			return err
		}
	}
	if err := p.attacher.Attach(ctx, minerAPIInfo, workerURL, true); err != nil {
		return err
	}
	if p.remember != nil {
		return p.remember(minerAPIInfo, explicit)
	}
	return nil
}

// deriveWorkerURL finds the URL the miner of minerAPIInfo dials back when the API listens on
// every interface (lotus.RoutableWorkerURL), and logs it.
func (p *ProverAPI) deriveWorkerURL(ctx context.Context, minerAPIInfo string) (string, error) {
	u, err := lotus.RoutableWorkerURL(ctx, minerAPIInfo, p.listen)
	if err != nil {
		return "", fmt.Errorf("no worker URL for the miner to dial back: the API listens on %s (every interface) and "+
			"Lotus.WorkerURL is empty, and deriving this host's address failed: %w; set --worker-url (Lotus.WorkerURL)", p.listen, err)
	}
	log.Infow("derived the worker URL the lotus-miner dials back from the connection to it", "worker_url", u, "listen", p.listen.String())
	return u, nil
}

// proveFFI runs an ffi-shaped call as a job keyed by its content.
func (p *ProverAPI) proveFFI(ctx context.Context, req rpcapi.ProofRequest) ([]byte, error) {
	res, err := p.Prove(ctx, req)
	if err != nil {
		return nil, err
	}
	return res.Proof, nil
}

// SealCommitPhase2 proves a C1 output; the seal proof type is read from the C1 JSON.
func (p *ProverAPI) SealCommitPhase2(ctx context.Context, phase1Out []byte, sectorNum abi.SectorNumber, minerID abi.ActorID) ([]byte, error) {
	spt, err := C1SealProof(phase1Out)
	if err != nil {
		return nil, err
	}
	return p.proveFFI(ctx, rpcapi.ProofRequest{Kind: rpcapi.KindPoRepC2, RegisteredProof: int64(spt), MinerID: minerID, SectorNumber: sectorNum, Phase1Out: phase1Out})
}

// GenerateWinningPoStWithVanilla proves a WinningPoSt.
func (p *ProverAPI) GenerateWinningPoStWithVanilla(ctx context.Context, pt abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte) ([]proof.PoStProof, error) {
	b, err := p.proveFFI(ctx, rpcapi.ProofRequest{Kind: rpcapi.KindWinningPoSt, RegisteredProof: int64(pt), MinerID: minerID, Randomness: randomness, VanillaProofs: proofs})
	if err != nil {
		return nil, err
	}
	return []proof.PoStProof{{PoStProof: pt, ProofBytes: b}}, nil
}

// GenerateSinglePartitionWindowPoStWithVanilla proves one WindowPoSt partition.
func (p *ProverAPI) GenerateSinglePartitionWindowPoStWithVanilla(ctx context.Context, pt abi.RegisteredPoStProof, minerID abi.ActorID, randomness abi.PoStRandomness, proofs [][]byte, partitionIndex uint) (proof.PoStProof, error) {
	b, err := p.proveFFI(ctx, rpcapi.ProofRequest{Kind: rpcapi.KindWindowPoSt, RegisteredProof: int64(pt), MinerID: minerID, Randomness: randomness, VanillaProofs: proofs, PartitionIndex: partitionIndex})
	if err != nil {
		return proof.PoStProof{}, err
	}
	return proof.PoStProof{PoStProof: pt, ProofBytes: b}, nil
}

// GenerateUpdateProofWithVanilla proves a SnapDeals update.
func (p *ProverAPI) GenerateUpdateProofWithVanilla(ctx context.Context, pt abi.RegisteredUpdateProof, oldSealed, newSealed, unsealed cid.Cid, vanilla [][]byte) ([]byte, error) {
	comms, err := lotus.UpdateCommitments(oldSealed, newSealed, unsealed, [3]string{"oldSealed", "newSealed", "unsealed"})
	if err != nil {
		return nil, err
	}
	return p.proveFFI(ctx, rpcapi.ProofRequest{Kind: rpcapi.KindSnapProve, RegisteredProof: int64(pt), VanillaProofs: vanilla,
		CommROld: comms[0], CommRNew: comms[1], CommDNew: comms[2]})
}
