// Radix-2 NTT over BLS12-381 Fr on device buffers, in place.
//
// Forward transforms run decimation in frequency (natural in, bit-reversed out), inverse
// transforms of the H step decimation in time (bit-reversed in, natural out). Stages whose
// butterfly span is at least 2^SMEM_LG run as global passes of RADIX_LG stages each (every
// thread holds 2^RADIX_LG elements in registers); the last SMEM_LG stages run in shared memory on
// contiguous chunks. Twiddles come from full tables omega^k, k < n/2, expanded once per domain.
// A global pass loads one twiddle of its own per thread and derives the others of its R stages
// from it and from a few roots of unity that every thread shares (reading each from the table
// meant 2^R - 1 loads per thread scattered over gigabytes). The shared-memory stages read theirs
// from a copy of the 2^(SMEM_LG-1) they use, loaded into shared memory once per block.
#include <algorithm>

#include "field.cuh"
#include "error.cuh"

namespace snarkd {
snarkd_status select_device(int32_t ordinal);
}

namespace {
using namespace snarkd;

constexpr int SMEM_LG = 10;  // elements per shared-memory chunk: 2^10 (32 KiB, and 16 KiB of twiddles)
constexpr int GLOBAL_THREADS = 256;
// Radix-8 passes hold 8 elements and the stage's twiddles per thread: 128-thread blocks capped at
// 168 registers fit three per SM without spills (at 128 registers the twiddles spilled).
constexpr int PASS_THREADS = 128;
constexpr int PASS_MIN_BLOCKS = 3;

__device__ __forceinline__ uint32_t bitrev(uint32_t x, uint32_t lg) {
    return lg == 0 ? 0 : (__brev(x) >> (32 - lg));
}

// out[k] = hi[k >> ls] * lo[k & (2^ls - 1)] for k < count.
__global__ void expand_powers(fr_t *out, const fr_t *lo, const fr_t *hi, uint32_t ls,
                              size_t count) {
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    out[k] = hi[k >> ls] * lo[k & ((1u << ls) - 1)];
}

// Twiddles of a global pass of R stages (lg_low = log of the smallest span). Stage d (span
// 2^(lg_low + d)) pairs x[k] with x[k + 2^d] for k with bit d clear, and multiplies by
// omega_{2^(lg_low+d+1)}^(low + (k mod 2^d)·2^lg_low) = u_d · omega_{2^(d+1)}^(k mod 2^d), with
// u_d = u^(2^(R-1-d)) and u = omega_{2^(lg_low+R)}^low: one load per thread (u) and a few
// products replace 2^R - 1 loads scattered over the 2^(n-1)-entry table. tw[e] = omega_n^e.
__device__ __forceinline__ fr_t pass_base(const fr_t *tw, uint32_t lg_n, uint32_t lg_low, int r,
                                          size_t low) {
    return tw[low << (lg_n - lg_low - r)];
}

// w[m] = ud · omega_{2^(d+1)}^m for m < 2^d (the roots are the same for every thread).
template <int R>
__device__ __forceinline__ void stage_twiddles(fr_t (&w)[1 << (R - 1)], const fr_t &ud, int d,
                                               const fr_t *tw, uint32_t lg_n) {
    w[0] = ud;
#pragma unroll
    for (int m = 1; m < (1 << (R - 1)); m++)
        if (m < (1 << d)) w[m] = ud * tw[(size_t)m << (lg_n - 1 - d)];
}

// One global pass of R DIF stages: spans 2^(lg_low + R - 1) down to 2^lg_low.
template <int R>
__global__ void __launch_bounds__(PASS_THREADS, PASS_MIN_BLOCKS) dif_pass(fr_t *a, const fr_t *tw, uint32_t lg_n, uint32_t lg_low) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ((size_t)1 << (lg_n - R))) return;
    size_t low = t & (((size_t)1 << lg_low) - 1);
    size_t base = ((t >> lg_low) << (lg_low + R)) | low;
    fr_t x[1 << R];
#pragma unroll
    for (int k = 0; k < (1 << R); k++) x[k] = a[base + ((size_t)k << lg_low)];
    fr_t u = pass_base(tw, lg_n, lg_low, R, low);  // u_d for the current stage
#pragma unroll
    for (int s = 0; s < R; s++) {
        const int d = R - 1 - s;
        const int hs = 1 << d;
        fr_t w[1 << (R - 1)];
        stage_twiddles<R>(w, u, d, tw, lg_n);
#pragma unroll
        for (int k = 0; k < (1 << R); k++) {
            if (k & hs) continue;
            fr_t p = x[k], q = x[k + hs];
            x[k] = p + q;
            x[k + hs] = (p - q) * w[k & (hs - 1)];
        }
        if (d > 0) u = u * u;
    }
#pragma unroll
    for (int k = 0; k < (1 << R); k++) a[base + ((size_t)k << lg_low)] = x[k];
}

// One global pass of R DIT stages: spans 2^lg_low up to 2^(lg_low + R - 1).
template <int R>
__global__ void __launch_bounds__(PASS_THREADS, PASS_MIN_BLOCKS) dit_pass(fr_t *a, const fr_t *tw, uint32_t lg_n, uint32_t lg_low) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ((size_t)1 << (lg_n - R))) return;
    size_t low = t & (((size_t)1 << lg_low) - 1);
    size_t base = ((t >> lg_low) << (lg_low + R)) | low;
    fr_t x[1 << R];
#pragma unroll
    for (int k = 0; k < (1 << R); k++) x[k] = a[base + ((size_t)k << lg_low)];
    // Stages run d = 0 .. R-1 and need u^(2^(R-1)) first: keep the squares.
    fr_t ud[R];
    ud[R - 1] = pass_base(tw, lg_n, lg_low, R, low);
#pragma unroll
    for (int d = R - 2; d >= 0; d--) ud[d] = ud[d + 1] * ud[d + 1];
#pragma unroll
    for (int d = 0; d < R; d++) {
        const int hs = 1 << d;
        fr_t w[1 << (R - 1)];
        stage_twiddles<R>(w, ud[d], d, tw, lg_n);
#pragma unroll
        for (int k = 0; k < (1 << R); k++) {
            if (k & hs) continue;
            fr_t p = x[k];
            fr_t q = x[k + hs] * w[k & (hs - 1)];
            x[k] = p + q;
            x[k + hs] = p - q;
        }
    }
#pragma unroll
    for (int k = 0; k < (1 << R); k++) a[base + ((size_t)k << lg_low)] = x[k];
}

// The stages with spans 2^(lg_c - 1) .. 1 on chunks of 2^lg_c contiguous elements, in shared
// memory. blockDim.x = 2^(lg_c - 1). DIF runs spans downward, DIT upward. Every twiddle these
// stages use is a power of omega_{2^lg_c}; the block first copies omega_{2^lg_c}^k, k < blockDim,
// into shared memory (the same 2^(lg_c-1) table entries for every block, so they come from L2).
template <bool DIF>
__global__ void smem_stages(fr_t *a, const fr_t *tw, uint32_t lg_n, uint32_t lg_c) {
    extern __shared__ fr_t sh[];
    const uint32_t half = 1u << (lg_c - 1);
    fr_t *sw = sh + 2 * half;
    const uint32_t t = threadIdx.x;
    fr_t *chunk = a + ((size_t)blockIdx.x << lg_c);
    sh[t] = chunk[t];
    sh[t + half] = chunk[t + half];
    sw[t] = tw[(size_t)t << (lg_n - lg_c)];
    __syncthreads();
    for (uint32_t step = 0; step < lg_c; step++) {
        const uint32_t lg_h = DIF ? lg_c - 1 - step : step;
        const uint32_t h = 1u << lg_h;
        const uint32_t j = t & (h - 1);
        const uint32_t k = ((t >> lg_h) << (lg_h + 1)) | j;
        const fr_t w = sw[j << (lg_c - 1 - lg_h)];
        fr_t u = sh[k], v = sh[k + h];
        if (DIF) {
            sh[k] = u + v;
            sh[k + h] = (u - v) * w;
        } else {
            v = v * w;
            sh[k] = u + v;
            sh[k + h] = u - v;
        }
        __syncthreads();
    }
    chunk[t] = sh[t];
    chunk[t + half] = sh[t + half];
}

// Multiplies element p by c * x^e(p), x^e = hi[e >> ls] * lo[e & mask], where e(p) = p or
// bitrev(p). lo/hi may be null (then only c is applied).
__global__ void scale_powers(fr_t *a, uint32_t lg_n, const fr_t *lo, const fr_t *hi, uint32_t ls,
                             bool rev, fr_t c) {
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= ((size_t)1 << lg_n)) return;
    fr_t f = c;
    if (lo != nullptr) {
        uint32_t e = rev ? bitrev((uint32_t)p, lg_n) : (uint32_t)p;
        f = f * (hi[e >> ls] * lo[e & ((1u << ls) - 1)]);
    }
    a[p] = a[p] * f;
}

// In-place bit-reversal permutation, then element p (natural index) is multiplied by
// c * x^p when lo/hi are given, or by c when scale is set.
__global__ void bitrev_scale(fr_t *a, uint32_t lg_n, const fr_t *lo, const fr_t *hi, uint32_t ls,
                             bool scale, fr_t c) {
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= ((size_t)1 << lg_n)) return;
    size_t q = bitrev((uint32_t)p, lg_n);
    if (q < p) return;
    fr_t vp = a[p], vq = a[q];
    if (scale) {
        fr_t fp_ = c, fq = c;
        if (lo != nullptr) {
            const uint32_t mask = (1u << ls) - 1;
            fp_ = fp_ * (hi[p >> ls] * lo[p & mask]);
            fq = fq * (hi[q >> ls] * lo[q & mask]);
        }
        // After the swap, position p holds vq and position q holds vp.
        vq = vq * fp_;
        vp = vp * fq;
    }
    a[p] = vq;
    a[q] = vp;
}

// a = (a * b - c) * z
__global__ void h_pointwise(fr_t *a, const fr_t *b, const fr_t *c, uint32_t lg_n, fr_t z) {
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= ((size_t)1 << lg_n)) return;
    a[p] = (a[p] * b[p] - c[p]) * z;
}

// a <- a*b (op SNARKD_H_MUL) or a <- (a - b)*z (SNARKD_H_SUB_DIV_Z).
__global__ void h_combine(fr_t *a, const fr_t *b, uint32_t lg_n, int32_t op, fr_t z) {
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= ((size_t)1 << lg_n)) return;
    if (op == SNARKD_H_MUL)
        a[p] = a[p] * b[p];
    else
        a[p] = (a[p] - b[p]) * z;
}

struct tables {
    const fr_t *w_lo, *w_hi, *wi_lo, *wi_hi, *g_lo, *g_hi, *gi_lo, *gi_hi;
};

tables small_tables(const snarkd_ntt_domain *d) {
    const fr_t *s = (const fr_t *)d->small;
    const size_t m = (size_t)1 << d->lg_split;
    return {s, s + m, s + 2 * m, s + 3 * m, s + 4 * m, s + 5 * m, s + 6 * m, s + 7 * m};
}

// Shared memory of smem_stages: the chunk and half as many twiddles.
size_t smem_bytes(uint32_t lg_c) { return (sizeof(fr_t) << lg_c) + (sizeof(fr_t) << (lg_c - 1)); }

unsigned blocks_for(size_t n, unsigned threads) { return (unsigned)((n + threads - 1) / threads); }

fr_t load_fr(const uint64_t v[4]) {
    fr_t r;
    for (int i = 0; i < 4; i++) {
        r.v[2 * i] = (uint32_t)v[i];
        r.v[2 * i + 1] = (uint32_t)(v[i] >> 32);
    }
    return r;
}

// Global passes covering spans 2^hi_lg .. 2^lo_lg (hi_lg >= lo_lg), radix 8 where possible.
snarkd_status global_passes(fr_t *a, const fr_t *tw, uint32_t lg_n, int top, int bottom, bool dif,
                            cudaStream_t st) {
    int remaining = top - bottom + 1;
    int cur = dif ? top : bottom;  // next span to do
    while (remaining > 0) {
        int r = std::min(remaining, 3);
        uint32_t lg_low = dif ? (uint32_t)(cur - r + 1) : (uint32_t)cur;
        size_t threads = (size_t)1 << (lg_n - r);
        unsigned tb = (unsigned)std::min<size_t>(threads, PASS_THREADS);
        unsigned nb = blocks_for(threads, tb);
        if (dif) {
            if (r == 3) dif_pass<3><<<nb, tb, 0, st>>>(a, tw, lg_n, lg_low);
            if (r == 2) dif_pass<2><<<nb, tb, 0, st>>>(a, tw, lg_n, lg_low);
            if (r == 1) dif_pass<1><<<nb, tb, 0, st>>>(a, tw, lg_n, lg_low);
            cur -= r;
        } else {
            if (r == 3) dit_pass<3><<<nb, tb, 0, st>>>(a, tw, lg_n, lg_low);
            if (r == 2) dit_pass<2><<<nb, tb, 0, st>>>(a, tw, lg_n, lg_low);
            if (r == 1) dit_pass<1><<<nb, tb, 0, st>>>(a, tw, lg_n, lg_low);
            cur += r;
        }
        SNARKD_CHECK(cudaGetLastError());
        remaining -= r;
    }
    return SNARKD_OK;
}

// DIF over all lg_n stages with twiddle table tw: natural in, bit-reversed out.
snarkd_status run_dif(fr_t *a, const fr_t *tw, uint32_t lg_n, cudaStream_t st) {
    uint32_t lg_c = std::min<uint32_t>(lg_n, SMEM_LG);
    if (lg_n > lg_c) {
        snarkd_status s = global_passes(a, tw, lg_n, (int)lg_n - 1, (int)lg_c, true, st);
        if (s != SNARKD_OK) return s;
    }
    smem_stages<true><<<(unsigned)(1u << (lg_n - lg_c)), 1u << (lg_c - 1), smem_bytes(lg_c),
                        st>>>(a, tw, lg_n, lg_c);
    SNARKD_CHECK(cudaGetLastError());
    return SNARKD_OK;
}

// DIT over all stages: bit-reversed in, natural out.
snarkd_status run_dit(fr_t *a, const fr_t *tw, uint32_t lg_n, cudaStream_t st) {
    uint32_t lg_c = std::min<uint32_t>(lg_n, SMEM_LG);
    smem_stages<false><<<(unsigned)(1u << (lg_n - lg_c)), 1u << (lg_c - 1), smem_bytes(lg_c),
                         st>>>(a, tw, lg_n, lg_c);
    SNARKD_CHECK(cudaGetLastError());
    if (lg_n > lg_c) return global_passes(a, tw, lg_n, (int)lg_n - 1, (int)lg_c, false, st);
    return SNARKD_OK;
}

struct event_timer {
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaStream_t st = nullptr;
    float *out;
    explicit event_timer(float *o) : out(o) {}
    snarkd_status begin() {
        SNARKD_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        if (out) {
            SNARKD_CHECK(cudaEventCreate(&start));
            SNARKD_CHECK(cudaEventCreate(&stop));
            SNARKD_CHECK(cudaEventRecord(start, st));
        }
        return SNARKD_OK;
    }
    snarkd_status end() {
        if (out) SNARKD_CHECK(cudaEventRecord(stop, st));
        SNARKD_CHECK(cudaStreamSynchronize(st));
        if (out) SNARKD_CHECK(cudaEventElapsedTime(out, start, stop));
        return SNARKD_OK;
    }
    ~event_timer() {
        if (st) {
            cudaStreamSynchronize(st);
            cudaStreamDestroy(st);
        }
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
    }
};

snarkd_status ntt_body(const snarkd_ntt_domain *d, fr_t *a, int32_t kind, cudaStream_t st) {
    const uint32_t lg_n = d->lg_n;
    const size_t n = (size_t)1 << lg_n;
    const tables tb = small_tables(d);
    const uint32_t ls = d->lg_split;
    const unsigned nb = blocks_for(n, GLOBAL_THREADS);
    const fr_t n_inv = load_fr(d->n_inv);
    snarkd_status s;
    switch (kind) {
        case SNARKD_NTT_FORWARD:
        case SNARKD_NTT_COSET_FORWARD:
            if (kind == SNARKD_NTT_COSET_FORWARD) {
                scale_powers<<<nb, GLOBAL_THREADS, 0, st>>>(a, lg_n, tb.g_lo, tb.g_hi, ls, false,
                                                            fr_t::one());
                SNARKD_CHECK(cudaGetLastError());
            }
            if ((s = run_dif(a, (const fr_t *)d->fwd, lg_n, st)) != SNARKD_OK) return s;
            bitrev_scale<<<nb, GLOBAL_THREADS, 0, st>>>(a, lg_n, nullptr, nullptr, ls, false,
                                                        fr_t::one());
            SNARKD_CHECK(cudaGetLastError());
            return SNARKD_OK;
        case SNARKD_NTT_INVERSE:
        case SNARKD_NTT_COSET_INVERSE: {
            if ((s = run_dif(a, (const fr_t *)d->inv, lg_n, st)) != SNARKD_OK) return s;
            bool coset = kind == SNARKD_NTT_COSET_INVERSE;
            bitrev_scale<<<nb, GLOBAL_THREADS, 0, st>>>(a, lg_n, coset ? tb.gi_lo : nullptr,
                                                        coset ? tb.gi_hi : nullptr, ls, true,
                                                        n_inv);
            SNARKD_CHECK(cudaGetLastError());
            return SNARKD_OK;
        }
        case SNARKD_NTT_TO_COSET:
            // Evaluations -> coefficients (bit-reversed, unscaled), then coefficient i (at
            // position bitrev(i)) times g^i / n, then DIT back to natural-order evaluations on g*H.
            if ((s = run_dif(a, (const fr_t *)d->inv, lg_n, st)) != SNARKD_OK) return s;
            scale_powers<<<nb, GLOBAL_THREADS, 0, st>>>(a, lg_n, tb.g_lo, tb.g_hi, ls, true, n_inv);
            SNARKD_CHECK(cudaGetLastError());
            return run_dit(a, (const fr_t *)d->fwd, lg_n, st);
        default:
            snarkd::set_last_error("ntt: unknown kind %d", kind);
            return SNARKD_ERR_INVALID_ARGUMENT;
    }
}

snarkd_status check_domain(const snarkd_ntt_domain *d, const void *data) {
    if (d == nullptr || data == nullptr || d->lg_n < 1 || d->lg_n > SNARKD_NTT_MAX_LG ||
        d->fwd == nullptr || d->inv == nullptr || d->small == nullptr ||
        d->lg_split != (d->lg_n + 1) / 2) {
        snarkd::set_last_error("ntt: invalid domain or buffer");
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    return SNARKD_OK;
}
}  // namespace

extern "C" size_t snarkd_ntt_domain_bytes(uint32_t lg_n) {
    if (lg_n < 1 || lg_n > SNARKD_NTT_MAX_LG) return 0;
    size_t half = (size_t)1 << (lg_n - 1);
    size_t small = (size_t)8 << ((lg_n + 1) / 2);
    return (2 * half + small) * sizeof(fr_t);
}

extern "C" snarkd_status snarkd_ntt_domain_init(int32_t ordinal, uint32_t lg_n, void *dev_buf,
                                                const void *host_tables, const uint64_t n_inv[4],
                                                const uint64_t z_inv[4],
                                                snarkd_ntt_domain *out) {
    if (lg_n < 1 || lg_n > SNARKD_NTT_MAX_LG || dev_buf == nullptr || host_tables == nullptr ||
        out == nullptr || n_inv == nullptr || z_inv == nullptr) {
        snarkd::set_last_error("ntt_domain_init: bad arguments (lg_n %u)", lg_n);
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    snarkd_status s = snarkd::select_device(ordinal);
    if (s != SNARKD_OK) return s;
    const size_t half = (size_t)1 << (lg_n - 1);
    const uint32_t ls = (lg_n + 1) / 2;
    const size_t m = (size_t)1 << ls;
    fr_t *fwd = (fr_t *)dev_buf;
    fr_t *inv = fwd + half;
    fr_t *small = inv + half;
    SNARKD_CHECK(cudaMemcpy(small, host_tables, 8 * m * sizeof(fr_t), cudaMemcpyHostToDevice));
    unsigned nb = blocks_for(half, GLOBAL_THREADS);
    expand_powers<<<nb, GLOBAL_THREADS>>>(fwd, small, small + m, ls, half);
    SNARKD_CHECK(cudaGetLastError());
    expand_powers<<<nb, GLOBAL_THREADS>>>(inv, small + 2 * m, small + 3 * m, ls, half);
    SNARKD_CHECK(cudaGetLastError());
    // Wait for this domain's kernels only: the legacy stream does not wait for the workers'
    // non-blocking streams, and a device-wide synchronize would wait for their kernels too.
    SNARKD_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    out->lg_n = lg_n;
    out->lg_split = ls;
    out->fwd = fwd;
    out->inv = inv;
    out->small = small;
    for (int i = 0; i < 4; i++) {
        out->n_inv[i] = n_inv[i];
        out->z_inv[i] = z_inv[i];
    }
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_ntt(int32_t ordinal, const snarkd_ntt_domain *d, void *data,
                                    int32_t kind, float *elapsed_ms) {
    snarkd_status s = check_domain(d, data);
    if (s != SNARKD_OK) return s;
    if ((s = snarkd::select_device(ordinal)) != SNARKD_OK) return s;
    event_timer tm(elapsed_ms);
    if ((s = tm.begin()) != SNARKD_OK) return s;
    if ((s = ntt_body(d, (fr_t *)data, kind, tm.st)) != SNARKD_OK) return s;
    return tm.end();
}

extern "C" snarkd_status snarkd_ntt_h(int32_t ordinal, const snarkd_ntt_domain *d, void *a,
                                      void *b, void *c, float *elapsed_ms) {
    snarkd_status s = check_domain(d, a);
    if (s != SNARKD_OK) return s;
    if (b == nullptr || c == nullptr) return SNARKD_ERR_INVALID_ARGUMENT;
    if ((s = snarkd::select_device(ordinal)) != SNARKD_OK) return s;
    event_timer tm(elapsed_ms);
    if ((s = tm.begin()) != SNARKD_OK) return s;
    const uint32_t lg_n = d->lg_n;
    const size_t n = (size_t)1 << lg_n;
    const unsigned nb = blocks_for(n, GLOBAL_THREADS);
    const fr_t z_inv = load_fr(d->z_inv);
    fr_t *vec[3] = {(fr_t *)a, (fr_t *)b, (fr_t *)c};
    for (fr_t *x : vec)
        if ((s = ntt_body(d, x, SNARKD_NTT_TO_COSET, tm.st)) != SNARKD_OK) return s;
    h_pointwise<<<nb, GLOBAL_THREADS, 0, tm.st>>>(vec[0], vec[1], vec[2], lg_n, z_inv);
    SNARKD_CHECK(cudaGetLastError());
    if ((s = ntt_body(d, vec[0], SNARKD_NTT_COSET_INVERSE, tm.st)) != SNARKD_OK) return s;
    return tm.end();
}

extern "C" snarkd_status snarkd_ntt_h_combine(int32_t ordinal, const snarkd_ntt_domain *d, void *a,
                                              const void *b, int32_t op, float *elapsed_ms) {
    snarkd_status s = check_domain(d, a);
    if (s != SNARKD_OK) return s;
    if (b == nullptr || (op != SNARKD_H_MUL && op != SNARKD_H_SUB_DIV_Z)) {
        snarkd::set_last_error("ntt_h_combine: bad arguments (op %d)", op);
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    if ((s = snarkd::select_device(ordinal)) != SNARKD_OK) return s;
    event_timer tm(elapsed_ms);
    if ((s = tm.begin()) != SNARKD_OK) return s;
    const uint32_t lg_n = d->lg_n;
    h_combine<<<blocks_for((size_t)1 << lg_n, GLOBAL_THREADS), GLOBAL_THREADS, 0, tm.st>>>(
        (fr_t *)a, (const fr_t *)b, lg_n, op, load_fr(d->z_inv));
    SNARKD_CHECK(cudaGetLastError());
    return tm.end();
}
