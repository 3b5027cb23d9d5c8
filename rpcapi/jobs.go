package rpcapi

import (
	"time"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/snarkd/snarkd/priority"
)

// ProofKind names what a job proves.
type ProofKind string

// Proof kinds: the one vocabulary of what a job proves, from the API down to the prover (the
// GPU scheduler sees a kind's priority class, DefaultPriority, and its name for labels).
const (
	// KindTest proves snarkd's synthetic test circuit with devnet parameters.
	KindTest ProofKind = "test"
	// KindPoRepC2 is a PoRep SealCommit phase 2 (from a C1 output).
	KindPoRepC2 ProofKind = "porep-c2"
	// KindWinningPoSt is a WinningPoSt from vanilla proofs.
	KindWinningPoSt ProofKind = "winning-post"
	// KindWindowPoSt is one WindowPoSt partition from vanilla proofs.
	KindWindowPoSt ProofKind = "window-post"
	// KindSnapProve is a SnapDeals update proof from partition vanilla proofs.
	KindSnapProve ProofKind = "snap-prove"
	// KindAggregateSeals aggregates many sectors' PoRep C2 proofs into one SnarkPack proof
	// (filecoin-ffi's AggregateSealProofs, for ProveCommitAggregate).
	KindAggregateSeals ProofKind = "aggregate-seals"
)

// Kinds lists every proof kind the API knows.
var Kinds = []ProofKind{KindTest, KindPoRepC2, KindWinningPoSt, KindWindowPoSt, KindSnapProve, KindAggregateSeals}

// Priority orders the queue: lower runs first. Within a priority the oldest job runs first.
// It is the one priority class of the daemon (the job queue, the pipeline and the GPU
// scheduler rank by it); String names it as the CLI and metrics show it.
type Priority = priority.Class

// Priority classes, from the deadline-bound to the bulk.
const (
	PriorityWinningPoSt = priority.WinningPoSt
	PriorityWindowPoSt  = priority.WindowPoSt
	PrioritySeal        = priority.Seal
)

// DefaultPriority is the class of a proof kind: WinningPoSt > WindowPoSt > PoRep, SnapDeals,
// seal aggregation and test.
func DefaultPriority(k ProofKind) Priority {
	switch k {
	case KindWinningPoSt:
		return PriorityWinningPoSt
	case KindWindowPoSt:
		return PriorityWindowPoSt
	}
	return PrioritySeal
}

// ProofRequest is one proof to compute. RequestID is the client's idempotency key: submitting
// the same ID again returns the same job; the same ID with different content is refused.
type ProofRequest struct {
	RequestID string
	Kind      ProofKind
	// Priority overrides the kind's class when set (nil: DefaultPriority).
	Priority *Priority `json:",omitempty"`

	// RegisteredProof is the abi enum of the proof: RegisteredSealProof for porep-c2 and
	// aggregate-seals (every aggregated sector's), RegisteredPoStProof for the PoSts,
	// RegisteredUpdateProof for snap-prove.
	RegisteredProof int64
	// SectorSize, when set, must agree with RegisteredProof.
	SectorSize   abi.SectorSize `json:",omitempty"`
	MinerID      abi.ActorID
	SectorNumber abi.SectorNumber

	// Phase1Out is the C1 output JSON (porep-c2).
	Phase1Out []byte `json:",omitempty"`
	// VanillaProofs: one per sector (PoSt) or per partition (snap-prove).
	VanillaProofs [][]byte `json:",omitempty"`
	// Randomness is the 32-byte PoSt challenge seed.
	Randomness []byte `json:",omitempty"`
	// PartitionIndex is the WindowPoSt partition.
	PartitionIndex uint `json:",omitempty"`
	// CommROld, CommRNew, CommDNew are the raw 32-byte SnapDeals commitments.
	CommROld []byte `json:",omitempty"`
	CommRNew []byte `json:",omitempty"`
	CommDNew []byte `json:",omitempty"`

	// Aggregate is what an aggregate-seals request aggregates (MinerID is the sectors' miner).
	Aggregate *SealAggregate `json:",omitempty"`

	// Test parameterises the test circuit (kind "test").
	Test *TestCircuit `json:",omitempty"`
}

// SealAggregate is the input of an aggregate-seals request: filecoin-ffi's AggregateSealProofs
// arguments besides the seal proof type and miner (ProofRequest.RegisteredProof and MinerID).
// Every field of every info is needed, as VerifyAggregateSeals needs them: snarkd verifies the
// aggregate before it answers.
type SealAggregate struct {
	// AggregateProof is the abi.RegisteredAggregationProof: 0 SnarkPackV1, 1 SnarkPackV2.
	AggregateProof abi.RegisteredAggregationProof
	// Infos are the sectors in aggregation order (Lotus's proof.AggregateSealVerifyInfo:
	// number, ticket, seed, comm_r and comm_d CIDs).
	Infos []proof.AggregateSealVerifyInfo
	// Proofs holds each sector's C2 proof (192 bytes per partition; for NI-PoRep the circuit
	// proofs, not the C2 answer's aggregate), in Infos' order.
	Proofs [][]byte
}

// TestCircuit describes a synthetic circuit: Constraints per partition, generated from Seed.
type TestCircuit struct {
	Constraints uint64
	Partitions  int
	Seed        uint64
}

// JobID identifies a job in the daemon (a UUID string).
type JobID string

// JobState is where a job is in its life.
type JobState string

// Job states. Done, Failed and Cancelled are final.
const (
	JobQueued    JobState = "queued"
	JobRunning   JobState = "running"
	JobDone      JobState = "done"
	JobFailed    JobState = "failed"
	JobCancelled JobState = "cancelled"
)

// Final reports whether the state is terminal.
func (s JobState) Final() bool { return s == JobDone || s == JobFailed || s == JobCancelled }

// JobOrigin tells who submitted a job.
type JobOrigin string

// Job origins.
const (
	OriginNative JobOrigin = "native"
	OriginLotus  JobOrigin = "lotus"
	// OriginCuzk is Curio's cuzk gRPC API (plugin/cuzk). Curio's request IDs name the sector
	// ("porep-<miner>-<sector>"), not the inputs, and its own cuzk daemon proves every
	// submission again, so through it the request ID of a done job may be taken by new content.
	OriginCuzk JobOrigin = "cuzk"
)

// Timings are a job's stage durations in milliseconds.
type Timings struct {
	QueueWaitMs uint64
	// SRSLoadMs is how long the job waited for its parameters to load (0 when in memory).
	SRSLoadMs   uint64
	SynthesisMs uint64
	ProveMs     uint64
	VerifyMs    uint64
	TotalMs     uint64
}

// Job describes one job without its proof bytes.
type Job struct {
	ID         JobID
	RequestID  string
	Kind       ProofKind
	Priority   Priority
	Origin     JobOrigin
	State      JobState
	Partitions int
	// PartitionsDone counts partitions proved so far.
	PartitionsDone int
	Submitted      time.Time
	Started        time.Time `json:",omitempty"`
	Finished       time.Time `json:",omitempty"`
	Error          string    `json:",omitempty"`
	// ErrorCode is the Lotus CallError code a failed Lotus job reports (101: daemon restarted).
	ErrorCode ErrorCode `json:",omitempty"`
	// CallID is the Lotus call this job answers (origin lotus).
	CallID *CallID `json:",omitempty"`
	// Delivered is set once a Lotus result reached the miner.
	Delivered bool `json:",omitempty"`
	Timings   Timings
	// Stage is the step a running job is in: its latest event (loading-params, synthesizing,
	// proving, …); empty before it starts and once it is final.
	Stage EventType `json:",omitempty"`
	// GPUs are the ordinals of the GPUs that proved the job; empty when the CPU proved it.
	GPUs []int `json:",omitempty"`
}

// JobResult is a finished job with its proof.
type JobResult struct {
	Job
	Proof []byte
}

// JobFilter selects jobs for Jobs and Events; empty fields match everything. Events ignores
// States (a stream follows jobs through every state).
type JobFilter struct {
	States []JobState  `json:",omitempty"`
	Kinds  []ProofKind `json:",omitempty"`
	JobIDs []JobID     `json:",omitempty"`
	// Limit caps the number of jobs returned (newest first); 0 means 1000.
	Limit int `json:",omitempty"`
}

// EventType is a step in a job's life, as streamed by Events.
type EventType string

// Event types.
const (
	EventQueued  EventType = "queued"
	EventStarted EventType = "started"
	// EventLoadingParams: the job waits for its parameters, which are not in memory (Detail:
	// "load" or "generate", then the circuit, e.g. "load v28-….params (StackedDrg32GiBV1_1)"
	// or "generate test-16384-0"); it comes before the first synthesizing event, and not at
	// all when the parameters are in memory.
	EventLoadingParams EventType = "loading-params"
	EventSynthesizing  EventType = "synthesizing"
	EventProving       EventType = "proving"
	EventVerifying     EventType = "verifying"
	// EventAggregating follows verifying for a job whose answer aggregates its partition
	// proofs (NI-PoRep C2: a SnarkPack aggregate): aggregation, then the aggregate's check.
	EventAggregating EventType = "aggregating"
	// EventAdmitted: a GPU granted a partition its memory plan (Detail names the device, the
	// worker, the tier and where the SRS lives), or an out-of-memory sent it to a smaller one.
	EventAdmitted EventType = "admitted"
	// EventPartitionProved: a GPU proved a partition (Detail: the device, and where the
	// partition's time went: GPU queue, device memory, other partitions' kernels, its kernels).
	EventPartitionProved EventType = "partition-proved"
	EventDone            EventType = "done"
	EventFailed          EventType = "failed"
	EventCancelled       EventType = "cancelled"
)

// JobEvent is one progress event. Partition is 0-based and meaningful for synthesizing,
// proving, admitted and partition-proved; ElapsedMs is the time since the job started (or was submitted, while queued).
type JobEvent struct {
	JobID      JobID
	RequestID  string
	Kind       ProofKind
	Type       EventType
	Partition  int
	Partitions int
	Time       time.Time
	ElapsedMs  uint64
	Error      string `json:",omitempty"`
	// Detail says more about the step (the plan of an admitted partition).
	Detail string `json:",omitempty"`
}

// SubmitResult answers Submit.
type SubmitResult struct {
	JobID JobID
	State JobState
	// Existing is true when the request ID named a job already known.
	Existing bool
	// QueuePosition counts jobs that run before this one (0: next or running).
	QueuePosition int
	// Replaces is the finished job whose request ID this new job took over: one that failed
	// or was cancelled, or (through the cuzk API) one that is done and had other content. That
	// job stays readable by its own ID until Jobs.Retention prunes it. Empty otherwise.
	Replaces JobID `json:",omitempty"`
}

// StatusInfo answers Status: what the daemon has and is doing.
type StatusInfo struct {
	Version   string
	Backend   string
	StartedAt time.Time
	Devices   []DeviceStatus
	Queues    []QueueStatus
	Params    []ParamStatus
	// PinnedHostBytes is host memory pinned for GPU transfers.
	PinnedHostBytes uint64
	Completed       uint64
	Failed          uint64
	Cancelled       uint64
	Miner           *MinerStatus `json:",omitempty"`
	// Draining is set while the daemon drains before it stops (nil otherwise).
	Draining *DrainStatus `json:",omitempty"`
}

// DrainStatus describes a drain: the daemon takes no new work (submissions are refused with
// ErrDraining), lets its running jobs finish until Until, then hands back what still runs
// (native and cuzk jobs are queued again in the journal, Lotus calls fail with code 101) and
// exits.
type DrainStatus struct {
	// Since is when the drain began.
	Since time.Time
	// Until is when the grace ends (Jobs.DrainGrace after Since, or earlier once skipped).
	Until time.Time
	// Running and Queued count the jobs running and waiting now; queued jobs stay in the
	// journal for the next start.
	Running int
	Queued  int
	// Skipped: a second stop request (signal, `snarkd stop`, Shutdown) cut the grace short.
	Skipped bool `json:",omitempty"`
}

// DeviceStatus is one proving device (the CPU counts as one on the cpu backend). On the cpu
// backend Workers, WorkersBusy and CurrentJobIDs are the job manager's; on a GPU backend
// ("cuda", "simulated") every field comes from the GPU scheduler: its partition workers on this
// device and the memory books of its accounting allocator.
type DeviceStatus struct {
	Name string
	// Ordinal is the GPU's CUDA ordinal (its position in the --simulate-gpus spec); 0 for the CPU.
	Ordinal   int
	VRAMTotal uint64
	VRAMFree  uint64
	// VRAMReserved is what admission has granted: partition plans plus resident vectors.
	VRAMReserved uint64
	// VRAMLimit is what admission may grant in all: total − other processes − headroom.
	VRAMLimit uint64 `json:",omitempty"`
	// VRAMAllocated is device memory this daemon holds now.
	VRAMAllocated uint64 `json:",omitempty"`
	// VRAMOthers is what other processes (and the driver) use, as last sampled.
	VRAMOthers uint64 `json:",omitempty"`
	// VRAMHeadroom is kept free for other processes.
	VRAMHeadroom uint64 `json:",omitempty"`
	// ResidentBytes is the part of VRAMReserved held by resident vectors (NTT tables, SRS).
	ResidentBytes uint64 `json:",omitempty"`
	// Waiting counts partitions waiting for memory on this device.
	Waiting int `json:",omitempty"`
	// Tiers counts the memory plans granted since start by tier (full, partial, minimal).
	Tiers         map[string]int `json:",omitempty"`
	Workers       int
	WorkersBusy   int
	CurrentJobIDs []JobID `json:",omitempty"`
	// WorkerStates is what each GPU worker runs now (GPU backends only).
	WorkerStates []DeviceWorker `json:",omitempty"`
	// Busy is how busy the GPU's kernels kept it and where recent partitions waited (GPU
	// backends only).
	Busy *DeviceBusy `json:",omitempty"`
}

// DeviceBusy is the time a GPU's kernels ran, and the average partition of the last minute.
type DeviceBusy struct {
	// Seconds is the kernels' time since start; Recent their fraction of the last minute.
	Seconds float64
	Recent  float64
	// Partitions counts those that finished in the last minute; the rest are their averages in
	// seconds: in the GPU queue, waiting for device memory, waiting for another partition's
	// kernels, running kernels, and from admission to done (uploads included).
	Partitions                               int
	Queued, Memory, KernelWait, Kernels, Run float64
}

// DeviceWorker is one GPU partition worker.
type DeviceWorker struct {
	ID   int
	Busy bool
	// JobID, Kind and Partition name the partition being proved (Kind is the job's proof
	// kind: porep-c2, snap-prove, window-post, …).
	JobID     JobID  `json:",omitempty"`
	Kind      string `json:",omitempty"`
	Partition int
	// Tier is the memory plan granted (full, partial, minimal); SRSResident says whether the
	// circuit's SRS is in VRAM; CompactNTT whether the plan uses the NTT domain's compact
	// tables (cards too small for the full ones); Bytes is the plan's device memory.
	Tier        string `json:",omitempty"`
	SRSResident bool   `json:",omitempty"`
	CompactNTT  bool   `json:",omitempty"`
	Bytes       uint64 `json:",omitempty"`
}

// QueueStatus counts jobs of one kind.
type QueueStatus struct {
	Kind    ProofKind
	Queued  int
	Running int
}

// ParamStatus is one set of loaded proving parameters.
type ParamStatus struct {
	Circuit string
	Bytes   uint64
	Loaded  bool
}

// MinerStatus is the daemon's registration with a lotus-miner.
type MinerStatus struct {
	URL         string
	WorkerURL   string
	Connected   bool
	Session     string
	LastError   string `json:",omitempty"`
	Registered  time.Time
	ReturnsWait int
}
