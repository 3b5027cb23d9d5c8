// Package cuzk serves the cuzk.v1 ProvingEngine gRPC service, the remote prover protocol of
// Curio's [Cuzk] Address, on top of the daemon's job manager: a Curio node pointed at snarkd
// gets its PoRep, SnapDeals, WindowPoSt and WinningPoSt SNARKs proved without any change.
package cuzk

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	logging "github.com/ipfs/go-log/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

var log = logging.Logger("snarkd/cuzk")

// SRS manages proving parameters by circuit ID ("porep-32g"): ParamSRS on the daemon's
// parameter cache. Unknown IDs are *UnknownCircuitError.
type SRS interface {
	Preload(ctx context.Context, circuitID string) (alreadyLoaded bool, took time.Duration, err error)
	Evict(ctx context.Context, circuitID string) (wasLoaded bool, freedBytes uint64, err error)
	Loaded(ctx context.Context) ([]SRSInfo, error)
}

// Options are the service's optional parts.
type Options struct {
	// Metrics returns the daemon's Prometheus text; the service appends cuzk-named families.
	Metrics func(ctx context.Context) (string, error)
	// SRS manages parameters; nil answers PreloadSRS and EvictSRS from the Engine's Status
	// (without loading or dropping anything).
	SRS SRS
}

// Service implements pb.ProvingEngineServer on an Engine.
type Service struct {
	pb.UnimplementedProvingEngineServer
	engine Engine
	opts   Options
}

// NewService returns the service backed by e.
func NewService(e Engine, opts Options) *Service {
	return &Service{engine: e, opts: opts}
}

// SubmitProof queues a proof. A request ID seen before with the same content answers the same
// job. With different content it is proved as a new job once the job it names has finished
// (done, failed or cancelled), as Curio's own cuzk daemon proves every submission; while that
// job is queued or running it fails with AlreadyExists.
func (s *Service) SubmitProof(ctx context.Context, m *pb.SubmitProofRequest) (*pb.SubmitProofResponse, error) {
	res, err := s.submit(ctx, "SubmitProof", m)
	if err != nil {
		return nil, err
	}
	out := &pb.SubmitProofResponse{JobId: string(res.JobID), QueuePosition: clampU32(res.QueuePosition)}
	if res.Existing && res.State.Final() {
		// A request ID seen before may name a job that has run: say where.
		if js, err := s.engine.Jobs(ctx, rpcapi.JobFilter{JobIDs: []rpcapi.JobID{res.JobID}}); err == nil && len(js) == 1 {
			out.AssignedGpu = AssignedGPU(js[0].GPUs)
		}
	}
	return out, nil
}

// AssignedGPU renders the GPUs that proved a job as assigned_gpu: the ordinal ("0"), several
// joined by commas when partitions ran on more than one, and empty when the CPU proved it.
func AssignedGPU(ordinals []int) string {
	parts := make([]string, len(ordinals))
	for i, o := range ordinals {
		parts[i] = strconv.Itoa(o)
	}
	return strings.Join(parts, ",")
}

func (s *Service) submit(ctx context.Context, method string, m *pb.SubmitProofRequest) (rpcapi.SubmitResult, error) {
	req, err := ToProofRequest(m)
	if err != nil {
		log.Infow(method+" refused", "request", m.GetRequestId(), "kind", m.GetProofKind(), "err", err)
		return rpcapi.SubmitResult{}, grpcError(ctx, err)
	}
	// The cuzk front door's request-ID rules (a done job's ID is free for new content) apply
	// through the marked context; the native API's own callers keep theirs.
	res, err := s.engine.Submit(jobs.WithOrigin(ctx, rpcapi.OriginCuzk), req)
	if err != nil {
		log.Infow(method+" refused", "request", req.RequestID, "kind", req.Kind, "err", err)
		return rpcapi.SubmitResult{}, grpcError(ctx, err)
	}
	msg := method
	if res.Replaces != "" {
		msg += ": request ID taken over from a finished job, proving the new request"
	}
	log.Infow(msg, "request", req.RequestID, "kind", req.Kind, "job", res.JobID, "existing", res.Existing,
		"replaces", res.Replaces, "position", res.QueuePosition, "bytes", len(m.VanillaProof)+totalLen(m.VanillaProofs))
	return res, nil
}

// AwaitProof waits for a job; a timeout that passes answers status TIMEOUT, not an error,
// and leaves the job running.
func (s *Service) AwaitProof(ctx context.Context, m *pb.AwaitProofRequest) (*pb.AwaitProofResponse, error) {
	if m.GetJobId() == "" {
		return nil, status.Error(codes.InvalidArgument, "job_id: empty")
	}
	actx := ctx
	// Timeouts beyond what a Duration holds (~292 years) mean forever.
	if t := m.GetTimeoutMs(); t > 0 && t < math.MaxInt64/uint64(time.Millisecond) {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, time.Duration(t)*time.Millisecond)
		defer cancel()
	}
	res, err := s.engine.Await(actx, rpcapi.JobID(m.JobId))
	if err != nil {
		if actx.Err() != nil && ctx.Err() == nil {
			return &pb.AwaitProofResponse{JobId: m.JobId, Status: pb.AwaitProofResponse_TIMEOUT}, nil
		}
		return nil, grpcError(ctx, err)
	}
	return toAwaitResponse(res), nil
}

// Prove submits and waits for as long as the caller does. A caller that gives up leaves the
// job to finish; asking again with the same request ID picks up its result.
func (s *Service) Prove(ctx context.Context, m *pb.ProveRequest) (*pb.ProveResponse, error) {
	if m.GetSubmit() == nil {
		return nil, status.Error(codes.InvalidArgument, "submit: missing")
	}
	res, err := s.submit(ctx, "Prove", m.Submit)
	if err != nil {
		return nil, err
	}
	out, err := s.engine.Await(ctx, res.JobID)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	r := toAwaitResponse(out)
	log.Infow("Prove finished", "request", out.RequestID, "job", out.ID, "status", r.Status, "total_ms", r.TotalMs)
	return &pb.ProveResponse{Result: r}, nil
}

func toAwaitResponse(res rpcapi.JobResult) *pb.AwaitProofResponse {
	r := &pb.AwaitProofResponse{JobId: string(res.ID)}
	t := res.Timings
	r.QueueWaitMs, r.SrsLoadMs, r.SynthesisMs, r.GpuComputeMs, r.TotalMs = t.QueueWaitMs, t.SRSLoadMs, t.SynthesisMs, t.ProveMs, t.TotalMs
	switch res.State {
	case rpcapi.JobDone:
		r.Status = pb.AwaitProofResponse_COMPLETED
		r.Proof = res.Proof
	case rpcapi.JobFailed:
		r.Status, r.ErrorMessage = pb.AwaitProofResponse_FAILED, res.Error
	case rpcapi.JobCancelled:
		r.Status, r.ErrorMessage = pb.AwaitProofResponse_CANCELLED, "cancelled"
	default:
		r.Status = pb.AwaitProofResponse_UNKNOWN
	}
	return r
}

// CancelProof stops a job; was_running tells whether it had started. A final job is left alone.
func (s *Service) CancelProof(ctx context.Context, m *pb.CancelProofRequest) (*pb.CancelProofResponse, error) {
	if m.GetJobId() == "" {
		return nil, status.Error(codes.InvalidArgument, "job_id: empty")
	}
	running, err := s.engine.Cancel(ctx, rpcapi.JobID(m.JobId))
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	log.Infow("CancelProof", "job", m.JobId, "was_running", running)
	return &pb.CancelProofResponse{WasRunning: running}, nil
}

// GetStatus reports devices with their current job, parameters with their sizes, and queue
// depth per proof kind (Curio sums pending and in_progress for backpressure).
func (s *Service) GetStatus(ctx context.Context, _ *pb.GetStatusRequest) (*pb.GetStatusResponse, error) {
	st, err := s.engine.Status(ctx)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	out := &pb.GetStatusResponse{
		TotalProofsCompleted: st.Completed,
		TotalProofsFailed:    st.Failed,
		PinnedMemoryBytes:    st.PinnedHostBytes,
	}
	if !st.StartedAt.IsZero() {
		out.UptimeSeconds = uint64(time.Since(st.StartedAt).Seconds())
	}
	kinds := s.runningKinds(ctx, st)
	for i, d := range st.Devices {
		g := &pb.GPUStatus{Ordinal: uint32(i), Name: d.Name, VramTotalBytes: d.VRAMTotal, VramFreeBytes: d.VRAMFree}
		// The job manager does not yet say which device runs a job; with one device this is exact.
		if len(st.Devices) == 1 && len(d.CurrentJobIDs) > 0 {
			g.CurrentJobId = string(d.CurrentJobIDs[0])
			g.CurrentProofKind = kinds[d.CurrentJobIDs[0]]
		}
		out.Gpus = append(out.Gpus, g)
	}
	srs, err := s.loadedSRS(ctx, st)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	for _, p := range srs {
		// HOT: in the daemon's memory, ready for the next proof; COLD: still being read.
		tier := pb.SRSStatus_COLD
		if p.Loaded {
			tier = pb.SRSStatus_HOT
		}
		out.LoadedSrs = append(out.LoadedSrs, &pb.SRSStatus{CircuitId: p.CircuitID, Tier: tier, SizeBytes: p.Bytes, RefCount: clampU32(p.Refs)})
	}
	for _, q := range st.Queues {
		out.Queues = append(out.Queues, &pb.QueueStatus{ProofKind: QueueName(q.Kind), Pending: clampU32(q.Queued), InProgress: clampU32(q.Running)})
	}
	return out, nil
}

// loadedSRS lists the parameter sets: from SRS when the service has one, else from Status.
func (s *Service) loadedSRS(ctx context.Context, st rpcapi.StatusInfo) ([]SRSInfo, error) {
	if s.opts.SRS != nil {
		return s.opts.SRS.Loaded(ctx)
	}
	out := make([]SRSInfo, 0, len(st.Params))
	for _, p := range st.Params {
		out = append(out, SRSInfo{CircuitID: p.Circuit, Bytes: p.Bytes, Loaded: p.Loaded})
	}
	return out, nil
}

// runningKinds names the kind of each running job, for the GPU entries.
func (s *Service) runningKinds(ctx context.Context, st rpcapi.StatusInfo) map[rpcapi.JobID]string {
	var ids []rpcapi.JobID
	for _, d := range st.Devices {
		ids = append(ids, d.CurrentJobIDs...)
	}
	out := map[rpcapi.JobID]string{}
	if len(ids) == 0 {
		return out
	}
	js, err := s.engine.Jobs(ctx, rpcapi.JobFilter{JobIDs: ids})
	if err != nil {
		log.Debugw("listing running jobs for status", "err", err)
		return out
	}
	for _, j := range js {
		out[j.ID] = QueueName(j.Kind)
	}
	return out
}

// GetMetrics returns the daemon's metrics plus a few families under the names a cuzk daemon
// uses, so that dashboards built for it keep working.
func (s *Service) GetMetrics(ctx context.Context, _ *pb.GetMetricsRequest) (*pb.GetMetricsResponse, error) {
	var b strings.Builder
	if s.opts.Metrics != nil {
		text, err := s.opts.Metrics(ctx)
		if err != nil {
			return nil, grpcError(ctx, fmt.Errorf("reading daemon metrics: %w", err))
		}
		b.WriteString(text)
	}
	st, err := s.engine.Status(ctx)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	var queued, running int
	for _, q := range st.Queues {
		queued += q.Queued
		running += q.Running
	}
	var up float64
	if !st.StartedAt.IsZero() {
		up = time.Since(st.StartedAt).Seconds()
	}
	family := func(name, typ, help string, v float64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s %g\n", name, help, name, typ, name, v)
	}
	family("cuzk_proofs_completed_total", "counter", "Proofs completed (all kinds).", float64(st.Completed))
	family("cuzk_proofs_failed_total", "counter", "Proofs failed (all kinds).", float64(st.Failed))
	family("cuzk_uptime_seconds", "gauge", "Seconds since the daemon started.", math.Floor(up))
	family("cuzk_queue_depth", "gauge", "Jobs waiting for a worker.", float64(queued))
	family("cuzk_running_jobs", "gauge", "Jobs being proved.", float64(running))
	return &pb.GetMetricsResponse{PrometheusText: b.String()}, nil
}

// PreloadSRS loads a circuit's parameters ahead of its proofs, as the first proof would:
// already_loaded for parameters in memory, else the load's time. Unknown circuit IDs are
// InvalidArgument; parameters missing from the parameter directory FailedPrecondition.
func (s *Service) PreloadSRS(ctx context.Context, m *pb.PreloadSrsRequest) (*pb.PreloadSrsResponse, error) {
	id := m.GetCircuitId()
	if s.opts.SRS != nil {
		already, took, err := s.opts.SRS.Preload(ctx, id)
		if err != nil {
			log.Infow("PreloadSRS failed", "circuit_id", id, "err", err)
			return nil, grpcError(ctx, err)
		}
		return &pb.PreloadSrsResponse{AlreadyLoaded: already, LoadTimeMs: uint64(took.Milliseconds())}, nil
	}
	p, err := s.param(ctx, id)
	if err != nil {
		return nil, err
	}
	if p != nil && p.Loaded {
		return &pb.PreloadSrsResponse{AlreadyLoaded: true}, nil
	}
	return nil, status.Errorf(codes.Unimplemented, "circuit_id %q: preloading is not available on this service; parameters load when the first proof needs them", id)
}

// EvictSRS drops a circuit's parameters from memory: was_loaded and the bytes the cache let
// go. Proofs in flight keep the parameters they hold; later proofs load them again.
func (s *Service) EvictSRS(ctx context.Context, m *pb.EvictSrsRequest) (*pb.EvictSrsResponse, error) {
	id := m.GetCircuitId()
	if s.opts.SRS != nil {
		was, freed, err := s.opts.SRS.Evict(ctx, id)
		if err != nil {
			return nil, grpcError(ctx, err)
		}
		return &pb.EvictSrsResponse{WasLoaded: was, FreedBytes: freed}, nil
	}
	p, err := s.param(ctx, id)
	if err != nil {
		return nil, err
	}
	if p == nil || !p.Loaded {
		return &pb.EvictSrsResponse{}, nil
	}
	return nil, status.Errorf(codes.Unimplemented, "circuit_id %q: evicting parameters is not available on this service", id)
}

// param finds a circuit among the daemon's parameters; nil when it names a known circuit that
// is not loaded. An ID that is neither cuzk's nor loaded is refused.
func (s *Service) param(ctx context.Context, id string) (*rpcapi.ParamStatus, error) {
	st, err := s.engine.Status(ctx)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	for i := range st.Params {
		if id != "" && st.Params[i].Circuit == id {
			return &st.Params[i], nil
		}
	}
	if !circuitIDRe.MatchString(id) {
		return nil, grpcError(ctx, &UnknownCircuitError{ID: id})
	}
	return nil, nil
}

// grpcError maps the job manager's typed errors onto gRPC status codes, keeping their message.
func grpcError(ctx context.Context, err error) error {
	var (
		bad      *rpcapi.ErrBadRequest
		unsup    *rpcapi.ErrNotSupportedYet
		full     *rpcapi.ErrQueueFull
		notFound *rpcapi.ErrJobNotFound
		conflict *rpcapi.ErrRequestConflict
		down     *rpcapi.ErrShuttingDown
		draining *rpcapi.ErrDraining
		perm     *rpcapi.ErrPermission
		large    *ErrTooLarge
		circuit  *UnknownCircuitError
		missing  *prover.MissingParamsError
	)
	code := codes.Internal
	switch {
	case errors.As(err, &bad), errors.As(err, &circuit):
		code = codes.InvalidArgument
	case errors.As(err, &missing):
		// The operator has to put the parameter files in place first.
		code = codes.FailedPrecondition
	case errors.As(err, &unsup):
		code = codes.Unimplemented
	case errors.As(err, &full), errors.As(err, &large):
		code = codes.ResourceExhausted
	case errors.As(err, &notFound):
		code = codes.NotFound
	case errors.As(err, &conflict):
		code = codes.AlreadyExists
	case errors.As(err, &down), errors.As(err, &draining):
		// Curio retries Unavailable elsewhere or later, which is what a stopping daemon needs.
		code = codes.Unavailable
	case errors.As(err, &perm):
		// The service's own token lacks a permission: a wiring bug, not the caller's fault.
		code = codes.Internal
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(ctx.Err(), context.Canceled):
		code = codes.Canceled
	}
	return status.Error(code, err.Error())
}

func clampU32(n int) uint32 {
	if n < 0 {
		return 0
	}
	if n > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(n)
}

func totalLen(bs [][]byte) int {
	n := 0
	for _, b := range bs {
		n += len(b)
	}
	return n
}
