package groth16_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/testcircuit"
)

func TestStageTimes(t *testing.T) {
	logn, _ := strconv.Atoi(os.Getenv("STAGE_LOGN"))
	if logn == 0 {
		t.Skip("set STAGE_LOGN")
	}
	ctx := context.Background()
	c := testcircuit.New(1<<logn, 1)
	pk, _ := groth16.DummyParameters(ctx, c)
	t0 := time.Now()
	pa, _ := cs.SynthesizeProving(ctx, c, groth16.CapacityFor(pk))
	t.Logf("synth %v aux %d adens %d bdens %d", time.Since(t0), len(pa.Aux), pa.AAuxDensity.Count(), pa.BAuxDensity.Count())
	t0 = time.Now()
	h, _ := groth16.ComputeH(ctx, pa.A, pa.B, pa.C)
	t.Logf("H %v", time.Since(t0))
	for _, st := range []struct {
		name string
		f    func()
	}{
		{"msm", func() {
			res, _ := groth16.ComputeMSMs(ctx, pk, pa, h, nil)
			t.Logf("%v", res.Timings)
		}},
	} {
		t0 = time.Now()
		st.f()
		t.Logf("%s %v", st.name, time.Since(t0))
	}
}
