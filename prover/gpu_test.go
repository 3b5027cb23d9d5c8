package prover

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/sim"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/testcircuit"
)

// TestPipelineSimulatedGPU proves a multi-partition request through the GPU backend on two
// simulated devices; the pipeline's self-check verifies every partition proof.
func TestPipelineSimulatedGPU(t *testing.T) {
	sched := simScheduler(t, "2x1GiB", gpu.Config{WorkersPerDevice: 2, SRSResidency: true})
	b := NewGPUBackend(sched, "simulated")
	if b.Concurrency() != 6 {
		t.Fatalf("concurrency %d, want 4 workers + 2 devices", b.Concurrency())
	}
	p := New(b, NewParamCache(t.TempDir()))
	var mu sync.Mutex
	admitted, proved := map[int]string{}, map[int]string{}
	res, err := p.Prove(context.Background(), Request{Test: &TestRequest{Constraints: testSize, Partitions: 5, Seed: 9}},
		func(st Stage, part, _ int, detail ...string) {
			mu.Lock()
			defer mu.Unlock()
			switch st {
			case StageAdmitted:
				admitted[part] = strings.Join(detail, "")
			case StageProved:
				proved[part] = strings.Join(detail, "")
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if d := admitted[i]; !strings.Contains(d, "plan, SRS") {
			t.Errorf("partition %d: admitted detail %q", i, d)
		}
		if d := proved[i]; !strings.Contains(d, "queued ") || !strings.Contains(d, "; kernels ") {
			t.Errorf("partition %d: proved detail %q", i, d)
		}
	}
	if res.Partitions != 5 || len(res.Proof) != 5*192 {
		t.Fatalf("%d partitions, %d proof bytes", res.Partitions, len(res.Proof))
	}
	// The result names the GPUs that proved the request.
	if len(res.Devices) == 0 || len(res.Devices) > 2 {
		t.Errorf("devices %v, want the simulated GPUs that proved it", res.Devices)
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

// TestGPUBackendForgetsEvictedParams: parameters streamed to a GPU are page-locked in place;
// once the cache evicts them, the backend unregisters them instead of keeping them alive.
func TestGPUBackendForgetsEvictedParams(t *testing.T) {
	sched := simScheduler(t, "1x1GiB", gpu.Config{WorkersPerDevice: 1, SRSResidency: false})
	p := New(NewGPUBackend(sched, "simulated"), NewParamCache(t.TempDir()))
	if _, err := p.Prove(context.Background(), Request{Test: &TestRequest{Constraints: testSize, Partitions: 1, Seed: 4}}, nil); err != nil {
		t.Fatal(err)
	}
	if st := sched.Pinned().Stats(); st.Registered == 0 || st.PinsInUse != 0 {
		t.Fatalf("after a streamed proof: %+v", st)
	}
	loaded := p.Params().Loaded()
	if len(loaded) != 1 {
		t.Fatalf("cache holds %d sets", len(loaded))
	}
	if ok, _ := p.Params().Evict(loaded[0].Circuit); !ok {
		t.Fatal("evicting the test parameters failed")
	}
	if st := sched.Pinned().Stats(); st.Registered != 0 {
		t.Fatalf("evicted parameters still pinned: %+v", st)
	}
}

// simScheduler is a scheduler over simulated devices (sim.Devices spec), closed when
// the test ends.
func simScheduler(t *testing.T, spec string, cfg gpu.Config) *gpu.Scheduler {
	t.Helper()
	devs, err := sim.Devices(spec)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Devices = devs
	sched, err := gpu.NewScheduler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sched.Close() })
	return sched
}

// TestDeferredProductsReferee: with a GPU backend whose device computes a, b and c, the
// compiled path leaves them out of synthesis; the proof equals the CPU prover's, and an
// unsatisfied row the device finds (a stale compiled circuit) goes to full synthesis.
func TestDeferredProductsReferee(t *testing.T) {
	ctx := context.Background()
	circ := testcircuit.New(1<<10, 3)
	pk, err := groth16.SetupFromSeed(ctx, circ, []byte("referee"))
	if err != nil {
		t.Fatal(err)
	}
	fulls := 0
	s, bad := testCompiledSynthesis(circ, &fulls)
	b := NewGPUBackend(simScheduler(t, "1x16GiB", gpu.Config{WorkersPerDevice: 1, SRSResidency: true}), "simulated")
	pipe := New(b, NewParamCache("")).WithCompiledWait(true)
	sp := &SealParams{PK: pk}
	pa, err := pipe.synthesize(ctx, sp, &Phases{}, s)
	if err != nil {
		t.Fatal(err)
	}
	if pa.Deferred() == nil || fulls != 0 {
		t.Fatalf("compiled path on a device that computes the products: deferred %v, %d full syntheses", pa.Deferred() != nil, fulls)
	}
	var r, sv fr.Element
	r.SetUint64(7)
	sv.SetUint64(8)
	got, err := b.Prove(ctx, PartitionInfo{JobID: "j"}, pk, pa, &r, &sv)
	if err != nil {
		t.Fatal(err)
	}
	pipe.referees.Delete(pa)
	full, err := cs.SynthesizeProving(ctx, circ, cs.Shape{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := groth16.ProveAssignment(ctx, pk, full, &r, &sv)
	if err != nil {
		t.Fatal(err)
	}
	if got.Bytes() != want.Bytes() {
		t.Error("deferred products: proof differs from the CPU prover's")
	}

	pa, err = pipe.synthesize(ctx, sp, &Phases{}, bad)
	if err != nil || pa.Deferred() == nil {
		t.Fatalf("stale circuit, deferred: %v", err)
	}
	if _, err := b.Prove(ctx, PartitionInfo{JobID: "j"}, pk, pa, &r, &sv); !errors.Is(err, cs.ErrUnsatisfied) {
		t.Fatalf("device products of a stale circuit: %v, want cs.ErrUnsatisfied", err)
	}
	ref, ok := pipe.referees.LoadAndDelete(pa)
	if !ok {
		t.Fatal("no referee registered for the deferred partition")
	}
	fixed, err := ref.(func(error) (*cs.ProvingAssignment, error))(err)
	if err != nil || fulls != 1 {
		t.Fatalf("referee: %d full syntheses, %v", fulls, err)
	}
	ref2, err := cs.SynthesizeProving(ctx, circ, cs.Shape{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fixed.Diff(ref2); err != nil {
		t.Fatal(err)
	}
}
