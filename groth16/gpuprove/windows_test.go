package gpuprove

import (
	"testing"

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
