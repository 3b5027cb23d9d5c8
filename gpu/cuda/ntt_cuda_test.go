//go:build cuda

package cuda

import (
	"context"
	"math/big"
	"strconv"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/snarkd/snarkd/gpu"
)

// nttRef computes the transform with gnark-crypto, natural order in and out.
func nttRef(v []fr.Element, kind NTTKind) {
	d := fft.NewDomain(uint64(len(v)))
	switch kind {
	case NTTForward:
		d.FFT(v, fft.DIF)
	case NTTInverse:
		d.FFTInverse(v, fft.DIF)
	case NTTCosetForward:
		d.FFT(v, fft.DIF, fft.OnCoset())
	case NTTCosetInverse:
		d.FFTInverse(v, fft.DIF, fft.OnCoset())
	}
	fft.BitReverse(v)
}

// hRef is Groth16's H step with gnark-crypto (bellperson's execute_fft).
func hRef(a, b, c []fr.Element) []fr.Element {
	n := uint64(len(a))
	d := fft.NewDomain(n)
	for _, x := range [][]fr.Element{a, b, c} {
		d.FFTInverse(x, fft.DIF)
		fft.BitReverse(x)
		d.FFT(x, fft.DIF, fft.OnCoset())
		fft.BitReverse(x)
	}
	var z, one fr.Element
	one.SetOne()
	z.Exp(d.FrMultiplicativeGen, new(big.Int).SetUint64(n))
	z.Sub(&z, &one).Inverse(&z)
	for i := range a {
		a[i].Mul(&a[i], &b[i]).Sub(&a[i], &c[i]).Mul(&a[i], &z)
	}
	d.FFTInverse(a, fft.DIF, fft.OnCoset())
	fft.BitReverse(a)
	return a
}

type devVec struct {
	t   testing.TB
	mem *CUDAMemory
	p   gpu.DevicePtr
	n   int
}

func newDevVec(t testing.TB, mem *CUDAMemory, v []fr.Element) devVec {
	t.Helper()
	p, err := mem.Alloc(uint64(len(v)) * 32)
	if err != nil {
		t.Fatal(err)
	}
	if err := CopyHostToDevice(0, p, unsafe.Pointer(&v[0]), uint64(len(v))*32); err != nil {
		t.Fatal(err)
	}
	return devVec{t: t, mem: mem, p: p, n: len(v)}
}

func (d devVec) get() []fr.Element {
	d.t.Helper()
	v := make([]fr.Element, d.n)
	if err := CopyDeviceToHost(0, unsafe.Pointer(&v[0]), d.p, uint64(d.n)*32); err != nil {
		d.t.Fatal(err)
	}
	return v
}

func (d devVec) free() { _ = d.mem.Free(d.p) }

func equalFr(t testing.TB, what string, got, want []fr.Element) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: element %d of %d differs: got %s want %s", what, i, len(want), got[i].String(), want[i].String())
		}
	}
}

func TestNTTDevice(t *testing.T) {
	requireDevice(t)
	mem := NewCUDAMemory(0)
	sizes := []uint{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 17, 20, 22}
	if testing.Short() {
		sizes = sizes[:12]
	}
	for _, lg := range sizes {
		for _, compact := range []bool{false, true} {
			nttDeviceCase(t, mem, lg, compact)
		}
	}
	if got := mem.InUse(); got != 0 {
		t.Errorf("%d device bytes still allocated", got)
	}
}

// nttDeviceCase checks every transform kind and the H step of one domain, full or compact,
// against the CPU.
func nttDeviceCase(t *testing.T, mem *CUDAMemory, lg uint, compact bool) {
	t.Helper()
	ctx := context.Background()
	dom, err := NewNTTDomain(0, mem, lg, compact)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := dom.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	name := "2^" + strconv.Itoa(int(lg))
	if compact {
		name += " compact"
	}
	n := 1 << lg
	for _, kind := range []NTTKind{NTTForward, NTTInverse, NTTCosetForward, NTTCosetInverse} {
		in := randFr(t, n)
		in[0].SetZero()
		if n > 1 {
			in[n-1].SetInt64(-1)
		}
		want := append([]fr.Element(nil), in...)
		nttRef(want, kind)
		dv := newDevVec(t, mem, in)
		if _, err := dom.Transform(ctx, dv.p, kind); err != nil {
			t.Fatal(err)
		}
		equalFr(t, "NTT "+name+" "+kind.String(), dv.get(), want)
		// Same input again: identical result.
		if err := CopyHostToDevice(0, dv.p, unsafe.Pointer(&in[0]), uint64(n)*32); err != nil {
			t.Fatal(err)
		}
		if _, err := dom.Transform(ctx, dv.p, kind); err != nil {
			t.Fatal(err)
		}
		equalFr(t, "NTT repeat "+name+" "+kind.String(), dv.get(), want)
		dv.free()
	}
	// H step.
	a, b, c := randFr(t, n), randFr(t, n), randFr(t, n)
	da, db, dc := newDevVec(t, mem, a), newDevVec(t, mem, b), newDevVec(t, mem, c)
	if _, err := dom.ComputeH(ctx, da.p, db.p, dc.p); err != nil {
		t.Fatal(err)
	}
	equalFr(t, "H step "+name, da.get(), hRef(a, b, c))
	da.free()
	db.free()
	dc.free()
}

// TestNTTRoundTripLarge checks inverse(forward(x)) = x and coset round trips at 2^25, beyond
// what the CPU reference covers quickly.
func TestNTTRoundTripLarge(t *testing.T) {
	requireDevice(t)
	if testing.Short() {
		t.Skip("short")
	}
	mem := NewCUDAMemory(0)
	ctx := context.Background()
	const lg = 25
	dom, err := NewNTTDomain(0, mem, lg, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dom.Close()
	// The compact domain's transforms equal the full domain's.
	cdom, err := NewNTTDomain(0, mem, lg, true)
	if err != nil {
		t.Fatal(err)
	}
	defer cdom.Close()
	for _, kind := range []NTTKind{NTTForward, NTTInverse, NTTCosetForward, NTTCosetInverse, NTTToCoset} {
		x := randFr(t, 1<<lg)
		full, compact := newDevVec(t, mem, x), newDevVec(t, mem, x)
		if _, err := dom.Transform(ctx, full.p, kind); err != nil {
			t.Fatal(err)
		}
		if _, err := cdom.Transform(ctx, compact.p, kind); err != nil {
			t.Fatal(err)
		}
		equalFr(t, "compact "+kind.String(), compact.get(), full.get())
		full.free()
		compact.free()
	}
	in := randFr(t, 1<<lg)
	dv := newDevVec(t, mem, in)
	defer dv.free()
	for _, pair := range [][2]NTTKind{{NTTForward, NTTInverse}, {NTTCosetForward, NTTCosetInverse}} {
		if _, err := dom.Transform(ctx, dv.p, pair[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := dom.Transform(ctx, dv.p, pair[1]); err != nil {
			t.Fatal(err)
		}
		equalFr(t, "round trip "+pair[0].String(), dv.get(), in)
	}
}
