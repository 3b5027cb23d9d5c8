// Field and curve self-test entry point (snarkd_arith_test): the same arithmetic source runs on
// the host and on the device, so Go tests check both against gnark-crypto.
//
// Element sizes: Fr ops 32 B in/out; Fp 48 B; Fp2 96 B; G1 ops take affine points (96 B) and
// write extended-Jacobian points (192 B); G2 ops 192 B in, 384 B out.
#include "curve.cuh"
#include "error.cuh"

namespace snarkd {
snarkd_status select_device(int32_t ordinal);
}

namespace {
using namespace snarkd;

template <class A>
SNARKD_HD xyzz_t<decltype(A::x)> mix(const A &a, const A &b) {
    using P = xyzz_t<decltype(A::x)>;
    P d = P::from_affine(a).dbl();
    P s = P::from_affine(a);
    s.add_affine(b);
    d.add(s);
    return d;
}

SNARKD_HD void apply(int op, const void *a, const void *b, void *out, size_t i) {
    switch (op) {
        case SNARKD_ARITH_FR_MUL:
            ((fr_t *)out)[i] = ((const fr_t *)a)[i] * ((const fr_t *)b)[i];
            break;
        case SNARKD_ARITH_FR_ADD:
            ((fr_t *)out)[i] = ((const fr_t *)a)[i] + ((const fr_t *)b)[i];
            break;
        case SNARKD_ARITH_FR_SUB:
            ((fr_t *)out)[i] = ((const fr_t *)a)[i] - ((const fr_t *)b)[i];
            break;
        case SNARKD_ARITH_FR_FROM_MONT:
            ((fr_t *)out)[i] = ((const fr_t *)a)[i].from_mont();
            break;
        case SNARKD_ARITH_FR_SQR:
            ((fr_t *)out)[i] = ((const fr_t *)a)[i].sqr();
            break;
        case SNARKD_ARITH_FP_SQR:
            ((fp_t *)out)[i] = ((const fp_t *)a)[i].sqr();
            break;
        case SNARKD_ARITH_FP_MUL_SUB: {
            const fp_t x = ((const fp_t *)a)[i], y = ((const fp_t *)b)[i];
            ((fp_t *)out)[i] = fp_t::mul_sub(x, y, x + y, x - y);
            break;
        }
        case SNARKD_ARITH_FP_MUL:
            ((fp_t *)out)[i] = ((const fp_t *)a)[i] * ((const fp_t *)b)[i];
            break;
        case SNARKD_ARITH_FP_ADD:
            ((fp_t *)out)[i] = ((const fp_t *)a)[i] + ((const fp_t *)b)[i];
            break;
        case SNARKD_ARITH_FP_SUB:
            ((fp_t *)out)[i] = ((const fp_t *)a)[i] - ((const fp_t *)b)[i];
            break;
        case SNARKD_ARITH_FP2_MUL:
            ((fp2_t *)out)[i] = ((const fp2_t *)a)[i] * ((const fp2_t *)b)[i];
            break;
        case SNARKD_ARITH_FP2_SQR:
            ((fp2_t *)out)[i] = ((const fp2_t *)a)[i].sqr();
            break;
        case SNARKD_ARITH_G1_MADD: {
            g1_xyzz r = g1_xyzz::from_affine(((const g1_affine *)a)[i]);
            r.add_affine(((const g1_affine *)b)[i]);
            ((g1_xyzz *)out)[i] = r;
            break;
        }
        case SNARKD_ARITH_G1_MIX:
            ((g1_xyzz *)out)[i] = mix(((const g1_affine *)a)[i], ((const g1_affine *)b)[i]);
            break;
        case SNARKD_ARITH_G2_MADD: {
            g2_xyzz r = g2_xyzz::from_affine(((const g2_affine *)a)[i]);
            r.add_affine(((const g2_affine *)b)[i]);
            ((g2_xyzz *)out)[i] = r;
            break;
        }
        case SNARKD_ARITH_G2_MIX:
            ((g2_xyzz *)out)[i] = mix(((const g2_affine *)a)[i], ((const g2_affine *)b)[i]);
            break;
        default:
            break;
    }
}

__global__ void arith_kernel(int op, const void *a, const void *b, void *out, size_t count) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) apply(op, a, b, out, i);
}
}  // namespace

extern "C" snarkd_status snarkd_arith_test(int32_t ordinal, int32_t on_device, int32_t op,
                                           const void *a, const void *b, void *out,
                                           size_t count) {
    if (op < SNARKD_ARITH_FR_MUL || op > SNARKD_ARITH_FP_MUL_SUB || a == nullptr ||
        b == nullptr || out == nullptr) {
        snarkd::set_last_error("arith_test: bad op %d or null buffer", op);
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    if (!on_device) {
        for (size_t i = 0; i < count; i++) apply(op, a, b, out, i);
        return SNARKD_OK;
    }
    snarkd_status st = snarkd::select_device(ordinal);
    if (st != SNARKD_OK) return st;
    if (count == 0) return SNARKD_OK;
    unsigned blocks = (unsigned)((count + 127) / 128);
    arith_kernel<<<blocks, 128>>>(op, a, b, out, count);
    SNARKD_CHECK(cudaGetLastError());
    SNARKD_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    return SNARKD_OK;
}
