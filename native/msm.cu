// Multi-scalar multiplication in G1 and G2 (Pippenger bucket method, signed c-bit digits).
//
// Per chunk of points: one thread per scalar writes every window's signed digit (bucket key)
// and point reference; per window a radix sort groups the references by bucket; then one launch
// for all windows sums fixed-length segments of the sorted lists into XYZZ buckets (runs that
// cross a segment border are merged by the segment where they start). After the last chunk, each window's buckets are
// reduced by running sums spread over many threads, and the per-block partial sums go back to
// the host, which combines the windows (a few hundred doublings).
//
// With SNARKD_MSM_SPLIT01 the points whose scalar is exactly 1 are compacted and summed by a
// plain reduction (batch addition), scalars 0 are dropped, and only the rest enter the buckets.
// Points and scalars can stay on the device or stream from host memory in double-buffered
// chunks on a copy stream. All scratch memory is the caller's workspace.
#include <cub/cub.cuh>

#include <algorithm>
#include <type_traits>

#include "curve.cuh"
#include "error.cuh"
#include "pool.cuh"

namespace snarkd {
snarkd_status select_device(int32_t ordinal);
}

namespace {
using namespace snarkd;

constexpr uint32_t SEG = 128;           // sorted entries summed per thread
constexpr uint32_t STASH_EVERY = 16;    // entries between the bucket sums' joint additions
constexpr unsigned REDUCE_THREADS = 256;
// Buckets per reduce thread: each thread also spends about c doublings on its first bucket's
// weight, so the 2^19 buckets of a 20-bit window go 64 to a thread (a 2^27 MSM: 4 ms less than
// 16); smaller windows keep 16, where fewer threads would leave the GPU idle.
constexpr uint32_t reduce_per_thread(uint32_t nb) { return nb >= (1u << 19) ? 64 : 16; }
constexpr unsigned ONES_THREADS = 256;
constexpr uint32_t NO_KEY = 0xffffffffu;
constexpr uint32_t DEFAULT_RESIDENT_CHUNK_LOG = 26;
constexpr uint32_t DEFAULT_STREAM_CHUNK_LOG = 22;

template <int CURVE>
struct curve_types;
template <>
struct curve_types<SNARKD_CURVE_G1> {
    using affine = g1_affine;
    using point = g1_xyzz;
};
template <>
struct curve_types<SNARKD_CURVE_G2> {
    using affine = g2_affine;
    using point = g2_xyzz;
};

// ---------------------------------------------------------------------------------------
// Kernels

__global__ void digits_kernel(const fr_t *scalars, const uint32_t *idx, uint32_t m, uint32_t c,
                              uint32_t windows, size_t stride, uint32_t *keys, uint32_t *vals) {
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m) return;
    uint32_t i = idx ? idx[j] : j;
    fr_t s = scalars[i].from_mont();
    const uint32_t mask = (1u << c) - 1;
    const uint32_t half = 1u << (c - 1);
    uint32_t carry = 0;
    for (uint32_t w = 0; w < windows; w++) {
        uint32_t bit = w * c;
        uint32_t limb = bit >> 5, sh = bit & 31;
        uint64_t lo = limb < 8 ? s.v[limb] : 0;
        uint64_t hi = limb + 1 < 8 ? s.v[limb + 1] : 0;
        uint32_t d = (uint32_t)(((hi << 32) | lo) >> sh) & mask;
        d += carry;
        uint32_t neg = 0;
        if (d > half) {
            d = (1u << c) - d;
            neg = 1;
            carry = 1;
        } else {
            carry = 0;
        }
        keys[w * stride + j] = d;
        vals[w * stride + j] = i | (neg << 31);
    }
}

// Blocks of 128 threads per SM the bucket sums are compiled for. G1's three (12 warps) cap it at
// 168 registers: left to itself the compiler takes 180 around the four-operand Fp product
// (mont::mul_sub) and fits only two blocks, which costs more than the product saves (a 2^26
// MSM: 411 ms at two blocks, 383 ms at three). G2 needs about 254 registers either way.
template <class A>
constexpr int accumulate_min_blocks() {
    return std::is_same<A, g1_affine>::value ? 3 : 1;
}

// *dst += *src, out of line: inlined into the bucket-sum loop it made the G1 loop spill.
template <class P>
__device__ __noinline__ void add_to(P *dst, const P *src) {
    dst->add(*src);
}

// grid (segments, windows): window w reads its sorted list at w * key_stride, its buckets at
// w * nb and its carry slots at w * carry_stride. STASH: see below, for short runs.
template <class P, class A, bool STASH>
__global__ void __launch_bounds__(128, accumulate_min_blocks<A>())
    accumulate_kernel(const uint32_t *keys, const uint32_t *vals, uint32_t m, const A *points,
                      P *buckets, P *carry_first, P *carry_last, uint32_t *carry_key,
                      size_t key_stride, uint32_t nb, uint32_t carry_stride) {
    const uint32_t w = blockIdx.y;
    keys += w * key_stride;
    vals += w * key_stride;
    buckets += (size_t)w * nb;
    carry_first += (size_t)w * carry_stride;
    carry_last += (size_t)w * carry_stride;
    carry_key += (size_t)w * carry_stride;
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t start = t * SEG;
    if (start >= m) return;
    uint32_t end = min(m, start + SEG);
    carry_key[t] = NO_KEY;
    uint32_t cur = keys[start];
    bool starts = start == 0 || keys[start - 1] != cur;
    bool first = true;
    P acc = P::inf();
    // A run that starts and ends in this segment is added to its bucket. Lanes end runs at
    // different entries, and a warp that adds a bucket for one lane at a time idles the others
    // for a whole addition each time: with short runs (2^24 points in 2^19 buckets, after the
    // first chunk, when buckets are no longer empty) that made the sums 1.4 times slower. With
    // STASH a finished run waits in shared memory, and the lanes holding one add them together
    // every STASH_EVERY entries. Long runs go without: the out-of-line addition and the shared
    // memory cost the loop 6 % (2^26 points in 2^19 buckets).
    __shared__ P stash[STASH ? 128 : 1];
    uint32_t stash_key = 0;
    auto drain = [&]() {
        if (stash_key != 0) {
            add_to(buckets + stash_key - 1, stash + threadIdx.x);
            stash_key = 0;
        }
    };
    auto flush = [&](uint32_t k, bool s, bool e) {
        if (k == 0) return;
        if (s && e) {
            if constexpr (STASH) {
                drain();
                stash[threadIdx.x] = acc;
                stash_key = k;
            } else {
                buckets[k - 1].add(acc);
            }
        } else if (s) {
            carry_last[t] = acc;
            carry_key[t] = k;
        } else {
            carry_first[t] = acc;
        }
    };
    for (uint32_t i = start; i < end; i++) {
        if (STASH && ((i - start) & (STASH_EVERY - 1)) == STASH_EVERY - 1) drain();
        uint32_t k = keys[i];
        if (k != cur) {
            flush(cur, first ? starts : true, true);
            first = false;
            cur = k;
            acc = P::inf();
        }
        if (k != 0) {
            uint32_t v = vals[i];
            A p = points[v & 0x7fffffffu];
            if (v >> 31) p = p.neg();
            acc.add_affine(p);
        }
    }
    bool ends = end == m || keys[end] != cur;
    flush(cur, first ? starts : true, ends);
    if constexpr (STASH) drain();
}

template <class P>
__global__ void merge_kernel(const uint32_t *keys, uint32_t m, uint32_t nseg,
                             const P *carry_first, const P *carry_last,
                             const uint32_t *carry_key, P *buckets, size_t key_stride,
                             uint32_t nb, uint32_t carry_stride) {
    const uint32_t w = blockIdx.y;
    keys += w * key_stride;
    buckets += (size_t)w * nb;
    carry_first += (size_t)w * carry_stride;
    carry_last += (size_t)w * carry_stride;
    carry_key += (size_t)w * carry_stride;
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nseg) return;
    uint32_t k = carry_key[t];
    if (k == NO_KEY) return;
    P acc = carry_last[t];
    for (uint32_t t2 = t + 1; t2 < nseg; t2++) {
        acc.add(carry_first[t2]);
        uint32_t e2 = min(m, (t2 + 1) * SEG);
        if (e2 == m || keys[e2] != k) break;
    }
    buckets[k - 1].add(acc);
}

// Sums scratch[0..REDUCE_THREADS) of this block into scratch[0] (all threads participate).
template <class P>
__device__ void block_tree_sum(P *scratch) {
    const unsigned tid = threadIdx.x;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            P x = scratch[tid];
            x.add(scratch[tid + s]);
            scratch[tid] = x;
        }
        __syncthreads();
    }
}

// grid (blocks_per_window, windows), REDUCE_THREADS threads: out[w*bpw + b] =
// sum over this block's buckets of (index + 1) * bucket.
template <class P>
__global__ void reduce_kernel(const P *buckets, uint32_t nb, uint32_t per_thread, P *scratch,
                              P *out) {
    const uint32_t w = blockIdx.y, b = blockIdx.x, bpw = gridDim.x;
    const uint32_t tid = threadIdx.x;
    const uint32_t t = b * blockDim.x + tid;
    const uint64_t lo = (uint64_t)t * per_thread;
    P run = P::inf(), acc = P::inf();
    if (lo < nb) {
        const P *bk = buckets + (size_t)w * nb;
        uint64_t hi64 = lo + per_thread;
        uint32_t hi = (uint32_t)(hi64 < nb ? hi64 : nb);
        for (uint32_t x = hi; x > lo; x--) {
            run.add(bk[x - 1]);
            acc.add(run);
        }
        // acc = sum (x - lo + 1) * B_x; add lo * run for the weights x + 1 (double-and-add
        // from lo's top bit: lo < nb, so about c of 64 bits).
        if (lo != 0) {
            P q = run;
            for (int bit = 62 - __clzll((long long)lo); bit >= 0; bit--) {
                q = q.dbl();
                if ((lo >> bit) & 1) q.add(run);
            }
            acc.add(q);
        }
    }
    P *sc = scratch + (size_t)(w * bpw + b) * blockDim.x;
    sc[tid] = acc;
    block_tree_sum(sc);
    if (tid == 0) out[w * bpw + b] = sc[0];
}

// flags[i]: scalar neither 0 nor 1 (bucket path); ones[i]: scalar exactly 1.
__global__ void classify_kernel(const fr_t *scalars, uint32_t m, uint8_t *flags, uint8_t *ones) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const fr_t s = scalars[i];
    const bool one = s.is_one();
    flags[i] = (s.is_zero() || one) ? 0 : 1;
    ones[i] = one ? 1 : 0;
}

// partial[blockIdx.x] += sum of points[idx[j]], j < *count (the points whose scalar is 1,
// compacted so that every lane of a warp adds).
template <class P, class A>
__global__ void ones_kernel(const uint32_t *idx, const uint32_t *count, const A *points,
                            P *scratch, P *partial) {
    P acc = P::inf();
    const uint32_t m = *count, stride = gridDim.x * blockDim.x;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if constexpr (sizeof(A) <= sizeof(g1_affine)) {
        uint32_t j = t;
        // G1: the next point is loaded while this one is added (one block of 8 warps per SM
        // leaves the dependent gather exposed otherwise); G2's points would spill registers.
        A next;
        if (j < m) next = points[idx[j]];
        for (; j < m; j += stride) {
            const A p = next;
            if (j + stride < m) next = points[idx[j + stride]];
            acc.add_affine(p);
        }
    } else {
        for (uint32_t j = t; j < m; j += stride) acc.add_affine(points[idx[j]]);
    }
    P *sc = scratch + (size_t)blockIdx.x * blockDim.x;
    sc[threadIdx.x] = acc;
    block_tree_sum(sc);
    if (threadIdx.x == 0) partial[blockIdx.x].add(sc[0]);
}

// ---------------------------------------------------------------------------------------
// Plan and workspace layout

size_t align_up(size_t x) { return (x + 255) & ~(size_t)255; }

struct layout {
    size_t keys_all, vals_all, keys_sorted, vals_sorted, temp, buckets, carry_first, carry_last,
        carry_key, scratch, results, flags, tail_idx, tail_count, ones_scratch, ones_flags,
        ones_idx, ones_count, pbuf[2],
        sbuf[2], total;
    size_t temp_bytes;
};

template <int CURVE>
snarkd_status make_layout(const snarkd_msm_plan &p, layout &l) {
    using P = typename curve_types<CURVE>::point;
    using A = typename curve_types<CURVE>::affine;
    const size_t chunk = p.chunk;
    const size_t nb = (size_t)1 << (p.window_bits - 1);
    const size_t nseg = (chunk + SEG - 1) / SEG;
    size_t sort_bytes = 0, select_bytes = 0;
    SNARKD_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, (const uint32_t *)nullptr,
                                                 (uint32_t *)nullptr, (const uint32_t *)nullptr,
                                                 (uint32_t *)nullptr, (int)chunk, 0,
                                                 (int)p.window_bits));
    if (p.flags & SNARKD_MSM_SPLIT01) {
        SNARKD_CHECK(cub::DeviceSelect::Flagged(nullptr, select_bytes,
                                                cub::CountingInputIterator<uint32_t>(0),
                                                (const uint8_t *)nullptr, (uint32_t *)nullptr,
                                                (uint32_t *)nullptr, (int)chunk));
    }
    l.temp_bytes = std::max(sort_bytes, select_bytes);
    size_t off = 0;
    auto take = [&](size_t bytes) {
        size_t at = off;
        off += align_up(bytes);
        return at;
    };
    l.keys_all = take((size_t)p.num_windows * chunk * 4);
    l.vals_all = take((size_t)p.num_windows * chunk * 4);
    l.keys_sorted = take((size_t)p.num_windows * chunk * 4);
    l.vals_sorted = take((size_t)p.num_windows * chunk * 4);
    l.temp = take(l.temp_bytes);
    l.buckets = take((size_t)p.num_windows * nb * sizeof(P));
    l.carry_first = take((size_t)p.num_windows * nseg * sizeof(P));
    l.carry_last = take((size_t)p.num_windows * nseg * sizeof(P));
    l.carry_key = take((size_t)p.num_windows * nseg * 4);
    l.scratch = take((size_t)p.num_windows * p.blocks_per_window * REDUCE_THREADS * sizeof(P));
    l.results = take((size_t)p.out_points * sizeof(P));
    l.flags = l.tail_idx = l.tail_count = l.ones_scratch = 0;
    l.ones_flags = l.ones_idx = l.ones_count = 0;
    if (p.flags & SNARKD_MSM_SPLIT01) {
        l.flags = take(chunk);
        l.tail_idx = take(chunk * 4);
        l.tail_count = take(4);
        l.ones_scratch = take((size_t)p.ones_blocks * ONES_THREADS * sizeof(P));
        l.ones_flags = take(chunk);
        l.ones_idx = take(chunk * 4);
        l.ones_count = take(4);
    }
    l.pbuf[0] = l.pbuf[1] = l.sbuf[0] = l.sbuf[1] = 0;
    if (p.flags & SNARKD_MSM_POINTS_ON_HOST) {
        l.pbuf[0] = take(chunk * sizeof(A));
        l.pbuf[1] = take(chunk * sizeof(A));
    }
    if (p.flags & SNARKD_MSM_SCALARS_ON_HOST) {
        l.sbuf[0] = take(chunk * sizeof(fr_t));
        l.sbuf[1] = take(chunk * sizeof(fr_t));
    }
    l.total = off;
    return SNARKD_OK;
}

uint32_t lg2_ceil(uint64_t n) {
    uint32_t l = 0;
    while (((uint64_t)1 << l) < n) l++;
    return l;
}

// The window for 2^lg scalars. Only windows whose top window still spans most of a window are
// used: signed digits cover 256 bits in ceil(256/c) windows, and where the last one holds only
// a few of the scalar's 255 bits (c = 12, 14, 15, 17, 18, 21: 0 to 3 bits), nearly every
// scalar lands in a handful of its buckets, and those runs of one bucket are merged serially.
// 8, 13, 16 and 20 leave 7, 8, 15 and 15 bits. c = 20 has 13 windows instead of 16 (19% fewer
// additions) for 2^19 buckets per window.
uint32_t window_for(int lg) {
    if (lg >= 23) return 20;
    if (lg >= 18) return 16;
    if (lg >= 14) return 13;
    return 8;
}

// ---------------------------------------------------------------------------------------
// Execution

// Streams and events of one run, from the device's pools.
struct run_state {
    int dev = 0;
    cudaStream_t compute = nullptr, copy = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaEvent_t copied[2] = {nullptr, nullptr}, used[2] = {nullptr, nullptr};
    snarkd_status acquire() {
        snarkd_status s = snarkd::pool_get_stream(&dev, &compute);
        if (s == SNARKD_OK) s = snarkd::pool_get_stream(&dev, &copy);
        if (s == SNARKD_OK) s = snarkd::pool_get_event(true, &dev, &start);
        if (s == SNARKD_OK) s = snarkd::pool_get_event(true, &dev, &stop);
        for (int i = 0; i < 2 && s == SNARKD_OK; i++) {
            s = snarkd::pool_get_event(false, &dev, &copied[i]);
            if (s == SNARKD_OK) s = snarkd::pool_get_event(false, &dev, &used[i]);
        }
        return s;
    }
    ~run_state() {
        // Both streams are idle once put back (pool_put_stream synchronizes), so no event below
        // is still pending when it is reused.
        snarkd::pool_put_stream(dev, compute);
        snarkd::pool_put_stream(dev, copy);
        for (int i = 0; i < 2; i++) {
            snarkd::pool_put_event(false, dev, copied[i]);
            snarkd::pool_put_event(false, dev, used[i]);
        }
        snarkd::pool_put_event(true, dev, start);
        snarkd::pool_put_event(true, dev, stop);
    }
};

unsigned nblocks(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

template <int CURVE>
snarkd_status msm_run(const snarkd_msm_plan &p, const void *points, const void *scalars,
                      uint8_t *ws, void *out, float *elapsed_ms, uint64_t *bucket_terms) {
    using P = typename curve_types<CURVE>::point;
    using A = typename curve_types<CURVE>::affine;
    layout l;
    snarkd_status s = make_layout<CURVE>(p, l);
    if (s != SNARKD_OK) return s;
    if (l.total != p.workspace_bytes) {
        set_last_error("msm: plan does not match its workspace (%zu vs %llu bytes)", l.total,
                       (unsigned long long)p.workspace_bytes);
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    const bool ph = p.flags & SNARKD_MSM_POINTS_ON_HOST, sh = p.flags & SNARKD_MSM_SCALARS_ON_HOST;
    const bool split = p.flags & SNARKD_MSM_SPLIT01;
    const uint32_t c = p.window_bits, W = p.num_windows;
    const size_t nb = (size_t)1 << (c - 1);
    const size_t chunk = p.chunk, n = p.npoints;
    uint32_t *keys_all = (uint32_t *)(ws + l.keys_all), *vals_all = (uint32_t *)(ws + l.vals_all);
    uint32_t *keys_sorted = (uint32_t *)(ws + l.keys_sorted);
    uint32_t *vals_sorted = (uint32_t *)(ws + l.vals_sorted);
    void *temp = ws + l.temp;
    P *buckets = (P *)(ws + l.buckets);
    P *carry_first = (P *)(ws + l.carry_first), *carry_last = (P *)(ws + l.carry_last);
    uint32_t *carry_key = (uint32_t *)(ws + l.carry_key);
    P *scratch = (P *)(ws + l.scratch), *results = (P *)(ws + l.results);
    P *ones_partial = results + (size_t)W * p.blocks_per_window;

    run_state rs;
    if ((s = rs.acquire()) != SNARKD_OK) return s;
    cudaStream_t st = rs.compute;
    SNARKD_CHECK(cudaEventRecord(rs.start, st));
    SNARKD_CHECK(cudaMemsetAsync(buckets, 0, (size_t)W * nb * sizeof(P), st));
    SNARKD_CHECK(cudaMemsetAsync(results, 0, (size_t)p.out_points * sizeof(P), st));
    // The copy stream must not overwrite buffers before the memsets are ordered; it only
    // touches pbuf/sbuf, which nothing else uses, so no dependency is needed for them.

    const size_t nchunks = (n + chunk - 1) / chunk;
    uint64_t terms = 0;
    auto issue_copy = [&](size_t k) -> snarkd_status {
        const int b = (int)(k & 1);
        const size_t off = k * chunk, m = std::min(chunk, n - off);
        SNARKD_CHECK(cudaStreamWaitEvent(rs.copy, rs.used[b], 0));
        if (ph)
            SNARKD_CHECK(cudaMemcpyAsync(ws + l.pbuf[b], (const A *)points + off, m * sizeof(A),
                                         cudaMemcpyHostToDevice, rs.copy));
        if (sh)
            SNARKD_CHECK(cudaMemcpyAsync(ws + l.sbuf[b], (const fr_t *)scalars + off,
                                         m * sizeof(fr_t), cudaMemcpyHostToDevice, rs.copy));
        SNARKD_CHECK(cudaEventRecord(rs.copied[b], rs.copy));
        return SNARKD_OK;
    };
    // Mark both buffers free before the first copies.
    SNARKD_CHECK(cudaEventRecord(rs.used[0], st));
    SNARKD_CHECK(cudaEventRecord(rs.used[1], st));
    if (ph || sh) {
        if ((s = issue_copy(0)) != SNARKD_OK) return s;
    }
    for (size_t k = 0; k < nchunks; k++) {
        const int b = (int)(k & 1);
        const size_t off = k * chunk;
        const uint32_t m = (uint32_t)std::min(chunk, n - off);
        if ((ph || sh) && k + 1 < nchunks) {
            if ((s = issue_copy(k + 1)) != SNARKD_OK) return s;
        }
        if (ph || sh) SNARKD_CHECK(cudaStreamWaitEvent(st, rs.copied[b], 0));
        const A *pts = ph ? (const A *)(ws + l.pbuf[b]) : (const A *)points + off;
        const fr_t *scs = sh ? (const fr_t *)(ws + l.sbuf[b]) : (const fr_t *)scalars + off;

        const uint32_t *idx = nullptr;
        uint32_t mt = m;
        if (split) {
            uint8_t *flags = ws + l.flags;
            uint32_t *tail_idx = (uint32_t *)(ws + l.tail_idx);
            uint32_t *tail_count = (uint32_t *)(ws + l.tail_count);
            uint8_t *ones_flags = ws + l.ones_flags;
            uint32_t *ones_idx = (uint32_t *)(ws + l.ones_idx);
            uint32_t *ones_count = (uint32_t *)(ws + l.ones_count);
            classify_kernel<<<nblocks(m, 256), 256, 0, st>>>(scs, m, flags, ones_flags);
            SNARKD_CHECK(cudaGetLastError());
            size_t tb = l.temp_bytes;
            SNARKD_CHECK(cub::DeviceSelect::Flagged(temp, tb, cub::CountingInputIterator<uint32_t>(0),
                                                    ones_flags, ones_idx, ones_count, (int)m, st));
            ones_kernel<P, A><<<p.ones_blocks, ONES_THREADS, 0, st>>>(
                ones_idx, ones_count, pts, (P *)(ws + l.ones_scratch), ones_partial);
            SNARKD_CHECK(cudaGetLastError());
            tb = l.temp_bytes;
            SNARKD_CHECK(cub::DeviceSelect::Flagged(temp, tb, cub::CountingInputIterator<uint32_t>(0),
                                                    flags, tail_idx, tail_count, (int)m, st));
            // Wait for the kernels first: a copy into pageable memory would wait for them inside
            // the driver, stalling every other thread's CUDA calls (another worker's uploads).
            uint32_t h_count = 0;
            SNARKD_CHECK(cudaStreamSynchronize(st));
            SNARKD_CHECK(cudaMemcpyAsync(&h_count, tail_count, 4, cudaMemcpyDeviceToHost, st));
            SNARKD_CHECK(cudaStreamSynchronize(st));
            mt = h_count;
            idx = tail_idx;
        }
        terms += mt;
        if (mt > 0) {
            digits_kernel<<<nblocks(mt, 256), 256, 0, st>>>(scs, idx, mt, c, W, chunk, keys_all,
                                                            vals_all);
            SNARKD_CHECK(cudaGetLastError());
            const uint32_t nseg = (mt + SEG - 1) / SEG;
            const uint32_t carry_stride = (uint32_t)((chunk + SEG - 1) / SEG);
            for (uint32_t w = 0; w < W; w++) {
                size_t tb = l.temp_bytes;
                SNARKD_CHECK(cub::DeviceRadixSort::SortPairs(
                    temp, tb, keys_all + (size_t)w * chunk, keys_sorted + (size_t)w * chunk,
                    vals_all + (size_t)w * chunk, vals_sorted + (size_t)w * chunk, (int)mt, 0,
                    (int)c, st));
            }
            // All windows' bucket passes in one launch: W times the threads of one window. Runs
            // average mt / nb entries per bucket; below 64 they go through the stash, except in
            // G1's first chunk, where the buckets are empty and adding one is a copy (2^24
            // points as one chunk: 103 ms without the stash, 109 ms with it).
            const dim3 grid(nblocks(nseg, 128), W);
            const bool stash = mt < 64 * nb && (k > 0 || CURVE == SNARKD_CURVE_G2);
            auto accumulate = stash ? accumulate_kernel<P, A, true> : accumulate_kernel<P, A, false>;
            accumulate<<<grid, 128, 0, st>>>(keys_sorted, vals_sorted, mt, pts, buckets,
                                             carry_first, carry_last, carry_key, chunk,
                                             (uint32_t)nb, carry_stride);
            SNARKD_CHECK(cudaGetLastError());
            merge_kernel<P><<<grid, 128, 0, st>>>(keys_sorted, mt, nseg, carry_first, carry_last,
                                                  carry_key, buckets, chunk, (uint32_t)nb,
                                                  carry_stride);
            SNARKD_CHECK(cudaGetLastError());
        }
        SNARKD_CHECK(cudaEventRecord(rs.used[b], st));
    }
    const uint32_t threads_per_window = p.blocks_per_window * REDUCE_THREADS;
    const uint32_t per_thread =
        (uint32_t)std::max<size_t>(1, (nb + threads_per_window - 1) / threads_per_window);
    reduce_kernel<P><<<dim3(p.blocks_per_window, W), REDUCE_THREADS, 0, st>>>(
        buckets, (uint32_t)nb, per_thread, scratch, results);
    SNARKD_CHECK(cudaGetLastError());
    SNARKD_CHECK(cudaEventRecord(rs.stop, st));
    // As above: the copy into pageable memory is issued only once the kernels are done.
    SNARKD_CHECK(cudaStreamSynchronize(st));
    SNARKD_CHECK(cudaMemcpyAsync(out, results, (size_t)p.out_points * sizeof(P),
                                 cudaMemcpyDeviceToHost, st));
    SNARKD_CHECK(cudaStreamSynchronize(st));
    if (elapsed_ms) SNARKD_CHECK(cudaEventElapsedTime(elapsed_ms, rs.start, rs.stop));
    if (bucket_terms) *bucket_terms = terms;
    return SNARKD_OK;
}
}  // namespace

extern "C" snarkd_status snarkd_msm_plan_make(int32_t ordinal, int32_t curve, uint64_t npoints,
                                              snarkd_msm_plan *plan) {
    if (plan == nullptr || (curve != SNARKD_CURVE_G1 && curve != SNARKD_CURVE_G2) ||
        npoints == 0 || npoints > ((uint64_t)1 << 31) - 1 ||
        (plan->window_bits != 0 && (plan->window_bits < 4 || plan->window_bits > 24)) ||
        plan->chunk_log > 30 || (plan->flags & ~7u)) {
        snarkd::set_last_error("msm_plan_make: bad arguments");
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    snarkd_status s = snarkd::select_device(ordinal);
    if (s != SNARKD_OK) return s;
    int dev = 0, sms = 0;
    SNARKD_CHECK(cudaGetDevice(&dev));
    SNARKD_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    snarkd_msm_plan &p = *plan;
    p.npoints = npoints;
    uint32_t chunk_log = p.chunk_log;
    if (chunk_log == 0)
        chunk_log = (p.flags & (SNARKD_MSM_POINTS_ON_HOST | SNARKD_MSM_SCALARS_ON_HOST))
                        ? DEFAULT_STREAM_CHUNK_LOG
                        : DEFAULT_RESIDENT_CHUNK_LOG;
    p.chunk = std::min<uint64_t>(npoints, (uint64_t)1 << chunk_log);
    if (p.window_bits == 0) {
        // The window by the size that enters the buckets (a chunk): every point costs one
        // addition per window, and the buckets (kept across chunks) one reduction per MSM.
        // With SPLIT01 most scalars never reach the buckets, so the window is sized for a
        // sixteenth of the chunk.
        const int lg = (int)lg2_ceil(p.chunk) - ((p.flags & SNARKD_MSM_SPLIT01) ? 4 : 0);
        p.window_bits = window_for(lg);
    }
    p.num_windows = (256 + p.window_bits - 1) / p.window_bits;
    const uint32_t nb = 1u << (p.window_bits - 1);
    p.blocks_per_window = std::max(1u, nb / (REDUCE_THREADS * reduce_per_thread(nb)));
    p.ones_blocks = (p.flags & SNARKD_MSM_SPLIT01) ? (uint32_t)(2 * sms) : 0;
    p.out_points = p.num_windows * p.blocks_per_window + p.ones_blocks;
    p.reserved = 0;
    layout l;
    s = curve == SNARKD_CURVE_G1 ? make_layout<SNARKD_CURVE_G1>(p, l)
                                 : make_layout<SNARKD_CURVE_G2>(p, l);
    if (s != SNARKD_OK) return s;
    p.workspace_bytes = l.total;
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_msm_run(int32_t ordinal, int32_t curve,
                                        const snarkd_msm_plan *plan, const void *points,
                                        const void *scalars, void *workspace, void *out,
                                        float *elapsed_ms, uint64_t *bucket_terms) {
    if (plan == nullptr || points == nullptr || scalars == nullptr || workspace == nullptr ||
        out == nullptr || (curve != SNARKD_CURVE_G1 && curve != SNARKD_CURVE_G2)) {
        snarkd::set_last_error("msm_run: bad arguments");
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    snarkd_status s = snarkd::select_device(ordinal);
    if (s != SNARKD_OK) return s;
    if (curve == SNARKD_CURVE_G1)
        return msm_run<SNARKD_CURVE_G1>(*plan, points, scalars, (uint8_t *)workspace, out,
                                        elapsed_ms, bucket_terms);
    return msm_run<SNARKD_CURVE_G2>(*plan, points, scalars, (uint8_t *)workspace, out,
                                    elapsed_ms, bucket_terms);
}
