//go:build cuda

package cuda

import (
	"crypto/rand"
	"math/big"
	"testing"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// Op codes of snarkd_arith_test (native/snarkd.h).
const (
	opFrMul = iota
	opFrAdd
	opFrSub
	opFrFromMont
	opFpMul
	opFpAdd
	opFpSub
	opFp2Mul
	opFp2Sqr
	opG1MAdd
	opG1Mix
	opG2MAdd
	opG2Mix
	opFrSqr
	opFpSqr
	opFpMulSub
)

// TestLayouts proves that the native types have gnark-crypto's sizes; the arithmetic tests
// below prove the limb order and the Montgomery form agree.
func TestLayouts(t *testing.T) {
	checks := []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"fr.Element", unsafe.Sizeof(fr.Element{}), 32},
		{"fp.Element", unsafe.Sizeof(fp.Element{}), 48},
		{"E2", unsafe.Sizeof(bls12381.E2{}), 96},
		{"G1Affine", unsafe.Sizeof(bls12381.G1Affine{}), 96},
		{"G2Affine", unsafe.Sizeof(bls12381.G2Affine{}), 192},
		{"G1Affine.Y offset", unsafe.Offsetof(bls12381.G1Affine{}.Y), 48},
		{"G2Affine.Y offset", unsafe.Offsetof(bls12381.G2Affine{}.Y), 96},
		{"E2.A1 offset", unsafe.Offsetof(bls12381.E2{}.A1), 48},
		{"g1XYZZ", unsafe.Sizeof(g1XYZZ{}), 192},
		{"g2XYZZ", unsafe.Sizeof(g2XYZZ{}), 384},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, c.got, c.want)
		}
	}
}

func randFr(t testing.TB, n int) []fr.Element {
	v := make([]fr.Element, n)
	for i := range v {
		if _, err := v[i].SetRandom(); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func randFp(t testing.TB, n int) []fp.Element {
	v := make([]fp.Element, n)
	for i := range v {
		if _, err := v[i].SetRandom(); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func randScalar(t testing.TB) *big.Int {
	k, err := rand.Int(rand.Reader, fr.Modulus())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func randG1(t testing.TB, n int) []bls12381.G1Affine {
	_, _, g1, _ := bls12381.Generators()
	v := make([]bls12381.G1Affine, n)
	for i := range v {
		v[i].ScalarMultiplication(&g1, randScalar(t))
	}
	return v
}

func randG2(t testing.TB, n int) []bls12381.G2Affine {
	_, _, _, g2 := bls12381.Generators()
	v := make([]bls12381.G2Affine, n)
	for i := range v {
		v[i].ScalarMultiplication(&g2, randScalar(t))
	}
	return v
}

// arithRunner runs an op on the host or, through device memory, on GPU 0.
type arithRunner struct {
	t      *testing.T
	device bool
	mem    *CUDAMemory
}

func (r arithRunner) run(op int, a, b, out unsafe.Pointer, inSize, outSize uintptr, count int) {
	r.t.Helper()
	if !r.device {
		if err := arithTest(0, false, op, a, b, out, count); err != nil {
			r.t.Fatal(err)
		}
		return
	}
	in := uint64(inSize) * uint64(count)
	outBytes := uint64(outSize) * uint64(count)
	da, err := r.mem.Alloc(in)
	if err != nil {
		r.t.Fatal(err)
	}
	defer r.mem.Free(da)
	db, err := r.mem.Alloc(in)
	if err != nil {
		r.t.Fatal(err)
	}
	defer r.mem.Free(db)
	dout, err := r.mem.Alloc(outBytes)
	if err != nil {
		r.t.Fatal(err)
	}
	defer r.mem.Free(dout)
	if err := CopyHostToDevice(0, da, a, in); err != nil {
		r.t.Fatal(err)
	}
	if err := CopyHostToDevice(0, db, b, in); err != nil {
		r.t.Fatal(err)
	}
	if err := arithTest(0, true, op, devPtr(da), devPtr(db), devPtr(dout), count); err != nil {
		r.t.Fatal(err)
	}
	if err := CopyDeviceToHost(0, out, dout, outBytes); err != nil {
		r.t.Fatal(err)
	}
}

func testArith(t *testing.T, r arithRunner) {
	const n = 512
	// Fr.
	a, b := randFr(t, n), randFr(t, n)
	a[0].SetZero()
	b[1].SetZero()
	a[2].SetOne()
	b[3].SetOne()
	a[4].SetInt64(-1)
	b[4].SetInt64(-1)
	b[5] = a[5]
	out := make([]fr.Element, n)
	for _, op := range []int{opFrMul, opFrAdd, opFrSub, opFrFromMont, opFrSqr} {
		r.run(op, unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&out[0]), 32, 32, n)
		for i := range a {
			var want fr.Element
			switch op {
			case opFrMul:
				want.Mul(&a[i], &b[i])
			case opFrAdd:
				want.Add(&a[i], &b[i])
			case opFrSub:
				want.Sub(&a[i], &b[i])
			case opFrFromMont:
				want = fr.Element(a[i].Bits())
			case opFrSqr:
				want.Square(&a[i])
			}
			if out[i] != want {
				t.Fatalf("fr op %d, input %d: got %v want %v", op, i, out[i], want)
			}
		}
	}
	// Fp.
	x, y := randFp(t, n), randFp(t, n)
	x[0].SetZero()
	y[1].SetOne()
	x[2].SetInt64(-1)
	y[2].SetInt64(-1)
	outp := make([]fp.Element, n)
	for _, op := range []int{opFpMul, opFpAdd, opFpSub, opFpSqr, opFpMulSub} {
		r.run(op, unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), unsafe.Pointer(&outp[0]), 48, 48, n)
		for i := range x {
			var want fp.Element
			switch op {
			case opFpMul:
				want.Mul(&x[i], &y[i])
			case opFpAdd:
				want.Add(&x[i], &y[i])
			case opFpSub:
				want.Sub(&x[i], &y[i])
			case opFpSqr:
				want.Square(&x[i])
			case opFpMulSub:
				var s, d fp.Element
				s.Add(&x[i], &y[i])
				d.Sub(&x[i], &y[i])
				s.Mul(&s, &d)
				want.Mul(&x[i], &y[i]).Sub(&want, &s)
			}
			if outp[i] != want {
				t.Fatalf("fp op %d, input %d: got %v want %v", op, i, outp[i], want)
			}
		}
	}
	// Fp2.
	e, f := make([]bls12381.E2, n), make([]bls12381.E2, n)
	for i := range e {
		e[i].A0, e[i].A1, f[i].A0, f[i].A1 = x[i], y[i], y[(i+1)%n], x[(i+7)%n]
	}
	oute := make([]bls12381.E2, n)
	for _, op := range []int{opFp2Mul, opFp2Sqr} {
		r.run(op, unsafe.Pointer(&e[0]), unsafe.Pointer(&f[0]), unsafe.Pointer(&oute[0]), 96, 96, n)
		for i := range e {
			var want bls12381.E2
			if op == opFp2Mul {
				want.Mul(&e[i], &f[i])
			} else {
				want.Square(&e[i])
			}
			if oute[i] != want {
				t.Fatalf("fp2 op %d, input %d: got %v want %v", op, i, oute[i], want)
			}
		}
	}
	// G1: random pairs plus P+P, P+(-P), inf+P, P+inf, inf+inf.
	const m = 64
	p, q := randG1(t, m), randG1(t, m)
	q[0] = p[0]
	q[1].Neg(&p[1])
	p[2] = bls12381.G1Affine{}
	q[3] = bls12381.G1Affine{}
	p[4], q[4] = bls12381.G1Affine{}, bls12381.G1Affine{}
	out1 := make([]g1XYZZ, m)
	for _, op := range []int{opG1MAdd, opG1Mix} {
		r.run(op, unsafe.Pointer(&p[0]), unsafe.Pointer(&q[0]), unsafe.Pointer(&out1[0]), 96, 192, m)
		for i := range p {
			var pj, qj, want bls12381.G1Jac
			pj.FromAffine(&p[i])
			qj.FromAffine(&q[i])
			want.Set(&pj)
			if op == opG1Mix {
				want.Double(&pj).AddAssign(&pj)
			}
			want.AddAssign(&qj)
			got := out1[i].jac()
			var ga, wa bls12381.G1Affine
			ga.FromJacobian(&got)
			wa.FromJacobian(&want)
			if !ga.Equal(&wa) {
				t.Fatalf("g1 op %d, input %d: got %v want %v", op, i, ga, wa)
			}
		}
	}
	// G2.
	p2, q2 := randG2(t, m), randG2(t, m)
	q2[0] = p2[0]
	q2[1].Neg(&p2[1])
	p2[2] = bls12381.G2Affine{}
	q2[3] = bls12381.G2Affine{}
	out2 := make([]g2XYZZ, m)
	for _, op := range []int{opG2MAdd, opG2Mix} {
		r.run(op, unsafe.Pointer(&p2[0]), unsafe.Pointer(&q2[0]), unsafe.Pointer(&out2[0]), 192, 384, m)
		for i := range p2 {
			var pj, qj, want bls12381.G2Jac
			pj.FromAffine(&p2[i])
			qj.FromAffine(&q2[i])
			want.Set(&pj)
			if op == opG2Mix {
				want.Double(&pj).AddAssign(&pj)
			}
			want.AddAssign(&qj)
			got := out2[i].jac()
			var ga, wa bls12381.G2Affine
			ga.FromJacobian(&got)
			wa.FromJacobian(&want)
			if !ga.Equal(&wa) {
				t.Fatalf("g2 op %d, input %d: got %v want %v", op, i, ga, wa)
			}
		}
	}
}

// TestArithHost checks the native field and curve code, compiled for the host, against
// gnark-crypto; it needs no GPU.
func TestArithHost(t *testing.T) { testArith(t, arithRunner{t: t}) }

// TestArithDevice runs the same checks on GPU 0.
func TestArithDevice(t *testing.T) {
	requireDevice(t)
	testArith(t, arithRunner{t: t, device: true, mem: NewCUDAMemory(0)})
}

func requireDevice(t testing.TB) {
	t.Helper()
	n, err := DeviceCount()
	if err != nil {
		t.Fatalf("DeviceCount: %v", err)
	}
	if n == 0 {
		t.Skip("no CUDA device visible")
	}
}
