// Montgomery arithmetic for the BLS12-381 fields, usable on host and device.
//
// Layout: an element is N little-endian 32-bit limbs holding the Montgomery form a·2^(32N) mod m.
// This is byte-for-byte gnark-crypto's fr.Element ([4]uint64, R = 2^256) and fp.Element
// ([6]uint64, R = 2^384) on little-endian machines, so Go slices reach the device unconverted.
// Fp2 = Fp[u]/(u^2 + 1) is laid out as (A0, A1), gnark-crypto's E2.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define SNARKD_HD __host__ __device__ __forceinline__
#else
#define SNARKD_HD inline
#endif

namespace snarkd {

// Constants of one Montgomery field. m: modulus, one: R mod m, inv: -m^-1 mod 2^32.
template <int N>
struct mont_params {
    uint32_t m[N];
    uint32_t one[N];
    uint32_t inv;
};

struct fp_tag {
    static constexpr int N = 12;
};
struct fr_tag {
    static constexpr int N = 8;
};

#ifdef __CUDACC__
#define SNARKD_CONST __constant__
#else
#define SNARKD_CONST
#endif

#ifdef __CUDA_ARCH__
// Carry-chain primitives. The carry flag lives between consecutive asm statements of one
// straight-line sequence (PTX's CC register); nothing between them may touch it.
namespace ptx {
#define SNARKD_PTX2(name, op)                                                   \
    __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b) {           \
        uint32_t r;                                                             \
        asm volatile(op " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));             \
        return r;                                                               \
    }
#define SNARKD_PTX3(name, op)                                                   \
    __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b, uint32_t c) { \
        uint32_t r;                                                             \
        asm volatile(op " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); \
        return r;                                                               \
    }
SNARKD_PTX2(add_cc, "add.cc.u32")
SNARKD_PTX2(addc_cc, "addc.cc.u32")
SNARKD_PTX2(addc, "addc.u32")
SNARKD_PTX2(sub_cc, "sub.cc.u32")
SNARKD_PTX2(subc_cc, "subc.cc.u32")
SNARKD_PTX2(subc, "subc.u32")
SNARKD_PTX3(mad_lo_cc, "mad.lo.cc.u32")
SNARKD_PTX3(madc_lo_cc, "madc.lo.cc.u32")
SNARKD_PTX3(mad_hi_cc, "mad.hi.cc.u32")
SNARKD_PTX3(madc_hi_cc, "madc.hi.cc.u32")
SNARKD_PTX3(madc_hi, "madc.hi.u32")
#undef SNARKD_PTX2
#undef SNARKD_PTX3
}  // namespace ptx
#endif

// BLS12-381 base field p (381 bits).
static SNARKD_CONST const uint32_t FP_MOD[12] = {
    0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
    0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
static SNARKD_CONST const uint32_t FP_ONE[12] = {
    0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
    0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
// BLS12-381 scalar field r (255 bits).
static SNARKD_CONST const uint32_t FR_MOD[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                                0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
static SNARKD_CONST const uint32_t FR_ONE[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                                                0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};

// Host copies for code that runs on the host (the __constant__ arrays live on the device).
static const uint32_t FP_MOD_H[12] = {
    0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
    0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
static const uint32_t FP_ONE_H[12] = {
    0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
    0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
static const uint32_t FR_MOD_H[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                     0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
static const uint32_t FR_ONE_H[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                                     0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};

static constexpr uint32_t FP_INV = 0xfffcfffd;
static constexpr uint32_t FR_INV = 0xffffffff;

template <class Tag>
struct field_consts;

template <>
struct field_consts<fp_tag> {
    SNARKD_HD static uint32_t mod(int i) {
#ifdef __CUDA_ARCH__
        return FP_MOD[i];
#else
        return FP_MOD_H[i];
#endif
    }
    SNARKD_HD static uint32_t one(int i) {
#ifdef __CUDA_ARCH__
        return FP_ONE[i];
#else
        return FP_ONE_H[i];
#endif
    }
    static constexpr uint32_t inv = FP_INV;
};

template <>
struct field_consts<fr_tag> {
    SNARKD_HD static uint32_t mod(int i) {
#ifdef __CUDA_ARCH__
        return FR_MOD[i];
#else
        return FR_MOD_H[i];
#endif
    }
    SNARKD_HD static uint32_t one(int i) {
#ifdef __CUDA_ARCH__
        return FR_ONE[i];
#else
        return FR_ONE_H[i];
#endif
    }
    static constexpr uint32_t inv = FR_INV;
};

// An element of a prime field in Montgomery form. Both moduli leave at least one spare top bit,
// so a + b never overflows N limbs.
template <class Tag>
struct alignas(16) mont {
    static constexpr int N = Tag::N;
    using C = field_consts<Tag>;
    uint32_t v[N];

    SNARKD_HD static mont zero() {
        mont r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }
    SNARKD_HD static mont one() {
        mont r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = C::one(i);
        return r;
    }
    SNARKD_HD bool is_zero() const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    SNARKD_HD bool operator==(const mont &o) const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
        return acc == 0;
    }
    SNARKD_HD bool operator!=(const mont &o) const { return !(*this == o); }
    SNARKD_HD bool is_one() const { return *this == one(); }

    // r = t - m if t >= m, else t (t < 2m).
    SNARKD_HD static void reduce_once(uint32_t t[N]) {
#ifdef __CUDA_ARCH__
        uint32_t s[N];
        s[0] = ptx::sub_cc(t[0], C::mod(0));
#pragma unroll
        for (int i = 1; i < N; i++) s[i] = ptx::subc_cc(t[i], C::mod(i));
        const uint32_t borrow = ptx::subc(0, 0);  // all ones when t < m
#pragma unroll
        for (int i = 0; i < N; i++) t[i] = borrow ? t[i] : s[i];
#else
        reduce_once_host(t);
#endif
    }
    SNARKD_HD static void reduce_once_host(uint32_t t[N]) {
        uint32_t s[N];
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)t[i] - C::mod(i) - borrow;
            s[i] = (uint32_t)d;
            borrow = (d >> 63) & 1;
        }
        if (!borrow) {
#pragma unroll
            for (int i = 0; i < N; i++) t[i] = s[i];
        }
    }

    SNARKD_HD friend mont operator+(const mont &a, const mont &b) {
        mont r;
#ifdef __CUDA_ARCH__
        r.v[0] = ptx::add_cc(a.v[0], b.v[0]);
#pragma unroll
        for (int i = 1; i < N; i++) r.v[i] = ptx::addc_cc(a.v[i], b.v[i]);
        reduce_once(r.v);
        return r;
#else
        uint64_t carry = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t s = (uint64_t)a.v[i] + b.v[i] + carry;
            r.v[i] = (uint32_t)s;
            carry = s >> 32;
        }
        reduce_once(r.v);
        return r;
#endif
    }

    SNARKD_HD friend mont operator-(const mont &a, const mont &b) {
        mont r;
#ifdef __CUDA_ARCH__
        r.v[0] = ptx::sub_cc(a.v[0], b.v[0]);
#pragma unroll
        for (int i = 1; i < N; i++) r.v[i] = ptx::subc_cc(a.v[i], b.v[i]);
        const uint32_t mask = ptx::subc(0, 0);  // all ones on borrow: add m back
        r.v[0] = ptx::add_cc(r.v[0], C::mod(0) & mask);
#pragma unroll
        for (int i = 1; i < N; i++) r.v[i] = ptx::addc_cc(r.v[i], C::mod(i) & mask);
        return r;
#else
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)a.v[i] - b.v[i] - borrow;
            r.v[i] = (uint32_t)d;
            borrow = (d >> 63) & 1;
        }
        if (borrow) {
            uint64_t carry = 0;
#pragma unroll
            for (int i = 0; i < N; i++) {
                uint64_t s = (uint64_t)r.v[i] + C::mod(i) + carry;
                r.v[i] = (uint32_t)s;
                carry = s >> 32;
            }
        }
        return r;
#endif
    }

    SNARKD_HD mont neg() const {
        if (is_zero()) return *this;
        mont r;
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)C::mod(i) - v[i] - borrow;
            r.v[i] = (uint32_t)d;
            borrow = (d >> 63) & 1;
        }
        return r;
    }

    SNARKD_HD mont dbl() const { return *this + *this; }

    // Montgomery product a·b·R^-1 (CIOS, 32-bit words).
    SNARKD_HD static mont mul_body(const mont &a, const mont &b) {
#ifdef __CUDA_ARCH__
        return mul_ptx(a, b);
#else
        return mul_host(a, b);
#endif
    }

#ifdef __CUDA_ARCH__
    // acc += x[0]·y + x[2]·y·W^2 + ... + x[N-2]·y·W^(N-2) (W = 2^32) on one carry chain: every
    // product's low and high words go into the aligned pair acc[2k], acc[2k+1], which the
    // compiler turns into one 64-bit multiply-add per pair. CARRY_IN adds the carry flag at
    // word 0; the carry out of word N-1 is left in the flag (or dropped when KEEP_CARRY is off).
    template <bool CARRY_IN, bool KEEP_CARRY>
    __device__ __forceinline__ static void mad_pairs(uint32_t acc[N], const uint32_t *x,
                                                     uint32_t y) {
        acc[0] = CARRY_IN ? ptx::madc_lo_cc(x[0], y, acc[0]) : ptx::mad_lo_cc(x[0], y, acc[0]);
        acc[1] = ptx::madc_hi_cc(x[0], y, acc[1]);
#pragma unroll
        for (int k = 2; k < N - 2; k += 2) {
            acc[k] = ptx::madc_lo_cc(x[k], y, acc[k]);
            acc[k + 1] = ptx::madc_hi_cc(x[k], y, acc[k + 1]);
        }
        acc[N - 2] = ptx::madc_lo_cc(x[N - 2], y, acc[N - 2]);
        acc[N - 1] = KEEP_CARRY ? ptx::madc_hi_cc(x[N - 2], y, acc[N - 1])
                                : ptx::madc_hi(x[N - 2], y, acc[N - 1]);
    }

    // acc[s + 2k], acc[s + 2k + 1] += x[j + 2k]·y for k < cnt, on one carry chain. The carry goes
    // into acc[s + 2·cnt] when LEN leaves room for it; sqr_ptx's rows only aim it at words that
    // hold at most one earlier carry, so it never propagates further. Beyond LEN the caller's
    // bound makes it zero.
    template <int LEN>
    __device__ __forceinline__ static void mad_run(uint32_t *acc, int s, const uint32_t *x, int j,
                                                   int cnt, uint32_t y) {
        if (cnt <= 0) return;
#pragma unroll
        for (int k = 0; k < cnt; k++) {
            acc[s + 2 * k] = k == 0 ? ptx::mad_lo_cc(x[j], y, acc[s])
                                    : ptx::madc_lo_cc(x[j + 2 * k], y, acc[s + 2 * k]);
            acc[s + 2 * k + 1] = ptx::madc_hi_cc(x[j + 2 * k], y, acc[s + 2 * k + 1]);
        }
        if (s + 2 * cnt < LEN) acc[s + 2 * cnt] = ptx::addc(acc[s + 2 * cnt], 0);
    }

    // T = E + W·O for a 2N-word value kept as E (2N words, products at even positions) and O
    // (2N-1 words, O[k] at position k+1), so that every product lands in an aligned register
    // pair. The caller's bound keeps T below W^(2N).
    __device__ __forceinline__ static void wide_join(const uint32_t E[2 * N],
                                                     const uint32_t O[2 * N - 1],
                                                     uint32_t T[2 * N]) {
        T[0] = E[0];
        T[1] = ptx::add_cc(E[1], O[0]);
#pragma unroll
        for (int k = 2; k < 2 * N - 1; k++) T[k] = ptx::addc_cc(E[k], O[k - 1]);
        T[2 * N - 1] = ptx::addc(E[2 * N - 1], O[2 * N - 2]);
    }

    // The row steps of the products below keep T = E + W·O in two arrays: E takes the
    // products of even words, O those of odd words, so every product lands in an aligned
    // register pair (see mul_ptx).

    // Row i adds x·y to T; the first row sets T. f, the word left by the previous row's
    // division, enters at position 0 and its carry at O's word 0.
    __device__ __forceinline__ static void row_mul(uint32_t E[N], uint32_t O[N], const uint32_t *x,
                                                   uint32_t y, uint32_t f, int i) {
        if (i == 0) {
#pragma unroll
            for (int k = 0; k < N; k += 2) {
                const uint64_t pe = (uint64_t)x[k] * y, po = (uint64_t)x[k + 1] * y;
                E[k] = (uint32_t)pe;
                E[k + 1] = (uint32_t)(pe >> 32);
                O[k] = (uint32_t)po;
                O[k + 1] = (uint32_t)(po >> 32);
            }
        } else {
            E[0] = ptx::add_cc(E[0], f);
            mad_pairs<true, false>(O, x + 1, y);
            mad_pairs<false, true>(E, x, y);
            O[N - 1] = ptx::addc(O[N - 1], 0);
        }
    }

    // T += x·y within a row (after row_mul).
    __device__ __forceinline__ static void row_mad(uint32_t E[N], uint32_t O[N], const uint32_t *x,
                                                   uint32_t y) {
        mad_pairs<false, false>(O, x + 1, y);
        mad_pairs<false, true>(E, x, y);
        O[N - 1] = ptx::addc(O[N - 1], 0);
    }

    // After T += q·m made E[0] zero: T / W = O + E[1] + E[2..N-1]·W, so E[1] becomes the next
    // row's f, O the next E and E's words 2.. the next O (a shift by two keeps pairs aligned).
    __device__ __forceinline__ static void row_divide(uint32_t E[N], uint32_t O[N], uint32_t &f,
                                                      int i) {
        f = E[1];
        if (i + 1 < N) {
            uint32_t e[N];
#pragma unroll
            for (int k = 0; k < N; k++) e[k] = O[k];
#pragma unroll
            for (int k = 0; k < N - 2; k++) O[k] = E[k + 2];
            O[N - 2] = 0;
            O[N - 1] = 0;
#pragma unroll
            for (int k = 0; k < N; k++) E[k] = e[k];
        }
    }

    // Row i's reduction: T += q·m with q = E[0]·(-m^-1) mod W, then row_divide.
    __device__ __forceinline__ static void row_reduce(uint32_t E[N], uint32_t O[N],
                                                      const uint32_t m[N], uint32_t &f, int i) {
        const uint32_t q = E[0] * C::inv;
        mad_pairs<false, true>(E, m, q);
        O[N - 1] = ptx::addc(O[N - 1], 0);
        mad_pairs<false, false>(O, m + 1, q);
        row_divide(E, O, f, i);
    }

    // The value after the last row: O + f + E[2..N-1]·W (below 2m; not reduced).
    __device__ __forceinline__ static mont row_result(const uint32_t E[N], const uint32_t O[N],
                                                      uint32_t f) {
        mont r;
        r.v[0] = ptx::add_cc(O[0], f);
#pragma unroll
        for (int k = 1; k < N - 1; k++) r.v[k] = ptx::addc_cc(O[k], E[k + 1]);
        r.v[N - 1] = ptx::addc(O[N - 1], 0);
        return r;
    }

    // The modulus words, as registers for the multiply-add chains.
    __device__ __forceinline__ static void mod_words(uint32_t m[N]) {
#pragma unroll
        for (int i = 0; i < N; i++) m[i] = C::mod(i);
    }

    // Montgomery reduction T·W^-N of T < m·W^N (result < m). The low half is reduced word by
    // word in mul_ptx's even/odd layout (giving at most m), then the high half (below m) is added.
    __device__ __forceinline__ static mont redc_ptx(const uint32_t T[2 * N]) {
        uint32_t m[N];
        mod_words(m);
        uint32_t E[N], O[N], f = 0;
#pragma unroll
        for (int k = 0; k < N; k++) {
            E[k] = T[k];
            O[k] = 0;
        }
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint32_t q;
            if (i == 0) {
                q = E[0] * C::inv;
                mad_pairs<false, false>(O, m + 1, q);
            } else {
                // f's carry enters at position 1, O's word 0.
                E[0] = ptx::add_cc(E[0], f);
                q = E[0] * C::inv;
                mad_pairs<true, false>(O, m + 1, q);
            }
            mad_pairs<false, true>(E, m, q);
            O[N - 1] = ptx::addc(O[N - 1], 0);
            row_divide(E, O, f, i);
        }
        mont r = row_result(E, O, f);
        r.v[0] = ptx::add_cc(r.v[0], T[N]);
#pragma unroll
        for (int k = 1; k < N; k++) r.v[k] = ptx::addc_cc(r.v[k], T[N + k]);
        reduce_once(r.v);
        return r;
    }

    // a^2: the products a_i·a_j (i < j) once, doubled, plus the squares a_i^2, then one
    // reduction (N(N+1)/2 word products instead of N^2).
    __device__ __forceinline__ static mont sqr_ptx(const mont &a) {
        uint32_t E[2 * N], O[2 * N - 1];
#pragma unroll
        for (int k = 0; k < 2 * N; k++) E[k] = 0;
#pragma unroll
        for (int k = 0; k < 2 * N - 1; k++) O[k] = 0;
#pragma unroll
        for (int i = 0; i < N - 1; i++) {
            // a_j·a_i for j = i+1, i+3, ... at odd positions 2i+1, ...; j = i+2, ... at even ones.
            mad_run<2 * N - 1>(O, 2 * i, a.v, i + 1, (N - i) / 2, a.v[i]);
            mad_run<2 * N>(E, 2 * i + 2, a.v, i + 2, (N - i - 1) / 2, a.v[i]);
        }
        uint32_t S[2 * N], T[2 * N];
        wide_join(E, O, S);
        T[0] = S[0] << 1;
#pragma unroll
        for (int k = 1; k < 2 * N; k++) T[k] = __funnelshift_l(S[k - 1], S[k], 1);
#pragma unroll
        for (int i = 0; i < N; i++) {
            T[2 * i] = i == 0 ? ptx::mad_lo_cc(a.v[0], a.v[0], T[0])
                              : ptx::madc_lo_cc(a.v[i], a.v[i], T[2 * i]);
            T[2 * i + 1] = i + 1 < N ? ptx::madc_hi_cc(a.v[i], a.v[i], T[2 * i + 1])
                                     : ptx::madc_hi(a.v[i], a.v[i], T[2 * i + 1]);
        }
        return redc_ptx(T);
    }

    // a·b - c·d with one reduction: mul_ptx's rows with a·b_i + c·(m - d)_i added per row. The
    // running sum stays below 3m between rows and 4m·W within one, which needs 4m < W^N (Fp's
    // three spare bits; Fr has one); the result is below m + 2m^2/W^N < 2m.
    __device__ __forceinline__ static mont mul_sub_ptx(const mont &a, const mont &b,
                                                       const mont &c, const mont &d) {
        static_assert(N == 12, "mul_sub_ptx needs 4m < W^N: Fp only");
        uint32_t m[N], nd[N];
        mod_words(m);
        nd[0] = ptx::sub_cc(m[0], d.v[0]);
#pragma unroll
        for (int k = 1; k < N; k++) nd[k] = ptx::subc_cc(m[k], d.v[k]);
        uint32_t E[N], O[N], f = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            row_mul(E, O, a.v, b.v[i], f, i);
            row_mad(E, O, c.v, nd[i]);
            row_reduce(E, O, m, f, i);
        }
        mont r = row_result(E, O, f);
        reduce_once(r.v);
        return r;
    }

    // Montgomery product (CIOS by words of b) with the running sum held as two arrays,
    // T = E + W·O: E takes the products of a's and m's even words, O those of the odd words,
    // so every product lands in an aligned register pair and no row needs register moves.
    // Dividing T by W after a row turns O into the next E, and E's words 2.. into the next O
    // (a shift by two words, which keeps pairs aligned); E's word 1 is added into the next E's
    // word 0, its carry entering the next odd chain at word 1. Bounds: with a spare top bit in
    // m, T < 2m < W^N between rows and T < W^(N+1) within one, so the odd chains never carry
    // out and the even chains' carries fit into O's top word.
    __device__ __forceinline__ static mont mul_ptx(const mont &a, const mont &b) {
        static_assert(N % 2 == 0 && N >= 4, "even limb count");
        uint32_t m[N];
        mod_words(m);
        uint32_t E[N], O[N], f = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            row_mul(E, O, a.v, b.v[i], f, i);
            row_reduce(E, O, m, f, i);
        }
        mont r = row_result(E, O, f);
        reduce_once(r.v);
        return r;
    }
#endif

    SNARKD_HD static mont mul_host(const mont &a, const mont &b) {
        uint32_t t[N + 2];
#pragma unroll
        for (int i = 0; i < N + 2; i++) t[i] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t carry = 0;
            const uint32_t bi = b.v[i];
#pragma unroll
            for (int j = 0; j < N; j++) {
                uint64_t s = (uint64_t)a.v[j] * bi + t[j] + carry;
                t[j] = (uint32_t)s;
                carry = s >> 32;
            }
            uint64_t s = (uint64_t)t[N] + carry;
            t[N] = (uint32_t)s;
            t[N + 1] = (uint32_t)(s >> 32);
            const uint32_t m = t[0] * C::inv;
            s = (uint64_t)m * C::mod(0) + t[0];
            carry = s >> 32;
#pragma unroll
            for (int j = 1; j < N; j++) {
                s = (uint64_t)m * C::mod(j) + t[j] + carry;
                t[j - 1] = (uint32_t)s;
                carry = s >> 32;
            }
            s = (uint64_t)t[N] + carry;
            t[N - 1] = (uint32_t)s;
            t[N] = t[N + 1] + (uint32_t)(s >> 32);
        }
        mont r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = t[i];
        reduce_once(r.v);
        return r;
    }

#ifdef __CUDACC__
    __host__ __device__ __noinline__
#else
    inline
#endif
    static mont mul_call(mont a, mont b) {
        return mul_body(a, b);
    }

    // Fp products are out of line on the device: inlining every one makes the G2 code
    // too large for the instruction cache (and for the compiler's patience). mul_call takes
    // its operands by value so that they travel in registers; by reference they went through
    // local memory at every call.
    SNARKD_HD friend mont operator*(const mont &a, const mont &b) {
        if constexpr (N > 8)
            return mul_call(a, b);
        else
            return mul_body(a, b);
    }

    SNARKD_HD static mont sqr_body(const mont &a) {
#ifdef __CUDA_ARCH__
        return sqr_ptx(a);
#else
        return mul_host(a, a);
#endif
    }
    SNARKD_HD static mont mul_sub_body(const mont &a, const mont &b, const mont &c,
                                       const mont &d) {
#ifdef __CUDA_ARCH__
        if constexpr (N == 12) return mul_sub_ptx(a, b, c, d);
#endif
        return mul_body(a, b) - mul_body(c, d);
    }

#ifdef __CUDACC__
    __host__ __device__ __noinline__
#else
    inline
#endif
    static mont sqr_call(mont a) {
        return sqr_body(a);
    }

#ifdef __CUDACC__
    __host__ __device__ __noinline__
#else
    inline
#endif
    static mont mul_sub_call(mont a, mont b, mont c, mont d) {
        return mul_sub_body(a, b, c, d);
    }

    // a^2; on the device N(N+1)/2 word products and one reduction instead of N^2 (Fp: 236
    // multiply instructions against 300).
    SNARKD_HD mont sqr() const {
        if constexpr (N > 8)
            return sqr_call(*this);
        else
            return sqr_body(*this);
    }

    // a·b - c·d; for Fp on the device with one reduction for both products (444 multiply
    // instructions against 600).
    SNARKD_HD static mont mul_sub(const mont &a, const mont &b, const mont &c, const mont &d) {
        if constexpr (N > 8)
            return mul_sub_call(a, b, c, d);
        else
            return a * b - c * d;
    }

    // Canonical (non-Montgomery) value: a·R^-1.
    SNARKD_HD mont from_mont() const {
        mont one_plain = zero();
        one_plain.v[0] = 1;
        return *this * one_plain;
    }
};

using fp_t = mont<fp_tag>;
using fr_t = mont<fr_tag>;

// Fp2 = Fp[u] / (u^2 + 1), gnark-crypto's E2 {A0, A1}.
struct alignas(16) fp2_t {
    fp_t c0, c1;

    SNARKD_HD static fp2_t zero() { return {fp_t::zero(), fp_t::zero()}; }
    SNARKD_HD static fp2_t one() { return {fp_t::one(), fp_t::zero()}; }
    SNARKD_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    SNARKD_HD bool operator==(const fp2_t &o) const { return c0 == o.c0 && c1 == o.c1; }
    SNARKD_HD friend fp2_t operator+(const fp2_t &a, const fp2_t &b) {
        return {a.c0 + b.c0, a.c1 + b.c1};
    }
    SNARKD_HD friend fp2_t operator-(const fp2_t &a, const fp2_t &b) {
        return {a.c0 - b.c0, a.c1 - b.c1};
    }
    SNARKD_HD fp2_t neg() const { return {c0.neg(), c1.neg()}; }
    SNARKD_HD fp2_t dbl() const { return {c0.dbl(), c1.dbl()}; }
    SNARKD_HD friend fp2_t operator*(const fp2_t &a, const fp2_t &b) {
        fp_t t0 = a.c0 * b.c0;
        fp_t t1 = a.c1 * b.c1;
        fp_t t2 = (a.c0 + a.c1) * (b.c0 + b.c1);
        return {t0 - t1, t2 - t0 - t1};
    }
    SNARKD_HD static fp2_t mul_sub(const fp2_t &a, const fp2_t &b, const fp2_t &c,
                                   const fp2_t &d) {
        return a * b - c * d;
    }
    SNARKD_HD fp2_t sqr() const {
        // (a + bu)^2 = (a + b)(a - b) + 2ab·u
        fp_t t0 = (c0 + c1) * (c0 - c1);
        fp_t t1 = c0 * c1;
        return {t0, t1.dbl()};
    }
};

}  // namespace snarkd
