package gpuprove

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/gpu"
)

func TestMSMWindows(t *testing.T) {
	var m msmWindows
	const n = 125_305_057 // a WindowPoSt 32 GiB partition's L query
	if c := m.window(gpu.QueryL, n, 26); c != 0 {
		t.Fatalf("window before any MSM = %d, want 0 (the kernels' default)", c)
	}
	var nilWindows *msmWindows
	nilWindows.observe(gpu.QueryL, 1, 2)
	if c := nilWindows.window(gpu.QueryL, n, 26); c != 0 {
		t.Fatalf("nil record gave window %d", c)
	}
	for _, tc := range []struct {
		name     string
		q        gpu.Query
		n, terms uint64
		chunkLog uint32
		want     uint32
	}{
		{"WindowPoSt L: 76 % dense in 2^26 chunks", gpu.QueryL, n, n * 76 / 100, 26, 20},
		{"WindowPoSt B_G2 in 2^26 chunks", gpu.QueryBG2, 90_000_000, 64_800_000, 26, 20},
		{"PoRep A: 5 % dense (as the default)", gpu.QueryA, 130_000_000, 6_500_000, 26, 16},
		{"dense terms in 2^20 chunks", gpu.QueryL, n, n, 20, 16},
		{"all 0/1", gpu.QueryBG1, 1 << 20, 0, 26, 8},
		{"small MSM", gpu.QueryA, 5000, 4000, 26, 8},
		{"mid MSM", gpu.QueryA, 1 << 16, 1 << 16, 26, 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m.observe(tc.q, tc.terms, tc.n)
			if got := m.window(tc.q, tc.n, tc.chunkLog); got != tc.want {
				t.Fatalf("window = %d, want %d", got, tc.want)
			}
			if got := m.window(tc.q, tc.n+1, tc.chunkLog); got != 0 {
				t.Fatalf("another length's window = %d, want 0", got)
			}
		})
	}
}

// A first partition's windows come from its witness; a recorded MSM's share is never replaced
// by a seed, and a later MSM's replaces the seed.
func TestMSMWindowsSeed(t *testing.T) {
	const n = 125_305_057
	counts := [gpu.NumQueries]int{gpu.QueryH: 1 << 27, gpu.QueryL: n, gpu.QueryA: 95_000_000, gpu.QueryBG1: 90_000_000, gpu.QueryBG2: 90_000_000}
	split := []gpu.Query{gpu.QueryL, gpu.QueryA, gpu.QueryBG1, gpu.QueryBG2}
	calls := 0
	share := func(s float64) func() float64 {
		return func() float64 { calls++; return s }
	}
	var m msmWindows
	m.observe(gpu.QueryA, 95_000_000/20, 95_000_000) // A has run: a PoRep-like share
	m.seed(split, &counts, share(0.75))
	if calls != 1 {
		t.Fatalf("share computed %d times, want 1", calls)
	}
	for q, want := range map[gpu.Query]uint32{gpu.QueryL: 20, gpu.QueryA: 16, gpu.QueryBG1: 20, gpu.QueryBG2: 20, gpu.QueryH: 0} {
		if got := m.window(q, uint64(counts[q]), 26); got != want {
			t.Fatalf("%s window = %d, want %d", q, got, want)
		}
	}
	m.seed(split, &counts, share(0))
	if calls != 1 {
		t.Fatal("share computed with every query recorded")
	}
	m.observe(gpu.QueryL, 0, n)
	if got := m.window(gpu.QueryL, n, 26); got != 8 {
		t.Fatalf("L window after an all-bits MSM = %d, want 8", got)
	}
	var nilWindows *msmWindows
	nilWindows.seed(split, &counts, share(1))
}

func TestBucketShare(t *testing.T) {
	two, one := fr.NewElement(2), fr.One()
	v := make([]fr.Element, 1000)
	for i := range v {
		switch i % 4 {
		case 0:
			v[i] = two
		case 1:
			v[i] = one
		} // 2 and 3: zero
	}
	for _, tc := range []struct {
		v         []fr.Element
		samples   int
		want, tol float64
	}{
		{v, 1000, 0.25, 0},
		{v, 5000, 0.25, 0},
		{v, 250, 0.25, 0.1}, // sampled: an even spacing of 4 would see only 2s
		{v[1:2], 10, 0, 0},
		{v[:1], 10, 1, 0},
		{nil, 10, 0, 0},
		{v, 0, 0, 0},
	} {
		if got := bucketShare(tc.v, tc.samples); got < tc.want-tc.tol || got > tc.want+tc.tol {
			t.Fatalf("bucketShare(%d values, %d samples) = %v, want %v ± %v", len(tc.v), tc.samples, got, tc.want, tc.tol)
		}
	}
}
