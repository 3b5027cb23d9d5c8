//go:build cuda

package gpuprove

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/cuda"
	"github.com/snarkd/snarkd/groth16"
)

var log = logging.Logger("snarkd/gpuprove")

// kernelWork returns the CUDA partition work for hardware devices, nil for simulated ones.
func kernelWork(run *gpu.Run) partitionWork {
	if _, ok := run.Device.(*cuda.HardwareDevice); ok {
		return hardwareWork
	}
	return nil
}

// fixedMemory hands out one pre-reserved device range once: a resident vector's memory given
// to a binding that allocates through DeviceMemory.
type fixedMemory struct {
	p    gpu.DevicePtr
	size uint64
	used bool
}

func (m *fixedMemory) Alloc(bytes uint64) (gpu.DevicePtr, error) {
	if m.used || bytes > m.size {
		return 0, fmt.Errorf("%w: %s from a %s resident vector", gpu.ErrOverReservation, gpu.FormatBytes(bytes), gpu.FormatBytes(m.size))
	}
	m.used = true
	return m.p, nil
}

func (m *fixedMemory) Free(gpu.DevicePtr) error { return nil }

// The kernels read gnark-crypto's layouts directly.
var (
	_ = [1]int{}[unsafe.Sizeof(fr.Element{})-gpu.FrBytes]
	_ = [1]int{}[unsafe.Sizeof(bls.G1Affine{})-96]
	_ = [1]int{}[unsafe.Sizeof(bls.G2Affine{})-192]
)

// hardwareWork runs a partition on a CUDA device with the granted plan. Everything that
// allocates (resident NTT tables and SRS vectors) happens first, so an out-of-memory retry never
// finds host vectors half transformed; uploads run outside the kernel lock so that they overlap
// the other worker's kernels, and on the device's copy stream so that the host copy of the next
// vector into pinned memory overlaps the DMA of the previous one.
func hardwareWork(ctx context.Context, run *gpu.Run, pk *groth16.Parameters, in *partitionInputs, key string, slog *stageLog) (res *groth16.MSMResults, err error) {
	if in.consumed {
		return nil, ErrConsumed
	}
	w := &cudaPartition{ctx: ctx, run: run, plan: run.Plan, ord: run.Ordinal, pk: pk, in: in, key: key,
		slog: slog, up: newUploads(run, slog)}
	defer func() {
		// The arena is freed and the staging buffers reused once this returns: no copy may
		// still be running, whatever failed.
		if werr := w.up.waitAll(ctx); werr != nil {
			if err != nil {
				log.Warnw("upload failed after the partition had failed", "device", w.ord, "err", werr)
				return
			}
			res, err = nil, werr
		}
	}()
	dom, err := w.domain()
	if err != nil {
		return nil, err
	}
	if err := w.stageSRS(); err != nil {
		return nil, err
	}
	// The A and B scalars: gathered on the device from L's when the plan holds the density
	// tables, else on the host (once: a retry on a smaller plan keeps them).
	if w.dg = in.planDeviceGather(w.plan); w.dg == nil {
		in.gatherHost(slog)
	}
	// a, b and c: computed on the device from the witness the plan uploads anyway, or here.
	if err := w.stageCircuit(dom); err != nil {
		return nil, err
	}
	if w.products == nil {
		if err := in.finishHost(ctx, slog); err != nil {
			return nil, err
		}
	}
	defer pinStreamedSRS(run, pk)()
	defer pinStreamedScalars(run, in)()
	defer w.releaseKernels()

	w.res = &groth16.MSMResults{H: g1Infinity(), L: g1Infinity(), A: g1Infinity(), B1: g1Infinity(), B2: g2Infinity()}
	a, err := w.buf("a")
	if err != nil {
		return nil, err
	}
	if dom != nil {
		err = w.hStep(dom, a)
	} else {
		err = w.prestage()
	}
	if err != nil {
		return nil, err
	}
	// H MSM: scalars are the first 2^logN − 1 coefficients, left in a.
	if err := w.msm(gpu.QueryH, a.p, "msm.h"); err != nil {
		return nil, err
	}
	if w.dg != nil {
		if err := w.gatherScalars(); err != nil {
			return nil, err
		}
	}
	if err := w.scalarMSMs(); err != nil {
		return nil, err
	}
	return w.res, nil
}

// cudaPartition is one attempt of a partition on a CUDA device: the plan granted, the uploads
// in flight, the kernel lock once taken, and the MSM results so far. Its steps run in order:
// domain, stageSRS, then hStep (which calls prestage) or prestage, the H MSM, gatherScalars
// when the device gathers A and B, and scalarMSMs.
type cudaPartition struct {
	ctx  context.Context
	run  *gpu.Run
	plan gpu.Plan
	ord  int
	pk   *groth16.Parameters
	in   *partitionInputs
	key  string
	slog *stageLog
	up   *uploads
	// dg is the device gather of the A and B scalars (nil: the host gathered them).
	dg *deviceGather
	// points are the resident SRS vectors (0 where the plan streams them).
	points [gpu.NumQueries]gpu.DevicePtr
	// products: the device computes a, b and c from the witness and the resident matrices.
	products *cuda.R1CS
	// staged marks the scalar buffers uploaded (or gathered into) before the first kernel.
	staged [gpu.NumQueries]bool
	// release lets go of the kernel lock held from the first kernel (plans with scalar
	// buffers: Run.HoldKernels).
	release func()
	res     *groth16.MSMResults
}

func (w *cudaPartition) buf(name string) (devRange, error) {
	p, size, err := w.run.Buffer(name)
	return devRange{p, size}, err
}

func (w *cudaPartition) upload(name string, dst gpu.DevicePtr, b []byte) error {
	return w.up.start(w.ctx, name, dst, b)
}

// uploadVec uploads v; a vector that later partitions reuse goes up from where it is,
// registered once.
func (w *cudaPartition) uploadVec(name string, dst gpu.DevicePtr, v []fr.Element) error {
	return w.up.startFrom(w.ctx, name, dst, frBytes(v), w.in.whole(v))
}

// kernel runs fn under the kernel lock after the uploads into the memory it touches have
// completed: the kernels' streams are not ordered with the copy stream. With scalar buffers
// every upload is issued before the first kernel, and the lock is held from the first kernel
// to the last (Run.HoldKernels).
func (w *cudaPartition) kernel(name string, touches []devRange, fn func() (time.Duration, error)) error {
	if err := w.up.wait(w.ctx, touches...); err != nil {
		return err
	}
	if w.plan.ScalarBuffers && w.release == nil {
		r, err := w.run.HoldKernels(w.ctx)
		if err != nil {
			return err
		}
		w.release = r
	}
	return w.run.Kernel(w.ctx, name, func() error {
		t0 := time.Now()
		d, err := fn()
		if err == nil {
			w.slog.add(name, d)
			w.slog.span(name, t0)
		}
		return err
	})
}

func (w *cudaPartition) releaseKernels() {
	if w.release != nil {
		w.release()
	}
}

// domain returns the resident NTT domain of the partition's size (nil below 2 elements).
func (w *cudaPartition) domain() (*cuda.NTTDomain, error) {
	if w.in.logN < 1 {
		return nil, nil
	}
	rv, err := w.run.Resident(gpu.NTTKey(w.in.logN, w.plan.CompactNTT))
	if err != nil {
		return nil, err
	}
	_, h, err := rv.Ensure(w.ctx, func(ctx context.Context, p gpu.DevicePtr) (any, error) {
		return cuda.NewNTTDomain(w.ord, &fixedMemory{p: p, size: rv.Size()}, uint(w.in.logN), w.plan.CompactNTT)
	})
	if err != nil {
		return nil, err
	}
	return h.(*cuda.NTTDomain), nil
}

// stageSRS makes the SRS vectors resident when the plan keeps them on the device.
func (w *cudaPartition) stageSRS() error {
	if !w.plan.SRSResident {
		return nil
	}
	pk := w.pk
	srcs := [gpu.NumQueries][]byte{gpu.QueryH: g1Bytes(pk.H), gpu.QueryL: g1Bytes(pk.L), gpu.QueryA: g1Bytes(pk.A),
		gpu.QueryBG1: g1Bytes(pk.BG1), gpu.QueryBG2: g2Bytes(pk.BG2)}
	for q := gpu.QueryH; q < gpu.NumQueries; q++ {
		if len(srcs[q]) == 0 {
			continue
		}
		rv, err := w.run.Resident(gpu.SRSKey(w.key, q))
		if err != nil {
			return err
		}
		p, _, err := rv.Ensure(w.ctx, func(ctx context.Context, p gpu.DevicePtr) (any, error) {
			// Other workers use the vector as soon as Ensure returns, and a failed copy must
			// leave it unloaded: the load completes inside (its chunks still overlap staging
			// with DMA).
			if err := w.upload("srs "+q.String(), p, srcs[q]); err != nil {
				return nil, err
			}
			return nil, w.up.wait(ctx, devRange{p, uint64(len(srcs[q]))})
		})
		if err != nil {
			return err
		}
		w.points[q] = p
	}
	return nil
}

// prestage uploads, with scalar buffers, the L, A and B scalars right behind a, b and c; each
// MSM waits only for its own vector. B_G2 shares B_G1's buffer and, normally, its vector; a
// different vector is uploaded after the B_G1 MSM. When the device gathers A and B, only their
// inputs' parts and the density tables go up.
func (w *cudaPartition) prestage() error {
	if !w.plan.ScalarBuffers {
		return nil
	}
	in, dg := w.in, w.dg
	for q := gpu.QueryL; q < gpu.NumQueries; q++ {
		if in.counts[q] == 0 {
			continue
		}
		if q == gpu.QueryBG2 {
			w.staged[q] = w.staged[gpu.QueryBG1] && (dg != nil || sameVector(in.scalars[gpu.QueryBG1], in.scalars[gpu.QueryBG2]))
			continue
		}
		r, err := w.buf(gpu.ScalarBuffer(q))
		if err != nil {
			return err
		}
		if dg != nil && q != gpu.QueryL {
			// The inputs' part; the aux part is gathered on the device before the MSMs.
			if v := dg.inputs(q); len(v) > 0 {
				if err := w.upload("inputs "+q.String(), r.p, frBytes(v)); err != nil {
					return err
				}
			}
		} else if err := w.uploadVec("scalars "+q.String(), r.p, in.scalars[q]); err != nil {
			return err
		}
		w.staged[q] = true
	}
	if dg == nil {
		return nil
	}
	d, err := w.buf(gpu.DensityBuffer)
	if err != nil {
		return err
	}
	for i, t := range []gatherTable{dg.a, dg.b} {
		at := d.p + gpu.DevicePtr(uint64(i)*gpu.GatherTableBytes(uint64(t.n)))
		words, base, off := t.parts()
		if err := w.upload("density words", at, words); err != nil {
			return err
		}
		if err := w.upload("density bases", at+gpu.DevicePtr(off), base); err != nil {
			return err
		}
	}
	return nil
}

// msm runs query q's MSM with its scalars on the device at scalarsDev (0: read from host
// memory) and workspace wsName, into w.res.
func (w *cudaPartition) msm(q gpu.Query, scalarsDev gpu.DevicePtr, wsName string) error {
	pk := w.pk
	n := int(ShapeOf(pk, w.key).Points[q])
	if n == 0 {
		return nil
	}
	ws, err := w.buf(wsName)
	if err != nil {
		return err
	}
	req := &cuda.MSMRequest{N: n, PointsDevice: w.points[q], ScalarsDevice: scalarsDev,
		Split01: w.plan.MSMFlags[q]&gpu.MSMSplit01 != 0, ChunkLog: uint(w.plan.ChunkLog), Workspace: ws.p}
	if scalarsDev == 0 {
		req.ScalarsHost = w.in.scalars[q]
	}
	switch q {
	case gpu.QueryBG2:
		req.G2Host = pk.BG2
	case gpu.QueryH:
		req.G1Host = pk.H
	case gpu.QueryL:
		req.G1Host = pk.L
	case gpu.QueryA:
		req.G1Host = pk.A
	case gpu.QueryBG1:
		req.G1Host = pk.BG1
	}
	if w.points[q] != 0 {
		req.G1Host, req.G2Host = nil, nil
	}
	if req.Split01 {
		// The window the last MSM of this kind's bucket terms call for, where the plan's
		// workspace holds it (at 2^26-point chunks 20 bits need less than the default 16).
		if c := w.in.windows.window(q, uint64(n), w.plan.ChunkLog); c != 0 {
			alt := *req
			alt.WindowBits = uint(c)
			if need, err := cuda.MSMWorkspaceBytes(w.ord, q.Curve(), &alt); err == nil && need <= ws.size {
				req.WindowBits = alt.WindowBits
			}
		}
	}
	need, err := cuda.MSMWorkspaceBytes(w.ord, q.Curve(), req)
	if err != nil {
		return err
	}
	if need > ws.size {
		return fmt.Errorf("%w: %s MSM needs %s of workspace, the plan has %s", gpu.ErrOverReservation, q, gpu.FormatBytes(need), gpu.FormatBytes(ws.size))
	}
	touches := []devRange{ws}
	if w.points[q] != 0 {
		touches = append(touches, devRange{w.points[q], uint64(n) * q.Curve().AffineBytes()})
	}
	if scalarsDev != 0 {
		touches = append(touches, devRange{scalarsDev, uint64(n) * gpu.FrBytes})
	}
	mem := &fixedMemory{p: ws.p, size: ws.size}
	res := w.res
	return w.kernel("msm "+q.String(), touches, func() (time.Duration, error) {
		if q == gpu.QueryBG2 {
			r, st, err := cuda.MSMG2(w.ctx, w.ord, mem, req)
			res.B2 = r
			w.observe(q, req, st, err)
			return st.DeviceTime, err
		}
		r, st, err := cuda.MSMG1(w.ctx, w.ord, mem, req)
		w.observe(q, req, st, err)
		switch q {
		case gpu.QueryH:
			res.H = r
		case gpu.QueryL:
			res.L = r
		case gpu.QueryA:
			res.A = r
		case gpu.QueryBG1:
			res.B1 = r
		}
		return st.DeviceTime, err
	})
}

// observe records a split MSM's bucket terms for the next partition's window.
func (w *cudaPartition) observe(q gpu.Query, req *cuda.MSMRequest, st cuda.MSMStats, err error) {
	if err == nil && req.Split01 {
		w.in.windows.observe(q, st.BucketTerms, uint64(req.N))
	}
}

// scalarMSMs runs the L, A and B MSMs: scalars uploaded into the plan's scalar buffer (which
// overlaps a: the H MSM has returned, so its kernels are done with a) or read from host memory
// through the MSM's staging. Each upload is issued after the previous MSM returned, for the
// same reason.
func (w *cudaPartition) scalarMSMs() error {
	in := w.in
	var scal gpu.DevicePtr
	if w.plan.ScalarsOnDevice && !w.plan.ScalarBuffers {
		r, err := w.buf("scalars")
		if err != nil {
			return err
		}
		scal = r.p
	}
	var uploaded []fr.Element
	for q := gpu.QueryL; q < gpu.NumQueries; q++ {
		var dev gpu.DevicePtr
		if w.plan.ScalarBuffers && in.counts[q] > 0 {
			r, err := w.buf(gpu.ScalarBuffer(q))
			if err != nil {
				return err
			}
			if !w.staged[q] {
				if err := w.uploadVec("scalars "+q.String(), r.p, in.scalars[q]); err != nil {
					return err
				}
			}
			dev = r.p
		} else if scal != 0 && len(in.scalars[q]) > 0 {
			// B_G1 and B_G2 share one scalar vector: upload it once.
			if !sameVector(uploaded, in.scalars[q]) {
				if err := w.uploadVec("scalars "+q.String(), scal, in.scalars[q]); err != nil {
					return err
				}
				uploaded = in.scalars[q]
			}
			dev = scal
		}
		if err := w.msm(q, dev, "msm"); err != nil {
			return err
		}
	}
	return nil
}

// gatherScalars packs the aux parts of the A and B scalars from L's scalar buffer (the
// witness) into their buffers, behind the inputs' parts that prestage uploaded.
func (w *cudaPartition) gatherScalars() error {
	dg := w.dg
	var r [gpu.NumQueries]devRange
	for _, q := range []gpu.Query{gpu.QueryL, gpu.QueryA, gpu.QueryBG1} {
		var err error
		if r[q], err = w.buf(gpu.ScalarBuffer(q)); err != nil {
			return err
		}
	}
	d, err := w.buf(gpu.DensityBuffer)
	if err != nil {
		return err
	}
	return w.kernel("gather a, b", []devRange{r[gpu.QueryL], r[gpu.QueryA], r[gpu.QueryBG1], d}, func() (time.Duration, error) {
		var total time.Duration
		for i, g := range []struct {
			dst    devRange
			inputs int
			t      gatherTable
		}{{r[gpu.QueryA], len(dg.aInputs), dg.a}, {r[gpu.QueryBG1], len(dg.bInputs), dg.b}} {
			tab := d.p + gpu.DevicePtr(uint64(i)*gpu.GatherTableBytes(uint64(g.t.n)))
			_, _, off := g.t.parts()
			dt, err := cuda.GatherDevice(w.ord, g.dst.p+gpu.DevicePtr(uint64(g.inputs)*gpu.FrBytes), r[gpu.QueryL].p, tab, tab+gpu.DevicePtr(off), uint64(g.t.n))
			if err != nil {
				return total, err
			}
			total += dt
		}
		return total, nil
	})
}

func sameVector(a, b []fr.Element) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// hStep leaves the coefficients of h in buffer a, with as many of a, b, c on the device as the
// plan holds: all three (one fused kernel sequence), two (c follows a·b into b's buffer) or one
// (each vector goes to the coset on the device and back; the pointwise step runs on the CPU).
// Every upload into a buffer that an earlier kernel used is issued after that kernel returned
// (the native kernels finish their work before they return).
//
// prestage runs once, after the vectors that go up before the first kernel (all three with
// three buffers) and before anything else.
func (w *cudaPartition) hStep(dom *cuda.NTTDomain, a devRange) error {
	if w.plan.DomainBuffers != 3 {
		if err := w.prestage(); err != nil {
			return err
		}
	}
	switch w.plan.DomainBuffers {
	case 3:
		b, err := w.buf("b")
		if err != nil {
			return err
		}
		c, err := w.buf("c")
		if err != nil {
			return err
		}
		if w.products != nil {
			// The witness goes up once (prestage: L's scalars and A's inputs) and serves the
			// products, the L MSM and the gather.
			if err := w.prestage(); err != nil {
				return err
			}
			if err := w.deviceProducts(a, b, c); err != nil {
				return err
			}
			return w.kernel("ntt h", []devRange{a, b, c}, func() (time.Duration, error) { return dom.ComputeH(w.ctx, a.p, b.p, c.p) })
		}
		// Enqueued back to back: each vector's host copy overlaps the previous one's DMA.
		for _, u := range []struct {
			name string
			dst  gpu.DevicePtr
			v    []fr.Element
		}{{"a", a.p, w.in.a}, {"b", b.p, w.in.b}, {"c", c.p, w.in.c}} {
			if err := w.uploadVec(u.name, u.dst, u.v); err != nil {
				return err
			}
		}
		if err := w.prestage(); err != nil {
			return err
		}
		return w.kernel("ntt h", []devRange{a, b, c}, func() (time.Duration, error) { return dom.ComputeH(w.ctx, a.p, b.p, c.p) })
	case 2:
		b, err := w.buf("b")
		if err != nil {
			return err
		}
		if err := w.uploadVec("a", a.p, w.in.a); err != nil {
			return err
		}
		if err := w.uploadVec("b", b.p, w.in.b); err != nil {
			return err
		}
		if err := w.kernel("ntt h (a·b)", []devRange{a, b}, func() (time.Duration, error) {
			t1, err := dom.Transform(w.ctx, a.p, cuda.NTTToCoset)
			if err != nil {
				return 0, err
			}
			t2, err := dom.Transform(w.ctx, b.p, cuda.NTTToCoset)
			if err != nil {
				return 0, err
			}
			t3, err := dom.Combine(w.ctx, a.p, b.p, cuda.HMul)
			return t1 + t2 + t3, err
		}); err != nil {
			return err
		}
		if err := w.uploadVec("c", b.p, w.in.c); err != nil {
			return err
		}
		// c has degree < n: its coefficients are what transforming its coset evaluations back
		// would give, so a·b goes back from the coset and c only needs its inverse transform.
		return w.kernel("ntt h (inverse, −c, /Z)", []devRange{a, b}, func() (time.Duration, error) {
			t1, err := dom.Transform(w.ctx, b.p, cuda.NTTInverse)
			if err != nil {
				return 0, err
			}
			t2, err := dom.Transform(w.ctx, a.p, cuda.NTTCosetInverse)
			if err != nil {
				return 0, err
			}
			t3, err := dom.Combine(w.ctx, a.p, b.p, cuda.HSubDivZ)
			return t1 + t2 + t3, err
		})
	default:
		// One buffer: the host vectors are overwritten from here on.
		w.in.consumed = true
		for _, v := range []struct {
			name string
			v    []fr.Element
		}{{"a", w.in.a}, {"b", w.in.b}, {"c", w.in.c}} {
			if err := w.uploadVec(v.name, a.p, v.v); err != nil {
				return err
			}
			if err := w.kernel("ntt to coset "+v.name, []devRange{a}, func() (time.Duration, error) {
				return dom.Transform(w.ctx, a.p, cuda.NTTToCoset)
			}); err != nil {
				return err
			}
			t0 := time.Now()
			if err := cuda.CopyDeviceToHost(w.ord, unsafe.Pointer(&v.v[0]), a.p, uint64(len(v.v))*gpu.FrBytes); err != nil {
				return fmt.Errorf("downloading %s: %w", v.name, err)
			}
			w.slog.add("download "+v.name, time.Since(t0))
		}
		t0 := time.Now()
		zInv := dom.ZInv()
		parallelRange(len(w.in.a), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				w.in.a[i].Mul(&w.in.a[i], &w.in.b[i]).Sub(&w.in.a[i], &w.in.c[i]).Mul(&w.in.a[i], &zInv)
			}
		})
		w.slog.add("a·b−c (cpu)", time.Since(t0))
		if err := w.uploadVec("a·b−c", a.p, w.in.a); err != nil {
			return err
		}
		return w.kernel("ntt coset inverse", []devRange{a}, func() (time.Duration, error) {
			return dom.Transform(w.ctx, a.p, cuda.NTTCosetInverse)
		})
	}
}

// inputs is the inputs' part of q's scalars (A or B_G1).
func (g *deviceGather) inputs(q gpu.Query) []fr.Element {
	if q == gpu.QueryA {
		return g.aInputs
	}
	return g.bInputs
}

// stageCircuit makes the compiled circuit's matrices resident when the device computes the
// partition's a, b and c: a deferred partition on a plan with the products buffer, the device
// gather and all three domain buffers. Otherwise the host computes them (finishHost).
func (w *cudaPartition) stageCircuit(dom *cuda.NTTDomain) error {
	in := w.in
	if in.comp == nil || w.dg == nil || dom == nil || w.plan.DomainBuffers != 3 {
		return nil
	}
	if _, ok := w.plan.Buffer(gpu.ProductsBuffer); !ok {
		return nil
	}
	im := newCircuitImage(in.comp)
	if !im.fits() {
		return nil
	}
	rv, err := w.run.Resident(gpu.CircuitKey(in.circuit))
	if err != nil {
		return err
	}
	p, _, err := rv.Ensure(w.ctx, func(ctx context.Context, p gpu.DevicePtr) (any, error) {
		for _, part := range im.parts() {
			if err := w.upload("matrices", p+gpu.DevicePtr(part.off), part.b); err != nil {
				return nil, err
			}
		}
		return nil, w.up.wait(ctx, devRange{p, im.size})
	})
	if err != nil {
		return err
	}
	m := im.device(p)
	w.products = &m
	return nil
}

// deviceProducts runs the sparse products into a, b and c once the witness is up: aux in L's
// scalar buffer, the inputs at the start of A's. Every row is checked.
func (w *cudaPartition) deviceProducts(a, b, c devRange) error {
	l, err := w.buf(gpu.ScalarBuffer(gpu.QueryL))
	if err != nil {
		return err
	}
	ai, err := w.buf(gpu.ScalarBuffer(gpu.QueryA))
	if err != nil {
		return err
	}
	sc, err := w.buf(gpu.ProductsBuffer)
	if err != nil {
		return err
	}
	var bad int64
	if err := w.kernel("products a, b, c", []devRange{l, ai, a, b, c, sc}, func() (time.Duration, error) {
		var d time.Duration
		var err error
		bad, d, err = cuda.SparseProducts(w.ord, w.products, ai.p, l.p, a.p, b.p, c.p, uint64(1)<<w.in.logN, sc.p)
		return d, err
	}); err != nil {
		return err
	}
	if bad >= 0 {
		return &cs.UnsatisfiedRowError{Row: int(bad)}
	}
	return nil
}

// device is the image's layout at base, for the kernel.
func (im circuitImage) device(base gpu.DevicePtr) cuda.R1CS {
	c := im.comp
	at := func(o uint64) gpu.DevicePtr { return base + gpu.DevicePtr(o) }
	csr := func(x csrAt) cuda.CSR { return cuda.CSR{RowStart: at(x.rowStart), Cols: at(x.cols), Coef: at(x.coef)} }
	r := cuda.R1CS{Coeffs: at(im.coeffs), PrefixRows: im.prefixRows, Blocks: im.blocks, NumInputs: uint64(c.NumInputs),
		PrefixInputs: uint64(c.PrefixInputs), PrefixAux: uint64(c.PrefixAux)}
	for k := range 3 {
		r.Prefix[k] = csr(im.prefix[k])
	}
	if im.blocks > 0 {
		r.BlockRows, r.BlockInputs, r.BlockAux = uint64(c.BlockRows), uint64(c.BlockInputs), uint64(c.BlockAux)
		for k := range 3 {
			r.Block[k] = csr(im.block[k])
		}
	}
	if im.hasMoved() {
		r.MovedStart, r.MovedTerm, r.MovedCols = at(im.movedStart), at(im.movedTerm), at(im.movedCols)
	}
	return r
}
