package gpuprove

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/sim"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/priority"
	"github.com/snarkd/snarkd/testcircuit"
)

const proveTestConstraints = 3000 // a 2^12 domain

var (
	proveSetupOnce sync.Once
	proveSetupPK   *groth16.Parameters
	proveSetupErr  error
)

func proveTestParams(t testing.TB) *groth16.Parameters {
	t.Helper()
	proveSetupOnce.Do(func() {
		proveSetupPK, proveSetupErr = groth16.SetupFromSeed(context.Background(),
			testcircuit.New(proveTestConstraints, 11), []byte("gpu prove test"))
	})
	if proveSetupErr != nil {
		t.Fatal(proveSetupErr)
	}
	return proveSetupPK
}

func synth(t testing.TB, pk *groth16.Parameters, witness uint64) *cs.ProvingAssignment {
	t.Helper()
	pa, err := cs.SynthesizeProving(context.Background(), testcircuit.NewWithWitness(proveTestConstraints, 11, witness), groth16.CapacityFor(pk))
	if err != nil {
		t.Fatal(err)
	}
	return pa
}

// cpuProof is the CPU prover's proof bytes for the same witness and r, s.
func cpuProof(t testing.TB, pk *groth16.Parameters, witness uint64, r, s fr.Element) []byte {
	t.Helper()
	pr, err := groth16.ProveAssignment(context.Background(), pk, synth(t, pk, witness), &r, &s)
	if err != nil {
		t.Fatal(err)
	}
	b := pr.Bytes()
	return b[:]
}

func fixedRS(i int) (r, s fr.Element) {
	r.SetUint64(uint64(1000 + i))
	s.SetUint64(uint64(2000 + i))
	return r, s
}

// TestProveSimulatedTiers runs partitions on simulated devices just large enough for one plan,
// restricted to that plan, and checks that the proof bytes equal the CPU prover's.
func TestProveSimulatedTiers(t *testing.T) {
	pk := proveTestParams(t)
	for i, tc := range []struct {
		tier     gpu.Tier
		resident bool
	}{{gpu.TierFull, true}, {gpu.TierFull, false}, {gpu.TierPartial, false}, {gpu.TierMinimal, false}} {
		plan := gpu.Planner{}.Plan(ShapeOf(pk, "test"), tc.tier, tc.resident)
		t.Run(plan.String(), func(t *testing.T) {
			var sched *gpu.Scheduler
			inUse := -1 // SRS vectors the partition streams from while its kernels run
			dev := sim.New(sim.Config{Name: "sim", TotalMem: plan.Need() + gpu.DefaultHeadroom,
				OnLaunch: func(string) { inUse = sched.Pinned().Stats().PinsInUse }})
			sched, err := gpu.NewScheduler(gpu.Config{Devices: []gpu.Device{dev}, WorkersPerDevice: 1, ResidentTTL: -1,
				SRSResidency: tc.resident, PlanFilter: gpu.OnlyTier(tc.tier, tc.resident)})
			if err != nil {
				t.Fatal(err)
			}
			defer sched.Close()
			r, s := fixedRS(i)
			res, err := NewProver(sched).Prove(context.Background(), ProveRequest{
				JobID: "j", Kind: "porep-c2", Class: priority.Seal, PK: pk, PA: synth(t, pk, uint64(i)), R: r, S: s})
			if err != nil {
				t.Fatal(err)
			}
			if res.Run.Plan.Tier != plan.Tier || res.Run.Plan.SRSResident != tc.resident {
				t.Errorf("granted %s, want %s", res.Run.Plan, plan)
			}
			if want := cpuProof(t, pk, uint64(i), r, s); !bytes.Equal(proofBytes(res.Proof), want) {
				t.Error("proof differs from the CPU prover's with the same r, s")
			}
			if st := sched.Status().Devices[0].Memory; st.Reserved != st.ResidentBytes || st.Grants != 0 {
				t.Errorf("books after the partition: %+v", st)
			}
			// Streamed plans page-lock the SRS in place and keep it for the next partition, and
			// plans that stream their scalars the pooled L, A and B vectors.
			wantPinned, wantInUse := srsHostBytes(pk), 5
			if tc.resident {
				wantPinned, wantInUse = 0, 0
			}
			if !plan.ScalarsOnDevice && !plan.ScalarBuffers {
				wantPinned += uint64(len(pk.L)+len(pk.A)+len(pk.BG1)) * gpu.FrBytes
				wantInUse += 3
			}
			if got := sched.Pinned().Stats().Registered; got != wantPinned || dev.Stats().HostRegistered != wantPinned {
				t.Errorf("pinned in place: pool %d, device %d bytes, want %d", got, dev.Stats().HostRegistered, wantPinned)
			}
			if inUse != wantInUse || sched.Pinned().Stats().PinsInUse != 0 {
				t.Errorf("pinned SRS vectors in use: %d during the kernels (want %d), %d after", inUse, wantInUse, sched.Pinned().Stats().PinsInUse)
			}
			if err := sched.Close(); err != nil {
				t.Fatal(err)
			}
			if st := dev.Stats(); st.Allocated != 0 || st.HostRegistered != 0 {
				t.Errorf("after close: %d bytes still allocated, %d registered", st.Allocated, st.HostRegistered)
			}
		})
	}
}

// srsHostBytes is the size of pk's SRS point vectors.
func srsHostBytes(pk *groth16.Parameters) uint64 {
	return uint64(len(pk.H)+len(pk.L)+len(pk.A)+len(pk.BG1))*gpu.G1.AffineBytes() + uint64(len(pk.BG2))*gpu.G2.AffineBytes()
}

// TestProveSimulatedUnpinsIdleSRS: the SRS a streamed partition page-locked is unregistered once
// no partition has used it for ResidentTTL.
func TestProveSimulatedUnpinsIdleSRS(t *testing.T) {
	pk := proveTestParams(t)
	dev := sim.New(sim.Config{Name: "sim", TotalMem: 1 << 30})
	sched, err := gpu.NewScheduler(gpu.Config{Devices: []gpu.Device{dev}, WorkersPerDevice: 1, ResidentTTL: 50 * time.Millisecond,
		PlanFilter: gpu.OnlyTier(gpu.TierFull, false)})
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	r, s := fixedRS(3)
	if _, err := NewProver(sched).Prove(context.Background(), ProveRequest{JobID: "j", Kind: "window-post", Class: priority.WindowPoSt,
		PK: pk, PA: synth(t, pk, 3), R: r, S: s}); err != nil {
		t.Fatal(err)
	}
	if st := sched.Pinned().Stats(); st.Pins == 0 {
		t.Fatalf("the streamed partition pinned nothing: %+v", st)
	}
	deadline := time.Now().Add(10 * time.Second)
	for dev.Stats().HostRegistered != 0 || sched.Pinned().Stats().Registered != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("SRS still pinned long after ResidentTTL: %+v", sched.Pinned().Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestProveSimulatedOOM injects allocation failures: the partition retries with smaller plans
// and still returns the right proof.
func TestProveSimulatedOOM(t *testing.T) {
	pk := proveTestParams(t)
	dev := sim.New(sim.Config{Name: "sim", TotalMem: 1 << 30})
	sched, err := gpu.NewScheduler(gpu.Config{Devices: []gpu.Device{dev}, WorkersPerDevice: 2, ResidentTTL: -1, SRSResidency: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	dev.InjectAllocFailures(2)
	r, s := fixedRS(7)
	res, err := NewProver(sched).Prove(context.Background(), ProveRequest{JobID: "j", Kind: "window-post", Class: priority.WindowPoSt,
		PK: pk, PA: synth(t, pk, 7), R: r, S: s})
	if err != nil {
		t.Fatal(err)
	}
	if res.Run.OOMs == 0 {
		t.Errorf("injected failures were not seen: %+v", res.Run)
	}
	if !bytes.Equal(proofBytes(res.Proof), cpuProof(t, pk, 7, r, s)) {
		t.Error("proof after out-of-memory retries differs from the CPU prover's")
	}
}

// TestProveSimulatedConcurrent proves partitions of several kinds on 2 devices × 2 workers at
// once; every proof is right and every accounted byte comes back.
func TestProveSimulatedConcurrent(t *testing.T) {
	pk := proveTestParams(t)
	devs, err := sim.NewDevices("2x1GiB")
	if err != nil {
		t.Fatal(err)
	}
	var ds []gpu.Device
	for _, d := range devs {
		ds = append(ds, d)
	}
	sched, err := gpu.NewScheduler(gpu.Config{Devices: ds, WorkersPerDevice: 2, ResidentTTL: -1, SRSResidency: true})
	if err != nil {
		t.Fatal(err)
	}
	p := NewProver(sched)
	const n = 8
	pas := make([]*cs.ProvingAssignment, n)
	for i := range pas {
		pas[i] = synth(t, pk, uint64(i))
	}
	kinds := []struct {
		name  string
		class priority.Class
	}{{"winning-post", priority.WinningPoSt}, {"window-post", priority.WindowPoSt}, {"porep-c2", priority.Seal}, {"snap-prove", priority.Seal}}
	var wg sync.WaitGroup
	proofs := make([][]byte, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, s := fixedRS(i)
			res, err := p.Prove(context.Background(), ProveRequest{JobID: "job", Kind: kinds[i%4].name, Class: kinds[i%4].class, Index: i,
				SRSKey: "test", PK: pk, PA: pas[i], R: r, S: s})
			errs[i] = err
			if err == nil {
				proofs[i] = proofBytes(res.Proof)
			}
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("partition %d: %v", i, errs[i])
		}
		r, s := fixedRS(i)
		if !bytes.Equal(proofs[i], cpuProof(t, pk, uint64(i), r, s)) {
			t.Errorf("partition %d differs from the CPU prover's proof", i)
		}
	}
	if err := sched.Close(); err != nil {
		t.Fatal(err)
	}
	for i, d := range devs {
		if st := d.Stats(); st.Allocated != 0 {
			t.Errorf("device %d: %d bytes allocated after close", i, st.Allocated)
		}
	}
}

// TestGatherMatchesDensity checks the parallel density gather against a plain loop.
func TestGatherMatchesDensity(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 200_000} {
		vals := make([]fr.Element, n)
		var d cs.Density
		var want []fr.Element
		for i := range vals {
			vals[i].SetUint64(uint64(i*7 + 1))
			d.AddBit()
			if (i*2654435761)%5 < 2 {
				d.Inc(i)
				want = append(want, vals[i])
			}
		}
		got := make([]fr.Element, d.Count())
		if k := gatherInto(got, vals, &d); k != len(want) || len(got) != len(want) {
			t.Fatalf("n=%d: %d values (%d gathered), want %d", n, len(got), k, len(want))
		}
		for i := range got {
			if !got[i].Equal(&want[i]) {
				t.Fatalf("n=%d: value %d differs", n, i)
			}
		}
	}
}

func proofBytes(p *groth16.Proof) []byte {
	b := p.Bytes()
	return b[:]
}

// TestScalarBuffersRelease: the pool keeps the 8 largest vectors, and the prover unregisters
// the ones it lets go.
func TestScalarBuffersRelease(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 1 << 30})
	sched, err := gpu.NewScheduler(gpu.Config{Devices: []gpu.Device{dev}, WorkersPerDevice: 1, ResidentTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	p := NewProver(sched)
	var vs [][]fr.Element
	for i := range 10 {
		v := p.buffers.get(1000 + i)
		release, ok := sched.Pinned().PinHost(pooledBytes(v))
		if !ok {
			t.Fatal("pinning a pooled vector failed")
		}
		release()
		vs = append(vs, v)
	}
	p.release(vs...)
	if n := len(p.buffers.free); n != 8 {
		t.Fatalf("%d vectors kept", n)
	}
	for _, v := range p.buffers.free {
		if cap(v) < 1002 {
			t.Fatalf("kept a %d-element vector over larger ones", cap(v))
		}
	}
	if got, want := sched.Pinned().Stats().Registered, uint64(1002+1003+1004+1005+1006+1007+1008+1009)*gpu.FrBytes; got != want {
		t.Fatalf("%d bytes still registered, want %d (the two vectors let go unregistered)", got, want)
	}
}

// TestProveStreamedScalarsPinBudget: a plan that streams its scalars copies L's witness into a
// registered pooled buffer when the pinned budget holds it, and reads the witness in place
// (counted as a fallback) when it does not; the proof is the CPU prover's either way.
func TestProveStreamedScalarsPinBudget(t *testing.T) {
	pk := proveTestParams(t)
	plan := gpu.Planner{}.Plan(ShapeOf(pk, "test"), gpu.TierPartial, false)
	if plan.ScalarsOnDevice || plan.ScalarBuffers {
		t.Fatalf("the partial plan keeps its scalars on the device: %s", plan)
	}
	srs := srsHostBytes(pk)
	l, ab := uint64(len(pk.L))*gpu.FrBytes, uint64(len(pk.A)+len(pk.BG1))*gpu.FrBytes
	for i, tc := range []struct {
		name       string
		lockable   uint64 // bytes PinHost may register
		registered uint64
		fallbacks  int
		pooled     int // vectors the prover keeps for the next partition
	}{
		{"all", srs + ab + l, srs + ab + l, 0, 3},
		{"A and B only", srs + ab + l/2, srs + ab, 1, 2},
		{"SRS only", srs + l/2, srs, 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := sim.New(sim.Config{Name: "sim", TotalMem: plan.Need() + gpu.DefaultHeadroom})
			// The pool keeps half of a small budget for staging.
			sched, err := gpu.NewScheduler(gpu.Config{Devices: []gpu.Device{dev}, WorkersPerDevice: 1, ResidentTTL: -1,
				PinnedBudget: 2 * tc.lockable, PlanFilter: gpu.OnlyTier(gpu.TierPartial, false)})
			if err != nil {
				t.Fatal(err)
			}
			defer sched.Close()
			p := NewProver(sched)
			for j := range 2 { // the second partition reuses the registered buffers
				r, s := fixedRS(i + j)
				res, err := p.Prove(context.Background(), ProveRequest{JobID: "j", Kind: "porep-c2", Class: priority.Seal, PK: pk,
					PA: synth(t, pk, uint64(i+j)), R: r, S: s})
				if err != nil {
					t.Fatal(err)
				}
				if want := cpuProof(t, pk, uint64(i+j), r, s); !bytes.Equal(proofBytes(res.Proof), want) {
					t.Errorf("partition %d: proof differs from the CPU prover's with the same r, s", j)
				}
			}
			st := sched.Pinned().Stats()
			if st.Registered != tc.registered || st.PinFallbacks != 2*tc.fallbacks {
				t.Errorf("%d bytes registered, %d fallbacks; want %d, %d", st.Registered, st.PinFallbacks, tc.registered, 2*tc.fallbacks)
			}
			if n := len(p.buffers.free); n != tc.pooled {
				t.Errorf("%d pooled vectors, want %d", n, tc.pooled)
			}
		})
	}
}

// TestPinStreamedScalarsRegisterFailure: when L's pooled buffer cannot be registered, L streams
// from the witness in place, the buffer goes back to the pool, and a retry of the partition
// (after an allocation failure) neither takes another buffer nor counts another fallback.
func TestPinStreamedScalarsRegisterFailure(t *testing.T) {
	dev := sim.New(sim.Config{TotalMem: 1 << 30})
	pinned := gpu.NewPinnedPool(dev, 1<<30)
	run := &gpu.Run{Plan: gpu.Plan{Tier: gpu.TierPartial}, Pinned: pinned}
	var bufs scalarBuffers
	aux := make([]fr.Element, 1000)
	for i := range aux {
		aux[i].SetUint64(uint64(i))
	}
	in := &partitionInputs{buffers: &bufs}
	in.scalars[gpu.QueryL] = aux
	dev.InjectRegisterFailures(1)
	for attempt := range 2 {
		release := pinStreamedScalars(run, in)
		if &in.scalars[gpu.QueryL][0] != &aux[0] || len(in.pooled) != 0 {
			t.Fatalf("attempt %d: L does not stream from the witness in place", attempt)
		}
		release()
		if st := pinned.Stats(); st.PinFallbacks != 1 || st.Registered != 0 {
			t.Fatalf("attempt %d: %+v, want one fallback and nothing registered", attempt, st)
		}
		if len(bufs.free) != 1 {
			t.Fatalf("attempt %d: %d buffers in the pool, want the one that failed to register", attempt, len(bufs.free))
		}
	}
	// The next partition registers the pooled buffer and streams L from a copy of its witness.
	in2 := &partitionInputs{buffers: &bufs}
	in2.scalars[gpu.QueryL] = aux
	release := pinStreamedScalars(run, in2)
	defer release()
	l := in2.scalars[gpu.QueryL]
	if &l[0] == &aux[0] || len(in2.pooled) != 1 || pinned.Stats().Registered != uint64(cap(l))*gpu.FrBytes {
		t.Fatalf("second partition: L not copied into a registered buffer (%+v)", pinned.Stats())
	}
	for i := range aux {
		if !l[i].Equal(&aux[i]) {
			t.Fatalf("L's copy differs at %d", i)
		}
	}
}

// TestProveRecycledWitnessRegisteredInPlace: a partition from a compiled circuit, on a plan that
// streams its scalars from host memory, reads L from its own recycled witness, page-locked in
// place (no copy into a pooled buffer), with the proof the CPU prover makes; the registration
// outlives the partition and goes when the compiled circuit's pool lets the witness go.
func TestProveRecycledWitnessRegisteredInPlace(t *testing.T) {
	ctx := context.Background()
	pk := proveTestParams(t)
	plan := gpu.Planner{}.Plan(ShapeOf(pk, "test"), gpu.TierMinimal, false)
	if plan.ScalarsOnDevice || plan.ScalarBuffers {
		t.Fatalf("the minimal plan keeps its scalars on the device: %s", plan)
	}
	dev := sim.New(sim.Config{Name: "sim", TotalMem: plan.Need() + gpu.DefaultHeadroom})
	sched, err := gpu.NewScheduler(gpu.Config{Devices: []gpu.Device{dev}, WorkersPerDevice: 1, ResidentTTL: -1,
		PlanFilter: gpu.OnlyTier(gpu.TierMinimal, false)})
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	c := testcircuit.NewWithWitness(proveTestConstraints, 11, 3)
	prefix := func(sys cs.ConstraintSystem) (cs.BlockFunc, error) { return nil, c.Synthesize(sys) }
	comp, err := cs.CompileFlat(ctx, "gpu/recycled", prefix, 0)
	if err != nil {
		t.Fatal(err)
	}
	pa, err := cs.WitnessBlocks(ctx, comp, prefix, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := comp.Complete(ctx, pa, 1); err != nil {
		t.Fatal(err)
	}
	aux := frBytes(pa.Aux[:cap(pa.Aux)])
	r, s := fixedRS(7)
	res, err := NewProver(sched).Prove(ctx, ProveRequest{JobID: "j", Kind: "porep-c2", Class: priority.Seal, PK: pk, PA: pa, R: r, S: s})
	if err != nil {
		t.Fatal(err)
	}
	if want := cpuProof(t, pk, 3, r, s); !bytes.Equal(proofBytes(res.Proof), want) {
		t.Fatal("proof differs from the CPU prover's with the same r, s")
	}
	// The SRS, the pooled A and B buffers, and the witness itself (not a copy of it).
	want := srsHostBytes(pk) + uint64(len(pk.A)+len(pk.BG1))*gpu.FrBytes + uint64(len(aux))
	if st := sched.Pinned().Stats(); st.Registered != want || st.PinsInUse != 0 {
		t.Fatalf("registered %d bytes (%d in use), want %d", st.Registered, st.PinsInUse, want)
	}
	pa.Recycle()
	comp.ReleaseVectors()
	if st := sched.Pinned().Stats(); st.Registered != want-uint64(len(aux)) {
		t.Fatalf("after the pool let the witness go: %d bytes registered, want %d", st.Registered, want-uint64(len(aux)))
	}
}
