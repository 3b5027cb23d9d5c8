package gpu

import (
	"fmt"
	"testing"
)

// porepShape is a 32 GiB PoRep partition (gpu-performance.md §3.1).
var porepShape = Shape{LogDomain: 27, SRSKey: "porep-32g",
	Points: [numQueries]uint64{1<<27 - 1, 130_000_000, 130_000_000, 33_000_000, 33_000_000}}

func TestModelSizer(t *testing.T) {
	for _, tc := range []struct {
		c        Curve
		n        uint64
		flags    MSMFlags
		chunkLog uint32
		want     uint64
	}{
		// wbits = log2(1.5·2^20) − 8 = 12, 22 windows: buckets 22·2^11·4·48, digits and indices
		// 2^20·23·4, point staging 2·2^20·96.
		{G1, 1 << 20, MSMPointsOnHost, 20, 22*2048*192 + (1<<20)*23*4 + 2*(1<<20)*96},
		// G2 buckets are twice as large; chunk 2^18 of 2^20 points; scalar staging 2·2^18·32.
		{G2, 1 << 20, MSMScalarsOnHost, 18, 22*2048*384 + (1<<18)*23*4 + 2*(1<<18)*32},
		// Window clamped to 18 bits (15 windows) for 2^27 points.
		{G1, 1 << 27, 0, 24, 15*(1<<17)*192 + (1<<24)*16*4},
		{G1, 100, 0, 20, 26*512*192 + 100*27*4},
		{G1, 0, MSMPointsOnHost, 20, 0},
	} {
		if got := (ModelSizer{}).MSMWorkspace(tc.c, tc.n, tc.flags, tc.chunkLog); got != tc.want {
			t.Errorf("MSMWorkspace(%d, %d, %d, %d) = %d, want %d", tc.c, tc.n, tc.flags, tc.chunkLog, got, tc.want)
		}
	}
	// 2^27: n Fr of twiddles plus 8 tables of 2^14 Fr.
	if got, want := (ModelSizer{}).NTTDomainBytes(27), uint64(4<<30+8*32<<14); got != want {
		t.Errorf("NTTDomainBytes(27) = %d, want %d", got, want)
	}
}

// overlaps reports whether two buffers share bytes.
func overlaps(a, b Buffer) bool { return a.Offset < b.Offset+b.Size && b.Offset < a.Offset+a.Size }

func TestPlanLayout(t *testing.T) {
	phases := [][]string{{"a", "b", "c"}, {"a", "msm.h"}, {"scalars", "msm"}}
	for _, s := range []Shape{
		porepShape,
		{LogDomain: 20, SRSKey: "small", Points: [numQueries]uint64{1<<20 - 1, 900_000, 950_000, 200_000, 200_000}},
		{LogDomain: 10, Points: [numQueries]uint64{1023, 10, 1000, 0, 0}},
	} {
		for _, res := range []bool{false, true} {
			for tier := TierFull; tier <= TierMinimal; tier++ {
				p := (Planner{}).Plan(s, tier, res)
				name := fmt.Sprintf("2^%d/%s/resident=%v", s.LogDomain, tier, res)
				if p.DomainBuffers != 3-int(tier) {
					t.Errorf("%s: %d domain buffers", name, p.DomainBuffers)
				}
				var peak uint64
				for _, ph := range phases {
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
				if hasScalars != p.ScalarsOnDevice || (tier == TierFull && !hasScalars) ||
					(p.MSMFlags[QueryL]&MSMScalarsOnHost != 0) == hasScalars {
					t.Errorf("%s: scalars buffer %v, flags %v", name, hasScalars, p.MSMFlags)
				}
				wantRes := 1
				if res {
					for q := QueryH; q < numQueries; q++ {
						if s.Points[q] > 0 {
							wantRes++
						}
					}
				}
				if len(p.Resident) != wantRes || p.Resident[0].Key != NTTKey(s.LogDomain) {
					t.Errorf("%s: resident %v", name, p.Resident)
				}
				if (p.MSMFlags[QueryH]&MSMPointsOnHost != 0) == res {
					t.Errorf("%s: H points on host = %v", name, !res)
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
	if len(plans) != 6 {
		t.Fatalf("%d candidates, want 6", len(plans))
	}
	// a, b, c dominate the full and partial arenas of a 2^27 domain.
	for i, want := range []uint64{3 * d, 2 * d, 0, 3 * d, 2 * d, 0} {
		if want != 0 && plans[i].Peak != want {
			t.Errorf("candidate %d (%s): arena %d, want %d", i, plans[i], plans[i].Peak, want)
		}
	}
	srs := uint64(0)
	for q := QueryH; q < numQueries; q++ {
		srs += RoundAlloc(porepShape.SRSBytes(q))
	}
	tables := RoundAlloc((ModelSizer{}).NTTDomainBytes(27))
	for i, p := range plans {
		wantSRS := i < 3
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
	min := plans[5]
	wsH := RoundAlloc((ModelSizer{}).MSMWorkspace(G1, 1<<27-1, MSMPointsOnHost, 20))
	if min.Peak != d+wsH {
		t.Errorf("minimal arena %d, want %d", min.Peak, d+wsH)
	}
	if streamed := (Planner{}).Candidates(porepShape, false); len(streamed) != 3 || streamed[0].SRSResident {
		t.Errorf("candidates without residency: %v", streamed)
	}
}
