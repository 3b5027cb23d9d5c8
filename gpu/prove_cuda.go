//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	bls "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/groth16"
)

// kernelWork returns the CUDA partition work for hardware devices, nil for simulated ones.
func kernelWork(run *Run) partitionWork {
	if _, ok := run.Device.(*HardwareDevice); ok {
		return hardwareWork
	}
	return nil
}

// fixedMemory hands out one pre-reserved device range once: a resident vector's memory given
// to a binding that allocates through DeviceMemory.
type fixedMemory struct {
	p    DevicePtr
	size uint64
	used bool
}

func (m *fixedMemory) Alloc(bytes uint64) (DevicePtr, error) {
	if m.used || bytes > m.size {
		return 0, fmt.Errorf("%w: %s from a %s resident vector", ErrOverReservation, FormatBytes(bytes), FormatBytes(m.size))
	}
	m.used = true
	return m.p, nil
}

func (m *fixedMemory) Free(DevicePtr) error { return nil }

// The kernels read gnark-crypto's layouts directly.
var (
	_ = [1]int{}[unsafe.Sizeof(fr.Element{})-FrBytes]
	_ = [1]int{}[unsafe.Sizeof(bls.G1Affine{})-96]
	_ = [1]int{}[unsafe.Sizeof(bls.G2Affine{})-192]
)

// hardwareWork runs a partition on a CUDA device with the granted plan. Everything that
// allocates (resident NTT tables and SRS vectors) happens first, so an out-of-memory retry never
// finds host vectors half transformed; uploads run outside the kernel lock so that they overlap
// the other worker's kernels, and on the device's copy stream so that the host copy of the next
// vector into pinned memory overlaps the DMA of the previous one.
func hardwareWork(ctx context.Context, run *Run, pk *groth16.Parameters, in *partitionInputs, key string, slog *stageLog) (res *groth16.MSMResults, err error) {
	if in.consumed {
		return nil, ErrConsumed
	}
	plan := run.Plan
	ord := run.Ordinal
	up := newUploads(run, slog)
	defer func() {
		// The arena is freed and the staging buffers reused once this returns: no copy may
		// still be running, whatever failed.
		if werr := up.waitAll(ctx); werr != nil {
			if err != nil {
				log.Warnw("upload failed after the partition had failed", "device", ord, "err", werr)
				return
			}
			res, err = nil, werr
		}
	}()
	upload := func(name string, dst DevicePtr, b []byte) error { return up.start(ctx, name, dst, b) }
	// Vectors that later partitions reuse go up from where they are, registered once.
	uploadVec := func(name string, dst DevicePtr, v []fr.Element) error {
		return up.startFrom(ctx, name, dst, frBytes(v), in.whole(v))
	}

	// Resident vectors: the domain's twiddles, and the SRS when the plan keeps it on the device.
	var dom *NTTDomain
	if in.logN >= 1 {
		rv, err := run.Resident(NTTKey(in.logN, plan.CompactNTT))
		if err != nil {
			return nil, err
		}
		_, h, err := rv.Ensure(ctx, func(ctx context.Context, p DevicePtr) (any, error) {
			return NewNTTDomain(ord, &fixedMemory{p: p, size: rv.Size()}, uint(in.logN), plan.CompactNTT)
		})
		if err != nil {
			return nil, err
		}
		dom = h.(*NTTDomain)
	}
	var points [numQueries]DevicePtr
	if plan.SRSResident {
		srcs := [numQueries][]byte{QueryH: g1Bytes(pk.H), QueryL: g1Bytes(pk.L), QueryA: g1Bytes(pk.A),
			QueryBG1: g1Bytes(pk.BG1), QueryBG2: g2Bytes(pk.BG2)}
		for q := QueryH; q < numQueries; q++ {
			if len(srcs[q]) == 0 {
				continue
			}
			rv, err := run.Resident(SRSKey(key, q))
			if err != nil {
				return nil, err
			}

			p, _, err := rv.Ensure(ctx, func(ctx context.Context, p DevicePtr) (any, error) {
				// Other workers use the vector as soon as Ensure returns, and a failed copy
				// must leave it unloaded: the load completes inside (its chunks still overlap
				// staging with DMA).
				if err := upload("srs "+q.String(), p, srcs[q]); err != nil {
					return nil, err
				}
				return nil, up.wait(ctx, devRange{p, uint64(len(srcs[q]))})
			})
			if err != nil {
				return nil, err
			}
			points[q] = p
		}
	}
	// The A and B scalars: gathered on the device from L's when the plan holds the density
	// tables, else on the host (once: a retry on a smaller plan keeps them).
	dg := in.planDeviceGather(plan)
	if dg == nil {
		in.gatherHost(slog)
	}
	defer pinStreamedSRS(run, pk)()
	defer pinStreamedScalars(run, in)()
	buf := func(name string) (devRange, error) {
		p, size, err := run.Buffer(name)
		return devRange{p, size}, err
	}
	// kernel runs fn under the kernel lock after the uploads into the memory it touches have
	// completed: the kernels' streams are not ordered with the copy stream. With scalar
	// buffers every upload is issued before the first kernel, and the lock is held from the
	// first kernel to the last (Run.HoldKernels).
	var release func()
	defer func() {
		if release != nil {
			release()
		}
	}()
	kernel := func(name string, touches []devRange, fn func() (time.Duration, error)) error {
		if err := up.wait(ctx, touches...); err != nil {
			return err
		}
		if plan.ScalarBuffers && release == nil {
			r, err := run.HoldKernels(ctx)
			if err != nil {
				return err
			}
			release = r
		}
		return run.Kernel(ctx, name, func() error {
			t0 := time.Now()
			d, err := fn()
			if err == nil {
				slog.add(name, d)
				slog.span(name, t0)
			}
			return err
		})
	}

	res = &groth16.MSMResults{H: g1Infinity(), L: g1Infinity(), A: g1Infinity(), B1: g1Infinity(), B2: g2Infinity()}
	a, err := buf("a")
	if err != nil {
		return nil, err
	}
	// With scalar buffers of their own, the L, A and B scalars go up right behind a, b and c;
	// each MSM waits only for its own vector. B_G2 shares B_G1's buffer and, normally, its
	// vector; a different vector is uploaded after the B_G1 MSM.
	var staged [numQueries]bool
	prestage := func() error {
		if !plan.ScalarBuffers {
			return nil
		}
		for q := QueryL; q < numQueries; q++ {
			if in.counts[q] == 0 {
				continue
			}
			if q == QueryBG2 {
				staged[q] = staged[QueryBG1] && (dg != nil || sameVector(in.scalars[QueryBG1], in.scalars[QueryBG2]))
				continue
			}
			r, err := buf(ScalarBuffer(q))
			if err != nil {
				return err
			}
			if dg != nil && q != QueryL {
				// The inputs' part; the aux part is gathered on the device before the MSMs.
				if v := dg.inputs(q); len(v) > 0 {
					if err := upload("inputs "+q.String(), r.p, frBytes(v)); err != nil {
						return err
					}
				}
			} else if err := uploadVec("scalars "+q.String(), r.p, in.scalars[q]); err != nil {
				return err
			}
			staged[q] = true
		}
		if dg != nil {
			d, err := buf(DensityBuffer)
			if err != nil {
				return err
			}
			for i, t := range []gatherTable{dg.a, dg.b} {
				at := d.p + DevicePtr(uint64(i)*GatherTableBytes(uint64(t.n)))
				words, base, off := t.parts()
				if err := upload("density words", at, words); err != nil {
					return err
				}
				if err := upload("density bases", at+DevicePtr(off), base); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if dom != nil {
		if err := hStep(ctx, run, dom, in, a, buf, uploadVec, prestage, kernel, slog); err != nil {
			return nil, err
		}
	} else if err := prestage(); err != nil {
		return nil, err
	}

	// H MSM: scalars are the first 2^logN − 1 coefficients, left in a.
	msm := func(q Query, scalarsDev DevicePtr, wsName string) error {
		n := int(ShapeOf(pk, key).Points[q])
		if n == 0 {
			return nil
		}
		ws, err := buf(wsName)
		if err != nil {
			return err
		}
		req := &MSMRequest{N: n, PointsDevice: points[q], ScalarsDevice: scalarsDev,
			Split01: plan.MSMFlags[q]&MSMSplit01 != 0, ChunkLog: uint(plan.ChunkLog), Workspace: ws.p}
		if scalarsDev == 0 {
			req.ScalarsHost = in.scalars[q]
		}
		switch q {
		case QueryBG2:
			req.G2Host = pk.BG2
		case QueryH:
			req.G1Host = pk.H
		case QueryL:
			req.G1Host = pk.L
		case QueryA:
			req.G1Host = pk.A
		case QueryBG1:
			req.G1Host = pk.BG1
		}
		if points[q] != 0 {
			req.G1Host, req.G2Host = nil, nil
		}
		need, err := MSMWorkspaceBytes(ord, q.Curve(), req)
		if err != nil {
			return err
		}
		if need > ws.size {
			return fmt.Errorf("%w: %s MSM needs %s of workspace, the plan has %s", ErrOverReservation, q, FormatBytes(need), FormatBytes(ws.size))
		}
		touches := []devRange{ws}
		if points[q] != 0 {
			touches = append(touches, devRange{points[q], uint64(n) * q.Curve().AffineBytes()})
		}
		if scalarsDev != 0 {
			touches = append(touches, devRange{scalarsDev, uint64(n) * FrBytes})
		}
		mem := &fixedMemory{p: ws.p, size: ws.size}
		return kernel("msm "+q.String(), touches, func() (time.Duration, error) {
			if q == QueryBG2 {
				r, st, err := MSMG2(ctx, ord, mem, req)
				res.B2 = r
				return st.DeviceTime, err
			}
			r, st, err := MSMG1(ctx, ord, mem, req)
			switch q {
			case QueryH:
				res.H = r
			case QueryL:
				res.L = r
			case QueryA:
				res.A = r
			case QueryBG1:
				res.B1 = r
			}
			return st.DeviceTime, err
		})
	}
	if err := msm(QueryH, a.p, "msm.h"); err != nil {
		return nil, err
	}
	if dg != nil {
		if err := gatherOnDevice(ord, dg, buf, kernel); err != nil {
			return nil, err
		}
	}

	// L, A, B: scalars uploaded into the plan's scalar buffer (which overlaps a: the H MSM has
	// returned, so its kernels are done with a) or read from host memory through the MSM's
	// staging. Each upload is issued after the previous MSM returned, for the same reason.
	var scal DevicePtr
	if plan.ScalarsOnDevice && !plan.ScalarBuffers {
		r, err := buf("scalars")
		if err != nil {
			return nil, err
		}
		scal = r.p
	}
	var uploaded []fr.Element
	for q := QueryL; q < numQueries; q++ {
		var dev DevicePtr
		if plan.ScalarBuffers && in.counts[q] > 0 {
			r, err := buf(ScalarBuffer(q))
			if err != nil {
				return nil, err
			}
			if !staged[q] {
				if err := uploadVec("scalars "+q.String(), r.p, in.scalars[q]); err != nil {
					return nil, err
				}
			}
			dev = r.p
		} else if scal != 0 && len(in.scalars[q]) > 0 {
			// B_G1 and B_G2 share one scalar vector: upload it once.
			if !sameVector(uploaded, in.scalars[q]) {
				if err := uploadVec("scalars "+q.String(), scal, in.scalars[q]); err != nil {
					return nil, err
				}
				uploaded = in.scalars[q]
			}
			dev = scal
		}
		if err := msm(q, dev, "msm"); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// gatherOnDevice packs the aux parts of the A and B scalars from L's scalar buffer (the
// witness) into their buffers, behind the inputs' parts that prestage uploaded.
func gatherOnDevice(ord int, dg *deviceGather, buf func(string) (devRange, error),
	kernel func(string, []devRange, func() (time.Duration, error)) error) error {
	var r [numQueries]devRange
	for _, q := range []Query{QueryL, QueryA, QueryBG1} {
		var err error
		if r[q], err = buf(ScalarBuffer(q)); err != nil {
			return err
		}
	}
	d, err := buf(DensityBuffer)
	if err != nil {
		return err
	}
	return kernel("gather a, b", []devRange{r[QueryL], r[QueryA], r[QueryBG1], d}, func() (time.Duration, error) {
		var total time.Duration
		for i, g := range []struct {
			dst    devRange
			inputs int
			t      gatherTable
		}{{r[QueryA], len(dg.aInputs), dg.a}, {r[QueryBG1], len(dg.bInputs), dg.b}} {
			tab := d.p + DevicePtr(uint64(i)*GatherTableBytes(uint64(g.t.n)))
			_, _, off := g.t.parts()
			dt, err := GatherDevice(ord, g.dst.p+DevicePtr(uint64(g.inputs)*FrBytes), r[QueryL].p, tab, tab+DevicePtr(off), uint64(g.t.n))
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
func hStep(ctx context.Context, run *Run, dom *NTTDomain, in *partitionInputs, a devRange,
	buf func(string) (devRange, error), upload func(string, DevicePtr, []fr.Element) error, prestage func() error,
	kernel func(string, []devRange, func() (time.Duration, error)) error, slog *stageLog) error {
	if run.Plan.DomainBuffers != 3 {
		if err := prestage(); err != nil {
			return err
		}
	}
	switch run.Plan.DomainBuffers {
	case 3:
		b, err := buf("b")
		if err != nil {
			return err
		}
		c, err := buf("c")
		if err != nil {
			return err
		}
		// Enqueued back to back: each vector's host copy overlaps the previous one's DMA.
		for _, u := range []struct {
			name string
			dst  DevicePtr
			v    []fr.Element
		}{{"a", a.p, in.a}, {"b", b.p, in.b}, {"c", c.p, in.c}} {
			if err := upload(u.name, u.dst, u.v); err != nil {
				return err
			}
		}
		if err := prestage(); err != nil {
			return err
		}
		return kernel("ntt h", []devRange{a, b, c}, func() (time.Duration, error) { return dom.ComputeH(ctx, a.p, b.p, c.p) })
	case 2:
		b, err := buf("b")
		if err != nil {
			return err
		}
		if err := upload("a", a.p, in.a); err != nil {
			return err
		}
		if err := upload("b", b.p, in.b); err != nil {
			return err
		}
		if err := kernel("ntt h (a·b)", []devRange{a, b}, func() (time.Duration, error) {
			t1, err := dom.Transform(ctx, a.p, NTTToCoset)
			if err != nil {
				return 0, err
			}
			t2, err := dom.Transform(ctx, b.p, NTTToCoset)
			if err != nil {
				return 0, err
			}
			t3, err := dom.Combine(ctx, a.p, b.p, HMul)
			return t1 + t2 + t3, err
		}); err != nil {
			return err
		}
		if err := upload("c", b.p, in.c); err != nil {
			return err
		}
		// c has degree < n: its coefficients are what transforming its coset evaluations back
		// would give, so a·b goes back from the coset and c only needs its inverse transform.
		return kernel("ntt h (inverse, −c, /Z)", []devRange{a, b}, func() (time.Duration, error) {
			t1, err := dom.Transform(ctx, b.p, NTTInverse)
			if err != nil {
				return 0, err
			}
			t2, err := dom.Transform(ctx, a.p, NTTCosetInverse)
			if err != nil {
				return 0, err
			}
			t3, err := dom.Combine(ctx, a.p, b.p, HSubDivZ)
			return t1 + t2 + t3, err
		})
	default:
		// One buffer: the host vectors are overwritten from here on.
		in.consumed = true
		for _, v := range []struct {
			name string
			v    []fr.Element
		}{{"a", in.a}, {"b", in.b}, {"c", in.c}} {
			if err := upload(v.name, a.p, v.v); err != nil {
				return err
			}
			if err := kernel("ntt to coset "+v.name, []devRange{a}, func() (time.Duration, error) {
				return dom.Transform(ctx, a.p, NTTToCoset)
			}); err != nil {
				return err
			}
			t0 := time.Now()
			if err := CopyDeviceToHost(run.Ordinal, unsafe.Pointer(&v.v[0]), a.p, uint64(len(v.v))*FrBytes); err != nil {
				return fmt.Errorf("downloading %s: %w", v.name, err)
			}
			slog.add("download "+v.name, time.Since(t0))
		}
		t0 := time.Now()
		zInv := dom.ZInv()
		parallelRange(len(in.a), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				in.a[i].Mul(&in.a[i], &in.b[i]).Sub(&in.a[i], &in.c[i]).Mul(&in.a[i], &zInv)
			}
		})
		slog.add("a·b−c (cpu)", time.Since(t0))
		if err := upload("a·b−c", a.p, in.a); err != nil {
			return err
		}
		return kernel("ntt coset inverse", []devRange{a}, func() (time.Duration, error) {
			return dom.Transform(ctx, a.p, NTTCosetInverse)
		})
	}
}
