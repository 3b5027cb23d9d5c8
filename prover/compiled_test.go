package prover

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/testcircuit"
)

// sealParamsOf returns the loaded entry named name.
func (c *ParamCache) entryOf(t *testing.T, name string) *paramEntry {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[name]
	if e == nil || !e.ready {
		t.Fatalf("%s not loaded", name)
	}
	return e
}

// Compiled circuits are recorded once, kept with their parameter set (its bytes include them),
// stored on disk and read back after a restart; a damaged or foreign file is recorded again.
func TestCompiledCache(t *testing.T) {
	ctx := context.Background()
	c := circuitCases(t)[0]
	dir, circuits := t.TempDir(), t.TempDir()
	size := writeFake(t, dir, c, 8)
	builds := 0
	const key = "test-circuit-64"
	build := func(ctx context.Context) (*cs.Compiled, error) {
		builds++
		circ := testcircuit.New(64, 1)
		return cs.Compile(ctx, key, func(sys cs.ConstraintSystem) (cs.BlockFunc, error) { return nil, circ.Synthesize(sys) }, 0, 0)
	}
	open := func() (*ParamCache, *paramEntry) {
		cache := NewParamCache("").WithFilecoinDir(dir).WithCircuitDir(circuits)
		got, err := cache.Preload(ctx, c.kind, c.size)
		if err != nil {
			t.Fatal(err)
		}
		return cache, cache.entryOf(t, got.Name)
	}

	cache, e := open()
	comp, err := cache.Compiled(ctx, e.sp, key, build, true)
	if err != nil {
		t.Fatal(err)
	}
	again, err := cache.Compiled(ctx, e.sp, key, build, true)
	if err != nil || again != comp || builds != 1 {
		t.Fatalf("second Compiled: same %v, %d builds, %v", again == comp, builds, err)
	}
	if l := cache.Loaded(); len(l) != 1 || l[0].Bytes != size+comp.Bytes() {
		t.Fatalf("Loaded = %+v; want %d bytes (parameters %d + compiled %d)", l, size+comp.Bytes(), size, comp.Bytes())
	}
	file := filepath.Join(circuits, key+".r1cs")
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("not stored: %v", err)
	}

	// A restart reads the stored file.
	cache, e = open()
	if _, err := cache.Compiled(ctx, e.sp, key, build, true); err != nil || builds != 1 {
		t.Fatalf("after a restart: %d builds, %v", builds, err)
	}

	// A file another build of snarkd recorded is recorded again.
	stored, err := cs.LoadCompiled(filepath.Join(circuits, key+".r1cs"), key, "")
	if err != nil || stored.Build != buildID() {
		t.Fatalf("stored file: build %q, %v; want %q", stored.Build, err, buildID())
	}
	stored.Build = "snarkd v0.0.1"
	if err := stored.Store(filepath.Join(circuits, key+".r1cs")); err != nil {
		t.Fatal(err)
	}
	cache, e = open()
	if _, err := cache.Compiled(ctx, e.sp, key, build, true); err != nil || builds != 2 {
		t.Fatalf("another build's file: %d builds, %v", builds, err)
	}

	// A truncated file is refused and recorded again, and the good copy replaces it.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	cache, e = open()
	if _, err := cache.Compiled(ctx, e.sp, key, build, true); err != nil || builds != 3 {
		t.Fatalf("truncated file: %d builds, %v", builds, err)
	}
	if _, err := cs.LoadCompiled(file, key, ""); err != nil {
		t.Fatalf("the rebuilt file: %v", err)
	}

	// Without wait, a circuit not in memory is read in the background and the caller told to
	// synthesize in full meanwhile.
	cache, e = open()
	if _, err := cache.Compiled(ctx, e.sp, key, build, false); !errors.Is(err, ErrNotCompiled) {
		t.Fatalf("no wait, first call: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := cache.Compiled(ctx, e.sp, key, build, false)
		if err == nil {
			if got.Key != key {
				t.Fatalf("key %q", got.Key)
			}
			break
		}
		if !errors.Is(err, ErrNotCompiled) || time.Now().After(deadline) {
			t.Fatalf("no wait: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if builds != 3 {
		t.Fatalf("background read: %d builds", builds)
	}

	// Evicting the parameters drops the compiled circuit with them.
	if was, freed := cache.Evict(e.name); !was || freed != size+comp.Bytes() {
		t.Fatalf("Evict = %v, %d; want %d", was, freed, size+comp.Bytes())
	}
	if _, err := cache.Compiled(ctx, e.sp, key, build, true); err != nil || builds != 3 {
		t.Fatalf("after eviction (read from disk, not kept): %d builds, %v", builds, err)
	}
}

// testCompiledSynthesis is the compiled path of the test circuit circ (key "test-1024-3"),
// counting its full syntheses in fulls, and the same with a witness the matrices do not
// satisfy (a stale compiled circuit).
func testCompiledSynthesis(circ *testcircuit.Circuit, fulls *int) (s, stale compiledSynthesis) {
	prefix := func(sys cs.ConstraintSystem) (cs.BlockFunc, error) { return nil, circ.Synthesize(sys) }
	s = compiledSynthesis{
		key:     "test-1024-3",
		compile: func(ctx context.Context) (*cs.Compiled, error) { return cs.Compile(ctx, "test-1024-3", prefix, 0, 0) },
		witness: func(ctx context.Context, comp *cs.Compiled) (*cs.ProvingAssignment, error) {
			return cs.WitnessBlocks(ctx, comp, prefix, 0, 1)
		},
		full: func(ctx context.Context) (*cs.ProvingAssignment, error) {
			*fulls++
			return cs.SynthesizeProving(ctx, circ, cs.Shape{})
		},
	}
	stale = s
	stale.witness = func(ctx context.Context, comp *cs.Compiled) (*cs.ProvingAssignment, error) {
		pa, err := cs.WitnessBlocks(ctx, comp, prefix, 0, 1)
		if err == nil {
			pa.Aux[len(pa.Aux)/2].SetUint64(12345)
		}
		return pa, err
	}
	return s, stale
}

// The pipeline's compiled path gives full synthesis's assignment, records its phases, and
// falls back to full synthesis when the compiled circuit disagrees with the witness.
func TestSynthesizeCompiledPath(t *testing.T) {
	ctx := context.Background()
	circ := testcircuit.New(1<<10, 3)
	want, err := cs.SynthesizeProving(ctx, circ, cs.Shape{})
	if err != nil {
		t.Fatal(err)
	}
	fulls := 0
	s, bad := testCompiledSynthesis(circ, &fulls)
	same := func(t *testing.T, got *cs.ProvingAssignment) {
		t.Helper()
		if err := got.Diff(want); err != nil {
			t.Fatal(err)
		}
	}
	// By default a partition never waits: without the circuit in memory it synthesizes in full.
	pipe := New(CPUBackend{}, NewParamCache(""))
	if pa, err := pipe.synthesize(ctx, &SealParams{}, &Phases{}, s); err != nil || fulls != 1 {
		t.Fatalf("no wait: %d full syntheses, %v", fulls, err)
	} else {
		same(t, pa)
	}
	fulls = 0
	pipe.WithCompiledWait(true)
	ph := &Phases{}
	pa, err := pipe.synthesize(ctx, &SealParams{}, ph, s)
	if err != nil {
		t.Fatal(err)
	}
	same(t, pa)
	got := ph.snapshot()
	if fulls != 0 || got[PhaseWitness] <= 0 || got[PhaseProducts] <= 0 || got[PhaseCheck] <= 0 || got[PhaseFullSynthesis] != 0 {
		t.Fatalf("compiled path: %d full syntheses, phases %v", fulls, got)
	}

	// A witness the matrices do not satisfy (a stale compiled circuit) goes to full synthesis.
	pa, err = pipe.synthesize(ctx, &SealParams{}, &Phases{}, bad)
	if err != nil || fulls != 1 {
		t.Fatalf("stale compiled circuit: %d full syntheses, %v", fulls, err)
	}
	same(t, pa)

	// Full synthesis when configured.
	pipe.WithFullSynthesis(true)
	ph = &Phases{}
	if pa, err = pipe.synthesize(ctx, &SealParams{}, ph, s); err != nil || fulls != 2 || ph.snapshot()[PhaseWitness] != 0 {
		t.Fatalf("full synthesis: %d, %v, %v", fulls, ph.snapshot(), err)
	}
	same(t, pa)
}
