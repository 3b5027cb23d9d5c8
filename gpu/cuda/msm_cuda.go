//go:build cuda

package cuda

/*
#include "snarkd.h"
*/
import "C"

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/gpu"
)

// The native curve codes agree with Curve's values.
var _ = [1]int{}[gpu.G1-C.SNARKD_CURVE_G1]
var _ = [1]int{}[gpu.G2-C.SNARKD_CURVE_G2]

func curveName(c gpu.Curve) string {
	if c == gpu.G2 {
		return "G2"
	}
	return "G1"
}

// MSMRequest describes one multi-scalar multiplication Σ scalars[i]·points[i] over N terms.
// Points (gnark-crypto affine layout) and scalars (fr.Element, Montgomery form) each live either
// on the device or in host memory; host memory is streamed to the device in double-buffered
// chunks on a copy stream (page-locked memory, see AllocPinned, moves at full PCIe speed).
type MSMRequest struct {
	N int
	// PointsDevice holds N affine points on the device; when zero, G1Host or G2Host is used.
	PointsDevice gpu.DevicePtr
	G1Host       []bls12381.G1Affine
	G2Host       []bls12381.G2Affine
	// ScalarsDevice holds N fr.Elements on the device; when zero, ScalarsHost is used.
	ScalarsDevice gpu.DevicePtr
	ScalarsHost   []fr.Element
	// Split01 sums the points whose scalar is exactly 1 by batch addition and drops scalars 0,
	// so only the other scalars enter the bucket method (Filecoin's 0/1-heavy witnesses).
	Split01 bool
	// WindowBits is the signed-digit window (4..24); 0 chooses by size (wider for dense MSMs).
	WindowBits uint
	// ChunkLog is log2 of the points per chunk; 0 chooses (2^26 resident, 2^22 streamed).
	ChunkLog uint
	// Workspace, when non-zero, is device scratch of at least MSMWorkspaceBytes bytes; when
	// zero, the call allocates it from mem and frees it before returning.
	Workspace gpu.DevicePtr
}

// MSMStats reports how an MSM ran.
type MSMStats struct {
	DeviceTime time.Duration // CUDA events around the device work (copies included)
	WindowBits uint
	Windows    uint
	Workspace  uint64
	// BucketTerms is how many terms entered the buckets: with Split01, the scalars other than
	// 0 and 1 (what the window of the next MSM of the same kind should be sized for).
	BucketTerms uint64
}

func (r *MSMRequest) plan(ordinal int, curve gpu.Curve) (C.snarkd_msm_plan, error) {
	var p C.snarkd_msm_plan
	if r.N <= 0 {
		return p, fmt.Errorf("gpu: MSM of %d terms", r.N)
	}
	p.window_bits = C.uint32_t(r.WindowBits)
	p.chunk_log = C.uint32_t(r.ChunkLog)
	var flags uint32
	if r.PointsDevice == 0 {
		flags |= C.SNARKD_MSM_POINTS_ON_HOST
	}
	if r.ScalarsDevice == 0 {
		flags |= C.SNARKD_MSM_SCALARS_ON_HOST
	}
	if r.Split01 {
		flags |= C.SNARKD_MSM_SPLIT01
	}
	p.flags = C.uint32_t(flags)
	err := check(fmt.Sprintf("msm %s plan (%d terms)", curveName(curve), r.N),
		C.snarkd_msm_plan_make(C.int32_t(ordinal), C.int32_t(curve), C.uint64_t(r.N), &p))
	return p, err
}

// MSMWorkspaceBytes is the device scratch an MSM of this shape needs.
func MSMWorkspaceBytes(ordinal int, curve gpu.Curve, r *MSMRequest) (uint64, error) {
	p, err := r.plan(ordinal, curve)
	if err != nil {
		return 0, err
	}
	return uint64(p.workspace_bytes), nil
}

// run executes the plan and returns the raw partial sums (extended Jacobian).
func (r *MSMRequest) run(ctx context.Context, ordinal int, mem DeviceMemory, curve gpu.Curve, out func(n int) unsafe.Pointer) (C.snarkd_msm_plan, MSMStats, error) {
	var st MSMStats
	if err := ctx.Err(); err != nil {
		return C.snarkd_msm_plan{}, st, err
	}
	p, err := r.plan(ordinal, curve)
	if err != nil {
		return p, st, err
	}
	var pts, scs unsafe.Pointer
	switch {
	case r.PointsDevice != 0:
		pts = devPtr(r.PointsDevice)
	case curve == gpu.G1 && len(r.G1Host) >= r.N:
		pts = unsafe.Pointer(&r.G1Host[0])
	case curve == gpu.G2 && len(r.G2Host) >= r.N:
		pts = unsafe.Pointer(&r.G2Host[0])
	default:
		return p, st, fmt.Errorf("gpu: MSM %s needs %d points on the device or the host", curveName(curve), r.N)
	}
	switch {
	case r.ScalarsDevice != 0:
		scs = devPtr(r.ScalarsDevice)
	case len(r.ScalarsHost) >= r.N:
		scs = unsafe.Pointer(&r.ScalarsHost[0])
	default:
		return p, st, fmt.Errorf("gpu: MSM %s needs %d scalars on the device or the host", curveName(curve), r.N)
	}
	ws := r.Workspace
	if ws == 0 {
		ws, err = mem.Alloc(uint64(p.workspace_bytes))
		if err != nil {
			return p, st, fmt.Errorf("gpu: MSM %s workspace (%s): %w", curveName(curve), gpu.FormatBytes(uint64(p.workspace_bytes)), err)
		}
		defer mem.Free(ws)
	}
	var ms C.float
	var terms C.uint64_t
	if err := check(fmt.Sprintf("msm %s (%d terms)", curveName(curve), r.N),
		C.snarkd_msm_run(C.int32_t(ordinal), C.int32_t(curve), &p, pts, scs, devPtr(ws), out(int(p.out_points)), &ms, &terms)); err != nil {
		return p, st, err
	}
	st = MSMStats{DeviceTime: msDuration(float64(ms)), WindowBits: uint(p.window_bits),
		Windows: uint(p.num_windows), Workspace: uint64(p.workspace_bytes), BucketTerms: uint64(terms)}
	return p, st, nil
}

// jacobian is the group arithmetic combineWindows needs: *bls12381.G1Jac or *bls12381.G2Jac.
type jacobian[J any] interface {
	*J
	DoubleAssign() *J
	AddAssign(*J) *J
}

// combineWindows sums the kernel's partial results on the host: per window (top first) c
// doublings then the window's block sums, then the scalar-1 partial sums after the windows.
// inf is the group's identity.
func combineWindows[J any, PJ jacobian[J]](p C.snarkd_msm_plan, parts []J, inf J) J {
	w, bpw := int(p.num_windows), int(p.blocks_per_window)
	res := inf
	for wi := w - 1; wi >= 0; wi-- {
		for i := 0; i < int(p.window_bits); i++ {
			PJ(&res).DoubleAssign()
		}
		for b := 0; b < bpw; b++ {
			PJ(&res).AddAssign(&parts[wi*bpw+b])
		}
	}
	for i := w * bpw; i < len(parts); i++ {
		PJ(&res).AddAssign(&parts[i])
	}
	return res
}

// msmOn runs r on the device and combines its partial results: X is the kernel's XYZZ point
// type, toJac its conversion, inf the group's identity.
func msmOn[X any, J any, PJ jacobian[J]](ctx context.Context, ordinal int, mem DeviceMemory, r *MSMRequest,
	curve gpu.Curve, toJac func(*X) J, inf J) (J, MSMStats, error) {
	var parts []X
	p, st, err := r.run(ctx, ordinal, mem, curve, func(n int) unsafe.Pointer {
		parts = make([]X, n)
		return unsafe.Pointer(&parts[0])
	})
	if err != nil {
		var zero J
		return zero, st, err
	}
	jac := make([]J, len(parts))
	for i := range parts {
		jac[i] = toJac(&parts[i])
	}
	return combineWindows[J, PJ](p, jac, inf), st, nil
}

// MSMG1 computes Σ scalars[i]·points[i] in G1 on device ordinal, with scratch from mem.
func MSMG1(ctx context.Context, ordinal int, mem DeviceMemory, r *MSMRequest) (bls12381.G1Jac, MSMStats, error) {
	var inf bls12381.G1Jac
	inf.X.SetOne()
	inf.Y.SetOne()
	return msmOn(ctx, ordinal, mem, r, gpu.G1, (*g1XYZZ).jac, inf)
}

// MSMG2 computes Σ scalars[i]·points[i] in G2 on device ordinal, with scratch from mem.
func MSMG2(ctx context.Context, ordinal int, mem DeviceMemory, r *MSMRequest) (bls12381.G2Jac, MSMStats, error) {
	var inf bls12381.G2Jac
	inf.X.SetOne()
	inf.Y.SetOne()
	return msmOn(ctx, ordinal, mem, r, gpu.G2, (*g2XYZZ).jac, inf)
}
