package gpuprove

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gpu"
)

// testDensity is a mask over n variables with each bit set with probability p.
func testDensity(rng *rand.Rand, n int, p float64) *cs.Density {
	d := cs.NewDensity(n)
	for i := range n {
		d.AddBit()
		if rng.Float64() < p {
			d.Inc(i)
		}
	}
	return d
}

// gatherCases are the masks the host and device gathers are checked on: word edges, empty and
// full masks, sparse and dense ones.
func gatherCases() []struct {
	n int
	p float64
} {
	return []struct {
		n int
		p float64
	}{{1, 1}, {63, 0.5}, {64, 1}, {65, 0.5}, {1000, 0}, {1000, 1}, {4097, 0.01}, {100_000, 0.5}, {100_003, 0.99}}
}

// TestGatherTable: the device gather's layout (a base per word plus a popcount within it)
// places every element where the host gather does.
func TestGatherTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range gatherCases() {
		t.Run(fmt.Sprintf("%d-%v", tc.n, tc.p), func(t *testing.T) {
			d := testDensity(rng, tc.n, tc.p)
			src := make([]fr.Element, tc.n)
			for i := range src {
				src[i].SetUint64(uint64(i) + 1)
			}
			tab := newGatherTable(d, tc.n)
			if tab.count != d.Count() {
				t.Fatalf("table counts %d set bits, the density %d", tab.count, d.Count())
			}
			want := make([]fr.Element, d.Count())
			if got := gatherInto(want, src, d); got != d.Count() {
				t.Fatalf("host gather wrote %d of %d", got, d.Count())
			}
			got := make([]fr.Element, d.Count())
			tab.gatherAt(got, src)
			for k := range want {
				if got[k] != want[k] {
					t.Fatalf("element %d: table gather %s, host gather %s", k, got[k].String(), want[k].String())
				}
			}
			words, base, off := tab.parts()
			if uint64(len(words)) > off || off+uint64(len(base)) > gpu.GatherTableBytes(uint64(tc.n)) || off%256 != 0 {
				t.Fatalf("layout: %d word bytes, bases at %d (%d bytes), table %d bytes", len(words), off, len(base), gpu.GatherTableBytes(uint64(tc.n)))
			}
		})
	}
}

// TestPlanDeviceGather: a plan with scalar buffers gathers A and B on the device, and then the
// host holds neither; any other plan, or a partition the host has gathered already (a retry),
// gathers on the host into pooled vectors.
func TestPlanDeviceGather(t *testing.T) {
	pk := proveTestParams(t)
	shape := ShapeOf(pk, "test")
	wide := gpu.Planner{WideChunks: true}.Plan(shape, gpu.TierFull, true)
	narrow := gpu.Planner{}.Plan(shape, gpu.TierFull, true)
	if !wide.ScalarBuffers || narrow.ScalarBuffers {
		t.Fatalf("plans: wide %s, narrow %s", wide, narrow)
	}
	p := &Prover{}
	in, err := p.prepareInputs(pk, synth(t, pk, 1))
	if err != nil {
		t.Fatal(err)
	}
	if in.scalars[gpu.QueryA] != nil || len(in.pooled) != 0 {
		t.Fatal("A and B gathered before the plan was known")
	}
	if in.planDeviceGather(narrow) != nil {
		t.Fatal("device gather planned without a density buffer")
	}
	g := in.planDeviceGather(wide)
	if g == nil {
		t.Fatal("no device gather on a plan with scalar buffers")
	}
	if len(g.aInputs)+g.a.count != len(pk.A) || len(g.bInputs)+g.b.count != len(pk.BG1) {
		t.Fatalf("device gather of %d+%d and %d+%d scalars, want %d and %d", len(g.aInputs), g.a.count, len(g.bInputs), g.b.count, len(pk.A), len(pk.BG1))
	}
	// What the device computes from the table equals the host's vectors.
	in.gatherHost(nil)
	if in.planDeviceGather(wide) != nil {
		t.Fatal("device gather planned after the host gathered")
	}
	a := append(append([]fr.Element(nil), g.aInputs...), make([]fr.Element, g.a.count)...)
	g.a.gatherAt(a[len(g.aInputs):], in.pa.Aux)
	b := append(append([]fr.Element(nil), g.bInputs...), make([]fr.Element, g.b.count)...)
	g.b.gatherAt(b[len(g.bInputs):], in.pa.Aux)
	for _, c := range []struct {
		q         gpu.Query
		got, want []fr.Element
	}{{gpu.QueryA, a, in.scalars[gpu.QueryA]}, {gpu.QueryBG1, b, in.scalars[gpu.QueryBG1]}} {
		if len(c.got) != len(c.want) {
			t.Fatalf("%s: %d scalars, host %d", c.q, len(c.got), len(c.want))
		}
		for i := range c.want {
			if c.got[i] != c.want[i] {
				t.Fatalf("%s scalar %d differs from the host gather", c.q, i)
			}
		}
	}
	if len(in.pooled) != 2 {
		t.Fatalf("host gather pooled %d vectors, want A and B", len(in.pooled))
	}
}

// gatherAt is the host model of the device gather, for tests: dst[k] = src[i] for the k-th set
// bit i, each element placed from its own word's base as a device thread places it.
func (t gatherTable) gatherAt(dst, src []fr.Element) {
	for i := 0; i < t.n; i++ {
		w := t.words[i/64]
		b := uint(i % 64)
		if w>>b&1 == 0 {
			continue
		}
		dst[int(t.base[i/64])+bits.OnesCount64(w&(1<<b-1))] = src[i]
	}
}
