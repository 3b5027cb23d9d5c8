package bench

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/sim"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/gpuprove"
	"github.com/snarkd/snarkd/prover"
)

// TestBusyWithin: the GPU busy time is the union of the kernel spans inside the window,
// overlaps counted once, preparation and uploads left out.
func TestBusyWithin(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var s gpuLog
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

// checkingBackend checks each partition's assignment against its keys, as the provers do, and
// answers a proof of generators at once: the pipeline around the backend is what is tested.
type checkingBackend struct{ partitions atomic.Int32 }

func (*checkingBackend) Name() string     { return "checking" }
func (*checkingBackend) Concurrency() int { return 2 }

func (b *checkingBackend) Prove(_ context.Context, _ prover.PartitionInfo, pk *groth16.Parameters, pa *cs.ProvingAssignment, _, _ *fr.Element) (*groth16.Proof, error) {
	if err := groth16.CheckShape(pk, pa); err != nil {
		return nil, err
	}
	if err := pa.FinishDeferred(context.Background(), 1); err != nil {
		return nil, err
	}
	b.partitions.Add(1)
	_, _, g1, g2 := bls.Generators()
	return &groth16.Proof{A: g1, B: g2, C: g1}, nil
}

// TestC2Workloads: each workload's synthetic requests go through the pipeline with dummy keys
// of the circuit's shape (PoRep, SnapDeals and WindowPoSt at 2KiB), and the report counts them.
// Under the race detector only the WindowPoSt runs (the others' millions of rows take minutes
// there, and the bench's concurrency is the same for every workload).
func TestC2Workloads(t *testing.T) {
	snap, err := SnapWorkload(abi.RegisteredUpdateProof_StackedDrg2KiBV1)
	if err != nil {
		t.Fatal(err)
	}
	p2k, err := prooftypes.LookupName("StackedDrg2KiBV1_1")
	if err != nil {
		t.Fatal(err)
	}
	window, err := post.Lookup(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		w     *Workload
		heavy bool
	}{{PoRepWorkload(p2k), true}, {snap, true}, {PoStWorkload(window), false}} {
		w := tc.w
		t.Run(w.Name, func(t *testing.T) {
			if tc.heavy && raceEnabled {
				t.Skip("minutes under the race detector")
			}
			b := &checkingBackend{}
			rep, err := C2(context.Background(), C2Config{Workload: w, Proofs: 2, Jobs: 1, Synthesis: config.SynthesisCompiled,
				Setup: "dummy", Backend: b, BackendName: "checking"})
			if err != nil {
				t.Fatal(err)
			}
			if int(b.partitions.Load()) != 2*w.Partitions || rep.Proofs != 2 || rep.SteadyProofs != 1 || rep.Partitions != w.Partitions ||
				rep.Verified || len(rep.LatencySec) != 2 || rep.SteadyLatencySec <= 0 || rep.PerPartitionSec[prover.PhaseWitness] <= 0 {
				t.Fatalf("%d partitions proved; report %+v", b.partitions.Load(), rep)
			}
			if rep.GPU != nil {
				t.Fatalf("GPU figures without a GPU: %+v", rep.GPU)
			}
		})
	}
}

// TestC2SimulatedGPU: on a simulated GPU the report adds the partitions' device steps and
// where they waited.
func TestC2SimulatedGPU(t *testing.T) {
	window, err := post.Lookup(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := sim.Devices("1x16GiB")
	if err != nil {
		t.Fatal(err)
	}
	sched, err := gpu.NewScheduler(gpu.Config{Devices: devs, SRSResidency: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	rep, err := C2(context.Background(), C2Config{Workload: PoStWorkload(window), Proofs: 3, Jobs: 1, Synthesis: config.SynthesisCompiled,
		Setup: "dummy", Backend: prover.NewGPUBackend(sched, "simulated"), BackendName: "simulated", Sched: sched})
	if err != nil {
		t.Fatal(err)
	}
	g := rep.GPU
	if g == nil || g.Partitions != 2 || g.KernelSec <= 0 || g.LockSec <= 0 || g.RunSec < g.LockSec || len(g.StagesSec) == 0 || len(g.Plans) != 1 ||
		rep.GPUBusy == nil || *rep.GPUBusy <= 0 {
		t.Fatalf("GPU figures %+v (busy %v)", g, rep.GPUBusy)
	}
	var b strings.Builder
	rep.Format(&b)
	for _, want := range []string{"GPU/partition  kernels ", "  waited       GPU queue ", "  steps        "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
