//go:build cuda

package gpuprove

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/cuda"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/internal/randpoints"
	"github.com/snarkd/snarkd/priority"
	"github.com/snarkd/snarkd/testcircuit"
)

func needGPU(t testing.TB) {
	t.Helper()
	if n, err := cuda.DeviceCount(); err != nil || n == 0 {
		t.Skip("no CUDA device visible")
	}
}

func hardwareScheduler(t testing.TB, workers int, resident bool, filter func([]gpu.Plan) []gpu.Plan, headroom uint64) *gpu.Scheduler {
	t.Helper()
	dev, err := cuda.NewHardwareDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	// SNARKD_GPU_PINNED_GIB sets the pinned budget (default: half of RAM).
	pinned := uint64(envLogN("SNARKD_GPU_PINNED_GIB", 0)) << 30
	sched, err := gpu.NewScheduler(gpu.Config{Devices: []gpu.Device{dev}, WorkersPerDevice: workers, SRSResidency: resident,
		Sizer: cuda.KernelSizer(0), PlanFilter: filter, ResidentTTL: -1, PinnedBudget: pinned,
		Allocator: gpu.AllocatorConfig{Headroom: headroom}})
	if err != nil {
		t.Fatal(err)
	}
	return sched
}

// cardHeadroom is the headroom that leaves card bytes of device 0, less the default headroom,
// to admission: the device then admits plans as a card of that size would.
func cardHeadroom(t testing.TB, card uint64) uint64 {
	dev, err := cuda.NewHardwareDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	total := dev.Info().TotalMem
	if card >= total {
		t.Fatalf("a %s card does not fit in this %s one", gpu.FormatBytes(card), gpu.FormatBytes(total))
	}
	return total - card + gpu.DefaultHeadroom
}

// TestHardwareProveTiers proves a real circuit (50,000 constraints, a 2^16 domain, public
// inputs) on the GPU with each plan tier and compares the bytes with the CPU prover's.
func TestHardwareProveTiers(t *testing.T) {
	needGPU(t)
	const n = 50_000
	ctx := context.Background()
	pk, err := groth16.SetupFromSeed(ctx, testcircuit.New(n, 5), []byte("hardware tiers"))
	if err != nil {
		t.Fatal(err)
	}
	pvk, err := groth16.Prepare(&pk.VK)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		tier              gpu.Tier
		resident, compact bool
	}{{gpu.TierFull, true, false}, {gpu.TierFull, false, false}, {gpu.TierPartial, false, false}, {gpu.TierPartial, true, false},
		{gpu.TierPartial, false, true}, {gpu.TierMinimal, false, false}, {gpu.TierMinimal, false, true}} {
		t.Run(fmt.Sprintf("%s-resident=%v-compact=%v", tc.tier, tc.resident, tc.compact), func(t *testing.T) {
			only := gpu.OnlyTier(tc.tier, tc.resident)
			filter := func(plans []gpu.Plan) []gpu.Plan {
				var out []gpu.Plan
				for _, p := range only(plans) {
					if p.CompactNTT == tc.compact {
						out = append(out, p)
					}
				}
				return out
			}
			sched := hardwareScheduler(t, 1, tc.resident, filter, 0)
			defer sched.Close()
			c := testcircuit.NewWithWitness(n, 5, uint64(i+1))
			pa, err := cs.SynthesizeProving(ctx, c, groth16.CapacityFor(pk))
			if err != nil {
				t.Fatal(err)
			}
			var r, s fr.Element
			r.SetRandom()
			s.SetRandom()
			res, err := NewProver(sched).Prove(ctx, ProveRequest{JobID: "tiers", Kind: "porep-c2", Class: priority.Seal, PK: pk, PA: pa, R: r, S: s})
			if err != nil {
				t.Fatal(err)
			}
			if res.Run.Plan.Tier != tc.tier || res.Run.Plan.SRSResident != tc.resident || res.Run.Plan.CompactNTT != tc.compact {
				t.Fatalf("ran %s", res.Run.Plan)
			}
			// Streamed plans copy the SRS from memory page-locked in place, and plans that
			// stream their scalars copy them from registered pooled vectors (L, A, B). Plans
			// with one scalar buffer upload the pooled A and B vectors from where they are,
			// registered (uploads of a megabyte or more); plans with scalar buffers of their
			// own gather A and B on the device, and the host holds neither.
			var wantPinned uint64
			if !tc.resident {
				wantPinned = srsHostBytes(pk)
			}
			gathered := false
			for _, st := range res.Stages {
				gathered = gathered || st.Name == "gather a, b"
			}
			if plan := res.Run.Plan; gathered != plan.ScalarBuffers {
				t.Errorf("gathered on the device %v with scalar buffers %v", gathered, plan.ScalarBuffers)
			}
			switch plan := res.Run.Plan; {
			case plan.ScalarBuffers:
			case !plan.ScalarsOnDevice:
				wantPinned += uint64(len(pk.L)+len(pk.A)+len(pk.BG1)) * gpu.FrBytes
			default:
				for _, n := range []int{len(pk.A), len(pk.BG1)} {
					if n*gpu.FrBytes >= minStagedUpload {
						wantPinned += uint64(n) * gpu.FrBytes
					}
				}
			}
			if st := sched.Pinned().Stats(); st.Registered != wantPinned || st.PinFallbacks != 0 {
				t.Errorf("pinned in place: %+v, want %d bytes registered", st, wantPinned)
			}
			pa2, err := cs.SynthesizeProving(ctx, c, groth16.CapacityFor(pk))
			if err != nil {
				t.Fatal(err)
			}
			want, err := groth16.ProveAssignment(ctx, pk, pa2, &r, &s)
			if err != nil {
				t.Fatal(err)
			}
			if res.Proof.Bytes() != want.Bytes() {
				t.Fatal("GPU proof differs from the CPU prover's with the same r, s")
			}
			if err := pvk.Verify(res.Proof, c.PublicInputs()); err != nil {
				t.Fatalf("GPU proof does not verify: %v", err)
			}
			t.Logf("%s: %s", res.Run.Plan, stagesString(res.Stages))
		})
	}
}

func stagesString(st []groth16.StageTiming) string {
	var b strings.Builder
	for i, s := range st {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.1fms", s.Name, float64(s.Duration.Microseconds())/1000)
	}
	return b.String()
}

// splitmix is a fast deterministic generator for synthetic witnesses.
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// randomFr fills e with a uniform-looking canonical Montgomery value (top word below r's).
func (s *splitmix) randomFr(e *fr.Element) {
	e[0], e[1], e[2] = s.next(), s.next(), s.next()
	e[3] = s.next() % 0x73eda753299d7d48
}

func parallelFill(n int, fn func(seed uint64, lo, hi int)) {
	parallelRange(n, func(lo, hi int) { fn(uint64(lo)*0x9e37+1, lo, hi) })
}

// syntheticShape describes a PoRep-like partition: domain 2^logN, constraints ≈ 97% of it,
// aux ≈ constraints, A density 99%, B density bDensity, a fraction ones01 of aux values in {0,1}.
type syntheticShape struct {
	logN     int
	inputs   int
	bDensity float64
	ones01   float64
}

func tileG1(base []bls.G1Affine, n int) []bls.G1Affine {
	out := make([]bls.G1Affine, n)
	parallelRange(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = base[i%len(base)]
		}
	})
	return out
}

// syntheticParams builds parameters of the shape's real sizes from a small set of random
// points, repeated (the MSMs do the same work; repeated points are a kernel edge case too).
func syntheticParams(t testing.TB, sh syntheticShape, naux, nA, nB int) *groth16.Parameters {
	g1 := randpoints.G1(1<<14, 11)
	g2 := randpoints.G2(1<<12, 13)
	_, _, g1Gen, g2Gen := bls.Generators()
	pk := &groth16.Parameters{
		VK: groth16.VerifyingKey{Alpha1: g1[1], Beta1: g1[2], Beta2: g2[1], Gamma2: g2[2], Delta1: g1Gen, Delta2: g2Gen,
			IC: g1[:sh.inputs]},
		H:   tileG1(g1, 1<<sh.logN-1),
		L:   tileG1(g1, naux),
		A:   tileG1(g1, nA),
		BG1: tileG1(g1, nB),
	}
	pk.BG2 = make([]bls.G2Affine, nB)
	parallelRange(nB, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			pk.BG2[i] = g2[i%len(g2)]
		}
	})
	return pk
}

// syntheticAssignment builds a witness of the shape and the matching parameters.
func syntheticAssignment(t testing.TB, sh syntheticShape) (*groth16.Parameters, *cs.ProvingAssignment) {
	m := 1 << sh.logN
	nc := m - m/32
	naux := nc
	pa := &cs.ProvingAssignment{
		A: make([]fr.Element, nc, m), B: make([]fr.Element, nc, m), C: make([]fr.Element, nc, m),
		Input: make([]fr.Element, sh.inputs), Aux: make([]fr.Element, naux),
	}
	parallelFill(nc, func(seed uint64, lo, hi int) {
		rng := splitmix(seed)
		for i := lo; i < hi; i++ {
			rng.randomFr(&pa.A[i])
			rng.randomFr(&pa.B[i])
			rng.randomFr(&pa.C[i])
		}
	})
	rng := splitmix(99)
	for i := range pa.Input {
		rng.randomFr(&pa.Input[i])
	}
	pa.Input[0].SetOne()
	cut01 := uint64(sh.ones01 * float64(1<<32))
	parallelFill(naux, func(seed uint64, lo, hi int) {
		rng := splitmix(seed)
		for i := lo; i < hi; i++ {
			switch x := rng.next(); {
			case x>>32 >= cut01:
				rng.randomFr(&pa.Aux[i])
			case x&1 == 0:
				pa.Aux[i].SetZero()
			default:
				pa.Aux[i].SetOne()
			}
		}
	})
	pa.AAuxDensity, pa.BInputDensity, pa.BAuxDensity = cs.NewDensity(0), cs.NewDensity(0), cs.NewDensity(0)
	cutA, cutB := uint64(4252017623), uint64(sh.bDensity*float64(1<<32)) // 99%, bDensity of 2^32
	for i := range naux {
		pa.AAuxDensity.AddBit()
		pa.BAuxDensity.AddBit()
		x := rng.next()
		if x>>32 < cutA {
			pa.AAuxDensity.Inc(i)
		}
		if x&0xffffffff < cutB {
			pa.BAuxDensity.Inc(i)
		}
	}
	for i := range pa.Input {
		pa.BInputDensity.AddBit()
		if i%2 == 0 {
			pa.BInputDensity.Inc(i)
		}
	}
	nB := pa.BInputDensity.Count() + pa.BAuxDensity.Count()
	pk := syntheticParams(t, sh, naux, sh.inputs+pa.AAuxDensity.Count(), nB)
	if err := groth16.CheckShape(pk, pa); err != nil {
		t.Fatal(err)
	}
	return pk, pa
}

func cloneAssignment(pa *cs.ProvingAssignment) *cs.ProvingAssignment {
	c := *pa
	for _, v := range []*[]fr.Element{&c.A, &c.B, &c.C} {
		n := make([]fr.Element, len(*v), cap(*v))
		copy(n, *v)
		*v = n
	}
	return &c
}

// cpuMSMs is the CPU prover's MSM results for pa (pa's a, b, c are consumed).
func cpuMSMs(t testing.TB, pk *groth16.Parameters, pa *cs.ProvingAssignment) *groth16.MSMResults {
	ctx := context.Background()
	h, err := groth16.ComputeH(ctx, pa.A, pa.B, pa.C)
	if err != nil {
		t.Fatal(err)
	}
	res, err := groth16.ComputeMSMs(ctx, pk, pa, h)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestMain runs the package's tests, or, in a child process started by holdVRAM
// (SNARKD_HOLD_LEAVE=<bytes>), holds device memory until only that much is free, prints HELD,
// and keeps it until its stdin closes: it stands for another process on the GPU.
func TestMain(m *testing.M) {
	if v := os.Getenv("SNARKD_HOLD_LEAVE"); v != "" {
		os.Exit(holdVRAMChild(v))
	}
	os.Exit(m.Run())
}

func holdVRAMChild(leaveEnv string) int {
	leave, err := strconv.ParseUint(leaveEnv, 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "SNARKD_HOLD_LEAVE=%q: %v\n", leaveEnv, err)
		return 2
	}
	mem := cuda.NewCUDAMemory(0)
	for {
		info, err := cuda.Inventory(0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if info.FreeMem <= leave+gpu.AllocGranularity {
			fmt.Printf("HELD %d FREE %d\n", mem.InUse(), info.FreeMem)
			break
		}
		chunk := min(info.FreeMem-leave, 1<<30)
		if _, err := mem.Alloc(chunk); err != nil {
			fmt.Fprintf(os.Stderr, "holding %d bytes: %v\n", chunk, err)
			return 1
		}
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// holdVRAM starts a holder process leaving `leave` bytes free; stop releases it.
func holdVRAM(t testing.TB, leave uint64) (stop func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("SNARKD_HOLD_LEAVE=%d", leave))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "HELD ") {
			t.Logf("holder: %s", sc.Text())
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return func() {
		in.Close()
		_ = cmd.Wait()
	}
}

func envLogN(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestHardwareSqueeze is the acceptance run for the memory policy on a real GPU: another process
// holds VRAM so that only N GiB stay free (SNARKD_GPU_SQUEEZE="13,9,5,2.5"; "all" is the whole
// card), and at each N five partitions of a 2^SNARKD_GPU_SQUEEZE_LOG domain (default 24) run on
// 2 workers (SNARKD_GPU_SQUEEZE_BLOCKS=n: the blocked test circuit of n blocks with its products
// deferred, so that plans carry the compiled circuit's matrices). Every proof must equal the CPU
// prover's bytes, no partition may hit an out-of-memory, and the tiers granted are printed.
func TestHardwareSqueeze(t *testing.T) {
	spec := os.Getenv("SNARKD_GPU_SQUEEZE")
	if spec == "" {
		t.Skip("set SNARKD_GPU_SQUEEZE=13,9,5,2.5 (GiB left free) to run")
	}
	needGPU(t)
	w := squeezeWorkload(t)
	const parts = 5
	type row struct {
		leave    string
		tiers    []string
		wall     time.Duration
		ooms     int
		onDevice int
	}
	var rows []row
	for _, f := range strings.Split(spec, ",") {
		var stop func()
		if f != "all" {
			gib, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("SNARKD_GPU_SQUEEZE: %q: %v", f, err)
			}
			stop = holdVRAM(t, uint64(gib*float64(1<<30)))
		}
		sched := hardwareScheduler(t, 2, true, nil, 0)
		p := NewProver(sched)
		var wg sync.WaitGroup
		results := make([]ProveResult, parts)
		errs := make([]error, parts)
		start := time.Now()
		for i := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, s := fixedRS(i)
				results[i], errs[i] = p.Prove(context.Background(), ProveRequest{JobID: "squeeze", Kind: "porep-c2", Class: priority.Seal,
					Index: i, SRSKey: "squeeze", PK: w.pk, PA: w.assignment(), R: r, S: s})
			}()
		}
		wg.Wait()
		rw := row{leave: f, wall: time.Since(start)}
		st := sched.Status()
		_ = sched.Close()
		if stop != nil {
			stop()
		}
		for i := range parts {
			if errs[i] != nil {
				t.Fatalf("N=%s partition %d: %v", f, i, errs[i])
			}
			r, s := fixedRS(i)
			want, err := groth16.Assemble(&w.pk.VK, w.ref, &r, &s)
			if err != nil {
				t.Fatal(err)
			}
			if results[i].Proof.Bytes() != want.Bytes() {
				t.Errorf("N=%s partition %d (%s): proof differs from the CPU prover's", f, i, results[i].Run.Plan)
			}
			rw.ooms += results[i].Run.OOMs
			rw.tiers = append(rw.tiers, results[i].Run.Plan.String())
			for _, st := range results[i].Stages {
				if st.Name == "products a, b, c" {
					rw.onDevice++
				}
			}
		}
		if rw.ooms != 0 {
			t.Errorf("N=%s: %d unexpected out-of-memory retries", f, rw.ooms)
		}
		t.Logf("N=%s: limit %s, tiers granted %v", f, gpu.FormatBytes(st.Devices[0].Memory.Total-st.Devices[0].Memory.Others-st.Devices[0].Memory.Headroom), st.Devices[0].Tiers)
		rows = append(rows, rw)
	}
	fmt.Printf("\nsqueeze: %d partitions of %s, 2 workers, proofs compared with the CPU prover's bytes\n", parts, w.name)
	fmt.Printf("%-8s %-10s %-6s %-12s %s\n", "free GiB", "wall", "OOMs", "abc on GPU", "plans granted")
	for _, r := range rows {
		sort.Strings(r.tiers)
		fmt.Printf("%-8s %-10s %-6d %-12d %s\n", r.leave, r.wall.Round(time.Millisecond), r.ooms, r.onDevice, strings.Join(r.tiers, "; "))
	}
}

// squeezeCase is what the squeeze proves: keys, a fresh assignment per partition, and the CPU
// prover's MSM results (the same for every partition).
type squeezeCase struct {
	name       string
	pk         *groth16.Parameters
	assignment func() *cs.ProvingAssignment
	ref        *groth16.MSMResults
}

// squeezeWorkload is a synthetic PoRep-like partition of 2^SNARKD_GPU_SQUEEZE_LOG (24 when
// unset), or with SNARKD_GPU_SQUEEZE_BLOCKS=n the blocked test circuit of n blocks (21 rows
// each, moved terms) with its products deferred, so that plans carry the compiled circuit's
// matrices and the wide plan computes a, b and c on the device (dummy keys of its shape).
func squeezeWorkload(t *testing.T) squeezeCase {
	t0 := time.Now()
	if blocks := envLogN("SNARKD_GPU_SQUEEZE_BLOCKS", 0); blocks > 0 {
		ctx := context.Background()
		c := blockCircuit{n: blocks, seed: 11}
		pk, err := groth16.DummyParameters(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		comp, err := cs.Compile(ctx, "squeeze-block", c.prefix, c.n, 2)
		if err != nil {
			t.Fatal(err)
		}
		full, err := cs.WitnessBlocks(ctx, comp, c.prefix, c.n, 8)
		if err != nil {
			t.Fatal(err)
		}
		if err := comp.Complete(ctx, full, 8); err != nil {
			t.Fatal(err)
		}
		ref := cpuMSMs(t, pk, full)
		t.Logf("blocked circuit of %d blocks (%d rows, device matrices %s): keys, compiled form and CPU reference in %s",
			blocks, comp.NumConstraints(), gpu.FormatBytes(newCircuitImage(comp).size), time.Since(t0))
		return squeezeCase{name: fmt.Sprintf("the blocked circuit (%d rows, products deferred)", comp.NumConstraints()), pk: pk, ref: ref,
			assignment: func() *cs.ProvingAssignment { return deferredWitness(t, c, comp, false) }}
	}
	logN := envLogN("SNARKD_GPU_SQUEEZE_LOG", 24)
	pk, pa := syntheticAssignment(t, syntheticShape{logN: logN, inputs: 328, bDensity: 0.25, ones01: 0.95})
	t.Logf("synthetic 2^%d partition built in %s", logN, time.Since(t0))
	t0 = time.Now()
	ref := cpuMSMs(t, pk, cloneAssignment(pa))
	t.Logf("CPU reference MSMs in %s", time.Since(t0))
	return squeezeCase{name: fmt.Sprintf("2^%d", logN), pk: pk, ref: ref, assignment: func() *cs.ProvingAssignment { return cloneAssignment(pa) }}
}

// BenchmarkHardwarePartition measures steady-state GPU time per partition for a
// PoRep-32GiB-shaped partition (SNARKD_GPU_PARTITION_BENCH=<log domain>, 27 for the real
// shape, 22 when unset): random SRS of the real sizes, 95% of aux values in {0,1}, B density a
// quarter, 2 workers. Modes (SNARKD_GPU_PARTITION_MODES): full plan with the SRS resident,
// full plan streamed, partial, minimal, or cardN (admission as on an N GiB card). Each
// iteration proves SNARKD_GPU_PARTITION_COUNT partitions per mode (run it with -benchtime 1x);
// the table goes to stdout, s/partition per mode to the benchmark's metrics.
func BenchmarkHardwarePartition(b *testing.B) {
	for range b.N {
		partitionBench(b)
	}
}

func partitionBench(t *testing.B) {
	logN := envLogN("SNARKD_GPU_PARTITION_BENCH", 22)
	needGPU(t)
	parts := envLogN("SNARKD_GPU_PARTITION_COUNT", 6)
	modes := strings.Split(os.Getenv("SNARKD_GPU_PARTITION_MODES"), ",")
	if modes[0] == "" {
		modes = []string{"full-resident", "full-streamed", "minimal"}
	}
	t0 := time.Now()
	pk, pa := syntheticAssignment(t, syntheticShape{logN: logN, inputs: 328, bDensity: 0.25, ones01: 0.95})
	t.Logf("synthetic 2^%d partition built in %s", logN, time.Since(t0))
	type row struct {
		mode          string
		perPartition  time.Duration
		firstLatency  time.Duration
		stages        string
		plan          string
		partitionsRun int
	}
	var rows []row
	for _, mode := range modes {
		var filter func([]gpu.Plan) []gpu.Plan
		resident, workers, n := false, 2, parts
		var headroom uint64
		switch mode {
		case "full-resident":
			filter, resident = gpu.OnlyTier(gpu.TierFull, true), true
		case "full-streamed":
			filter = gpu.OnlyTier(gpu.TierFull, false)
		case "partial":
			filter = gpu.OnlyTier(gpu.TierPartial, false)
		case "minimal":
			filter, workers, n = gpu.OnlyTier(gpu.TierMinimal, false), 1, min(parts, 3)
		default:
			// cardN: admission as on an N GiB card (the headroom leaves N GiB of this one, less
			// the usual 512 MiB), every plan allowed.
			gib, err := strconv.Atoi(strings.TrimPrefix(mode, "card"))
			if !strings.HasPrefix(mode, "card") || err != nil || gib < 1 {
				t.Fatalf("unknown mode %q", mode)
			}
			resident, headroom = true, cardHeadroom(t, uint64(gib)<<30)
		}
		sched := hardwareScheduler(t, workers, resident, filter, headroom)
		p := NewProver(sched)
		// Warm-up: loads the resident vectors and the NTT tables.
		r, s := fixedRS(0)
		tw := time.Now()
		if _, err := p.Prove(context.Background(), ProveRequest{JobID: "warm", Kind: "porep-c2", Class: priority.Seal, SRSKey: "bench",
			PK: pk, PA: pa, R: r, S: s}); err != nil {
			t.Fatalf("%s warm-up: %v", mode, err)
		}
		warm := time.Since(tw)
		done := make([]time.Time, n)
		results := make([]ProveResult, n)
		var wg sync.WaitGroup
		var mu sync.Mutex
		errs := make([]error, n)
		// The minimal plan transforms a, b, c on the host: each partition gets a copy, refilled
		// in place so that the harness allocates nothing while it measures.
		var spare chan *cs.ProvingAssignment
		if mode == "minimal" {
			spare = make(chan *cs.ProvingAssignment, workers+1)
			for range workers + 1 {
				spare <- cloneAssignment(pa)
			}
		}
		start := time.Now()
		sem := make(chan struct{}, workers+1) // a partition per worker and one prepared ahead, as the pipeline keeps
		for i := range n {
			sem <- struct{}{}
			in := pa
			if spare != nil {
				in = <-spare
				for _, v := range [][2][]fr.Element{{in.A, pa.A}, {in.B, pa.B}, {in.C, pa.C}} {
					parallelRange(len(v[1]), func(lo, hi int) { copy(v[0][lo:hi], v[1][lo:hi]) })
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if spare != nil {
					defer func() { spare <- in }()
				}
				r, s := fixedRS(i)
				res, err := p.Prove(context.Background(), ProveRequest{JobID: "bench", Kind: "porep-c2", Class: priority.Seal, Index: i,
					SRSKey: "bench", PK: pk, PA: in, R: r, S: s})
				mu.Lock()
				done[i], results[i], errs[i] = time.Now(), res, err
				mu.Unlock()
			}()
		}
		wg.Wait()
		ps := sched.Pinned().Stats()
		_ = sched.Close()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s partition %d: %v", mode, i, err)
			}
		}
		sort.Slice(done, func(i, j int) bool { return done[i].Before(done[j]) })
		// The plans granted, with counts where they differ between partitions.
		counts := map[string]int{}
		var order []string
		for _, r := range results {
			k := r.Run.Plan.String()
			if counts[k] == 0 {
				order = append(order, k)
			}
			counts[k]++
		}
		plans := order[0]
		if len(order) > 1 {
			for i, k := range order {
				order[i] = fmt.Sprintf("%d × %s", counts[k], k)
			}
			plans = strings.Join(order, " + ")
		}
		rw := row{mode: mode, firstLatency: done[0].Sub(start), stages: stagesString(results[n-1].Stages),
			plan: plans, partitionsRun: n}
		if ps.Registered > 0 || ps.PinFallbacks > 0 {
			rw.plan += fmt.Sprintf("; pinned in place %s (SRS and streamed scalars), %d vectors streamed from pageable memory", gpu.FormatBytes(ps.Registered), ps.PinFallbacks)
		}
		rw.plan += fmt.Sprintf("; warm-up partition %s", warm.Round(time.Millisecond))
		if n > 1 {
			rw.perPartition = done[n-1].Sub(done[0]) / time.Duration(n-1)
		} else {
			rw.perPartition = rw.firstLatency
		}
		t.Logf("%s: %s", mode, rw.stages)
		for i, res := range results {
			var b strings.Builder
			for _, sp := range res.Timeline {
				fmt.Fprintf(&b, " %s %.2f–%.2f;", sp.Name, sp.Start.Sub(start).Seconds(), sp.End.Sub(start).Seconds())
			}
			t.Logf("%s timeline: partition %d worker %d:%s", mode, i, res.Run.Worker, b.String())
		}
		rows = append(rows, rw)
	}
	fmt.Printf("\npartition benchmark: 2^%d domain, %d inputs, 95%% aux in {0,1}, B density 1/4\n", logN, 328)
	fmt.Printf("%-14s %-4s %-12s %-12s %s\n", "mode", "n", "per part.", "first", "plan")
	for _, r := range rows {
		fmt.Printf("%-14s %-4d %-12s %-12s %s\n", r.mode, r.partitionsRun, r.perPartition.Round(time.Millisecond),
			r.firstLatency.Round(time.Millisecond), r.plan)
	}
	for _, r := range rows {
		fmt.Printf("stages %s: %s\n", r.mode, r.stages)
		t.ReportMetric(r.perPartition.Seconds(), "s/partition:"+r.mode)
	}
}
