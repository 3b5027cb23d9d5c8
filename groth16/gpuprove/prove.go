package gpuprove

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"
	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/internal/cores"
	"github.com/snarkd/snarkd/priority"
)

// ProveRequest is one Groth16 partition for the GPU partition prover.
type ProveRequest struct {
	JobID string
	// Kind labels the partition (Partition.Kind); Class orders it.
	Kind      string
	Class     priority.Class
	Submitted time.Time
	Index     int
	// SRSKey names the parameters; resident SRS vectors are keyed by it. Empty gives PK a key
	// of its own, never reused by another set (uniqueKeys).
	SRSKey string
	PK     *groth16.Parameters
	PA     *cs.ProvingAssignment
	R, S   fr.Element
	// OnEvent, if set, receives the partition's scheduler events.
	OnEvent func(gpu.Event)
}

// ProveResult is a partition proof and how it ran.
type ProveResult struct {
	Proof *groth16.Proof
	Run   gpu.Result
	// Stages are the device steps' durations (CUDA events on hardware, wall time otherwise),
	// including uploads.
	Stages []groth16.StageTiming
	// Timeline is when each step ran (wall clock), preparation and the wait for admission
	// included: it shows how partitions of different workers overlap.
	Timeline []StageSpan
}

// IsKernelSpan reports whether a Timeline span is device work (a kernel step), not the CPU
// preparation or host gather, the wait for admission, an upload or its wait, or the assembly.
func IsKernelSpan(name string) bool {
	switch {
	case name == "prepare (cpu)", name == "wait (admission)", name == "assemble", name == hostGatherStage, name == productsStage,
		strings.HasPrefix(name, "upload "), strings.HasPrefix(name, "wait upload "):
		return false
	}
	return true
}

// StageSpan is one step of a partition on the wall clock.
type StageSpan struct {
	Name       string
	Start, End time.Time
}

// Prover proves partitions on a Scheduler's devices: the H step and the five MSMs on the GPU
// the scheduler picks, with the memory plan admission granted, then the CPU epilogue (assembly
// with r and s). On simulated devices the arithmetic runs on the CPU inside the simulated
// kernel slots, so the scheduling, accounting and fallbacks are exercised with real proofs.
type Prover struct {
	Sched   *gpu.Scheduler
	buffers scalarBuffers
	keys    uniqueKeys[groth16.Parameters]
	// circuits names compiled circuits' matrices on the devices.
	circuits uniqueKeys[cs.Compiled]
	// windows sizes the split MSMs' windows from the partitions before.
	windows msmWindows
}

// NewProver returns a prover over sched.
func NewProver(sched *gpu.Scheduler) *Prover {
	p := &Prover{Sched: sched, keys: uniqueKeys[groth16.Parameters]{prefix: "params"},
		circuits: uniqueKeys[cs.Compiled]{prefix: "r1cs"}}
	// Three pooled vectors (L, A, B) per partition in flight: one per worker and one prepared
	// ahead per device. Fewer would drop registered buffers and register fresh ones every round.
	p.buffers.keep = max(8, 3*(sched.Workers()+sched.Devices()))
	// A recycled witness vector registered in place must not stay locked, and alive, once its
	// compiled circuit's pool lets it go.
	sched.OnClose(cs.OnVectorRelease(func(v []fr.Element) { sched.Pinned().Forget(pooledBytes(v)) }))
	return p
}

// ProductsOnDevice reports whether a partition proved against pk whose products were deferred
// to the device (cs.Compiled.Defer) would have them computed there: its best plan holds comp's
// matrices. Otherwise Prove computes them on the host before admission.
func (p *Prover) ProductsOnDevice(pk *groth16.Parameters, comp *cs.Compiled) bool {
	sh := ShapeOf(pk, p.keys.key(pk))
	sh.Circuit, sh.CircuitBytes = p.circuits.key(comp), newCircuitImage(comp).size
	return p.Sched.ProductsOnDevice(sh)
}

// ForgetParams tells the prover that pk's parameters left the caller's cache: the host copies
// of its SRS vectors that streamed partitions registered are unregistered now, or when the last
// partition using them ends, instead of staying alive and locked until they expire.
func (p *Prover) ForgetParams(pk *groth16.Parameters) {
	for _, b := range srsHostVectors(pk) {
		p.Sched.Pinned().Forget(b)
	}
}

// pinStreamedScalars page-locks the L, A and B scalar vectors of a plan that streams its
// scalars from host memory, so that the MSMs read them at full PCIe speed instead of through
// the driver's pageable path. A and B live in buffers reused across partitions
// (Prover.buffers), so one registration serves many partitions. L's vector is the partition's
// witness, which may be new memory (full synthesis) or memory recycled by the compiled
// circuit's pool: either way it is copied into a pooled buffer that is registered, a parallel
// host copy being cheaper than registering fresh memory and far cheaper than streaming it
// pageable. (Registering the recycled witness in place would save that copy.)
// Vectors the pinned budget cannot hold stay pageable (counted by the pool). Returns the
// function that releases them.
func pinStreamedScalars(run *gpu.Run, in *partitionInputs) (release func()) {
	var rels []func()
	release = func() {
		for _, r := range rels {
			r()
		}
	}
	if run.Plan.ScalarsOnDevice || run.Plan.ScalarBuffers || run.Pinned == nil {
		return release
	}
	for _, v := range in.pooled {
		if rel, ok := run.Pinned.PinHost(pooledBytes(v)); ok {
			rels = append(rels, rel)
		}
	}
	aux := in.scalars[gpu.QueryL]
	if whole := in.whole(aux); whole != nil {
		// A recycled witness (or a copy made by an earlier attempt): registered in place once,
		// it serves every later partition that reuses it.
		if rel, ok := run.Pinned.PinHost(whole); ok {
			rels = append(rels, rel)
		}
		return release
	}
	if in.lTried || in.buffers == nil || len(aux) == 0 {
		return release
	}
	// Once per partition: a retry after an allocation failure keeps what the first attempt
	// chose.
	in.lTried = true
	// A buffer that the budget cannot hold is not worth the copy, nor the memory it would keep
	// in the pool: L then streams from the witness in place.
	l := in.buffers.take(len(aux))
	need := uint64(len(aux)) * gpu.FrBytes
	if l != nil {
		need = uint64(cap(l)) * gpu.FrBytes
	}
	if run.Pinned.Room(pooledBytes(l)) < need {
		if l != nil {
			in.buffers.putBack(run.Pinned, l)
		}
		run.Pinned.Fallback(uint64(len(aux))*gpu.FrBytes, true)
		return release
	}
	if l == nil {
		l = make([]fr.Element, len(aux))
	}
	l = l[:len(aux)]
	rel, ok := run.Pinned.PinHost(pooledBytes(l))
	if !ok {
		// The pool would not try l again (it remembers failed registrations by address);
		// forgetting it lets a later partition try once more.
		run.Pinned.Forget(pooledBytes(l))
		in.buffers.putBack(run.Pinned, l)
		return release
	}
	// The partition holds l until it ends, then hands it back to the buffers, still
	// registered.
	in.pooled = append(in.pooled, l)
	rels = append(rels, rel)
	parallelRange(len(aux), func(lo, hi int) { copy(l[lo:hi], aux[lo:hi]) })
	in.scalars[gpu.QueryL] = l
	return release
}

// pooledBytes is a pooled scalar vector's whole buffer as bytes: the registration covers every
// length the buffer is reused at.
func pooledBytes(v []fr.Element) []byte { return frBytes(v[:cap(v)]) }

// srsHostVectors are pk's SRS point vectors as bytes, in the order partitions use them.
func srsHostVectors(pk *groth16.Parameters) [][]byte {
	return [][]byte{g1Bytes(pk.H), g1Bytes(pk.L), g1Bytes(pk.A), g1Bytes(pk.BG1), g2Bytes(pk.BG2)}
}

// ErrConsumed reports a partition whose host vectors an earlier attempt already transformed.
var ErrConsumed = errors.New("gpu: partition inputs were consumed by an earlier attempt")

// partitionInputs are the host vectors of one partition, laid out as the kernels read them.
type partitionInputs struct {
	logN    uint32
	a, b, c []fr.Element // evaluations padded to 2^logN
	// scalars of the L, A and B queries, aligned with pk.L, pk.A and pk.BG1/BG2.
	scalars [gpu.NumQueries][]fr.Element
	// consumed is set once an attempt overwrote a, b or c on the host.
	consumed bool
	// pooled are the vectors to hand back to the prover's buffers when the partition is done.
	pooled [][]fr.Element
	// buffers lends pooled vectors; lTried is set once an attempt decided where L's scalars
	// stream from (a registered pooled copy, or the witness in place).
	buffers *scalarBuffers
	lTried  bool
	// recycled are the assignment's own vectors (at full capacity) when they go back to their
	// compiled circuit's pool after the proof, so that the same memory comes back.
	recycled [][]fr.Element
	// pa is the assignment whose inputs, witness and densities the A and B scalars come from;
	// gathered is set once the host has gathered them into scalars (gatherHost).
	pa       *cs.ProvingAssignment
	gathered bool
	// comp is set while a, b and c are still to be computed from the witness (pa deferred its
	// products: cs.Compiled.Defer): on the device with the resident matrices (circuit is their
	// key), or on the host (finishHost). a, b and c are nil until then.
	comp    *cs.Compiled
	circuit string
	// counts are the queries' lengths (the parameters' point counts).
	counts [gpu.NumQueries]int
	// windows is the prover's record of the split MSMs' bucket shares.
	windows *msmWindows
}

// whole returns the whole buffer that v starts, as bytes, when later partitions upload from
// that memory again (a recycled witness vector or a pooled scalar buffer: worth registering
// once), else nil.
func (in *partitionInputs) whole(v []fr.Element) []byte {
	if len(v) == 0 {
		return nil
	}
	for _, vs := range [][][]fr.Element{in.pooled, in.recycled} {
		for _, r := range vs {
			if cap(r) > 0 && &r[:1][0] == &v[0] {
				return pooledBytes(r)
			}
		}
	}
	return nil
}

// ShapeOf is the planner's view of a partition proved against pk.
func ShapeOf(pk *groth16.Parameters, key string) gpu.Shape {
	return gpu.Shape{
		LogDomain: uint32(bits.Len(uint(len(pk.H)+1)) - 1),
		Points: [gpu.NumQueries]uint64{uint64(len(pk.H)), uint64(len(pk.L)), uint64(len(pk.A)),
			uint64(len(pk.BG1)), uint64(len(pk.BG2))},
		SRSKey: key,
	}
}

func (p *Prover) prepareInputs(pk *groth16.Parameters, pa *cs.ProvingAssignment) (*partitionInputs, error) {
	if err := groth16.CheckShape(pk, pa); err != nil {
		return nil, err
	}
	m := cs.Shape{NumConstraints: pa.Rows()}.DomainSize()
	in := &partitionInputs{logN: uint32(bits.Len(uint(m)) - 1), buffers: &p.buffers, windows: &p.windows}
	if in.comp = pa.Deferred(); in.comp == nil {
		in.setProducts(pa)
	} else {
		in.circuit = p.circuits.key(in.comp)
		if pa.Recycles() {
			// The recycled witness is uploaded in place, registered once, as in setProducts.
			in.recycled = [][]fr.Element{pa.Aux}
		}
	}
	in.scalars[gpu.QueryL] = pa.Aux
	// The A and B scalars are gathered once the plan is known: on the device from L's when the
	// plan has room for the density tables, else on the host (gatherHost).
	in.pa = pa
	in.counts = [gpu.NumQueries]int{gpu.QueryH: len(pk.H), gpu.QueryL: len(pk.L), gpu.QueryA: len(pk.A),
		gpu.QueryBG1: len(pk.BG1), gpu.QueryBG2: len(pk.BG2)}
	// The witness's share stands for A's and B's too (their scalars are parts of it) until
	// their own MSMs have run.
	in.windows.seed([]gpu.Query{gpu.QueryL, gpu.QueryA, gpu.QueryBG1, gpu.QueryBG2}, &in.counts,
		func() float64 { return bucketShare(pa.Aux, windowSamples) })
	return in, nil
}

// setProducts takes pa's a, b and c, padded to the domain (in place where synthesis sized them
// for it), and notes the vectors that go back to the compiled circuit's pool afterwards.
func (in *partitionInputs) setProducts(pa *cs.ProvingAssignment) {
	m := 1 << in.logN
	in.a, in.b, in.c = padZero(pa.A, m), padZero(pa.B, m), padZero(pa.C, m)
	if pa.Recycles() {
		in.recycled = [][]fr.Element{pa.A, pa.B, pa.C, pa.Aux}
	}
}

// windowSamples witness values estimate a first partition's bucket share (bucketShare).
const windowSamples = 4096

// scalarBuffers keeps a few scalar vectors for reuse.
type scalarBuffers struct {
	mu   sync.Mutex
	free [][]fr.Element
	keep int // vectors kept at most; 0 means 8
}

// get returns a vector of n elements (contents undefined).
func (b *scalarBuffers) get(n int) []fr.Element {
	if v := b.take(n); v != nil {
		return v[:n]
	}
	return make([]fr.Element, n)
}

// take removes and returns the smallest free vector that holds n elements without wasting more
// than about half of it (at its full capacity), or nil.
func (b *scalarBuffers) take(n int) []fr.Element {
	b.mu.Lock()
	defer b.mu.Unlock()
	best := -1
	for i, v := range b.free {
		if cap(v) >= n && cap(v) <= 2*n+1024 && (best < 0 || cap(v) < cap(b.free[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	v := b.free[best]
	b.free = append(b.free[:best], b.free[best+1:]...)
	return v
}

// put returns vectors, keeping the largest; it returns the ones it let go.
func (b *scalarBuffers) put(vs ...[]fr.Element) (dropped [][]fr.Element) {
	b.mu.Lock()
	defer b.mu.Unlock()
	keep := b.keep
	if keep <= 0 {
		keep = 8
	}
	b.free = append(b.free, vs...)
	sort.Slice(b.free, func(i, j int) bool { return cap(b.free[i]) > cap(b.free[j]) })
	if len(b.free) > keep {
		dropped = slices.Clone(b.free[keep:])
		clear(b.free[keep:])
		b.free = b.free[:keep]
	}
	return dropped
}

// putBack returns vectors and unregisters, in pinned, the ones let go: a dropped vector must not
// stay alive and locked.
func (b *scalarBuffers) putBack(pinned *gpu.PinnedPool, vs ...[]fr.Element) {
	for _, v := range b.put(vs...) {
		pinned.Forget(pooledBytes(v))
	}
}

// release returns pooled vectors to the buffers and unregisters the ones let go.
func (p *Prover) release(vs ...[]fr.Element) { p.buffers.putBack(p.Sched.Pinned(), vs...) }

// padZero extends v with zeros to m elements, in place when its capacity allows (synthesis
// sizes the vectors for the domain).
func padZero(v []fr.Element, m int) []fr.Element {
	if len(v) >= m {
		return v[:m]
	}
	n := len(v)
	if cap(v) >= m {
		v = v[:m]
		clear(v[n:])
		return v
	}
	out := make([]fr.Element, m)
	copy(out, v)
	return out
}

// gatherInto writes the values whose density bit is set, in order, to dst and returns how
// many; the work is split over the CPU cores along 64-bit words.
func gatherInto(dst, vals []fr.Element, d *cs.Density) int {
	if d == nil {
		return copy(dst, vals)
	}
	words := d.Words()
	workers := cores.N()
	per := max((len(words)+workers-1)/workers, 1024)
	type span struct{ lo, hi, at int }
	var spans []span
	at := 0
	for lo := 0; lo < len(words); lo += per {
		hi := min(lo+per, len(words))
		spans = append(spans, span{lo, hi, at})
		for _, w := range words[lo:hi] {
			at += bits.OnesCount64(w)
		}
	}
	var wg sync.WaitGroup
	for _, s := range spans {
		wg.Add(1)
		go func(s span) {
			defer wg.Done()
			k := s.at
			for wi := s.lo; wi < s.hi; wi++ {
				for w := words[wi]; w != 0; w &= w - 1 {
					if i := wi*64 + bits.TrailingZeros64(w); i < len(vals) && k < len(dst) {
						dst[k] = vals[i]
					}
					k++
				}
			}
		}(s)
	}
	wg.Wait()
	return at
}

// stageLog collects the durations of a partition's device steps.
type stageLog struct {
	mu     sync.Mutex
	stages []groth16.StageTiming
	spans  []StageSpan
}

// span records a step that started at start and ends now.
func (l *stageLog) span(name string, start time.Time) {
	l.mu.Lock()
	l.spans = append(l.spans, StageSpan{Name: name, Start: start, End: time.Now()})
	l.mu.Unlock()
}

func (l *stageLog) add(name string, d time.Duration) {
	l.mu.Lock()
	l.stages = append(l.stages, groth16.StageTiming{Name: name, Duration: d})
	l.mu.Unlock()
}

// partitionWork computes a partition's MSM results on one scheduler run.
type partitionWork func(ctx context.Context, run *gpu.Run, pk *groth16.Parameters, in *partitionInputs, key string, log *stageLog) (*groth16.MSMResults, error)

// Prove proves one partition: it waits for a device and a memory plan, runs the partition
// there, and assembles the proof. With the same r and s the bytes equal the CPU prover's.
func (p *Prover) Prove(ctx context.Context, req ProveRequest) (ProveResult, error) {
	var stages stageLog
	t0 := time.Now()
	in, err := p.prepareInputs(req.PK, req.PA)
	if err != nil {
		return ProveResult{}, err
	}
	defer func() { p.release(in.pooled...) }()
	key := req.SRSKey
	if key == "" {
		key = p.keys.key(req.PK)
	}
	part := gpu.Partition{JobID: req.JobID, Kind: req.Kind, Class: req.Class, Submitted: req.Submitted, Index: req.Index,
		Shape: ShapeOf(req.PK, key), OnEvent: req.OnEvent}
	// Where no device would compute a, b and c, or gather the A and B scalars, the host does
	// it now, while other partitions hold the GPU, instead of in the admitted run.
	if in.comp != nil {
		part.Shape.Circuit, part.Shape.CircuitBytes = in.circuit, newCircuitImage(in.comp).size
		if !p.Sched.ProductsOnDevice(part.Shape) {
			part.Shape.Circuit, part.Shape.CircuitBytes = "", 0
			if err := in.finishHost(ctx, &stages); err != nil {
				return ProveResult{}, err
			}
		}
	}
	if !p.Sched.GathersOnDevice(part.Shape) {
		in.gatherHost(nil)
	}
	stages.span("prepare (cpu)", t0)
	queued := time.Now()
	var msm *groth16.MSMResults
	res, err := p.Sched.Prove(ctx, part, func(ctx context.Context, run *gpu.Run) error {
		work := kernelWork(run)
		if work == nil {
			work = simulatedWork
		}
		stages.mu.Lock()
		stages.stages = stages.stages[:0]
		stages.mu.Unlock()
		stages.span("wait (admission)", queued)
		m, err := work(ctx, run, req.PK, in, key, &stages)
		if err != nil {
			return err
		}
		msm = m
		return nil
	})
	out := ProveResult{Run: res}
	if err != nil {
		return out, err
	}
	t0 = time.Now()
	out.Proof, err = groth16.Assemble(&req.PK.VK, msm, &req.R, &req.S)
	stages.add("assemble", time.Since(t0))
	stages.span("assemble", t0)
	out.Stages, out.Timeline = stages.stages, stages.spans
	return out, err
}

// pinStreamedSRS page-locks in place the SRS point vectors that a plan streams from host memory
// (PinnedPool.PinHost: copies from them then run at full PCIe speed) and returns the function
// that releases them.
func pinStreamedSRS(run *gpu.Run, pk *groth16.Parameters) (release func()) {
	var rels []func()
	if !run.Plan.SRSResident && run.Pinned != nil {
		for _, b := range srsHostVectors(pk) {
			if rel, ok := run.Pinned.PinHost(b); ok {
				rels = append(rels, rel)
			}
		}
	}
	return func() {
		for _, r := range rels {
			r()
		}
	}
}

func frBytes(v []fr.Element) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*gpu.FrBytes)
}

func g1Bytes(v []bls.G1Affine) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(gpu.G1.AffineBytes()))
}

func g2Bytes(v []bls.G2Affine) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(gpu.G2.AffineBytes()))
}

// simulatedWork runs a partition on a simulated device: the plan's uploads and resident
// vectors through the device's copy model, and the arithmetic on the CPU inside the kernel
// slots. The CPU result is kept across out-of-memory retries.
func simulatedWork(ctx context.Context, run *gpu.Run, pk *groth16.Parameters, in *partitionInputs, key string, log *stageLog) (*groth16.MSMResults, error) {
	for _, r := range run.Plan.Resident {
		rv, err := run.Resident(r.Key)
		if err != nil {
			return nil, err
		}
		if _, _, err := rv.Ensure(ctx, func(ctx context.Context, p gpu.DevicePtr) (any, error) {
			return nil, run.Upload(ctx, p, gpu.HostMem{Size: r.Bytes})
		}); err != nil {
			return nil, err
		}
	}
	in.gatherHost(log)
	defer pinStreamedSRS(run, pk)()
	defer pinStreamedScalars(run, in)()
	// The pre-staged vectors go back to back on the copy stream, as on hardware; the kernel
	// waits for them, and none is left running into the arena when this returns.
	type upload struct {
		name string
		p    gpu.Pending
	}
	var ups []upload
	defer func() {
		for _, u := range ups {
			_ = u.p.Wait(context.WithoutCancel(ctx))
		}
	}()
	tUp := time.Now()
	for _, name := range run.Plan.PrestagedBuffers() {
		ptr, size, err := run.Buffer(name)
		if err != nil {
			return nil, err
		}
		p, err := run.UploadAsync(ctx, ptr, gpu.HostMem{Size: size})
		if err != nil {
			return nil, fmt.Errorf("uploading %s: %w", name, err)
		}
		ups = append(ups, upload{name, p})
	}
	for _, u := range ups {
		if err := u.p.Wait(ctx); err != nil {
			return nil, fmt.Errorf("uploading %s: %w", u.name, err)
		}
	}
	if len(ups) > 0 {
		log.add("upload prestaged (simulated copy model)", time.Since(tUp))
		log.span("upload prestaged", tUp)
	}
	var res *groth16.MSMResults
	err := run.Kernel(ctx, "prove (simulated device, cpu arithmetic)", func() error {
		if in.consumed {
			return ErrConsumed
		}
		// A device that computes the products from the resident matrices: here on the CPU.
		if err := in.finishHost(ctx, log); err != nil {
			return err
		}
		t0 := time.Now()
		in.consumed = true
		h, err := groth16.ComputeH(ctx, in.a, in.b, in.c)
		if err != nil {
			return err
		}
		log.add("h (cpu)", time.Since(t0))
		log.span("h (cpu)", t0)
		t0 = time.Now()
		res = new(groth16.MSMResults)
		if err := groth16.ComputeHMSM(ctx, pk, h, res); err != nil {
			return err
		}
		cfg := ecc.MultiExpConfig{NbTasks: cores.N()}
		res.L, res.A, res.B1, res.B2 = g1Infinity(), g1Infinity(), g1Infinity(), g2Infinity()
		for q, dst := range map[gpu.Query]*bls.G1Jac{gpu.QueryL: &res.L, gpu.QueryA: &res.A, gpu.QueryBG1: &res.B1} {
			pts := [...][]bls.G1Affine{gpu.QueryL: pk.L, gpu.QueryA: pk.A, gpu.QueryBG1: pk.BG1}[q]
			if len(pts) == 0 {
				continue
			}
			if _, err := dst.MultiExp(pts, in.scalars[q], cfg); err != nil {
				return fmt.Errorf("%s MSM: %w", q, err)
			}
		}
		if len(pk.BG2) > 0 {
			if _, err := res.B2.MultiExp(pk.BG2, in.scalars[gpu.QueryBG2], cfg); err != nil {
				return fmt.Errorf("%s MSM: %w", gpu.QueryBG2, err)
			}
		}
		log.add("msm (cpu)", time.Since(t0))
		log.span("msm (cpu)", t0)
		return nil
	})
	return res, err
}

// identity values for empty MSMs.
func g1Infinity() bls.G1Jac {
	var p bls.G1Jac
	p.X.SetOne()
	p.Y.SetOne()
	return p
}

func g2Infinity() bls.G2Jac {
	var p bls.G2Jac
	p.X.SetOne()
	p.Y.SetOne()
	return p
}
