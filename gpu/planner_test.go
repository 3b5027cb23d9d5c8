package gpu

import (
	"fmt"
	"testing"
)

// porepShape is a 32 GiB PoRep partition (gpu-performance.md §3.1).
var porepShape = Shape{LogDomain: 27, SRSKey: "porep-32g",
	Points: [NumQueries]uint64{1<<27 - 1, 130_000_000, 130_000_000, 33_000_000, 33_000_000}}

func TestModelSizer(t *testing.T) {
	for _, tc := range []struct {
		c        Curve
		n        uint64
		flags    MSMFlags
		chunkLog uint32
		want     uint64
	}{
		// A 2^20 chunk: 16-bit windows, 16 of them, 2^15 buckets each, 2^13 segments of 128,
		// 8 reduction blocks per window. Terms in native make_layout order: keys and references
		// (unsorted, sorted), sort scratch, buckets, carries (first, last, keys), reduction
		// scratch, partial sums, then point staging.
		{G1, 1 << 20, MSMPointsOnHost, 20, 4*16<<22 + (9 << 20) + 16<<15*192 +
			2*16<<13*192 + 16<<13*4 + 16*8*256*192 + 16*8*192 + 2<<20*96},
		// G2 points are twice as large; a 2^18 chunk of 2^20 points has 16-bit windows too;
		// scalar staging 2·2^18·32.
		{G2, 1 << 20, MSMScalarsOnHost, 18, 4*16<<20 + (2<<20 + 1<<20) + 16<<15*384 +
			2*16<<11*384 + 16<<11*4 + 16*8*256*384 + 16*8*384 + 2<<18*32},
		// 2^27 points in 2^26 chunks: 20-bit windows, 13 of them, 2^19 buckets, 64 to a reduce
		// thread: 32 blocks.
		{G1, 1 << 27, 0, 26, 4*13<<28 + (8<<26 + 1<<20) + 13<<19*192 +
			2*13<<19*192 + 13<<19*4 + 13*32*256*192 + 13*32*192},
		// The scalar-0/1 split sizes the window for a sixteenth of the chunk (2^24 → 16 bits) and
		// adds flags, tail and scalar-1 indices, two counters and 264 blocks of partial sums.
		{G1, 1 << 24, MSMSplit01, 24, 4*16<<26 + (8<<24 + 1<<20) + 16<<15*192 +
			2*16<<17*192 + 16<<17*4 + 16*8*256*192 + (16*8+264)*192 +
			2<<24 + 2*4<<24 + 2*256 + 264*256*192},
		// 100 points: 8-bit windows (32 of them), 128 buckets, one segment, one block each; small
		// terms round up to 256 bytes.
		{G1, 100, 0, 20, 4*12800 + 1049600 + 32*128*192 + 2*32*192 + 256 + 32*256*192 + 32*192},
		{G1, 0, MSMPointsOnHost, 20, 0},
	} {
		if got := (ModelSizer{}).MSMWorkspace(tc.c, tc.n, tc.flags, tc.chunkLog); got != tc.want {
			t.Errorf("MSMWorkspace(%d, %d, %d, %d) = %d, want %d", tc.c, tc.n, tc.flags, tc.chunkLog, got, tc.want)
		}
	}
	// 2^27: n Fr of twiddles (none when compact), 8 tables of 2^14 Fr, the level table of 2^9
	// Fr, pass tables for the passes with smallest spans 2^18, 2^15, 2^12 (radix 8) and 2^10
	// (radix 4), forward and inverse.
	passes := 2 * (7<<18 + 7<<15 + 7<<12 + 3<<10)
	compact := uint64(8*32<<14 + 32<<9 + 32*passes)
	if got, want := (ModelSizer{}).NTTDomainBytes(27, false), 4<<30+compact; got != want {
		t.Errorf("NTTDomainBytes(27) = %d, want %d", got, want)
	}
	if got := (ModelSizer{}).NTTDomainBytes(27, true); got != compact {
		t.Errorf("NTTDomainBytes(27, compact) = %d, want %d", got, compact)
	}
}

// overlaps reports whether two buffers share bytes.
func overlaps(a, b Buffer) bool { return a.Offset < b.Offset+b.Size && b.Offset < a.Offset+a.Size }

func TestPlanLayout(t *testing.T) {
	phases := [][]string{{"a", "b", "c"}, {"a", "msm.h"}, {"scalars", "msm"}}
	for _, s := range []Shape{
		porepShape,
		{LogDomain: 20, SRSKey: "small", Points: [NumQueries]uint64{1<<20 - 1, 900_000, 950_000, 200_000, 200_000}},
		{LogDomain: 10, Points: [NumQueries]uint64{1023, 10, 1000, 0, 0}},
	} {
		for _, res := range []bool{false, true} {
			for tier := TierFull; tier <= TierMinimal; tier++ {
				for _, wide := range []bool{false, true} {
					p := (Planner{WideChunks: wide}).Plan(s, tier, res)
					name := fmt.Sprintf("2^%d/%s/resident=%v/wide=%v", s.LogDomain, tier, res, wide)
					if p.DomainBuffers != 3-int(tier) {
						t.Errorf("%s: %d domain buffers", name, p.DomainBuffers)
					}
					// Scalar buffers of their own belong to every phase.
					var own []string
					if p.ScalarBuffers != (wide && res && tier == TierFull) {
						t.Errorf("%s: ScalarBuffers = %v", name, p.ScalarBuffers)
					}
					if p.ScalarBuffers {
						for q := QueryL; q < NumQueries; q++ {
							b, ok := p.Buffer(ScalarBuffer(q))
							if ok != (s.Points[q] > 0 || (q == QueryBG1 && s.Points[QueryBG2] > 0)) && q != QueryBG2 {
								t.Errorf("%s: buffer %s present %v", name, ScalarBuffer(q), ok)
							}
							if ok && b.Size < RoundAlloc(s.Points[q]*FrBytes) {
								t.Errorf("%s: %s holds %d bytes, %s has %d points", name, b.Name, b.Size, q, s.Points[q])
							}
							if ok && q != QueryBG2 {
								own = append(own, b.Name)
							}
						}
						// The A and B aux densities for the gathers on the device.
						if b, ok := p.Buffer(DensityBuffer); !ok || b.Size < 2*GatherTableBytes(s.Points[QueryL]) {
							t.Errorf("%s: density buffer %+v (present %v) for %d aux variables", name, b, ok, s.Points[QueryL])
						} else {
							own = append(own, b.Name)
						}
						if got, want := p.PrestagedBuffers(), append([]string{"a", "b", "c"}, own...); fmt.Sprint(got) != fmt.Sprint(want) {
							t.Errorf("%s: prestaged %v, want %v", name, got, want)
						}
					} else if got := p.PrestagedBuffers(); len(got) != p.Prestaged {
						t.Errorf("%s: prestaged %v", name, got)
					}
					var peak uint64
					for _, ph := range phases {
						ph = append(append([]string(nil), ph...), own...)
						var sum uint64
						var bufs []Buffer
						for _, n := range ph {
							if b, ok := p.Buffer(n); ok {
								bufs = append(bufs, b)
								sum += b.Size
							}
						}
						for i := range bufs {
							if bufs[i].Offset+bufs[i].Size > p.Peak || bufs[i].Size%AllocGranularity != 0 {
								t.Errorf("%s: buffer %+v outside arena %d or unrounded", name, bufs[i], p.Peak)
							}
							for j := i + 1; j < len(bufs); j++ {
								if overlaps(bufs[i], bufs[j]) {
									t.Errorf("%s: %+v overlaps %+v in one phase", name, bufs[i], bufs[j])
								}
							}
						}
						peak = max(peak, sum)
					}
					if peak != p.Peak {
						t.Errorf("%s: Peak %d, largest phase %d", name, p.Peak, peak)
					}
					if a, _ := p.Buffer("a"); a.Size != RoundAlloc(s.DomainBytes()) {
						t.Errorf("%s: a is %d bytes", name, a.Size)
					}
					_, hasScalars := p.Buffer("scalars")
					hasScalars = hasScalars || len(own) > 0
					if hasScalars != p.ScalarsOnDevice || (tier == TierFull && !hasScalars) ||
						(p.MSMFlags[QueryL]&MSMScalarsOnHost != 0) == hasScalars {
						t.Errorf("%s: scalars buffer %v, flags %v", name, hasScalars, p.MSMFlags)
					}
					wantRes := 1
					if res {
						for q := QueryH; q < NumQueries; q++ {
							if s.Points[q] > 0 {
								wantRes++
							}
						}
					}
					if p.CompactNTT || len(p.Resident) != wantRes || p.Resident[0].Key != NTTKey(s.LogDomain, false) ||
						p.Resident[0].Bytes != (ModelSizer{}).NTTDomainBytes(s.LogDomain, false) {
						t.Errorf("%s: resident %v (compact NTT %v)", name, p.Resident, p.CompactNTT)
					}
					// The compact variant differs only in the NTT tables.
					c := (Planner{WideChunks: wide}).PlanCompact(s, tier, res)
					if !c.CompactNTT || c.Peak != p.Peak || fmt.Sprint(c.Buffers) != fmt.Sprint(p.Buffers) ||
						c.Resident[0].Key != NTTKey(s.LogDomain, true) ||
						p.Need()-c.Need() != RoundAlloc(p.Resident[0].Bytes)-RoundAlloc(c.Resident[0].Bytes) {
						t.Errorf("%s: compact variant %s, resident %v", name, c, c.Resident)
					}
					if (p.MSMFlags[QueryH]&MSMPointsOnHost != 0) == res {
						t.Errorf("%s: H points on host = %v", name, !res)
					}
				}
			}
			// Small shapes can make a lower tier no smaller (host staging outweighs the
			// scalar buffer); candidates keep only strictly smaller plans.
			cands := (Planner{}).Candidates(s, res)
			for i := 1; i < len(cands); i++ {
				if cands[i].SRSResident == cands[i-1].SRSResident && cands[i].Need() >= cands[i-1].Need() {
					t.Errorf("2^%d: candidate %s needs %d, not less than %s (%d)", s.LogDomain,
						cands[i], cands[i].Need(), cands[i-1], cands[i-1].Need())
				}
			}
		}
	}
}

func TestPoRepPlans(t *testing.T) {
	const gib = 1 << 30
	d := uint64(4 * gib)
	plans := (Planner{}).Candidates(porepShape, true)
	// Resident, then streamed: full, partial, partial with compact NTT tables, minimal with
	// compact tables (with full tables it is no smaller than the compact partial plan).
	var got []string
	for _, p := range plans {
		got = append(got, fmt.Sprintf("%s/%v/%v", p.Tier, p.SRSResident, p.CompactNTT))
	}
	want := "[full/true/false partial/true/false partial/true/true minimal/true/true " +
		"full/false/false partial/false/false partial/false/true minimal/false/true]"
	if fmt.Sprint(got) != want {
		t.Fatalf("candidates %v, want %s", got, want)
	}
	// a, b, c dominate the resident full and partial arenas of a 2^27 domain and the streamed
	// partial one (the streamed full arena is the L/A/B phase: point staging at 2^24 chunks).
	for i, want := range []uint64{3 * d, 2 * d, 2 * d, 0, 0, 2 * d, 2 * d, 0} {
		if want != 0 && plans[i].Peak != want {
			t.Errorf("candidate %d (%s): arena %d, want %d", i, plans[i], plans[i].Peak, want)
		}
	}
	// Wide chunks add a full resident plan with 2^26-point chunks and a larger arena in front;
	// the 2^24 one stays next, so admission can still fall back to it before partial.
	wide := (Planner{WideChunks: true}).Candidates(porepShape, true)
	if len(wide) != len(plans)+1 {
		t.Fatalf("%d candidates with wide chunks, want %d", len(wide), len(plans)+1)
	}
	if wide[0].Tier != TierFull || !wide[0].SRSResident || wide[0].ChunkLog != 26 || wide[0].Peak <= plans[0].Peak {
		t.Errorf("wide full plan: %s", wide[0])
	}
	t.Logf("wide chunks: %s, need %s", wide[0], FormatBytes(wide[0].Need()))
	for i := range plans {
		if wide[i+1].String() != plans[i].String() || wide[i+1].Need() != plans[i].Need() {
			t.Errorf("wide chunks changed candidate %d: %s, want %s", i, wide[i+1], plans[i])
		}
	}
	srs := uint64(0)
	for q := QueryH; q < NumQueries; q++ {
		srs += RoundAlloc(porepShape.SRSBytes(q))
	}
	for i, p := range plans {
		tables := RoundAlloc((ModelSizer{}).NTTDomainBytes(27, p.CompactNTT))
		wantSRS := i < 4
		if p.SRSResident != wantSRS {
			t.Errorf("candidate %d resident = %v", i, p.SRSResident)
		}
		want := p.Peak + tables
		if wantSRS {
			want += srs
		}
		if p.Need() != want {
			t.Errorf("candidate %d Need %d, want %d", i, p.Need(), want)
		}
		t.Logf("%-40s need %s", p, FormatBytes(p.Need()))
	}
	// The minimal streamed plan: one domain buffer plus the H MSM workspace at 2^20 chunks.
	min := plans[7]
	wsH := RoundAlloc((ModelSizer{}).MSMWorkspace(G1, 1<<27-1, MSMPointsOnHost, 20))
	if min.Peak != d+wsH {
		t.Errorf("minimal arena %d, want %d", min.Peak, d+wsH)
	}
	if streamed := (Planner{}).Candidates(porepShape, false); len(streamed) != 4 || streamed[0].SRSResident {
		t.Errorf("candidates without residency: %v", streamed)
	}
}
