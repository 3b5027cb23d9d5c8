//go:build cuda

package gpuprove

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gpu"
)

// TestHardwareDeferredProducts proves a blocked circuit with moved terms whose products were
// deferred, with each plan forced: the full resident plan computes a, b and c on the GPU from
// the resident matrices, the others on the host; every proof equals the CPU prover's bytes. A
// corrupted witness is refused with the host's first unsatisfied row.
func TestHardwareDeferredProducts(t *testing.T) {
	needGPU(t)
	c, pk, comp := blockSetup(t)
	for i, tc := range []struct {
		tier             gpu.Tier
		resident, device bool
	}{{gpu.TierFull, true, true}, {gpu.TierFull, false, false}, {gpu.TierPartial, false, false}, {gpu.TierMinimal, false, false}} {
		t.Run(fmt.Sprintf("%s-resident=%v", tc.tier, tc.resident), func(t *testing.T) {
			sched := hardwareScheduler(t, 1, tc.resident, gpu.OnlyTier(tc.tier, tc.resident), 0)
			defer sched.Close()
			p := NewProver(sched)
			if got := p.ProductsOnDevice(pk, comp); got != tc.device {
				t.Fatalf("ProductsOnDevice = %v, want %v", got, tc.device)
			}
			res := proveDeferred(t, p, i)
			var onDevice, onHost bool
			for _, st := range res.Stages {
				onDevice = onDevice || st.Name == "products a, b, c"
			}
			for _, sp := range res.Timeline { // the host computes them before admission
				onHost = onHost || sp.Name == productsStage
			}
			if onDevice != tc.device || onHost == tc.device {
				t.Errorf("plan %s: products on the device %v, on the host %v; want device %v (stages %s)",
					res.Run.Plan, onDevice, onHost, tc.device, stagesString(res.Stages))
			}
			// The host's verdict on the corrupted witness.
			ref := deferredWitness(t, c, comp, true)
			var want *cs.UnsatisfiedRowError
			if err := ref.FinishDeferred(context.Background(), 2); !errors.As(err, &want) {
				t.Fatalf("host products of the corrupted witness: %v", err)
			}
			_, err := proveCorrupted(t, p)
			var got *cs.UnsatisfiedRowError
			if !errors.As(err, &got) || got.Row != want.Row {
				t.Errorf("corrupted witness: %v, want the unsatisfied row %d", err, want.Row)
			}
			if err != nil && !strings.Contains(err.Error(), "not satisfied") {
				t.Errorf("error %q does not say the partition is not satisfied", err)
			}
		})
	}
}
