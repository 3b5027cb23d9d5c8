package gpu

import (
	"fmt"
	"math/bits"
)

// Tier says how much of a partition's data a plan keeps on the device.
type Tier int

// Plan tiers from the most device memory to the least.
const (
	// TierFull pre-stages a, b and c (three domain buffers) before the kernel lock and keeps the
	// L/A/B scalars on the device.
	TierFull Tier = iota
	// TierPartial pre-stages a and b; c is streamed into b's buffer after the product a·b, and
	// MSM chunks are smaller; MSM scalars are read from host memory where that takes less.
	TierPartial
	// TierMinimal keeps one domain buffer: a, b and c pass through it in turn and everything
	// else is streamed with small chunks.
	TierMinimal
)

func (t Tier) String() string {
	switch t {
	case TierFull:
		return "full"
	case TierPartial:
		return "partial"
	case TierMinimal:
		return "minimal"
	}
	return fmt.Sprintf("tier(%d)", int(t))
}

// Query names one of a partition's MSMs.
type Query int

// The five Groth16 MSMs of a partition.
const (
	QueryH Query = iota
	QueryL
	QueryA
	QueryBG1
	QueryBG2
	// NumQueries counts the queries (array lengths).
	NumQueries
)

var queryNames = [NumQueries]string{"h", "l", "a", "b_g1", "b_g2"}

func (q Query) String() string {
	if q >= 0 && q < NumQueries {
		return queryNames[q]
	}
	return fmt.Sprintf("query(%d)", int(q))
}

// Curve is the group an MSM runs in.
type Curve int

// The groups of BLS12-381 MSMs.
const (
	G1 Curve = 1
	G2 Curve = 2
)

// Curve returns the group of q's points.
func (q Query) Curve() Curve {
	if q == QueryBG2 {
		return G2
	}
	return G1
}

// AffineBytes is the size of one affine point as the kernels read it (gnark-crypto layout).
func (c Curve) AffineBytes() uint64 {
	if c == G2 {
		return 192
	}
	return 96
}

// FrBytes is the size of one scalar field element.
const FrBytes = 32

// MSMFlags mirror SNARKD_MSM_* in native/snarkd.h.
type MSMFlags uint32

// Flags of snarkd_msm_plan.
const (
	MSMPointsOnHost  MSMFlags = 1
	MSMScalarsOnHost MSMFlags = 2
	MSMSplit01       MSMFlags = 4
)

// Shape is what the planner needs to know of a partition.
type Shape struct {
	// LogDomain is log2 of the evaluation domain (27 for a 32 GiB PoRep partition).
	LogDomain uint32
	// Points per query: the length of each SRS vector the MSM reads (H is domain − 1).
	Points [NumQueries]uint64
	// SRSKey identifies the parameter file; resident vectors are keyed by it and the query.
	SRSKey string
	// Circuit, when set, names the compiled circuit whose matrices (CircuitBytes on the device,
	// resident like the SRS) let the wide plan compute a, b and c from the witness on the device.
	Circuit      string
	CircuitBytes uint64
}

// DomainBytes is the size of one evaluation vector (a, b or c).
func (s Shape) DomainBytes() uint64 { return FrBytes << s.LogDomain }

// SRSBytes is the size of q's point vector.
func (s Shape) SRSBytes(q Query) uint64 { return s.Points[q] * q.Curve().AffineBytes() }

// Sizer gives the device memory the kernels need beyond the data buffers. The cuda build can
// answer from snarkd_ntt_domain_bytes and snarkd_msm_plan_make; ModelSizer mirrors them.
type Sizer interface {
	// NTTDomainBytes is the size of one NTT domain's twiddle tables, full or compact.
	NTTDomainBytes(logN uint32, compact bool) uint64
	// MSMWorkspace is the device workspace of one MSM of npoints with chunks of 2^chunkLog.
	MSMWorkspace(c Curve, npoints uint64, flags MSMFlags, chunkLog uint32) uint64
}

// ModelSizer computes kernel workspace from the layouts documented in native/snarkd.h and
// docs/scheduler.md.
type ModelSizer struct{}

// NTTDomainBytes: forward and inverse twiddles (n/2 Fr each; none in a compact domain), 8
// tables of 2^ceil(lg/2) Fr, the chunk stages' level table (2^(min(lg, 10) - 1) Fr) and the
// twiddle tables of the global passes with small spans.
func (ModelSizer) NTTDomainBytes(logN uint32, compact bool) uint64 {
	split := (logN + 1) / 2
	n := 8*FrBytes<<split + FrBytes<<(min(logN, 10)-1) + FrBytes*nttPassTableFr(logN)
	if !compact {
		n += FrBytes << logN
	}
	return n
}

// nttPassTableFr mirrors native for_each_pass_table: the spans above the 2^10-element
// shared-memory chunks run as global passes of up to 3 stages (the remainder pass at the
// smallest spans); a pass whose smallest span 2^lgLow has lgLow <= min(18, logN-9) has a table of
// (2^r - 1) << lgLow Fr, once for the forward and once for the inverse twiddles.
func nttPassTableFr(logN uint32) uint64 {
	const chunkLg = 10
	if logN <= chunkLg {
		return 0
	}
	maxLow := min(18, int(logN)-9)
	var total uint64
	cur := int(logN) - 1
	for remaining := int(logN) - chunkLg; remaining > 0; {
		r := min(remaining, 3)
		lgLow := cur - r + 1
		if lgLow <= maxLow {
			total += (1<<r - 1) << lgLow
		}
		cur -= r
		remaining -= r
	}
	return 2 * total
}

// MSMWindowBits is the Pippenger window the kernels use for a chunk of 2^lg points (native
// window_for): 20 bits from 2^23, 16 from 2^18, 13 from 2^14, else 8. SPLIT01 MSMs pass the
// chunk's lg minus 4, since about a sixteenth of their scalars reach the buckets.
func MSMWindowBits(lg int) uint32 {
	switch {
	case lg >= 23:
		return 20
	case lg >= 18:
		return 16
	case lg >= 14:
		return 13
	}
	return 8
}

// Constants of the native MSM layout (native/msm.cu).
const (
	msmSegment       = 128 // sorted entries summed per thread
	msmReduceThreads = 256
	msmOnesThreads   = 256
	msmModelSMs      = 132 // SM count the model assumes for the scalar-1 partial sums (H100/H200)
)

// msmReducePerThread mirrors native reduce_per_thread: buckets per reduce thread.
func msmReducePerThread(nb uint64) uint64 {
	if nb >= 1<<19 {
		return 64
	}
	return 16
}

// Align256 rounds x up to 256 bytes, the alignment of every buffer and vector the kernels read.
func Align256(x uint64) uint64 { return (x + 255) &^ 255 }

// MSMWorkspace mirrors native make_layout: digits and point references for every window, twice
// (unsorted and sorted); radix-sort scratch (modelled as the sort's alternate key and value
// buffers plus 1 MiB); XYZZ buckets per window; the carries of runs that cross a segment; the
// reduction's scratch and partial sums; the scalar-0/1 split's flags and indices; and
// double-buffered staging for what is on the host.
func (ModelSizer) MSMWorkspace(c Curve, npoints uint64, flags MSMFlags, chunkLog uint32) uint64 {
	if npoints == 0 {
		return 0
	}
	chunk := min(npoints, uint64(1)<<chunkLog)
	lg := bits.Len64(chunk - 1)
	split := flags&MSMSplit01 != 0
	if split {
		lg -= 4
	}
	wbits := MSMWindowBits(lg)
	nwins := uint64((256 + wbits - 1) / wbits)
	nb := uint64(1) << (wbits - 1)
	nseg := (chunk + msmSegment - 1) / msmSegment
	xyzz := 2 * c.AffineBytes() // four coordinates
	bpw := max(1, nb/(msmReduceThreads*msmReducePerThread(nb)))
	ones := uint64(0)
	if split {
		ones = 2 * msmModelSMs
	}
	ws := 4 * Align256(nwins*chunk*4)                          // keys and references, unsorted and sorted
	ws += Align256(8*chunk + 1<<20)                            // sort scratch (model)
	ws += Align256(nwins * nb * xyzz)                          // buckets
	ws += 2*Align256(nwins*nseg*xyzz) + Align256(nwins*nseg*4) // carries
	ws += Align256(nwins * bpw * msmReduceThreads * xyzz)      // reduction scratch
	ws += Align256((nwins*bpw + ones) * xyzz)                  // partial sums
	if split {
		ws += 2*Align256(chunk) + 2*Align256(chunk*4) + 2*Align256(4) + Align256(ones*msmOnesThreads*xyzz)
	}
	if flags&MSMPointsOnHost != 0 {
		ws += 2 * Align256(chunk*c.AffineBytes())
	}
	if flags&MSMScalarsOnHost != 0 {
		ws += 2 * Align256(chunk*FrBytes)
	}
	return ws
}

// Buffer is one named region of a plan's arena. Buffers of different phases may overlap.
type Buffer struct {
	Name   string
	Offset uint64
	Size   uint64
}

// ResidentNeed is a vector a plan expects to find on the device outside its arena: NTT
// twiddle tables, or SRS points when the SRS is resident.
type ResidentNeed struct {
	Key   string
	Bytes uint64
}

// Plan is the device memory of one partition attempt. Peak bytes are allocated as one arena
// when the plan is granted; Resident vectors are reserved separately and shared.
type Plan struct {
	Tier Tier
	// DomainBuffers is how many evaluation vectors are on the device during the H step.
	DomainBuffers int
	// Prestaged is how many of a, b, c are uploaded before the kernel lock.
	Prestaged int
	// CompactNTT: the plan's NTT domain has no omega tables (NTTKey, NTTDomainBytes), for
	// cards where they do not fit beside the plan.
	CompactNTT bool
	// ScalarsOnDevice: the L/A/B MSM scalars are uploaded; otherwise read from host memory.
	ScalarsOnDevice bool
	// ScalarBuffers: L, A and B each have a scalar buffer of their own (ScalarBuffer) outside
	// the H phases' memory, uploaded with a, b and c; otherwise one "scalars" buffer, reloaded
	// after each MSM.
	ScalarBuffers bool
	// SRSResident: the point vectors are resident (in Resident); otherwise streamed.
	SRSResident bool
	// ChunkLog is log2 of the points per MSM chunk.
	ChunkLog uint32
	MSMFlags [NumQueries]MSMFlags
	// Peak is the arena size: the largest phase, every buffer rounded to AllocGranularity.
	Peak     uint64
	Buffers  []Buffer
	Resident []ResidentNeed
}

// Buffer returns the named buffer of the plan's arena.
func (p Plan) Buffer(name string) (Buffer, bool) {
	for _, b := range p.Buffers {
		if b.Name == name {
			return b, true
		}
	}
	return Buffer{}, false
}

// Need is the device memory the plan asks for in total: arena plus resident vectors.
func (p Plan) Need() uint64 {
	n := p.Peak
	for _, r := range p.Resident {
		n += RoundAlloc(r.Bytes)
	}
	return n
}

func (p Plan) String() string {
	srs := "streamed"
	if p.SRSResident {
		srs = "resident"
	}
	compact := ""
	if p.CompactNTT {
		compact = ", compact NTT tables"
	}
	return fmt.Sprintf("%s (arena %s, SRS %s, MSM chunks 2^%d%s)", p.Tier, FormatBytes(p.Peak), srs, p.ChunkLog, compact)
}

// Planner computes the plans for partition shapes.
type Planner struct {
	Sizer Sizer
	// WideChunks gives the full tier with a resident SRS 2^26-point MSM chunks instead of 2^24
	// (for a 2^27 domain) and scalar buffers of its own for L, A and B (Plan.ScalarBuffers):
	// faster MSMs and kernels that run back to back, for about 2.5 times the arena.
	WideChunks bool
}

// ScalarBuffer names the buffer of q's scalars in a plan with ScalarBuffers. B_G1 and B_G2
// share one: their scalars are the same vector.
func ScalarBuffer(q Query) string {
	if q == QueryBG2 {
		q = QueryBG1
	}
	return "scalars." + q.String()
}

// PrestagedBuffers names the buffers a partition uploads before its first kernel, in upload
// order.
func (p Plan) PrestagedBuffers() []string {
	names := []string{"a", "b", "c"}[:p.Prestaged]
	if p.ScalarBuffers {
		for q := QueryL; q < QueryBG2; q++ {
			if _, ok := p.Buffer(ScalarBuffer(q)); ok {
				names = append(names, ScalarBuffer(q))
			}
		}
		if _, ok := p.Buffer(DensityBuffer); ok {
			names = append(names, DensityBuffer)
		}
	}
	return names
}

// chunkLog is the MSM chunk size of a tier: 2^24, 2^22 and 2^20 points for a 2^27 domain,
// scaled down with the domain (never below 2^10) so that lower tiers always stage less. Wide
// chunks are 2^26: every chunk adds its bucket runs into the buckets with full additions and
// merges the runs that cross segments; on the H200 a dense 2^26 MSM took 579 ms as one chunk,
// 642 ms as two (docs/benchmarks.md, round 4).
func chunkLog(tier Tier, logN uint32, wide bool) uint32 {
	want := [...]uint32{TierFull: 24, TierPartial: 22, TierMinimal: 20}[tier]
	if tier == TierFull && wide {
		want = 26
	}
	if logN < 27 {
		want -= min(want-10, 27-logN)
	}
	return max(want, 10)
}

// NTTKey is the resident key of a domain's twiddle tables, full or compact.
func NTTKey(logN uint32, compact bool) string {
	if compact {
		return fmt.Sprintf("ntt/2^%d/compact", logN)
	}
	return fmt.Sprintf("ntt/2^%d", logN)
}

// SRSKey is the resident key of one SRS point vector.
func SRSKey(srs string, q Query) string { return fmt.Sprintf("srs/%s/%s", srs, q) }

// CircuitKey is the resident key of a compiled circuit's matrices.
func CircuitKey(circuit string) string { return "r1cs/" + circuit }

// ProductsBuffer names the buffer of a plan whose device computes a, b and c from the witness
// and the resident matrices (Shape.Circuit): the search for an unsatisfied row uses it.
const ProductsBuffer = "products"

// Plan computes the plan of one tier. The arena is laid out per phase (docs/scheduler.md):
//
//	H step:  a | b | c             (DomainBuffers × D)
//	H MSM:   a (H scalars) | msm.h  (D + WS_H)
//	L/A/B:   scalars | msm          (S + max WS_q), S = max points × 32 when ScalarsOnDevice
//
// and Peak is the largest phase. With wide chunks the scalars of L, A and B have buffers of
// their own above all three phases, and so do the A and B densities that the device gathers
// their scalars with (DensityBuffer): Peak = largest phase + their sum.
func (pl Planner) Plan(s Shape, tier Tier, srsResident bool) Plan {
	return pl.plan(s, tier, srsResident, false)
}

// PlanCompact is Plan with compact NTT tables (Plan.CompactNTT).
func (pl Planner) PlanCompact(s Shape, tier Tier, srsResident bool) Plan {
	return pl.plan(s, tier, srsResident, true)
}

func (pl Planner) plan(s Shape, tier Tier, srsResident, compact bool) Plan {
	sz := pl.Sizer
	if sz == nil {
		sz = ModelSizer{}
	}
	wide := srsResident && pl.WideChunks && tier == TierFull
	p := Plan{Tier: tier, SRSResident: srsResident, ChunkLog: chunkLog(tier, s.LogDomain, wide)}
	switch tier {
	case TierFull:
		p.DomainBuffers, p.Prestaged = 3, 3
	case TierPartial:
		p.DomainBuffers, p.Prestaged = 2, 2
	default:
		p.DomainBuffers = 1
	}
	d := RoundAlloc(s.DomainBytes())
	var ntt uint64
	for i, name := range []string{"a", "b", "c"}[:p.DomainBuffers] {
		p.Buffers = append(p.Buffers, Buffer{Name: name, Offset: uint64(i) * d, Size: d})
		ntt += d
	}
	pointFlag := MSMFlags(0)
	if !srsResident {
		pointFlag = MSMPointsOnHost
	}
	p.MSMFlags[QueryH] = pointFlag
	wsH := RoundAlloc(sz.MSMWorkspace(G1, s.Points[QueryH], p.MSMFlags[QueryH], p.ChunkLog))
	p.Buffers = append(p.Buffers, Buffer{Name: "msm.h", Offset: d, Size: wsH})
	phaseH := d + wsH

	// L, A, B: one scalar vector on the device (the largest query's) plus the largest
	// workspace, or scalars read from host memory through staging. The full tier keeps the
	// scalars on the device; lower tiers take whichever layout is smaller.
	phaseQ := func(onDevice bool) (scal, ws uint64) {
		for q := QueryL; q < NumQueries; q++ {
			f := MSMSplit01 | pointFlag
			if onDevice {
				scal = max(scal, RoundAlloc(s.Points[q]*FrBytes))
			} else {
				f |= MSMScalarsOnHost
			}
			ws = max(ws, RoundAlloc(sz.MSMWorkspace(q.Curve(), s.Points[q], f, p.ChunkLog)))
		}
		return scal, ws
	}
	scal, ws := phaseQ(true)
	if tier != TierFull {
		if hs, hw := phaseQ(false); hs+hw < scal+ws {
			scal, ws = hs, hw
		}
	}
	p.ScalarsOnDevice = scal > 0
	for q := QueryL; q < NumQueries; q++ {
		p.MSMFlags[q] = MSMSplit01 | pointFlag
		if !p.ScalarsOnDevice {
			p.MSMFlags[q] |= MSMScalarsOnHost
		}
	}
	switch {
	case wide:
		// Every query's scalars above the memory of all phases: uploaded with a, b and c, so
		// the partition's kernels need no upload between them. A worker's uploads then come
		// in one block, which the other worker's kernels hide; with one upload before each
		// of the L, A and B MSMs, both workers' uploads kept meeting, the device idle.
		p.ScalarBuffers = true
		top := max(ntt, phaseH, ws)
		for q := QueryL; q < QueryBG2; q++ {
			n := s.Points[q]
			if q == QueryBG1 {
				n = max(n, s.Points[QueryBG2])
			}
			if n == 0 {
				continue
			}
			p.Buffers = append(p.Buffers, Buffer{Name: ScalarBuffer(q), Offset: top, Size: RoundAlloc(n * FrBytes)})
			top += RoundAlloc(n * FrBytes)
		}
		// The A and B aux densities, for gathering their scalars from L's on the device.
		if n := s.Points[QueryL]; n > 0 {
			size := RoundAlloc(2 * GatherTableBytes(n))
			p.Buffers = append(p.Buffers, Buffer{Name: DensityBuffer, Offset: top, Size: size})
			top += size
		}
		// The sparse products' scratch (their first unsatisfied row).
		if s.Circuit != "" && s.CircuitBytes > 0 {
			p.Buffers = append(p.Buffers, Buffer{Name: ProductsBuffer, Offset: top, Size: AllocGranularity})
			top += AllocGranularity
		}
		p.Buffers = append(p.Buffers, Buffer{Name: "msm", Offset: 0, Size: ws})
		p.Peak = top
	default:
		if scal > 0 {
			p.Buffers = append(p.Buffers, Buffer{Name: "scalars", Offset: 0, Size: scal})
		}
		p.Buffers = append(p.Buffers, Buffer{Name: "msm", Offset: scal, Size: ws})
		p.Peak = max(ntt, phaseH, scal+ws)
	}

	p.CompactNTT = compact
	p.Resident = []ResidentNeed{{Key: NTTKey(s.LogDomain, p.CompactNTT), Bytes: sz.NTTDomainBytes(s.LogDomain, p.CompactNTT)}}
	if srsResident {
		for q := QueryH; q < NumQueries; q++ {
			if s.Points[q] > 0 {
				p.Resident = append(p.Resident, ResidentNeed{Key: SRSKey(s.SRSKey, q), Bytes: s.SRSBytes(q)})
			}
		}
	}
	if _, ok := p.Buffer(ProductsBuffer); ok {
		p.Resident = append(p.Resident, ResidentNeed{Key: CircuitKey(s.Circuit), Bytes: s.CircuitBytes})
	}
	return p
}

// Plans lists every plan of s, best first: with the SRS resident full (with wide chunks, then
// also without), partial, minimal, then the same with the SRS streamed. Partial and minimal
// plans come twice: with the NTT domain's full tables, then with compact ones, which are
// 2^logN Fr smaller (4 GiB at 2^27: a 12 GB card then runs the partial plan instead of the
// minimal one) and make the H step about 15 % slower.
func (pl Planner) Plans(s Shape) []Plan {
	var out []Plan
	for _, res := range []bool{true, false} {
		for t := TierFull; t <= TierMinimal; t++ {
			out = append(out, pl.Plan(s, t, res))
			if t != TierFull {
				out = append(out, pl.PlanCompact(s, t, res))
			}
			if res && t == TierFull && pl.WideChunks {
				narrow := pl
				narrow.WideChunks = false
				out = append(out, narrow.Plan(s, t, res))
			}
		}
	}
	return out
}

// Candidates lists the plans admission may grant, best first (Plans, without the resident ones
// unless allowed). Plans that are not smaller than a better one are dropped; so with wide chunks
// the full resident plan with 2^24 chunks stays a candidate before the partial one.
func (pl Planner) Candidates(s Shape, allowResident bool) []Plan {
	var out []Plan
	for _, p := range pl.Plans(s) {
		if p.SRSResident && !allowResident {
			continue
		}
		if len(out) > 0 && p.Need() >= out[len(out)-1].Need() && p.SRSResident == out[len(out)-1].SRSResident {
			continue
		}
		out = append(out, p)
	}
	return out
}

// DensityBuffer names the buffer of a plan with scalar buffers that holds the A and B queries'
// aux densities (GatherTableBytes each), from which the device gathers their scalars out of L's:
// the witness then goes up once, and the host neither gathers nor holds the A and B vectors.
const DensityBuffer = "density"

// GatherTableBytes is the device size of a density mask over n variables as the gather reads
// it: the mask's 64-bit words, then the number of set bits before each word (uint32).
func GatherTableBytes(n uint64) uint64 {
	w := (n + 63) / 64
	return GatherBaseOffset(n) + Align256(w*4)
}

// GatherBaseOffset is where, in a density table over n variables, the per-word counts start.
func GatherBaseOffset(n uint64) uint64 { return Align256((n + 63) / 64 * 8) }

// OnlyTier is a Config.PlanFilter keeping the plans of one tier (with the SRS resident or
// streamed as srsResident says).
func OnlyTier(t Tier, srsResident bool) func([]Plan) []Plan {
	return func(plans []Plan) []Plan {
		var out []Plan
		for _, p := range plans {
			if p.Tier == t && p.SRSResident == srsResident {
				out = append(out, p)
			}
		}
		return out
	}
}
