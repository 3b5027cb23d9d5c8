package bench

import (
	"testing"
	"time"

	"github.com/snarkd/snarkd/groth16/gpuprove"
	"github.com/snarkd/snarkd/prover"
)

// TestBusyWithin: the GPU busy time is the union of the kernel spans inside the window,
// overlaps counted once, preparation and uploads left out.
func TestBusyWithin(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var s spanSet
	s.add(gpuprove.ProveResult{Timeline: []gpuprove.StageSpan{
		{Name: "prepare (cpu)", Start: at(0), End: at(500)},
		{Name: "upload a", Start: at(0), End: at(500)},
		{Name: "ntt h", Start: at(100), End: at(300)},
		{Name: "msm h", Start: at(250), End: at(400)}, // overlaps the NTT by 50 ms
	}})
	s.add(gpuprove.ProveResult{Timeline: []gpuprove.StageSpan{{Name: "msm l", Start: at(900), End: at(1200)}}})
	for _, tc := range []struct {
		from, to int
		want     time.Duration
	}{{0, 2000, 600 * time.Millisecond}, {200, 1000, 300 * time.Millisecond}, {1300, 2000, 0}} {
		if got := s.busyWithin(at(tc.from), at(tc.to)); got != tc.want {
			t.Errorf("busy in [%d, %d] ms = %s, want %s", tc.from, tc.to, got, tc.want)
		}
	}
}

// TestFormatSeconds lists the pipeline's phases in their order, then the others by name.
func TestFormatSeconds(t *testing.T) {
	got := formatSeconds(map[string]float64{"zeta": 1, prover.PhaseProve: 2, prover.PhasePlan: 0.5, "alpha": 3})
	want := "plan 0.500s, prove 2.000s, alpha 3.000s, zeta 1.000s"
	if got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}
