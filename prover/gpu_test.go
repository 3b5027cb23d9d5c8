package prover

import (
	"context"
	"testing"

	"github.com/snarkd/snarkd/gpu"
)

// TestPipelineSimulatedGPU proves a multi-partition request through the GPU backend on two
// simulated devices; the pipeline's self-check verifies every partition proof.
func TestPipelineSimulatedGPU(t *testing.T) {
	devs, err := gpu.SimulatedDevices("2x1GiB")
	if err != nil {
		t.Fatal(err)
	}
	sched, err := gpu.NewScheduler(gpu.Config{Devices: devs, WorkersPerDevice: 2, SRSResidency: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	b := NewGPUBackend(sched, "simulated")
	if b.Concurrency() != 6 {
		t.Fatalf("concurrency %d, want 4 workers + 2 devices", b.Concurrency())
	}
	p := New(b, NewParamCache(t.TempDir()))
	res, err := p.Prove(context.Background(), Request{Kind: KindTest, TestConstraints: testSize, TestPartitions: 5, TestSeed: 9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Partitions != 5 || len(res.Proof) != 5*192 {
		t.Fatalf("%d partitions, %d proof bytes", res.Partitions, len(res.Proof))
	}
	st := sched.Status()
	granted := 0
	for _, d := range st.Devices {
		for _, n := range d.Tiers {
			granted += n
		}
		if d.Memory.Grants != 0 {
			t.Errorf("device %d still has %d grants", d.Info.Ordinal, d.Memory.Grants)
		}
	}
	if granted != 5 {
		t.Errorf("%d plans granted for 5 partitions", granted)
	}
}
