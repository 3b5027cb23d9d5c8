// Package prover is the proving pipeline for one request: it splits the request into
// partitions, synthesizes each partition's circuit on the CPU, proves it with a Backend (the CPU
// engine today; the GPU prover plugs in through the same interface), verifies every partition
// proof against the verifying key, and concatenates the 192-byte proofs in partition order, or,
// for NI-PoRep C2, aggregates them into one SnarkPack proof and verifies that too.
package prover

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"
	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/priority"
	"github.com/snarkd/snarkd/rpcapi"
	"github.com/snarkd/snarkd/testcircuit"
)

var log = logging.Logger("snarkd/prover")

// requestSeq numbers requests that come without a job ID.
var requestSeq atomic.Uint64

// Kind is a proof kind, the API's (rpcapi.KindTest, rpcapi.KindPoRepC2, …): requests carry it
// from the wire to the backends unchanged.
type Kind = rpcapi.ProofKind

// UnsupportedError answers a proof kind whose circuit is not implemented yet.
type UnsupportedError struct {
	Kind   Kind
	Reason string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("proof kind %q is not supported yet: %s", e.Kind, e.Reason)
}

// Request is one proof to compute: the job it belongs to and the inputs of exactly one proof
// kind (PoRep, PoSt, Snap or Test).
type Request struct {
	Job   Job
	PoRep *PoRepRequest
	PoSt  *PoStRequest
	Snap  *SnapRequest
	Test  *TestRequest
}

// Job identifies the request to the schedulers: the job ID and submission time (oldest job
// first within a class; empty values get a local ID and the time Prove starts) and, when set,
// a priority class overriding the kind's (rpcapi.DefaultPriority).
type Job struct {
	ID        string
	Submitted time.Time
	Priority  *priority.Class
}

// PoRepRequest is a PoRep C2: the C1 output (the bare SealCommitPhase1Output JSON) of a
// sector, and its proof type.
type PoRepRequest struct {
	RegisteredProof abi.RegisteredSealProof
	MinerID         uint64
	SectorNumber    uint64
	Phase1Out       []byte
	// C1 is Phase1Out decoded, when the caller has decoded it already (the job manager's
	// validation); nil decodes Phase1Out.
	C1 *DecodedC1
}

// PoStRequest is a WinningPoSt or one WindowPoSt partition from its sectors' vanilla proofs.
type PoStRequest struct {
	RegisteredProof abi.RegisteredPoStProof
	MinerID         uint64
	// Randomness is the challenge randomness ([31] &= 0x3f is applied).
	Randomness    []byte
	VanillaProofs [][]byte
	// PartitionIndex is the WindowPoSt partition proved.
	PartitionIndex uint
}

// SnapRequest is a SnapDeals update proof: the raw 32-byte commitments and one vanilla proof
// per partition, in partition order.
type SnapRequest struct {
	RegisteredProof              abi.RegisteredUpdateProof
	CommROld, CommDNew, CommRNew []byte
	VanillaProofs                [][]byte
}

// TestRequest is the built-in test circuit: Constraints per partition, Partitions (0 means
// 1), Seed.
type TestRequest struct {
	Constraints, Partitions int
	Seed                    uint64
}

// Kind is the proof kind of the inputs the request carries ("" for none or several).
func (r Request) Kind() Kind {
	var k Kind
	n := 0
	if r.PoRep != nil {
		k, n = rpcapi.KindPoRepC2, n+1
	}
	if r.PoSt != nil {
		k, n = rpcapi.KindWindowPoSt, n+1
		if pp, err := post.Lookup(r.PoSt.RegisteredProof); err == nil && pp.Kind == post.Winning {
			k = rpcapi.KindWinningPoSt
		}
	}
	if r.Snap != nil {
		k, n = rpcapi.KindSnapProve, n+1
	}
	if r.Test != nil {
		k, n = rpcapi.KindTest, n+1
	}
	if n != 1 {
		return ""
	}
	return k
}

// FromAPI is the typed request for an API request (validated: only its kind's fields are read);
// c1, when set, is its C1 output already decoded.
func FromAPI(req rpcapi.ProofRequest, c1 *DecodedC1) Request {
	var out Request
	if req.Priority != nil {
		prio := *req.Priority
		out.Job.Priority = &prio
	}
	switch req.Kind {
	case rpcapi.KindPoRepC2:
		out.PoRep = &PoRepRequest{RegisteredProof: abi.RegisteredSealProof(req.RegisteredProof),
			MinerID: uint64(req.MinerID), SectorNumber: uint64(req.SectorNumber), Phase1Out: req.Phase1Out}
		out.PoRep.C1 = c1
	case rpcapi.KindWinningPoSt, rpcapi.KindWindowPoSt:
		out.PoSt = &PoStRequest{RegisteredProof: abi.RegisteredPoStProof(req.RegisteredProof), MinerID: uint64(req.MinerID),
			Randomness: req.Randomness, VanillaProofs: req.VanillaProofs, PartitionIndex: req.PartitionIndex}
	case rpcapi.KindSnapProve:
		out.Snap = &SnapRequest{RegisteredProof: abi.RegisteredUpdateProof(req.RegisteredProof),
			CommROld: req.CommROld, CommDNew: req.CommDNew, CommRNew: req.CommRNew, VanillaProofs: req.VanillaProofs}
	case rpcapi.KindTest:
		out.Test = &TestRequest{}
		if req.Test != nil {
			out.Test.Constraints, out.Test.Partitions, out.Test.Seed = int(req.Test.Constraints), req.Test.Partitions, req.Test.Seed
		}
	}
	return out
}

// Stage is a pipeline step reported to Progress.
type Stage string

// Stages, in order for each partition; Verifying follows the last partition's proof.
const (
	// StageLoadingParams comes before the first partition's synthesis when the request's
	// parameters are not in memory: they are read from disk, or generated (the test circuit at
	// first use), which can take minutes. Detail: ParamLoad.String (load or generate, which
	// circuit); partitions are not known yet (0). Not reported when the parameters are loaded.
	StageLoadingParams Stage = "loading-params"
	StageSynthesizing  Stage = "synthesizing"
	StageProving       Stage = "proving"
	StageVerifying     Stage = "verifying"
	// StageAggregating follows Verifying for requests whose answer aggregates the partition
	// proofs (NI-PoRep C2's SnarkPack aggregate): aggregation and the aggregate's verification.
	StageAggregating Stage = "aggregating"
	// StageAdmitted is reported by GPU backends when a device grants a partition its memory
	// plan (detail: device, worker, tier, SRS placement), between proving and the proof.
	StageAdmitted Stage = "admitted"
	// StageProved is reported by GPU backends when a partition's proof is back (detail: the
	// device and where the partition waited).
	StageProved Stage = "partition-proved"
)

// Progress receives the stage a request is entering, with the 0-based partition and, for some
// stages, details for the job's event log.
type Progress func(stage Stage, partition, partitions int, detail ...string)

// Result is a request's proof bytes (192 per partition, in order; for NI-PoRep C2 the SnarkPack
// aggregate of the partition proofs) and stage timings.
type Result struct {
	Proof      []byte
	Partitions int
	Synthesis  time.Duration
	Prove      time.Duration
	Verify     time.Duration
	// Phases is the time of each step summed over the partitions (PhasePlan, PhaseWitness, …);
	// partitions overlap, so the sum can exceed the wall time.
	Phases map[string]time.Duration
	// Unverified counts partition proofs that did not verify (only WithUnverifiedProofs lets
	// such a result through; otherwise they are an error).
	Unverified int
	// SRSLoad is how long the request waited for its parameters to be read and checked (0
	// when they were in memory); Devices are the GPUs that proved its partitions, in first-use
	// order (none: the CPU). Reported with errors too.
	SRSLoad time.Duration
	Devices []int
}

// Phase names in Result.Phases.
const (
	PhasePlan          = "plan"      // decode, vanilla checks, parameters
	PhaseInputs        = "inputs"    // input checks run while the partitions prove (PoSt vanilla hashing)
	PhaseSlot          = "slot"      // waiting for a partition slot (host memory bound)
	PhaseCompile       = "compile"   // compiled circuit: from memory, disk, or recorded
	PhaseWitness       = "witness"   // witness-only synthesis
	PhaseProducts      = "abc"       // a, b, c from the compiled circuit
	PhaseCheck         = "check"     // rows and public inputs checked
	PhaseFullSynthesis = "synthesis" // full synthesis (linear combinations)
	PhaseProve         = "prove"     // the backend (GPU or CPU), per partition
	PhaseVerify        = "verify"    // every partition proof verified (and the aggregate, if any)
	PhaseAggregate     = "aggregate" // the partition proofs aggregated (SnarkPack) and encoded
)

// Phases accumulates step times; safe for concurrent use, and a nil *Phases records nothing.
type Phases struct {
	mu sync.Mutex
	d  map[string]time.Duration
}

// Add adds d to phase name.
func (p *Phases) Add(name string, d time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.d == nil {
		p.d = map[string]time.Duration{}
	}
	p.d[name] += d
	p.mu.Unlock()
}

// with returns r with ph's times.
func (r Result) with(ph *Phases) Result {
	r.Phases = ph.snapshot()
	return r
}

func (p *Phases) snapshot() map[string]time.Duration {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]time.Duration, len(p.d))
	for k, v := range p.d {
		out[k] = v
	}
	return out
}

// PartitionInfo tells a backend which partition it proves, for scheduling and logs.
type PartitionInfo struct {
	JobID string
	Kind  Kind
	// Submitted orders jobs of one kind: older jobs' partitions go first.
	Submitted  time.Time
	Index      int
	Partitions int
	// Class is the partition's priority class: the kind's, or the request's override.
	Class priority.Class
	// Note, if set, adds a detail to the job's events (StageAdmitted: the granted plan;
	// StageProved: where the partition waited).
	Note func(stage Stage, detail string)
	// Phase, if set, hears the backend's phase durations (PartitionUpload, PartitionKernels, …).
	Phase func(phase string, d time.Duration)
}

// phase reports d to info.Phase when there is one.
func (info PartitionInfo) phase(name string, d time.Duration) {
	if info.Phase != nil {
		info.Phase(name, d)
	}
}

// Backend proves one synthesized partition with the given randomness. Implementations must
// stop promptly when ctx is cancelled and may be called concurrently up to Concurrency().
type Backend interface {
	Name() string
	// Concurrency is how many partitions the pipeline keeps in flight (1 for the CPU, which
	// uses every core for one partition; the GPU prover's worker count).
	Concurrency() int
	Prove(ctx context.Context, info PartitionInfo, pk *groth16.Parameters, pa *cs.ProvingAssignment, r, s *fr.Element) (*groth16.Proof, error)
}

// ProductsDeferrer is a Backend whose devices can compute a partition's a, b and c from its
// witness and the compiled circuit's matrices: the pipeline then leaves them out of synthesis
// (cs.Compiled.Defer), and an unsatisfied row the device reports (cs.ErrUnsatisfied) goes to
// full synthesis as one found on the host would.
type ProductsDeferrer interface {
	DefersProducts(pk *groth16.Parameters, comp *cs.Compiled) bool
}

// CPUBackend proves with the gnark-crypto CPU engine of package groth16.
type CPUBackend struct{}

// Name is "cpu".
func (CPUBackend) Name() string { return "cpu" }

// Concurrency is 1: one partition uses every core.
func (CPUBackend) Concurrency() int { return 1 }

// Prove implements Backend.
func (CPUBackend) Prove(ctx context.Context, info PartitionInfo, pk *groth16.Parameters, pa *cs.ProvingAssignment, r, s *fr.Element) (*groth16.Proof, error) {
	t0 := time.Now()
	pr, err := groth16.ProveAssignment(ctx, pk, pa, r, s)
	if err == nil {
		info.phase(PartitionCPUProve, time.Since(t0))
	}
	return pr, err
}

// Pipeline proves requests with one backend and one parameter cache.
type Pipeline struct {
	backend Backend
	params  *ParamCache
	gate    *gate
	// fullSynthesis builds and evaluates every linear combination instead of completing a
	// witness-only synthesis from the compiled circuit.
	fullSynthesis bool
	// unverified lets proofs that do not verify through, counted (benchmarks with dummy keys).
	unverified bool
	// waitCompiled makes a partition wait for its compiled circuit to be read or recorded
	// instead of synthesizing in full meanwhile.
	waitCompiled bool
	// referees holds, for each partition whose products were deferred to the backend's device
	// (*cs.ProvingAssignment), the full synthesis to run if the device finds a row unsatisfied.
	referees sync.Map
	// observe, when set, hears every partition's phase durations (metrics histograms).
	observe PhaseObserver
}

// PhaseObserver hears how long one partition of a request of kind spent in phase: one of
// PartitionSynthesis, PartitionVerify, and what the backend reports (PartitionUpload,
// PartitionKernels, PartitionAssembly on a GPU; PartitionCPUProve on the CPU); and, once per
// request that aggregates its proofs, PartitionAggregate and PartitionAggregateVerify.
type PhaseObserver func(kind Kind, phase string, d time.Duration)

// Partition phases a PhaseObserver hears.
const (
	PartitionSynthesis = "synthesis" // witness (or full) synthesis on the host
	PartitionUpload    = "upload"    // host-to-device copies (GPU)
	PartitionKernels   = "kernels"   // the partition's kernels, holding the device (GPU)
	PartitionAssembly  = "assembly"  // the proof assembled from the MSM results with r, s
	PartitionVerify    = "verify"    // the partition proof's pairing check
	PartitionCPUProve  = "cpu_prove" // the whole proof on the CPU engine
	// A request whose answer aggregates its partition proofs reports these once, after the
	// partitions' phases.
	PartitionAggregate       = "aggregate"        // SnarkPack aggregation of the request's proofs
	PartitionAggregateVerify = "aggregate_verify" // the aggregate's verification
)

// WithPhaseObserver makes the pipeline report every partition's phase durations to fn. Call it
// before Prove.
func (p *Pipeline) WithPhaseObserver(fn PhaseObserver) *Pipeline {
	p.observe = fn
	return p
}

// WithCompiledWait makes partitions wait for their circuit's compiled form when it is not in
// memory yet (true), instead of synthesizing in full while it is read or recorded in the
// background (false, the default: no proof waits for a recording). Call it before Prove.
func (p *Pipeline) WithCompiledWait(wait bool) *Pipeline {
	p.waitCompiled = wait
	return p
}

// WithUnverifiedProofs makes Prove return proofs that do not verify, counted in
// Result.Unverified, instead of failing: only for benchmarks whose keys are not a real setup
// (every proof is still verified, and the verification timed). Call it before Prove.
func (p *Pipeline) WithUnverifiedProofs() *Pipeline {
	p.unverified = true
	return p
}

// WithFullSynthesis makes the pipeline synthesize every partition in full (true) or from the
// compiled circuit of its shape (false, the default), and returns p. Call it before Prove.
func (p *Pipeline) WithFullSynthesis(full bool) *Pipeline {
	p.fullSynthesis = full
	return p
}

func (p *Pipeline) observePhase(kind Kind, phase string, d time.Duration) {
	if p.observe != nil {
		p.observe(kind, phase, d)
	}
}

// New returns a pipeline.
func New(backend Backend, params *ParamCache) *Pipeline {
	if f, ok := backend.(paramsForgetter); ok && params != nil {
		params.setOnDrop(f.ForgetParams)
	}
	return &Pipeline{backend: backend, params: params, gate: newGate(backend.Concurrency())}
}

// paramsForgetter is a backend that holds on to parameters (host memory registered with a GPU)
// and must hear when the cache drops them.
type paramsForgetter interface {
	ForgetParams(pk *groth16.Parameters)
}

// Backend returns the backend's name.
func (p *Pipeline) Backend() string { return p.backend.Name() }

// Params returns the parameter cache.
func (p *Pipeline) Params() *ParamCache { return p.params }

// Supports reports whether kind can be proved, or an *UnsupportedError saying why not.
func (p *Pipeline) Supports(kind Kind) error {
	switch kind {
	case rpcapi.KindTest:
		return nil
	case rpcapi.KindPoRepC2, rpcapi.KindWinningPoSt, rpcapi.KindWindowPoSt, rpcapi.KindSnapProve:
		return nil
	}
	return fmt.Errorf("unknown proof kind %q", kind)
}

// partition is one circuit instance of a request: how to synthesize its witness, and the public
// inputs (ONE excluded) its proof must verify against. A proof kind plugs into the pipeline by
// producing these in plan; circuits with their own synthesis (parallel blocks, row checks) supply
// it through synthesize.
type partition struct {
	// synthesize builds the partition's assignment, adding its steps' times to ph.
	synthesize func(ctx context.Context, capacity cs.Shape, ph *Phases) (*cs.ProvingAssignment, error)
	inputs     []fr.Element
	// verifyInputs, if set, is the check of the request's inputs that planning left to run
	// while the partition proves (a WindowPoSt's vanilla-proof hashing): its error, not the
	// proof's, is the request's, and the proof is used only when it returns nil.
	verifyInputs func(ctx context.Context) error
}

// circuitPartition synthesizes a plain cs.Circuit.
func circuitPartition(c cs.Circuit, inputs []fr.Element) partition {
	return partition{
		synthesize: func(ctx context.Context, capacity cs.Shape, ph *Phases) (*cs.ProvingAssignment, error) {
			t0 := time.Now()
			defer func() { ph.Add(PhaseFullSynthesis, time.Since(t0)) }()
			return cs.SynthesizeProving(ctx, c, capacity)
		},
		inputs: inputs,
	}
}

// planned is a planned request: its partitions, the parameters that prove them, the verifying
// key every partition proof is checked with and, for a request whose answer is an aggregate
// of its partition proofs rather than their concatenation, the aggregation.
type planned struct {
	pk        *groth16.Parameters
	vk        *groth16.VerifyingKey
	parts     []partition
	aggregate *aggregation
}

// plan turns a request into its planned partitions. Kinds whose circuits are not here yet are
// refused by Supports.
func (p *Pipeline) plan(ctx context.Context, req Request) (planned, error) {
	kind := req.Kind()
	if kind == "" {
		return planned{}, errors.New("prover: a request carries the inputs of exactly one proof kind")
	}
	if err := p.Supports(kind); err != nil {
		return planned{}, err
	}
	var (
		pl  planned
		err error
	)
	switch {
	case req.PoRep != nil:
		return p.planPoRep(ctx, *req.PoRep)
	case req.PoSt != nil:
		pl.pk, pl.vk, pl.parts, err = p.planPoSt(ctx, *req.PoSt)
	case req.Snap != nil:
		pl.pk, pl.vk, pl.parts, err = p.planUpdate(ctx, *req.Snap)
	default:
		pl.pk, pl.parts, err = p.planTest(ctx, *req.Test)
		if err == nil {
			pl.vk = &pl.pk.VK
		}
	}
	if err != nil {
		return planned{}, err
	}
	return pl, nil
}

// planTest plans the built-in test circuit.
func (p *Pipeline) planTest(ctx context.Context, req TestRequest) (*groth16.Parameters, []partition, error) {
	n := req.Partitions
	if n <= 0 {
		n = 1
	}
	if req.Constraints < testcircuit.MinConstraints {
		return nil, nil, fmt.Errorf("test circuit of %d constraints: the minimum is %d", req.Constraints, testcircuit.MinConstraints)
	}
	pk, err := p.params.Test(ctx, req.Constraints, req.Seed)
	if err != nil {
		return nil, nil, err
	}
	// The test circuit's structure depends on its seed, so every partition proves the same
	// circuit (with fresh r, s): partitions exercise the pipeline, not distinct witnesses.
	parts := make([]partition, n)
	for i := range parts {
		c := testcircuit.New(req.Constraints, req.Seed)
		parts[i] = circuitPartition(c, c.PublicInputs())
	}
	return pk, parts, nil
}

// Prove runs the whole pipeline for req. Every partition proof is verified before the result
// is returned: a proof that does not verify is an error, never an answer. The parameters the
// request uses are held in the cache until it returns (under the context's Usage when it
// carries one, else one of its own).
func (p *Pipeline) Prove(ctx context.Context, req Request, progress Progress) (Result, error) {
	use := UsageFrom(ctx)
	if use == nil {
		ctx, use = WithUsage(ctx)
		defer use.Release()
	}
	res, err := p.prove(ctx, req, progress)
	res.SRSLoad, res.Devices = use.SRSLoad(), use.Devices()
	return res, err
}

func (p *Pipeline) prove(ctx context.Context, req Request, progress Progress) (Result, error) {
	if progress == nil {
		progress = func(Stage, int, int, ...string) {}
	}
	ph := &Phases{}
	tPlan := time.Now()
	// Planning waits for the parameters; while they load, the request's progress says so
	// instead of sitting on its previous stage.
	planCtx := withLoadReport(ctx, func(l ParamLoad) { progress(StageLoadingParams, 0, 0, l.String()) })
	pl, err := p.plan(planCtx, req)
	if err != nil {
		return Result{}, err
	}
	pk, vk, parts := pl.pk, pl.vk, pl.parts
	ph.Add(PhasePlan, time.Since(tPlan))
	res := Result{Partitions: len(parts)}
	proofs := make([]*groth16.Proof, len(parts))
	kind := req.Kind()
	info := PartitionInfo{JobID: req.Job.ID, Kind: kind, Submitted: req.Job.Submitted,
		Partitions: len(parts)}
	if info.JobID == "" {
		info.JobID = fmt.Sprintf("local-%d", requestSeq.Add(1))
	}
	if info.Submitted.IsZero() {
		info.Submitted = time.Now()
	}
	// Synthesis of the next partitions runs while earlier ones prove, with at most
	// Concurrency() partitions synthesized and not yet proved over all requests (a 32 GiB PoRep
	// partition holds about 17 GB of host memory until its proof is done); the gate hands the
	// slots out by priority, so a WinningPoSt waits for at most one partition.
	reqCtx := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		proveTime time.Duration
	)
	fail := func(err error) { cancel(err) }
	class := rpcapi.DefaultPriority(kind)
	if req.Job.Priority != nil {
		class = *req.Job.Priority
	}
	info.Class = class
	for i, part := range parts {
		tSlot := time.Now()
		if err := p.gate.acquire(ctx, gateKey{Class: class, Submitted: info.Submitted.UnixNano(), JobID: info.JobID, Index: i}); err != nil {
			fail(err)
			break
		}
		ph.Add(PhaseSlot, time.Since(tSlot))
		progress(StageSynthesizing, i, len(parts))
		t0 := time.Now()
		pa, err := part.synthesize(ctx, groth16.CapacityFor(pk), ph)
		if err != nil {
			p.gate.release()
			fail(fmt.Errorf("synthesizing partition %d: %w", i, err))
			break
		}
		res.Synthesis += time.Since(t0)
		p.observePhase(kind, PartitionSynthesis, time.Since(t0))
		progress(StageProving, i, len(parts))
		r, s, err := groth16.RandomRS(nil)
		if err != nil {
			p.referees.Delete(pa)
			p.gate.release()
			fail(err)
			break
		}
		pi := info
		pi.Index = i
		pi.Note = func(st Stage, detail string) { progress(st, i, len(parts), detail) }
		if p.observe != nil {
			pi.Phase = func(name string, d time.Duration) { p.observePhase(kind, name, d) }
		}
		wg.Add(1)
		go func(i int, pa *cs.ProvingAssignment) {
			defer wg.Done()
			defer p.gate.release() // the slot taken for this partition
			t1 := time.Now()
			pr, err := p.backend.Prove(ctx, pi, pk, pa, &r, &s)
			if ref, ok := p.referees.LoadAndDelete(pa); ok && errors.Is(err, cs.ErrUnsatisfied) {
				pa.Recycle()
				full, ferr := ref.(func(error) (*cs.ProvingAssignment, error))(err)
				if ferr != nil {
					fail(fmt.Errorf("synthesizing partition %d: %w", i, ferr))
					return
				}
				pa = full
				pr, err = p.backend.Prove(ctx, pi, pk, pa, &r, &s)
			}
			if err != nil {
				// The backend is done with the vectors either way: back to the pool, which
				// also lets a device registration of them go when the pool drops them.
				pa.Recycle()
				fail(fmt.Errorf("proving partition %d on %s: %w", i, p.backend.Name(), err))
				return
			}
			ph.Add(PhaseProve, time.Since(t1))
			// The next partition of the shape reuses the vectors (mapped memory, no page faults).
			pa.Recycle()
			mu.Lock()
			proofs[i] = pr
			proveTime += time.Since(t1)
			mu.Unlock()
		}(i, pa)
	}
	// The input checks planning deferred run now, on the host cores the synthesis has left while
	// the backend proves; on the request's own context, so that a failed proof does not cut
	// short the check whose error names the bad input.
	var inputErr error
	for _, part := range parts {
		if part.verifyInputs == nil || inputErr != nil {
			continue
		}
		ti := time.Now()
		inputErr = part.verifyInputs(reqCtx)
		ph.Add(PhaseInputs, time.Since(ti))
		if inputErr != nil {
			fail(inputErr)
		}
	}
	wg.Wait()
	if inputErr != nil {
		return res.with(ph), inputErr
	}
	if err := context.Cause(ctx); err != nil {
		return res.with(ph), err
	}
	res.Prove = proveTime
	progress(StageVerifying, len(parts), len(parts))
	t2 := time.Now()
	pvk, err := groth16.Prepare(vk)
	if err != nil {
		return res.with(ph), fmt.Errorf("preparing verifying key: %w", err)
	}
	for i, pr := range proofs {
		tv := time.Now()
		err := pvk.Verify(pr, parts[i].inputs)
		p.observePhase(kind, PartitionVerify, time.Since(tv))
		if err != nil {
			if p.unverified {
				res.Unverified++
				continue
			}
			log.Errorw("partition proof does not verify", "kind", kind, "partition", i, "backend", p.backend.Name())
			return res.with(ph), fmt.Errorf("self-check: partition %d proof does not verify: %w", i, err)
		}
	}
	res.Verify = time.Since(t2)
	ph.Add(PhaseVerify, res.Verify)
	if pl.aggregate == nil {
		res.Proof = groth16.MarshalProofs(proofs)
		return res.with(ph), nil
	}
	progress(StageAggregating, len(parts), len(parts))
	inputs := make([][]fr.Element, len(parts))
	for i := range parts {
		inputs[i] = parts[i].inputs
	}
	b, err := pl.aggregate.run(ctx, p, kind, vk, proofs, inputs, ph, &res)
	if err != nil {
		return res.with(ph), err
	}
	res.Proof = b
	return res.with(ph), nil
}
