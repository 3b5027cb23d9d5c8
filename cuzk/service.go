// Package cuzk serves the cuzk.v1 ProvingEngine gRPC service, the remote prover protocol of
// Curio's [Cuzk] Address, on top of the daemon's job manager: a Curio node pointed at snarkd
// gets its PoRep, SnapDeals, WindowPoSt and WinningPoSt SNARKs proved without any change.
package cuzk

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	logging "github.com/ipfs/go-log/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/snarkd/snarkd/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/rpcapi"
)

var log = logging.Logger("snarkd/cuzk")

// SRS manages proving parameters by circuit ID ("porep-32g"). The pipeline's parameter cache
// has no preload or evict yet; the service answers from Status without one.
type SRS interface {
	Preload(ctx context.Context, circuitID string) (alreadyLoaded bool, took time.Duration, err error)
	Evict(ctx context.Context, circuitID string) (wasLoaded bool, freedBytes uint64, err error)
}

// Options are the service's optional parts.
type Options struct {
	// Metrics returns the daemon's Prometheus text; the service appends cuzk-named families.
	Metrics func(ctx context.Context) (string, error)
	// SRS manages parameters; nil answers PreloadSRS and EvictSRS from Status.
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
// job; with different content it fails with AlreadyExists.
func (s *Service) SubmitProof(ctx context.Context, m *pb.SubmitProofRequest) (*pb.SubmitProofResponse, error) {
	res, err := s.submit(ctx, "SubmitProof", m)
	if err != nil {
		return nil, err
	}
	return &pb.SubmitProofResponse{JobId: string(res.JobID), QueuePosition: clampU32(res.QueuePosition)}, nil
}

func (s *Service) submit(ctx context.Context, method string, m *pb.SubmitProofRequest) (rpcapi.SubmitResult, error) {
	req, err := ToProofRequest(m)
	if err != nil {
		log.Infow(method+" refused", "request", m.GetRequestId(), "kind", m.GetProofKind(), "err", err)
		return rpcapi.SubmitResult{}, grpcError(ctx, err)
	}
	res, err := s.engine.Submit(ctx, req)
	if err != nil {
		log.Infow(method+" refused", "request", req.RequestID, "kind", req.Kind, "err", err)
		return rpcapi.SubmitResult{}, grpcError(ctx, err)
	}
	log.Infow(method, "request", req.RequestID, "kind", req.Kind, "job", res.JobID, "existing", res.Existing,
		"position", res.QueuePosition, "bytes", len(m.VanillaProof)+totalLen(m.VanillaProofs))
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
	switch res.State {
	case rpcapi.JobDone:
		r.Status = pb.AwaitProofResponse_COMPLETED
		r.Proof = res.Proof
		t := res.Timings
		r.QueueWaitMs, r.SynthesisMs, r.GpuComputeMs, r.TotalMs = t.QueueWaitMs, t.SynthesisMs, t.ProveMs, t.TotalMs
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
	for _, p := range st.Params {
		tier := pb.SRSStatus_COLD
		if p.Loaded {
			tier = pb.SRSStatus_HOT
		}
		out.LoadedSrs = append(out.LoadedSrs, &pb.SRSStatus{CircuitId: p.Circuit, Tier: tier, SizeBytes: p.Bytes})
	}
	for _, q := range st.Queues {
		out.Queues = append(out.Queues, &pb.QueueStatus{ProofKind: QueueName(q.Kind), Pending: clampU32(q.Queued), InProgress: clampU32(q.Running)})
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

// circuitIDRe matches cuzk's parameter names: kind and sector size, e.g. "porep-32g".
var circuitIDRe = regexp.MustCompile(`^(porep|snap|wpost|winning)-(2k|8m|512m|32g|64g)$`)

// PreloadSRS loads a circuit's parameters ahead of its proofs.
func (s *Service) PreloadSRS(ctx context.Context, m *pb.PreloadSrsRequest) (*pb.PreloadSrsResponse, error) {
	id := m.GetCircuitId()
	if s.opts.SRS != nil {
		already, took, err := s.opts.SRS.Preload(ctx, id)
		if err != nil {
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
	return nil, status.Errorf(codes.Unimplemented, "circuit_id %q: preloading is not available in this build; parameters load when the first proof needs them", id)
}

// EvictSRS drops a circuit's parameters from memory.
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
	return nil, status.Errorf(codes.Unimplemented, "circuit_id %q: evicting parameters is not available in this build", id)
}

// param finds a circuit among the daemon's parameters; nil when it names a known circuit that
// is not loaded. An ID that is neither cuzk's nor loaded is refused.
func (s *Service) param(ctx context.Context, id string) (*rpcapi.ParamStatus, error) {
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "circuit_id: empty")
	}
	st, err := s.engine.Status(ctx)
	if err != nil {
		return nil, grpcError(ctx, err)
	}
	for i := range st.Params {
		if st.Params[i].Circuit == id {
			return &st.Params[i], nil
		}
	}
	if !circuitIDRe.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "circuit_id %q: unknown; want porep, snap, wpost or winning, a dash, and the sector size (2k, 8m, 512m, 32g, 64g), e.g. porep-32g", id)
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
		perm     *rpcapi.ErrPermission
		large    *ErrTooLarge
	)
	code := codes.Internal
	switch {
	case errors.As(err, &bad):
		code = codes.InvalidArgument
	case errors.As(err, &unsup):
		code = codes.Unimplemented
	case errors.As(err, &full), errors.As(err, &large):
		code = codes.ResourceExhausted
	case errors.As(err, &notFound):
		code = codes.NotFound
	case errors.As(err, &conflict):
		code = codes.AlreadyExists
	case errors.As(err, &down):
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
