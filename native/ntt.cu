// Radix-2 NTT over BLS12-381 Fr on device buffers, in place.
//
// Transforms run decimation in frequency (natural in, bit-reversed out), then a bit reversal
// where natural order is wanted. The H step's evaluations-to-coset transform runs the inverse
// DIF, scales, and goes back to natural order by a forward decimation in time. Stages whose
// butterfly span is at least 2^SMEM_LG run as global passes of up to 3 stages (each thread holds
// 8 elements in registers); the last SMEM_LG stages run on contiguous chunks in shared memory
// (chunk_stages), which take their twiddles from a small level table. Twiddles of the global
// passes: tables omega^k, k < n/2, expanded once per domain. A global pass
// whose smallest span is at most 2^pass_table_lg reads its twiddles from a table of its own,
// built with the domain (coalesced loads); the others (the largest spans) load their 7 straight
// from the omega table, where consecutive threads read nearby entries. Passes with small spans
// would scatter those loads over gigabytes, one page per thread. A compact domain has no omega
// tables (n Fr, 4 GiB at 2^27, for cards where that memory is worth more than the time): those
// passes then compute each twiddle as one product of two small tables' entries.
#include <algorithm>
#include <utility>
#include <vector>

#include "field.cuh"
#include "error.cuh"
#include "pool.cuh"

namespace snarkd {
snarkd_status select_device(int32_t ordinal);
}

namespace {
using namespace snarkd;

constexpr int SMEM_LG = 10;  // elements per shared-memory chunk: 2^10 (32 KiB)
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

// out[j] = x^(j << shift) for j < count, x^e = hi[e >> ls] * lo[e & (2^ls - 1)].
__global__ void strided_powers(fr_t *out, const fr_t *lo, const fr_t *hi, uint32_t ls,
                               uint32_t shift, size_t count) {
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= count) return;
    const size_t e = j << shift;
    out[j] = hi[e >> ls] * lo[e & ((1u << ls) - 1)];
}

// Twiddles of a global pass of R stages (lg_low = log of the smallest span). Stage d (span
// 2^(lg_low + d)) pairs x[k] with x[k + 2^d] for k with bit d clear, and multiplies by
// omega_{2^(lg_low+d+1)}^(low + (k mod 2^d)·2^lg_low) = tw[(low + m·2^lg_low) << (lg_n -
// lg_low - d - 1)], m = k mod 2^d (tw[e] = omega_n^e). Loaded straight from tw: for the passes
// without a table of their own (the largest spans) consecutive threads read entries at most
// 2^(lg_n - lg_low - 1) apart, each 32-byte load one sector.
__device__ __forceinline__ size_t pass_exponent(uint32_t lg_n, uint32_t lg_low, uint32_t d,
                                                uint32_t m, size_t low) {
    return (low + ((size_t)m << lg_low)) << (lg_n - lg_low - d - 1);
}

__device__ __forceinline__ fr_t pass_twiddle(const fr_t *tw, uint32_t lg_n, uint32_t lg_low,
                                             uint32_t d, uint32_t m, size_t low) {
    return tw[pass_exponent(lg_n, lg_low, d, m, low)];
}

// omega_n^e from the split tables: lo[j] = omega^j, hi[j] = omega^(j * 2^ls), j < 2^ls.
__device__ __forceinline__ fr_t split_power(const fr_t *lo, const fr_t *hi, uint32_t ls, size_t e) {
    return hi[e >> ls] * lo[e & ((1u << ls) - 1)];
}

// Where a global pass takes its twiddles: a table of its own, the omega table, or products of
// the split tables (compact domains).
enum { TW_DIRECT = 0, TW_TABLE = 1, TW_SPLIT = 2 };

template <int R>
__device__ __forceinline__ void split_twiddles(fr_t (&w)[1 << (R - 1)], const fr_t *lo,
                                               const fr_t *hi, uint32_t ls, int d, uint32_t lg_n,
                                               uint32_t lg_low, size_t low) {
#pragma unroll
    for (int m = 0; m < (1 << (R - 1)); m++)
        if (m < (1 << d))
            w[m] = split_power(lo, hi, ls, pass_exponent(lg_n, lg_low, (uint32_t)d, (uint32_t)m, low));
}

template <int R>
__device__ __forceinline__ void direct_twiddles(fr_t (&w)[1 << (R - 1)], const fr_t *tw, int d,
                                                uint32_t lg_n, uint32_t lg_low, size_t low) {
#pragma unroll
    for (int m = 0; m < (1 << (R - 1)); m++)
        if (m < (1 << d)) w[m] = pass_twiddle(tw, lg_n, lg_low, (uint32_t)d, (uint32_t)m, low);
}

// The twiddles of stage d of a pass from its table (a pass with a table of its own, see
// pass_tables): w[m] = tab[(2^d - 1 + m) << lg_low | low], m < 2^d.
template <int R>
__device__ __forceinline__ void table_twiddles(fr_t (&w)[1 << (R - 1)], const fr_t *tab, int d,
                                               uint32_t lg_low, size_t low) {
#pragma unroll
    for (int m = 0; m < (1 << (R - 1)); m++)
        if (m < (1 << d)) w[m] = tab[((size_t)((1 << d) - 1 + m) << lg_low) | low];
}

// One global pass of R DIF stages: spans 2^(lg_low + R - 1) down to 2^lg_low. Twiddles as TW
// says: from the pass's table tab, straight from tw, or from the split tables lo and hi.
template <int R, int TW>
__global__ void __launch_bounds__(PASS_THREADS, PASS_MIN_BLOCKS)
    dif_pass(fr_t *a, const fr_t *tw, uint32_t lg_n, uint32_t lg_low, const fr_t *tab, const fr_t *lo,
             const fr_t *hi, uint32_t ls) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ((size_t)1 << (lg_n - R))) return;
    size_t low = t & (((size_t)1 << lg_low) - 1);
    size_t base = ((t >> lg_low) << (lg_low + R)) | low;
    fr_t x[1 << R];
#pragma unroll
    for (int k = 0; k < (1 << R); k++) x[k] = a[base + ((size_t)k << lg_low)];
#pragma unroll
    for (int s = 0; s < R; s++) {
        const int d = R - 1 - s;
        const int hs = 1 << d;
        fr_t w[1 << (R - 1)];
        if (TW == TW_TABLE)
            table_twiddles<R>(w, tab, d, lg_low, low);
        else if (TW == TW_DIRECT)
            direct_twiddles<R>(w, tw, d, lg_n, lg_low, low);
        else
            split_twiddles<R>(w, lo, hi, ls, d, lg_n, lg_low, low);
#pragma unroll
        for (int k = 0; k < (1 << R); k++) {
            if (k & hs) continue;
            fr_t p = x[k], q = x[k + hs];
            x[k] = p + q;
            x[k + hs] = (p - q) * w[k & (hs - 1)];
        }
    }
#pragma unroll
    for (int k = 0; k < (1 << R); k++) a[base + ((size_t)k << lg_low)] = x[k];
}

// One global pass of R DIT stages: spans 2^lg_low up to 2^(lg_low + R - 1).
template <int R, int TW>
__global__ void __launch_bounds__(PASS_THREADS, PASS_MIN_BLOCKS)
    dit_pass(fr_t *a, const fr_t *tw, uint32_t lg_n, uint32_t lg_low, const fr_t *tab, const fr_t *lo,
             const fr_t *hi, uint32_t ls) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ((size_t)1 << (lg_n - R))) return;
    size_t low = t & (((size_t)1 << lg_low) - 1);
    size_t base = ((t >> lg_low) << (lg_low + R)) | low;
    fr_t x[1 << R];
#pragma unroll
    for (int k = 0; k < (1 << R); k++) x[k] = a[base + ((size_t)k << lg_low)];
#pragma unroll
    for (int d = 0; d < R; d++) {
        const int hs = 1 << d;
        fr_t w[1 << (R - 1)];
        if (TW == TW_TABLE)
            table_twiddles<R>(w, tab, d, lg_low, low);
        else if (TW == TW_DIRECT)
            direct_twiddles<R>(w, tw, d, lg_n, lg_low, low);
        else
            split_twiddles<R>(w, lo, hi, ls, d, lg_n, lg_low, low);
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

// tab[(2^d - 1 + m) << lg_low | low] = omega_{2^(lg_low+d+1)}^(low + m * 2^lg_low), the twiddle
// of stage d, butterfly m of a pass (tw[e] = omega_n^e), for every low < 2^lg_low.
__global__ void build_pass_table(fr_t *tab, const fr_t *lo, const fr_t *hi, uint32_t ls,
                                 uint32_t lg_n, uint32_t lg_low, uint32_t r) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (((size_t)1 << r) - 1) << lg_low) return;
    const uint32_t q = (uint32_t)(i >> lg_low);
    const size_t low = i & (((size_t)1 << lg_low) - 1);
    const uint32_t d = 31 - __clz(q + 1), m = q + 1 - (1u << d);
    tab[i] = split_power(lo, hi, ls, pass_exponent(lg_n, lg_low, d, m, low));
}

// The stages with spans 2^(lg_c - 1) .. 1 run on chunks of 2^lg_c contiguous elements in shared
// memory, three stages at a time in registers (each thread holds 8 elements per round), so a
// chunk needs 4 rounds through shared memory instead of 10. Shared memory holds the chunk as two
// planes of 16-byte halves (a warp's contiguous elements then fill whole 128-byte wavefronts),
// with one padding slot per 8 elements against bank conflicts in the small-span rounds, and the
// level tables L_s[m] = omega_{2^(s+1)}^m, m <= 2^s (L_s[2^s] = -1), for every span 2^s < 2^lg_c.
// Inverse twiddles come from the same tables: omega^-m = -L_s[2^s - m], the sign absorbed by
// the butterfly. The to-coset form runs the inverse DIF stages, multiplies element p by
// c * g^bitrev(p), then the forward DIT stages, all on the chunk in shared memory.
constexpr int CHUNK_THREADS = 1 << (SMEM_LG - 3);
constexpr int CHUNK_MIN_BLOCKS = 3;

__device__ __forceinline__ uint32_t chunk_pad(uint32_t i) { return i + (i >> 3); }
__device__ __forceinline__ uint32_t level_off(uint32_t s) { return (1u << s) - 1 + s; }

// An array of Fr in shared memory as two planes of 16-byte halves: a warp reading consecutive
// elements reads consecutive 16-byte words (conflict-free), where whole 32-byte elements would
// put every fourth thread on the same banks.
struct split_fr {
    uint4 *lo, *hi;
    __device__ fr_t get(uint32_t q) const {
        const uint4 a = lo[q], b = hi[q];
        fr_t r;
        r.v[0] = a.x, r.v[1] = a.y, r.v[2] = a.z, r.v[3] = a.w;
        r.v[4] = b.x, r.v[5] = b.y, r.v[6] = b.z, r.v[7] = b.w;
        return r;
    }
    __device__ void set(uint32_t q, const fr_t &x) const {
        lo[q] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
        hi[q] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
    }
};

struct chunk_mem {
    split_fr data;  // the chunk, padded
    split_fr lv;    // level tables, then the per-block scale factor

    __device__ fr_t load(uint32_t i) const { return data.get(chunk_pad(i)); }
    __device__ void store(uint32_t i, const fr_t &x) const { data.set(chunk_pad(i), x); }
    __device__ fr_t twiddle(uint32_t s, uint32_t e) const { return lv.get(level_off(s) + e); }
};

// 16-byte slots per plane: the padded chunk; the level tables and the scale factor.
__host__ __device__ uint32_t chunk_slots(uint32_t lg_c) {
    return (1u << lg_c) + (1u << lg_c) / 8 + 1;
}
__host__ __device__ uint32_t level_slots(uint32_t lg_c) { return (1u << lg_c) + lg_c; }

// Shared memory of chunk_stages for 2^lg_c elements.
size_t chunk_smem_bytes(uint32_t lg_c) {
    return 2 * ((size_t)chunk_slots(lg_c) + level_slots(lg_c)) * 16;
}

__device__ chunk_mem chunk_layout(uint8_t *smem, uint32_t lg_c) {
    const uint32_t slots = chunk_slots(lg_c), levels = level_slots(lg_c);
    uint4 *p = reinterpret_cast<uint4 *>(smem);
    chunk_mem m;
    m.data = {p, p + slots};
    m.lv = {p + 2 * slots, p + 2 * slots + levels};
    return m;
}

// One round of R stages: spans 2^(lo + R - 1) .. 2^lo, DIF downward or DIT upward.
template <int R, bool DIF, bool INV>
__device__ __forceinline__ void chunk_round(const chunk_mem &m, uint32_t lg_c, uint32_t lo) {
    const uint32_t groups = (1u << lg_c) >> R;
#pragma unroll 1
    for (uint32_t g = threadIdx.x; g < groups; g += blockDim.x) {
        const uint32_t j = g & ((1u << lo) - 1);
        const uint32_t base = ((g >> lo) << (lo + R)) | j;
        fr_t x[1 << R];
#pragma unroll
        for (int k = 0; k < (1 << R); k++) x[k] = m.load(base + ((uint32_t)k << lo));
#pragma unroll
        for (int st = 0; st < R; st++) {
            const int d = DIF ? R - 1 - st : st;
            const uint32_t s = lo + d;
#pragma unroll
            for (int k = 0; k < (1 << R); k++) {
                if (k & (1 << d)) continue;
                const uint32_t e = j + ((uint32_t)(k & ((1 << d) - 1)) << lo);
                const fr_t p = x[k];
                fr_t q = x[k + (1 << d)];
                if (d == 0 && lo == 0) {
                    // Span 1: the twiddle is 1 (forward) or -1 (inverse, which the inverse
                    // butterflies' swapped signs cancel), so both forms are p + q, p - q.
                    x[k] = p + q;
                    x[k + 1] = p - q;
                    continue;
                }
                const fr_t w = m.twiddle(s, INV ? (1u << s) - e : e);
                if (DIF) {
                    x[k] = p + q;
                    x[k + (1 << d)] = (INV ? q - p : p - q) * w;
                } else {
                    q = q * w;
                    x[k] = INV ? p - q : p + q;
                    x[k + (1 << d)] = INV ? p + q : p - q;
                }
            }
        }
#pragma unroll
        for (int k = 0; k < (1 << R); k++) m.store(base + ((uint32_t)k << lo), x[k]);
    }
}

template <bool DIF, bool INV>
__device__ void chunk_rounds(const chunk_mem &m, uint32_t lg_c) {
    // DIF: spans from the top down in rounds of 3, the remainder last; DIT mirrors it. Every
    // round reads elements other threads wrote: barriers before the first and after the last
    // round, so the callers' own writes (the chunk, the tables, the scaling) need none.
    const uint32_t rem = lg_c % 3;
    __syncthreads();
    if (DIF) {
        for (int top = (int)lg_c - 1; top >= (int)rem; top -= 3) {
            chunk_round<3, true, INV>(m, lg_c, (uint32_t)top - 2);
            __syncthreads();
        }
        if (rem == 2) chunk_round<2, true, INV>(m, lg_c, 0);
        if (rem == 1) chunk_round<1, true, INV>(m, lg_c, 0);
    } else {
        if (rem == 2) chunk_round<2, false, INV>(m, lg_c, 0);
        if (rem == 1) chunk_round<1, false, INV>(m, lg_c, 0);
        for (uint32_t lo = rem; lo < lg_c; lo += 3) {
            __syncthreads();
            chunk_round<3, false, INV>(m, lg_c, lo);
        }
    }
    __syncthreads();
}

// grid: one block per chunk of 2^lg_c elements. levels: omega_{2^lg_c}^j, j < 2^(lg_c - 1) (the
// domain's level table). With TO_COSET: inverse
// DIF stages, element p times c * g^bitrev(p) (g^e = g_hi[e >> ls] * g_lo[e & mask]), forward
// DIT stages; otherwise DIF stages only, forward or inverse.
template <bool INV, bool TO_COSET>
__global__ void __launch_bounds__(CHUNK_THREADS, CHUNK_MIN_BLOCKS)
    chunk_stages(fr_t *a, const fr_t *levels, uint32_t lg_n, uint32_t lg_c, const fr_t *g_lo,
                 const fr_t *g_hi, uint32_t ls, fr_t c) {
    extern __shared__ __align__(16) uint8_t smem[];
    const chunk_mem m = chunk_layout(smem, lg_c);
    const uint32_t t = threadIdx.x, nt = blockDim.x, size = 1u << lg_c;
    fr_t *chunk = a + ((size_t)blockIdx.x << lg_c);
    for (uint32_t i = t; i < size; i += nt) m.store(i, chunk[i]);
    for (uint32_t s = 0; s < lg_c; s++) {
        for (uint32_t e = t; e < (1u << s); e += nt)
            m.lv.set(level_off(s) + e, levels[e << (lg_c - 1 - s)]);
        if (t == 0) m.lv.set(level_off(s) + (1u << s), fr_t::zero() - fr_t::one());
    }
    const uint32_t mask = (1u << ls) - 1;
    if (TO_COSET && t == 0) {
        const uint32_t e = bitrev(blockIdx.x, lg_n - lg_c);
        m.lv.set(level_off(lg_c), g_hi[e >> ls] * g_lo[e & mask] * c);
    }
    chunk_rounds<true, INV || TO_COSET>(m, lg_c);
    if (TO_COSET) {
        const fr_t cc = m.lv.get(level_off(lg_c));
        for (uint32_t i = t; i < size; i += nt) {
            const uint32_t e = bitrev(i, lg_c) << (lg_n - lg_c);
            fr_t f = g_hi[e >> ls];
            if (e & mask) f = f * g_lo[e & mask];
            m.store(i, m.load(i) * (f * cc));
        }
        chunk_rounds<false, false>(m, lg_c);
    }
    for (uint32_t i = t; i < size; i += nt) chunk[i] = m.load(i);
}

// Multiplies element p by x^p = hi[p >> ls] * lo[p & mask].
__global__ void scale_powers(fr_t *a, uint32_t lg_n, const fr_t *lo, const fr_t *hi, uint32_t ls) {
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= ((size_t)1 << lg_n)) return;
    a[p] = a[p] * (hi[p >> ls] * lo[p & ((1u << ls) - 1)]);
}

// In-place bit-reversal permutation, then element p (natural index) is multiplied by
// c * x^p when lo/hi are given, or by c when scale is set, and sub[p] subtracted when given.
__global__ void bitrev_scale(fr_t *a, uint32_t lg_n, const fr_t *lo, const fr_t *hi, uint32_t ls,
                             bool scale, fr_t c, const fr_t *sub) {
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
    if (sub != nullptr) {
        vq = vq - sub[p];
        vp = vp - sub[q];
    }
    a[p] = vq;
    a[q] = vp;
}

// The same permutation and scaling for 2^lg_n >= 2^(2*BR_BITS) elements by tiles: index
// (A, M, B), A and B of BR_BITS bits, goes to (rev B, rev M, rev A), so the 2^(2*BR_BITS)
// elements with middle bits M and those with rev M swap places through shared memory, and both
// the reads and the writes are runs of 2^BR_BITS consecutive elements (the one-element swaps
// above scatter their writes over the whole vector). One block per M; blocks with M > rev M
// have nothing to do. Tile rows are padded by a slot against bank conflicts on the transposed
// reads.
// The row factors take hi[p >> ls] once per row: every column of a row must share it, so
// ls = ceil(lg_n / 2) >= BR_BITS, true for the tiled sizes (lg_n >= 2 * BR_BITS).
constexpr int BR_BITS = 5;
constexpr int BR_SIDE = 1 << BR_BITS;
constexpr int BR_PITCH = BR_SIDE + 1;
constexpr int BR_THREADS = 256;

constexpr uint32_t BR_SLOTS = BR_SIDE * BR_PITCH;
// Dynamic shared memory: two tiles and their row factors, each as two 16-byte planes.
constexpr size_t BR_SMEM = 2 * 2 * (BR_SLOTS + BR_SIDE) * 16;

__global__ void __launch_bounds__(BR_THREADS) bitrev_tiles(fr_t *a, uint32_t lg_n, const fr_t *lo,
                                                           const fr_t *hi, uint32_t ls, bool scale,
                                                           fr_t c, const fr_t *sub) {
    extern __shared__ __align__(16) uint4 br_smem[];
    const uint32_t mb = lg_n - 2 * BR_BITS, M = blockIdx.x, Mr = bitrev(M, mb);
    if (M > Mr) return;
    const uint32_t tiles = M == Mr ? 1 : 2;
    // Tile t holds the elements with middle bits M (t = 0) or rev M (t = 1); row factors follow.
    auto tile = [&](uint32_t t) -> split_fr {
        uint4 *b = br_smem + t * BR_SLOTS;
        return {b, b + 2 * BR_SLOTS};
    };
    auto fac = [&](uint32_t t) -> split_fr {
        uint4 *b = br_smem + 4 * BR_SLOTS + t * BR_SIDE;
        return {b, b + 2 * BR_SIDE};
    };
    auto index = [&](uint32_t row, uint32_t m, uint32_t col) {
        return ((size_t)row << (mb + BR_BITS)) | ((size_t)m << BR_BITS) | col;
    };
    for (uint32_t t = 0; t < tiles; t++) {
        const split_fr sh = tile(t);
        const uint32_t m = t ? Mr : M;
        for (uint32_t i = threadIdx.x; i < BR_SIDE * BR_SIDE; i += blockDim.x)
            sh.set((i >> BR_BITS) * BR_PITCH + (i & (BR_SIDE - 1)),
                   a[index(i >> BR_BITS, m, i & (BR_SIDE - 1))]);
    }
    // Tile t goes where the other tile was (middle bits M for t = 1, rev M for t = 0).
    if (scale && threadIdx.x < tiles * BR_SIDE) {
        const uint32_t t = threadIdx.x / BR_SIDE, r = threadIdx.x % BR_SIDE;
        fr_t f = c;
        if (hi != nullptr) f = f * hi[index(r, t ? M : Mr, 0) >> ls];
        fac(t).set(r, f);
    }
    __syncthreads();
    const uint32_t mask = (1u << ls) - 1;
    for (uint32_t t = 0; t < tiles; t++) {
        const split_fr sh = tile(t), fr = fac(t);
        const uint32_t dm = t ? M : Mr;
        for (uint32_t i = threadIdx.x; i < BR_SIDE * BR_SIDE; i += blockDim.x) {
            const uint32_t r = i >> BR_BITS, col = i & (BR_SIDE - 1);
            const size_t p = index(r, dm, col);
            fr_t v = sh.get(bitrev(col, BR_BITS) * BR_PITCH + bitrev(r, BR_BITS));
            if (scale) {
                fr_t f = fr.get(r);
                if (lo != nullptr) f = f * lo[p & mask];
                v = v * f;
            }
            if (sub != nullptr) v = v - sub[p];
            a[p] = v;
        }
    }
}

// a = a * b
__global__ void h_pointwise(fr_t *a, const fr_t *b, uint32_t lg_n) {
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= ((size_t)1 << lg_n)) return;
    a[p] = a[p] * b[p];
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

unsigned blocks_for(size_t n, unsigned threads) { return (unsigned)((n + threads - 1) / threads); }

// In place: bit-reversal permutation, then element p times c * x^p (lo/hi given) or c (scale),
// minus sub[p] (sub given).
snarkd_status run_bitrev(fr_t *a, uint32_t lg_n, const fr_t *lo, const fr_t *hi, uint32_t ls,
                         bool scale, fr_t c, cudaStream_t st, const fr_t *sub = nullptr) {
    if (lg_n >= 2 * BR_BITS) {
        SNARKD_CHECK(cudaFuncSetAttribute(bitrev_tiles, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)BR_SMEM));
        bitrev_tiles<<<1u << (lg_n - 2 * BR_BITS), BR_THREADS, BR_SMEM, st>>>(a, lg_n, lo, hi, ls,
                                                                              scale, c, sub);
    } else
        bitrev_scale<<<blocks_for((size_t)1 << lg_n, GLOBAL_THREADS), GLOBAL_THREADS, 0, st>>>(
            a, lg_n, lo, hi, ls, scale, c, sub);
    SNARKD_CHECK(cudaGetLastError());
    return SNARKD_OK;
}

fr_t load_fr(const uint64_t v[4]) {
    fr_t r;
    for (int i = 0; i < 4; i++) {
        r.v[2 * i] = (uint32_t)v[i];
        r.v[2 * i + 1] = (uint32_t)(v[i] >> 32);
    }
    return r;
}

// Global passes covering spans 2^top .. 2^bottom (top >= bottom), radix 8 where possible: f(lg_low,
// r) for each in launch order. DIF runs the spans downward with the remainder pass last, DIT
// upward with it first, so both run passes of the same (smallest span, stages) and share tables.
template <class F>
void for_each_pass(int top, int bottom, bool dif, F f) {
    int remaining = top - bottom + 1;
    int cur = dif ? top : bottom;  // next span to do
    int rem = dif ? 0 : remaining % 3;
    while (remaining > 0) {
        const int r = rem ? rem : std::min(remaining, 3);
        rem = 0;
        f((uint32_t)(dif ? cur - r + 1 : cur), r);
        cur += dif ? -r : r;
        remaining -= r;
    }
}

// Passes whose smallest span is at most 2^pass_table_lg(lg_n) read their twiddles from tables of
// their own (7 coalesced loads); the others load them from the omega table (direct_twiddles). The
// bound keeps a direction's tables near 2^(lg_n-1) bytes (67 MB at 2^27, against 2 GiB of
// twiddles). Tables follow the domain's small tables: the forward ones, then the inverse ones.
uint32_t pass_table_lg(uint32_t lg_n) { return std::min<uint32_t>(18, lg_n - 9); }

// f(inverse, lg_low, r, offset in Fr) for each table, in layout order; returns the total in Fr.
template <class F>
size_t for_each_pass_table(uint32_t lg_n, F f) {
    const uint32_t lg_c = std::min<uint32_t>(lg_n, SMEM_LG);
    size_t off = 0;
    if (lg_n <= lg_c) return 0;
    for (int inv = 0; inv < 2; inv++)
        for_each_pass((int)lg_n - 1, (int)lg_c, true, [&](uint32_t lg_low, int r) {
            if (lg_low > pass_table_lg(lg_n)) return;
            f(inv != 0, lg_low, r, off);
            off += (((size_t)1 << r) - 1) << lg_low;
        });
    return off;
}

// One pass: twiddles from tab when given, else from tw when given (a full domain), else from
// the split tables lo and hi (a compact domain).
template <int R, bool DIF>
snarkd_status launch_pass(fr_t *a, const fr_t *tw, uint32_t lg_n, uint32_t lg_low, const fr_t *tab,
                          const fr_t *lo, const fr_t *hi, uint32_t ls, cudaStream_t st) {
    const size_t threads = (size_t)1 << (lg_n - R);
    const unsigned tb = (unsigned)std::min<size_t>(threads, PASS_THREADS);
    const unsigned nb = blocks_for(threads, tb);
    if (tab) {
        if (DIF) dif_pass<R, TW_TABLE><<<nb, tb, 0, st>>>(a, nullptr, lg_n, lg_low, tab, nullptr, nullptr, 0);
        else dit_pass<R, TW_TABLE><<<nb, tb, 0, st>>>(a, nullptr, lg_n, lg_low, tab, nullptr, nullptr, 0);
    } else if (tw) {
        if (DIF) dif_pass<R, TW_DIRECT><<<nb, tb, 0, st>>>(a, tw, lg_n, lg_low, nullptr, nullptr, nullptr, 0);
        else dit_pass<R, TW_DIRECT><<<nb, tb, 0, st>>>(a, tw, lg_n, lg_low, nullptr, nullptr, nullptr, 0);
    } else {
        if (DIF) dif_pass<R, TW_SPLIT><<<nb, tb, 0, st>>>(a, nullptr, lg_n, lg_low, nullptr, lo, hi, ls);
        else dit_pass<R, TW_SPLIT><<<nb, tb, 0, st>>>(a, nullptr, lg_n, lg_low, nullptr, lo, hi, ls);
    }
    SNARKD_CHECK(cudaGetLastError());
    return SNARKD_OK;
}

// The global passes of one transform (all spans from 2^(lg_n-1) down to 2^lg_c), DIF or DIT,
// forward or inverse twiddles; passes with a table of their own use it.
snarkd_status global_passes(fr_t *a, const snarkd_ntt_domain *d, bool inv, bool dif,
                            cudaStream_t st) {
    const uint32_t lg_n = d->lg_n, lg_c = std::min<uint32_t>(lg_n, SMEM_LG);
    const fr_t *tw = (const fr_t *)(inv ? d->inv : d->fwd);  // null in a compact domain
    const tables sm = small_tables(d);
    const fr_t *lo = inv ? sm.wi_lo : sm.w_lo, *hi = inv ? sm.wi_hi : sm.w_hi;
    std::vector<std::pair<uint32_t, const fr_t *>> tables;  // (lg_low, table) of this direction
    for_each_pass_table(lg_n, [&](bool tinv, uint32_t lg_low, int, size_t off) {
        if (tinv == inv) tables.push_back({lg_low, (const fr_t *)d->passes + off});
    });
    std::vector<std::pair<uint32_t, int>> passes;  // (lg_low, r)
    for_each_pass((int)lg_n - 1, (int)lg_c, dif, [&](uint32_t lg_low, int r) {
        passes.push_back({lg_low, r});
    });
    for (auto &ps : passes) {
        const uint32_t lg_low = ps.first;
        const fr_t *tab = nullptr;
        for (auto &t : tables)
            if (t.first == lg_low) tab = t.second;
        const int r = ps.second;
        snarkd_status s;
        if (dif)
            s = r == 3   ? launch_pass<3, true>(a, tw, lg_n, lg_low, tab, lo, hi, d->lg_split, st)
                : r == 2 ? launch_pass<2, true>(a, tw, lg_n, lg_low, tab, lo, hi, d->lg_split, st)
                         : launch_pass<1, true>(a, tw, lg_n, lg_low, tab, lo, hi, d->lg_split, st);
        else
            s = r == 3   ? launch_pass<3, false>(a, tw, lg_n, lg_low, tab, lo, hi, d->lg_split, st)
                : r == 2 ? launch_pass<2, false>(a, tw, lg_n, lg_low, tab, lo, hi, d->lg_split, st)
                         : launch_pass<1, false>(a, tw, lg_n, lg_low, tab, lo, hi, d->lg_split, st);
        if (s != SNARKD_OK) return s;
    }
    return SNARKD_OK;
}

// The chunk kernel for 2^lg_c-element chunks (more than 48 KiB of shared memory).
template <bool INV, bool TO_COSET>
snarkd_status launch_chunks(fr_t *a, const snarkd_ntt_domain *d, uint32_t lg_c, fr_t c,
                            cudaStream_t st) {
    const uint32_t lg_n = d->lg_n;
    const tables tb = small_tables(d);
    const size_t bytes = chunk_smem_bytes(lg_c);
    SNARKD_CHECK(cudaFuncSetAttribute(chunk_stages<INV, TO_COSET>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    const unsigned threads = lg_c >= 3 ? 1u << (lg_c - 3) : 1u;
    chunk_stages<INV, TO_COSET><<<(unsigned)(1u << (lg_n - lg_c)), threads, bytes, st>>>(
        a, (const fr_t *)d->levels, lg_n, lg_c, tb.g_lo, tb.g_hi, d->lg_split, c);
    SNARKD_CHECK(cudaGetLastError());
    return SNARKD_OK;
}

// DIF over all lg_n stages, forward or inverse twiddles: natural in, bit-reversed out.
snarkd_status run_dif(fr_t *a, const snarkd_ntt_domain *d, bool inv, cudaStream_t st) {
    const uint32_t lg_n = d->lg_n, lg_c = std::min<uint32_t>(lg_n, SMEM_LG);
    if (lg_n > lg_c) {
        snarkd_status s = global_passes(a, d, inv, true, st);
        if (s != SNARKD_OK) return s;
    }
    return inv ? launch_chunks<true, false>(a, d, lg_c, fr_t::one(), st)
               : launch_chunks<false, false>(a, d, lg_c, fr_t::one(), st);
}

// Evaluations on H (natural order) to evaluations on g*H (natural order): inverse DIF to
// bit-reversed coefficients, coefficient i (at position bitrev(i)) times g^i / n, forward DIT.
// The chunk kernel does the stages below 2^lg_c of both and the scaling in one pass.
snarkd_status run_to_coset(fr_t *a, const snarkd_ntt_domain *d, cudaStream_t st) {
    const uint32_t lg_n = d->lg_n, lg_c = std::min<uint32_t>(lg_n, SMEM_LG);
    snarkd_status s;
    if (lg_n > lg_c && (s = global_passes(a, d, true, true, st)) != SNARKD_OK) return s;
    if ((s = launch_chunks<true, true>(a, d, lg_c, load_fr(d->n_inv), st)) != SNARKD_OK) return s;
    if (lg_n > lg_c) return global_passes(a, d, false, false, st);
    return SNARKD_OK;
}

// The inverse kinds multiply every output by 1/n times extra, then subtract sub (when given).
snarkd_status ntt_body(const snarkd_ntt_domain *d, fr_t *a, int32_t kind, cudaStream_t st,
                       const fr_t &extra = fr_t::one(), const fr_t *sub = nullptr) {
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
                scale_powers<<<nb, GLOBAL_THREADS, 0, st>>>(a, lg_n, tb.g_lo, tb.g_hi, ls);
                SNARKD_CHECK(cudaGetLastError());
            }
            if ((s = run_dif(a, d, false, st)) != SNARKD_OK) return s;
            return run_bitrev(a, lg_n, nullptr, nullptr, ls, false, fr_t::one(), st);
        case SNARKD_NTT_INVERSE:
        case SNARKD_NTT_COSET_INVERSE: {
            if ((s = run_dif(a, d, true, st)) != SNARKD_OK) return s;
            bool coset = kind == SNARKD_NTT_COSET_INVERSE;
            return run_bitrev(a, lg_n, coset ? tb.gi_lo : nullptr, coset ? tb.gi_hi : nullptr, ls,
                              true, n_inv * extra, st, sub);
        }
        case SNARKD_NTT_TO_COSET:
            return run_to_coset(a, d, st);
        default:
            snarkd::set_last_error("ntt: unknown kind %d", kind);
            return SNARKD_ERR_INVALID_ARGUMENT;
    }
}

snarkd_status check_domain(const snarkd_ntt_domain *d, const void *data) {
    if (d == nullptr || data == nullptr || d->lg_n < 1 || d->lg_n > SNARKD_NTT_MAX_LG ||
        (d->fwd == nullptr) != (d->inv == nullptr) || d->small == nullptr || d->levels == nullptr ||
        d->lg_split != (d->lg_n + 1) / 2) {
        snarkd::set_last_error("ntt: invalid domain or buffer");
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    return SNARKD_OK;
}
}  // namespace

// Entries of the level table the chunk kernels read: omega_{2^lg_c}^j, j < 2^(lg_c - 1).
static size_t level_entries(uint32_t lg_n) { return (size_t)1 << (std::min<uint32_t>(lg_n, SMEM_LG) - 1); }

extern "C" size_t snarkd_ntt_domain_bytes(uint32_t lg_n, int32_t compact) {
    if (lg_n < 1 || lg_n > SNARKD_NTT_MAX_LG) return 0;
    size_t half = compact ? 0 : (size_t)1 << (lg_n - 1);
    size_t small = (size_t)8 << ((lg_n + 1) / 2);
    size_t passes = for_each_pass_table(lg_n, [](bool, uint32_t, int, size_t) {});
    return (2 * half + small + level_entries(lg_n) + passes) * sizeof(fr_t);
}

extern "C" snarkd_status snarkd_ntt_domain_init(int32_t ordinal, uint32_t lg_n, int32_t compact,
                                                void *dev_buf, const void *host_tables,
                                                const uint64_t n_inv[4], const uint64_t z_inv[4],
                                                snarkd_ntt_domain *out) {
    if (lg_n < 1 || lg_n > SNARKD_NTT_MAX_LG || dev_buf == nullptr || host_tables == nullptr ||
        out == nullptr || n_inv == nullptr || z_inv == nullptr) {
        snarkd::set_last_error("ntt_domain_init: bad arguments (lg_n %u)", lg_n);
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    snarkd_status s = snarkd::select_device(ordinal);
    if (s != SNARKD_OK) return s;
    const size_t half = compact ? 0 : (size_t)1 << (lg_n - 1);
    const uint32_t ls = (lg_n + 1) / 2;
    const size_t m = (size_t)1 << ls;
    fr_t *fwd = (fr_t *)dev_buf;
    fr_t *inv = fwd + half;
    fr_t *small = inv + half;
    SNARKD_CHECK(cudaMemcpy(small, host_tables, 8 * m * sizeof(fr_t), cudaMemcpyHostToDevice));
    if (!compact) {
        unsigned nb = blocks_for(half, GLOBAL_THREADS);
        expand_powers<<<nb, GLOBAL_THREADS>>>(fwd, small, small + m, ls, half);
        SNARKD_CHECK(cudaGetLastError());
        expand_powers<<<nb, GLOBAL_THREADS>>>(inv, small + 2 * m, small + 3 * m, ls, half);
        SNARKD_CHECK(cudaGetLastError());
    }
    // The level table: omega_{2^lg_c}^j = omega_n^(j * 2^(lg_n - lg_c)).
    fr_t *levels = small + 8 * m;
    const size_t nl = level_entries(lg_n);
    const uint32_t lg_c = std::min<uint32_t>(lg_n, SMEM_LG);
    strided_powers<<<blocks_for(nl, GLOBAL_THREADS), GLOBAL_THREADS>>>(levels, small, small + m, ls,
                                                                        lg_n - lg_c, nl);
    SNARKD_CHECK(cudaGetLastError());
    fr_t *passes = levels + nl;
    snarkd_status ps = SNARKD_OK;
    for_each_pass_table(lg_n, [&](bool tinv, uint32_t lg_low, int r, size_t off) {
        const size_t count = (((size_t)1 << r) - 1) << lg_low;
        const fr_t *lo = tinv ? small + 2 * m : small, *hi = tinv ? small + 3 * m : small + m;
        build_pass_table<<<blocks_for(count, GLOBAL_THREADS), GLOBAL_THREADS>>>(
            passes + off, lo, hi, ls, lg_n, lg_low, (uint32_t)r);
        if (ps == SNARKD_OK && cudaPeekAtLastError() != cudaSuccess)
            ps = snarkd::cuda_status(cudaGetLastError(), "build_pass_table", __FILE__, __LINE__);
    });
    if (ps != SNARKD_OK) return ps;
    // Wait for this domain's kernels only: the legacy stream does not wait for the workers'
    // non-blocking streams, and a device-wide synchronize would wait for their kernels too.
    SNARKD_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    out->lg_n = lg_n;
    out->lg_split = ls;
    out->fwd = compact ? nullptr : fwd;
    out->inv = compact ? nullptr : inv;
    out->small = small;
    out->levels = levels;
    out->passes = passes;
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
    // (A·B - C)/Z on the coset g·H, where Z is the constant g^n - 1, transformed back is
    // cosetINTT(A·B)/(g^n - 1) - C/(g^n - 1): C has degree < n, so its coefficients are c's
    // plain inverse transform and c never goes to the coset (6 transforms instead of 7).
    fr_t *vec[2] = {(fr_t *)a, (fr_t *)b};
    for (fr_t *x : vec)
        if ((s = ntt_body(d, x, SNARKD_NTT_TO_COSET, tm.st)) != SNARKD_OK) return s;
    h_pointwise<<<nb, GLOBAL_THREADS, 0, tm.st>>>(vec[0], vec[1], lg_n);
    SNARKD_CHECK(cudaGetLastError());
    if ((s = ntt_body(d, (fr_t *)c, SNARKD_NTT_INVERSE, tm.st, z_inv)) != SNARKD_OK) return s;
    if ((s = ntt_body(d, vec[0], SNARKD_NTT_COSET_INVERSE, tm.st, z_inv, (const fr_t *)c)) !=
        SNARKD_OK)
        return s;
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
