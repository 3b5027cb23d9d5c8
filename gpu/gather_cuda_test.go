//go:build cuda

package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// TestGatherDevice: the device gather writes what the host gather writes, and nothing past it.
func TestGatherDevice(t *testing.T) {
	requireDevice(t)
	mem := NewCUDAMemory(0)
	rng := rand.New(rand.NewPCG(3, 4))
	cases := append(gatherCases(), struct {
		n int
		p float64
	}{1<<20 + 5, 0.97})
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d-%v", tc.n, tc.p), func(t *testing.T) {
			d := testDensity(rng, tc.n, tc.p)
			src := randFr(t, tc.n)
			want := make([]fr.Element, d.Count())
			gatherInto(want, src, d)
			tab := newGatherTable(d, tc.n)
			// One element past the gathered ones, which must keep its value.
			sentinel := randFr(t, d.Count()+1)
			dst := newDevVec(t, mem, sentinel)
			defer dst.free()
			s := newDevVec(t, mem, src)
			defer s.free()
			tp, err := mem.Alloc(GatherTableBytes(uint64(tc.n)))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = mem.Free(tp) }()
			words, base, off := tab.parts()
			if err := CopyHostToDevice(0, tp, unsafe.Pointer(&words[0]), uint64(len(words))); err != nil {
				t.Fatal(err)
			}
			if err := CopyHostToDevice(0, tp+DevicePtr(off), unsafe.Pointer(&base[0]), uint64(len(base))); err != nil {
				t.Fatal(err)
			}
			if _, err := GatherDevice(0, dst.p, s.p, tp, tp+DevicePtr(off), uint64(tc.n)); err != nil {
				t.Fatal(err)
			}
			got := dst.get()
			equalFr(t, "gathered", got[:len(want)], want)
			if got[len(want)] != sentinel[len(want)] {
				t.Fatal("the gather wrote past its last element")
			}
		})
	}
	if got := mem.InUse(); got != 0 {
		t.Errorf("%d device bytes still allocated", got)
	}
}
