package prover

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/update"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/rpcapi"
)

// fakeParams are parameters with the verifying key shape of a circuit with ic points and n
// points in every proving-key vector: enough for the cache's checks (files, .vk, public input
// count), nothing to prove with.
func fakeParams(ic, n int) *groth16.Parameters {
	_, _, g1, g2 := bls.Generators()
	g1s := func(k int) []bls.G1Affine {
		out := make([]bls.G1Affine, k)
		for i := range out {
			out[i] = g1
		}
		return out
	}
	g2s := make([]bls.G2Affine, n)
	for i := range g2s {
		g2s[i] = g2
	}
	return &groth16.Parameters{
		VK: groth16.VerifyingKey{Alpha1: g1, Beta1: g1, Beta2: g2, Gamma2: g2, Delta1: g1, Delta2: g2, IC: g1s(ic)},
		H:  g1s(n), L: g1s(n), A: g1s(n), BG1: g1s(n), BG2: g2s,
	}
}

// circuitCase is one Filecoin circuit the tests put fake parameters in place for.
type circuitCase struct {
	kind Kind
	size uint64
	// base is the file stem, ic the public inputs with ONE.
	base string
	ic   int
}

func circuitCases(t *testing.T) []circuitCase {
	t.Helper()
	win, err := post.Lookup(post.All()[0].Proof) // StackedDrgWinning2KiBV1
	if err != nil || win.Kind != post.Winning || win.SectorSize != prooftypes.SectorSize2KiB {
		t.Fatalf("first PoSt proof type: %+v %v", win, err)
	}
	var window *post.Proof
	for _, p := range post.All() {
		if p.Kind == post.Window && p.SectorSize == prooftypes.SectorSize8MiB {
			window = p
		}
	}
	snap, err := update.FromSectorSize(prooftypes.SectorSize2KiB)
	if err != nil {
		t.Fatal(err)
	}
	return []circuitCase{
		{rpcapi.KindWinningPoSt, prooftypes.SectorSize2KiB, win.ParamFile(), win.PublicInputs()},
		{rpcapi.KindWindowPoSt, prooftypes.SectorSize8MiB, window.ParamFile(), window.PublicInputs()},
		{rpcapi.KindSnapProve, prooftypes.SectorSize2KiB, snap.ParamFile(), 5},
	}
}

// writeFake writes fake parameters for c into dir with n points per vector and returns their
// in-memory size.
func writeFake(t *testing.T, dir string, c circuitCase, n int) uint64 {
	t.Helper()
	pk := fakeParams(c.ic, n)
	if err := WriteFilecoinParams(dir, c.base, c.size, pk); err != nil {
		t.Fatal(err)
	}
	return uint64(pk.ParametersSize())
}

func TestPreloadEvict(t *testing.T) {
	for _, c := range circuitCases(t) {
		t.Run(fmt.Sprintf("%s-%d", c.kind, c.size), func(t *testing.T) {
			dir := t.TempDir()
			size := writeFake(t, dir, c, 8)
			cache := NewParamCache("").WithFilecoinDir(dir)
			ctx := context.Background()
			name, err := cache.ParamName(c.kind, c.size)
			if err != nil || name != c.base+".params" {
				t.Fatalf("ParamName = %q, %v; want %s.params", name, err, c.base)
			}
			got, err := cache.Preload(ctx, c.kind, c.size)
			if err != nil {
				t.Fatal(err)
			}
			if got.AlreadyLoaded || got.Name != name || got.Bytes != size || got.Took <= 0 {
				t.Fatalf("first Preload = %+v; want a load of %d bytes named %s", got, size, name)
			}
			loaded := cache.Loaded()
			if len(loaded) != 1 || loaded[0].Circuit != name || !loaded[0].Loaded || loaded[0].Bytes != size ||
				loaded[0].Kind != c.kind || loaded[0].SectorSize != c.size || loaded[0].LoadTime <= 0 || loaded[0].Refs != 0 {
				t.Fatalf("Loaded = %+v", loaded)
			}
			again, err := cache.Preload(ctx, c.kind, c.size)
			if err != nil || !again.AlreadyLoaded || again.Took != 0 || again.Bytes != size {
				t.Fatalf("second Preload = %+v, %v; want already loaded", again, err)
			}
			if was, freed := cache.Evict(name); !was || freed != size {
				t.Fatalf("Evict = %v, %d; want true, %d", was, freed, size)
			}
			if was, freed := cache.Evict(name); was || freed != 0 {
				t.Fatalf("second Evict = %v, %d; want false, 0", was, freed)
			}
			if l := cache.Loaded(); len(l) != 0 {
				t.Fatalf("Loaded after Evict = %+v", l)
			}
			if got, err := cache.Preload(ctx, c.kind, c.size); err != nil || got.AlreadyLoaded {
				t.Fatalf("Preload after Evict = %+v, %v; want a new load", got, err)
			}
		})
	}
}

func TestPreloadErrors(t *testing.T) {
	dir := t.TempDir()
	cache := NewParamCache("").WithFilecoinDir(dir)
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		kind    Kind
		size    uint64
		missing bool
	}{
		{"missing files", rpcapi.KindWinningPoSt, prooftypes.SectorSize32GiB, true},
		{"missing PoRep files", rpcapi.KindPoRepC2, prooftypes.SectorSize2KiB, true},
		{"test circuit", rpcapi.KindTest, 0, false},
		{"unknown size", rpcapi.KindWindowPoSt, 12345, false},
		{"unknown kind", Kind("bogus"), prooftypes.SectorSize2KiB, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cache.Preload(ctx, c.kind, c.size)
			var missing *MissingParamsError
			var unknown *UnknownCircuitError
			switch {
			case c.missing && !errors.As(err, &missing):
				t.Fatalf("Preload = %v; want a MissingParamsError", err)
			case !c.missing && !errors.As(err, &unknown):
				t.Fatalf("Preload = %v; want an UnknownCircuitError", err)
			}
			if l := cache.Loaded(); len(l) != 0 {
				t.Fatalf("a failed Preload left %+v in the cache", l)
			}
		})
	}
}

// TestEvictInFlight: a proof holding parameters keeps them through Evict; the next proof loads
// them again, and the hold ends with Release.
func TestEvictInFlight(t *testing.T) {
	c := circuitCases(t)[0]
	dir := t.TempDir()
	size := writeFake(t, dir, c, 4)
	cache := NewParamCache("").WithFilecoinDir(dir)
	p, err := post.Lookup(post.All()[0].Proof)
	if err != nil {
		t.Fatal(err)
	}
	ctx, use := WithUsage(context.Background())
	held, err := cache.PoSt(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if use.SRSLoad() <= 0 {
		t.Errorf("SRSLoad = %v after a load", use.SRSLoad())
	}
	if l := cache.Loaded(); len(l) != 1 || l[0].Refs != 1 {
		t.Fatalf("Loaded while held = %+v; want one ref", l)
	}
	// The same request asking again holds them once.
	if _, err := cache.PoSt(ctx, p); err != nil {
		t.Fatal(err)
	}
	if l := cache.Loaded(); l[0].Refs != 1 {
		t.Fatalf("refs = %d after a second use by the same request", l[0].Refs)
	}
	if was, freed := cache.Evict(c.base + ".params"); !was || freed != size {
		t.Fatalf("Evict = %v, %d", was, freed)
	}
	if len(held.PK.VK.IC) != c.ic {
		t.Fatal("held parameters changed by Evict")
	}
	ctx2, use2 := WithUsage(context.Background())
	again, err := cache.PoSt(ctx2, p)
	if err != nil {
		t.Fatal(err)
	}
	if again == held {
		t.Fatal("a proof after Evict got the evicted parameters")
	}
	if use2.SRSLoad() <= 0 {
		t.Error("the proof after Evict did not pay a load")
	}
	use.Release()
	use.Release() // idempotent
	if l := cache.Loaded(); len(l) != 1 || l[0].Refs != 1 {
		t.Fatalf("Loaded = %+v; want the reloaded set held by the second proof only", l)
	}
	use2.Release()
	if l := cache.Loaded(); l[0].Refs != 0 {
		t.Fatalf("refs = %d after every release", l[0].Refs)
	}
	// Hot parameters cost a request no load time.
	ctx3, use3 := WithUsage(context.Background())
	defer use3.Release()
	if _, err := cache.PoSt(ctx3, p); err != nil {
		t.Fatal(err)
	}
	if use3.SRSLoad() != 0 {
		t.Errorf("SRSLoad = %v for parameters in memory", use3.SRSLoad())
	}
}

func TestMemoryLimit(t *testing.T) {
	cases := circuitCases(t)
	dir := t.TempDir()
	var size uint64
	for _, c := range cases {
		// Equal point counts: the three sets differ only by their ic length.
		if s := writeFake(t, dir, c, 1024); s > size {
			size = s
		}
	}
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.base + ".params"
	}
	type step struct {
		op   string // "load i", "hold i" (load held by a request), "release", "evict i"
		i    int
		want []int // cases in the cache afterwards
	}
	for _, tc := range []struct {
		name  string
		limit uint64
		steps []step
	}{
		{"no limit keeps everything", 0, []step{
			{"load", 0, []int{0}}, {"load", 1, []int{0, 1}}, {"load", 2, []int{0, 1, 2}},
		}},
		{"least recently used goes first", 2*size + size/2, []step{
			{"load", 0, []int{0}}, {"load", 1, []int{0, 1}}, {"load", 2, []int{1, 2}},
			{"load", 1, []int{1, 2}}, {"load", 0, []int{0, 1}},
		}},
		{"a use refreshes", 2*size + size/2, []step{
			{"load", 0, []int{0}}, {"load", 1, []int{0, 1}}, {"load", 0, []int{0, 1}}, {"load", 2, []int{0, 2}},
		}},
		{"held sets stay over the limit", size + size/2, []step{
			{"hold", 0, []int{0}}, {"hold", 1, []int{0, 1}}, {"load", 2, []int{0, 1, 2}},
			// Released in order: dropping 0 leaves 1 (still held) and 2 over the limit, so 2
			// goes too; 1 fits alone.
			{"release", 0, []int{1}},
		}},
		{"a set larger than the limit still loads", size / 2, []step{
			{"load", 0, []int{0}}, {"load", 1, []int{1}},
		}},
		{"evict frees room", 2*size + size/2, []step{
			{"load", 0, []int{0}}, {"load", 1, []int{0, 1}}, {"evict", 0, []int{1}}, {"load", 2, []int{1, 2}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := NewParamCache("").WithFilecoinDir(dir).WithMemoryLimit(tc.limit)
			// Every set that leaves the cache is reported once (a GPU backend unregisters its
			// host memory then).
			var mu sync.Mutex
			reported := map[*groth16.Parameters]int{}
			cache.setOnDrop(func(pk *groth16.Parameters) {
				mu.Lock()
				reported[pk]++
				mu.Unlock()
			})
			held := map[string]*groth16.Parameters{} // what the cache holds, by circuit
			drops := 0
			ctx, use := WithUsage(context.Background())
			defer use.Release()
			for k, s := range tc.steps {
				c := cases[s.i]
				switch s.op {
				case "load":
					if _, err := cache.Preload(context.Background(), c.kind, c.size); err != nil {
						t.Fatal(err)
					}
				case "hold":
					name, fetch, err := cache.circuit(c.kind, c.size)
					if err != nil {
						t.Fatal(err)
					}
					if _, _, err := fetch(ctx); err != nil {
						t.Fatal(name, err)
					}
				case "release":
					use.Release()
				case "evict":
					cache.Evict(names[s.i])
				}
				var got []string
				for _, p := range cache.Loaded() {
					got = append(got, p.Circuit)
				}
				want := map[string]bool{}
				for _, i := range s.want {
					want[names[i]] = true
				}
				if len(got) != len(want) {
					t.Fatalf("step %d (%s %d): cache holds %v, want cases %v", k, s.op, s.i, got, s.want)
				}
				for _, g := range got {
					if !want[g] {
						t.Fatalf("step %d (%s %d): cache holds %v, want cases %v", k, s.op, s.i, got, s.want)
					}
				}
				now := map[string]*groth16.Parameters{}
				for _, g := range got {
					now[g] = cache.loadedPK(g)
				}
				for name, pk := range held {
					if now[name] != pk {
						drops++
						mu.Lock()
						n := reported[pk]
						mu.Unlock()
						if n != 1 {
							t.Fatalf("step %d (%s %d): %s left the cache and was reported %d times", k, s.op, s.i, name, n)
						}
					}
				}
				held = now
			}
			mu.Lock()
			defer mu.Unlock()
			total := 0
			for _, n := range reported {
				total += n
			}
			if total != drops {
				t.Fatalf("%d drops reported, %d sets left the cache", total, drops)
			}
		})
	}
}

// TestDropReportedWhenUnheld: a set evicted while a proof holds it is reported once, when the
// proof lets go (a GPU backend would otherwise unregister its host memory and see the same
// proof's next partition register it again).
func TestDropReportedWhenUnheld(t *testing.T) {
	c := circuitCases(t)[0]
	dir := t.TempDir()
	writeFake(t, dir, c, 256)
	cache := NewParamCache("").WithFilecoinDir(dir)
	var reported []*groth16.Parameters
	var mu sync.Mutex
	cache.setOnDrop(func(pk *groth16.Parameters) {
		mu.Lock()
		reported = append(reported, pk)
		mu.Unlock()
	})
	ctx, use := WithUsage(context.Background())
	_, fetch, err := cache.circuit(c.kind, c.size)
	if err != nil {
		t.Fatal(err)
	}
	sp, _, err := fetch(ctx) // held until use.Release
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := cache.Evict(c.base + ".params"); !ok {
		t.Fatalf("evicting %s failed", c.base)
	}
	mu.Lock()
	n := len(reported)
	mu.Unlock()
	if n != 0 {
		t.Fatalf("reported %d drops while the proof holds the set", n)
	}
	use.Release()
	use.Release()
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || reported[0] != sp.sp.PK {
		t.Fatalf("after the proof let go: %d reports", len(reported))
	}
}

// loadedPK is the proving key of the loaded set called name, nil when there is none.
func (c *ParamCache) loadedPK(name string) *groth16.Parameters {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[name]; ok && e.ready {
		return e.sp.PK
	}
	return nil
}

// TestConcurrentLoads: requests asking for the same parameters at once share one load, and
// every one of them is charged the time it waited.
func TestConcurrentLoads(t *testing.T) {
	c := circuitCases(t)[1]
	dir := t.TempDir()
	writeFake(t, dir, c, 256)
	cache := NewParamCache("").WithFilecoinDir(dir).WithMemoryLimit(1 << 30)
	const n = 8
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got = map[*SealParams]bool{}
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, use := WithUsage(context.Background())
			defer use.Release()
			name, fetch, err := cache.circuit(c.kind, c.size)
			if err != nil {
				t.Error(err)
				return
			}
			e, _, err := fetch(ctx)
			if err != nil {
				t.Error(name, err)
				return
			}
			mu.Lock()
			got[e.sp] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(got) != 1 {
		t.Fatalf("%d distinct loads for one parameter set", len(got))
	}
	if l := cache.Loaded(); len(l) != 1 || l[0].Refs != 0 {
		t.Fatalf("Loaded = %+v", l)
	}
}

// TestAbandonedLoad: when the request that started a load goes away, a request waiting for the
// same parameters loads them itself instead of failing with the other's cancellation.
func TestAbandonedLoad(t *testing.T) {
	cache := NewParamCache("")
	meta := ParamMeta{Kind: rpcapi.KindTest, Proof: "x"}
	started, quit := make(chan struct{}), make(chan struct{})
	ctx1, cancel1 := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, _, err := cache.get(ctx1, "x", meta, "", nil, func(ctx context.Context) (*SealParams, error) {
			close(started)
			<-quit
			return nil, ctx.Err()
		})
		first <- err
	}()
	<-started
	second := make(chan error, 1)
	loads := 0
	go func() {
		ctx, use := WithUsage(context.Background())
		defer use.Release()
		_, _, err := cache.get(ctx, "x", meta, "", nil, func(context.Context) (*SealParams, error) {
			loads++
			pk := fakeParams(2, 1)
			return &SealParams{PK: pk, VK: &pk.VK}, nil
		})
		second <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the second request find the load in progress
	cancel1()
	close(quit)
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("first request: %v; want its own cancellation", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("second request: %v", err)
	}
	if loads != 1 {
		t.Fatalf("second request loaded %d times", loads)
	}
	if l := cache.Loaded(); len(l) != 1 || !l[0].Loaded {
		t.Fatalf("Loaded = %+v", l)
	}
}

func TestUsageDevices(t *testing.T) {
	NoteDevice(context.Background(), 3) // no usage: ignored
	ctx, use := WithUsage(context.Background())
	for _, d := range []int{1, 0, 1} {
		NoteDevice(ctx, d)
	}
	if got := use.Devices(); len(got) != 2 || got[0] != 1 || got[1] != 0 {
		t.Fatalf("Devices = %v; want [1 0]", got)
	}
	if got := UsageFrom(WithoutUsage(ctx)); got != nil {
		t.Fatal("WithoutUsage kept the usage")
	}
	var none *Usage
	none.Release()
	if none.Devices() != nil || none.SRSLoad() != 0 {
		t.Fatal("nil usage reported something")
	}
}
