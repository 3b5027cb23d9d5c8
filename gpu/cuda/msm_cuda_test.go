//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/gpu"
)

// genG1 returns n distinct pseudo-random points: a random walk over 16 random steps.
func genG1(t testing.TB, n int) []bls12381.G1Affine {
	steps := randG1(t, 16)
	start := randG1(t, 1)[0]
	jac := make([]bls12381.G1Jac, n)
	var cur bls12381.G1Jac
	cur.FromAffine(&start)
	for i := range jac {
		cur.AddMixed(&steps[i%16])
		jac[i] = cur
	}
	return bls12381.BatchJacobianToAffineG1(jac)
}

func genG2(t testing.TB, n int) []bls12381.G2Affine {
	steps := randG2(t, 16)
	start := randG2(t, 1)[0]
	jac := make([]bls12381.G2Jac, n)
	var cur bls12381.G2Jac
	cur.FromAffine(&start)
	for i := range jac {
		cur.AddMixed(&steps[i%16])
		jac[i] = cur
	}
	out := make([]bls12381.G2Affine, n)
	for i := range jac {
		out[i].FromJacobian(&jac[i])
	}
	return out
}

// scalarKinds fills scalars with a named distribution.
func scalarKind(t testing.TB, kind string, n int, seed uint64) []fr.Element {
	rng := rand.New(rand.NewPCG(seed, 7))
	v := randFr(t, n)
	var rm1 fr.Element
	rm1.SetInt64(-1)
	for i := range v {
		switch kind {
		case "uniform":
		case "edge":
			switch rng.IntN(6) {
			case 0:
				v[i].SetZero()
			case 1:
				v[i] = rm1
			case 2:
				v[i].SetOne()
			case 3:
				v[i].SetUint64(2)
			}
		case "ones":
			v[i].SetOne()
		case "zeros":
			v[i].SetZero()
		case "01":
			// 95% in {0, 1}.
			switch x := rng.IntN(100); {
			case x < 47:
				v[i].SetZero()
			case x < 95:
				v[i].SetOne()
			}
		default:
			t.Fatalf("unknown scalar kind %q", kind)
		}
	}
	return v
}

type msmMode struct {
	name     string
	resident bool
	split01  bool
	chunkLog uint
	window   uint
}

func (m msmMode) String() string {
	return fmt.Sprintf("%s/split01=%v/chunk=%d/c=%d", m.name, m.split01, m.chunkLog, m.window)
}

func upload(t testing.TB, mem *CUDAMemory, p unsafe.Pointer, size uint64) gpu.DevicePtr {
	t.Helper()
	d, err := mem.Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	if err := CopyHostToDevice(0, d, p, size); err != nil {
		t.Fatal(err)
	}
	return d
}

func checkG1(t *testing.T, mem *CUDAMemory, pts []bls12381.G1Affine, sc []fr.Element, mode msmMode) {
	t.Helper()
	n := len(pts)
	var want bls12381.G1Jac
	if _, err := want.MultiExp(pts, sc, ecc.MultiExpConfig{}); err != nil {
		t.Fatal(err)
	}
	req := &MSMRequest{N: n, Split01: mode.split01, ChunkLog: mode.chunkLog, WindowBits: mode.window}
	if mode.resident {
		req.PointsDevice = upload(t, mem, unsafe.Pointer(&pts[0]), uint64(n)*96)
		defer mem.Free(req.PointsDevice)
		req.ScalarsDevice = upload(t, mem, unsafe.Pointer(&sc[0]), uint64(n)*32)
		defer mem.Free(req.ScalarsDevice)
	} else {
		req.G1Host, req.ScalarsHost = pts, sc
	}
	for rep := 0; rep < 2; rep++ {
		got, st, err := MSMG1(context.Background(), 0, mem, req)
		if err != nil {
			t.Fatalf("n=%d %v: %v", n, mode, err)
		}
		if want := bucketTerms(sc, mode.split01); st.BucketTerms != want {
			t.Fatalf("n=%d %v: %d bucket terms reported, want %d", n, mode, st.BucketTerms, want)
		}
		var ga, wa bls12381.G1Affine
		ga.FromJacobian(&got)
		wa.FromJacobian(&want)
		if !ga.Equal(&wa) {
			t.Fatalf("G1 MSM n=%d %v (run %d): got %s want %s", n, mode, rep, ga.String(), wa.String())
		}
	}
}

func checkG2(t *testing.T, mem *CUDAMemory, pts []bls12381.G2Affine, sc []fr.Element, mode msmMode) {
	t.Helper()
	n := len(pts)
	var want bls12381.G2Jac
	if _, err := want.MultiExp(pts, sc, ecc.MultiExpConfig{}); err != nil {
		t.Fatal(err)
	}
	req := &MSMRequest{N: n, Split01: mode.split01, ChunkLog: mode.chunkLog, WindowBits: mode.window}
	if mode.resident {
		req.PointsDevice = upload(t, mem, unsafe.Pointer(&pts[0]), uint64(n)*192)
		defer mem.Free(req.PointsDevice)
		req.ScalarsDevice = upload(t, mem, unsafe.Pointer(&sc[0]), uint64(n)*32)
		defer mem.Free(req.ScalarsDevice)
	} else {
		req.G2Host, req.ScalarsHost = pts, sc
	}
	for rep := 0; rep < 2; rep++ {
		got, st, err := MSMG2(context.Background(), 0, mem, req)
		if err != nil {
			t.Fatalf("n=%d %v: %v", n, mode, err)
		}
		if want := bucketTerms(sc, mode.split01); st.BucketTerms != want {
			t.Fatalf("n=%d %v: %d bucket terms reported, want %d", n, mode, st.BucketTerms, want)
		}
		var ga, wa bls12381.G2Affine
		ga.FromJacobian(&got)
		wa.FromJacobian(&want)
		if !ga.Equal(&wa) {
			t.Fatalf("G2 MSM n=%d %v (run %d): got %s want %s", n, mode, rep, ga.String(), wa.String())
		}
	}
}

// bucketTerms is how many of sc's terms the kernels send to the buckets.
func bucketTerms(sc []fr.Element, split01 bool) uint64 {
	if !split01 {
		return uint64(len(sc))
	}
	var k uint64
	for i := range sc {
		if !sc[i].IsZero() && !sc[i].IsOne() {
			k++
		}
	}
	return k
}

var (
	resident   = msmMode{name: "resident", resident: true}
	streamed   = msmMode{name: "streamed", chunkLog: 12}
	split      = msmMode{name: "resident", resident: true, split01: true}
	splitChunk = msmMode{name: "streamed", split01: true, chunkLog: 13}
)

func TestMSMG1Device(t *testing.T) {
	requireDevice(t)
	mem := NewCUDAMemory(0)
	big := genG1(t, 1<<18+3)
	seed := rand.Uint64()
	t.Logf("scalar seed %d", seed)
	for _, n := range []int{1, 2, 3, 7, 100, 1000, 4097, 65537, 1 << 18} {
		for _, mode := range []msmMode{resident, streamed} {
			checkG1(t, mem, big[:n], scalarKind(t, "uniform", n, seed+uint64(n)), mode)
		}
	}
	// Edge cases: zeros, r-1, 1, 2 among random scalars; the identity point; repeated points.
	pts := append([]bls12381.G1Affine(nil), big[:5000]...)
	for i := 0; i < len(pts); i += 17 {
		pts[i] = bls12381.G1Affine{}
	}
	for i := 1; i < len(pts); i += 13 {
		pts[i] = pts[0]
		pts[i+1] = pts[3]
	}
	for _, kind := range []string{"edge", "ones", "zeros", "01", "uniform"} {
		for _, mode := range []msmMode{resident, streamed, split, splitChunk} {
			checkG1(t, mem, pts, scalarKind(t, kind, len(pts), seed), mode)
		}
	}
	// Every window size.
	for c := uint(4); c <= 16; c++ {
		m := resident
		m.window = c
		checkG1(t, mem, big[:3001], scalarKind(t, "edge", 3001, seed+uint64(c)), m)
	}
	// Larger 0/1-heavy sets, several chunks.
	for _, mode := range []msmMode{split, splitChunk, {name: "resident", resident: true, split01: true, chunkLog: 15}} {
		checkG1(t, mem, big, scalarKind(t, "01", len(big), seed+1), mode)
	}
	// Split MSMs of dense scalars at the wide windows a dense witness's record asks for.
	for _, c := range []uint{16, 20} {
		for _, mode := range []msmMode{{name: "resident", resident: true, split01: true, window: c},
			{name: "streamed", split01: true, chunkLog: 16, window: c}} {
			checkG1(t, mem, big, scalarKind(t, "edge", len(big), seed+2), mode)
		}
	}
	if got := mem.InUse(); got != 0 {
		t.Errorf("%d device bytes still allocated", got)
	}
}

func TestMSMG2Device(t *testing.T) {
	requireDevice(t)
	mem := NewCUDAMemory(0)
	big := genG2(t, 1<<16+1)
	seed := rand.Uint64()
	t.Logf("scalar seed %d", seed)
	for _, n := range []int{1, 3, 1000, 1 << 16, 1<<16 + 1} {
		for _, mode := range []msmMode{resident, streamed} {
			checkG2(t, mem, big[:n], scalarKind(t, "uniform", n, seed+uint64(n)), mode)
		}
	}
	pts := append([]bls12381.G2Affine(nil), big[:3000]...)
	for i := 0; i < len(pts); i += 17 {
		pts[i] = bls12381.G2Affine{}
	}
	for i := 1; i < len(pts); i += 13 {
		pts[i] = pts[0]
	}
	for _, kind := range []string{"edge", "ones", "01"} {
		for _, mode := range []msmMode{resident, streamed, split, splitChunk} {
			checkG2(t, mem, pts, scalarKind(t, kind, len(pts), seed), mode)
		}
	}
	for _, mode := range []msmMode{{name: "resident", resident: true, split01: true, window: 20},
		{name: "streamed", split01: true, chunkLog: 14, window: 20}} {
		checkG2(t, mem, big, scalarKind(t, "edge", len(big), seed+2), mode)
	}
	if got := mem.InUse(); got != 0 {
		t.Errorf("%d device bytes still allocated", got)
	}
}

// TestDeviceOutOfMemory asks for more memory than the device has: the error must be typed and
// the device usable afterwards.
func TestDeviceOutOfMemory(t *testing.T) {
	requireDevice(t)
	mem := NewCUDAMemory(0)
	_, err := mem.Alloc(1 << 50)
	if err == nil {
		t.Fatal("a 1 PiB allocation succeeded")
	}
	if !gpu.IsOutOfMemory(err) {
		t.Fatalf("error %v is not an out-of-memory error", err)
	}
	pts := genG1(t, 100)
	checkG1(t, mem, pts, scalarKind(t, "uniform", 100, 1), resident)
}
