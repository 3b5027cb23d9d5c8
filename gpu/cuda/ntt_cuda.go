//go:build cuda

package cuda

/*
#include "snarkd.h"
*/
import "C"

import (
	"context"
	"fmt"
	"math/big"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/snarkd/snarkd/gpu"
)

// NTTKind selects the transform of NTTDomain.Transform.
type NTTKind int

// Transforms, all in place with natural order in and out. Coset transforms use gnark-crypto's
// multiplicative generator g = 7, as bellperson does.
const (
	// NTTForward maps coefficients to evaluations on the subgroup H.
	NTTForward NTTKind = C.SNARKD_NTT_FORWARD
	// NTTInverse maps evaluations on H to coefficients.
	NTTInverse NTTKind = C.SNARKD_NTT_INVERSE
	// NTTCosetForward maps coefficients to evaluations on g·H.
	NTTCosetForward NTTKind = C.SNARKD_NTT_COSET_FORWARD
	// NTTCosetInverse maps evaluations on g·H to coefficients.
	NTTCosetInverse NTTKind = C.SNARKD_NTT_COSET_INVERSE
	// NTTToCoset maps evaluations on H to evaluations on g·H (one vector's part of the H step).
	NTTToCoset NTTKind = C.SNARKD_NTT_TO_COSET
)

func (k NTTKind) String() string {
	switch k {
	case NTTForward:
		return "forward"
	case NTTInverse:
		return "inverse"
	case NTTCosetForward:
		return "coset forward"
	case NTTCosetInverse:
		return "coset inverse"
	case NTTToCoset:
		return "to coset"
	}
	return fmt.Sprintf("NTTKind(%d)", int(k))
}

// MaxNTTLog is the largest supported domain, 2^28 elements.
const MaxNTTLog = C.SNARKD_NTT_MAX_LG

// NTTDomainBytes is the device memory a domain of 2^logN elements holds (twiddle tables); a
// compact domain leaves out the omega tables (2^logN elements).
func NTTDomainBytes(logN uint, compact bool) uint64 {
	return uint64(C.snarkd_ntt_domain_bytes(C.uint32_t(logN), cBool(compact)))
}

func cBool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

// NTTDomain is a radix-2 evaluation domain of size 2^LogN with its twiddle tables resident on
// one device. Data buffers of 2^LogN fr.Elements (gnark-crypto layout) are transformed in place.
// A compact domain holds 2^LogN elements less of tables, and its largest passes compute
// their twiddles instead of loading them.
type NTTDomain struct {
	LogN    uint
	Compact bool
	ordinal int
	mem     DeviceMemory
	buf     gpu.DevicePtr
	c       C.snarkd_ntt_domain
}

func frWords(e *fr.Element) [4]C.uint64_t {
	return [4]C.uint64_t{C.uint64_t(e[0]), C.uint64_t(e[1]), C.uint64_t(e[2]), C.uint64_t(e[3])}
}

// NewNTTDomain allocates the domain's tables, full or compact, from mem on device ordinal and
// fills them.
func NewNTTDomain(ordinal int, mem DeviceMemory, logN uint, compact bool) (*NTTDomain, error) {
	if logN < 1 || logN > MaxNTTLog {
		return nil, fmt.Errorf("gpu: NTT domain 2^%d outside 2^1..2^%d", logN, MaxNTTLog)
	}
	n := uint64(1) << logN
	omega, err := fft.Generator(n)
	if err != nil {
		return nil, fmt.Errorf("gpu: NTT domain 2^%d: %w", logN, err)
	}
	var omegaInv, g, gInv, nInv, zInv fr.Element
	omegaInv.Inverse(&omega)
	g = fft.GeneratorFullMultiplicativeGroup()
	gInv.Inverse(&g)
	nInv.SetUint64(n).Inverse(&nInv)
	// Z on the coset: g^n - 1.
	zInv.Exp(g, new(big.Int).SetUint64(n))
	var one fr.Element
	one.SetOne()
	zInv.Sub(&zInv, &one).Inverse(&zInv)

	ls := (logN + 1) / 2
	m := 1 << ls
	tables := make([]fr.Element, 8*m)
	for ti, x := range []fr.Element{omega, omegaInv, g, gInv} {
		lo := tables[2*ti*m : (2*ti+1)*m]
		hi := tables[(2*ti+1)*m : (2*ti+2)*m]
		lo[0].SetOne()
		for j := 1; j < m; j++ {
			lo[j].Mul(&lo[j-1], &x)
		}
		var step fr.Element
		step.Mul(&lo[m-1], &x) // x^(2^ls)
		hi[0].SetOne()
		for j := 1; j < m; j++ {
			hi[j].Mul(&hi[j-1], &step)
		}
	}

	size := NTTDomainBytes(logN, compact)
	buf, err := mem.Alloc(size)
	if err != nil {
		return nil, fmt.Errorf("gpu: NTT domain 2^%d tables (%s): %w", logN, gpu.FormatBytes(size), err)
	}
	d := &NTTDomain{LogN: logN, Compact: compact, ordinal: ordinal, mem: mem, buf: buf}
	nw, zw := frWords(&nInv), frWords(&zInv)
	if err := check("ntt domain init", C.snarkd_ntt_domain_init(C.int32_t(ordinal), C.uint32_t(logN),
		cBool(compact), devPtr(buf), unsafe.Pointer(&tables[0]), &nw[0], &zw[0], &d.c)); err != nil {
		_ = mem.Free(buf)
		return nil, err
	}
	return d, nil
}

// Close frees the domain's tables.
func (d *NTTDomain) Close() error {
	if d.buf == 0 {
		return nil
	}
	err := d.mem.Free(d.buf)
	d.buf = 0
	return err
}

// Size is the number of elements, 2^LogN.
func (d *NTTDomain) Size() int { return 1 << d.LogN }

// Transform runs an NTT in place on data (2^LogN fr.Elements on the domain's device) and
// returns the device time it took (CUDA events).
func (d *NTTDomain) Transform(ctx context.Context, data gpu.DevicePtr, kind NTTKind) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var ms C.float
	if err := check("ntt "+kind.String(), C.snarkd_ntt(C.int32_t(d.ordinal), &d.c, devPtr(data), C.int32_t(kind), &ms)); err != nil {
		return 0, err
	}
	return msDuration(float64(ms)), nil
}

// ComputeH runs the Groth16 H step on the evaluations a, b, c (each 2^LogN fr.Elements on the
// device): afterwards a holds the coefficients of (A·B − C)/Z, computed on the coset g·H; b and
// c are clobbered. Returns the device time.
func (d *NTTDomain) ComputeH(ctx context.Context, a, b, c gpu.DevicePtr) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var ms C.float
	if err := check("ntt H step", C.snarkd_ntt_h(C.int32_t(d.ordinal), &d.c, devPtr(a), devPtr(b), devPtr(c), &ms)); err != nil {
		return 0, err
	}
	return msDuration(float64(ms)), nil
}

// HCombine is a pointwise step of an H step that holds fewer than three vectors on the device.
type HCombine int

// Pointwise steps for NTTDomain.Combine.
const (
	// HMul sets a to a·b.
	HMul HCombine = C.SNARKD_H_MUL
	// HSubDivZ sets a to (a − b)/Z on the coset.
	HSubDivZ HCombine = C.SNARKD_H_SUB_DIV_Z
)

// Combine runs one pointwise step on the coset evaluations a and b (2^LogN fr.Elements each
// on the device); a receives the result.
func (d *NTTDomain) Combine(ctx context.Context, a, b gpu.DevicePtr, op HCombine) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var ms C.float
	if err := check("ntt H combine", C.snarkd_ntt_h_combine(C.int32_t(d.ordinal), &d.c, devPtr(a), devPtr(b), C.int32_t(op), &ms)); err != nil {
		return 0, err
	}
	return msDuration(float64(ms)), nil
}

// ZInv returns 1/Z on the coset, 1/(g^n − 1), as the domain holds it.
func (d *NTTDomain) ZInv() fr.Element {
	var z fr.Element
	for i := range z {
		z[i] = uint64(d.c.z_inv[i])
	}
	return z
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
