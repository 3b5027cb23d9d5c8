//go:build cuda

package gpuprove

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/cuda"
)

// TestGatherDevice: the device gather writes what the host gather writes, and nothing past it.
func TestGatherDevice(t *testing.T) {
	needGPU(t)
	mem := cuda.NewCUDAMemory(0)
	rng := rand.New(rand.NewPCG(3, 4))
	cases := append(gatherCases(), struct {
		n int
		p float64
	}{1<<20 + 5, 0.97})
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d-%v", tc.n, tc.p), func(t *testing.T) {
			d := testDensity(rng, tc.n, tc.p)
			src := randomFr(t, tc.n)
			want := make([]fr.Element, d.Count())
			gatherInto(want, src, d)
			tab := newGatherTable(d, tc.n)
			// One element past the gathered ones, which must keep its value.
			sentinel := randomFr(t, d.Count()+1)
			dst := uploadFr(t, mem, sentinel)
			defer dst.free()
			s := uploadFr(t, mem, src)
			defer s.free()
			tp, err := mem.Alloc(gpu.GatherTableBytes(uint64(tc.n)))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = mem.Free(tp) }()
			words, base, off := tab.parts()
			if err := cuda.CopyHostToDevice(0, tp, unsafe.Pointer(&words[0]), uint64(len(words))); err != nil {
				t.Fatal(err)
			}
			if err := cuda.CopyHostToDevice(0, tp+gpu.DevicePtr(off), unsafe.Pointer(&base[0]), uint64(len(base))); err != nil {
				t.Fatal(err)
			}
			if _, err := cuda.GatherDevice(0, dst.p, s.p, tp, tp+gpu.DevicePtr(off), uint64(tc.n)); err != nil {
				t.Fatal(err)
			}
			got := dst.get()
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("gathered element %d of %d differs", i, len(want))
				}
			}
			if got[len(want)] != sentinel[len(want)] {
				t.Fatal("the gather wrote past its last element")
			}
		})
	}
	if got := mem.InUse(); got != 0 {
		t.Errorf("%d device bytes still allocated", got)
	}
}

// randomFr returns n random field elements.
func randomFr(t testing.TB, n int) []fr.Element {
	v := make([]fr.Element, n)
	for i := range v {
		if _, err := v[i].SetRandom(); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// devFr is a vector of Fr in device memory, for the kernel tests.
type devFr struct {
	t   testing.TB
	mem *cuda.CUDAMemory
	p   gpu.DevicePtr
	n   int
}

func uploadFr(t testing.TB, mem *cuda.CUDAMemory, v []fr.Element) devFr {
	t.Helper()
	p, err := mem.Alloc(uint64(len(v)) * gpu.FrBytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := cuda.CopyHostToDevice(0, p, unsafe.Pointer(&v[0]), uint64(len(v))*gpu.FrBytes); err != nil {
		t.Fatal(err)
	}
	return devFr{t: t, mem: mem, p: p, n: len(v)}
}

func (d devFr) get() []fr.Element {
	d.t.Helper()
	v := make([]fr.Element, d.n)
	if err := cuda.CopyDeviceToHost(0, unsafe.Pointer(&v[0]), d.p, uint64(d.n)*gpu.FrBytes); err != nil {
		d.t.Fatal(err)
	}
	return v
}

func (d devFr) free() { _ = d.mem.Free(d.p) }
