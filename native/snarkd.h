/*
 * snarkd native ABI: the only interface between Go (package gpu, build tag cuda) and the CUDA
 * code in native/. Plain C, no CUDA types, so cgo can include it without nvcc.
 *
 * Conventions:
 *  - every function returns a snarkd_status; 0 is success, otherwise the CUDA error code
 *    (cudaError_t value) or one of the SNARKD_ERR_* codes below;
 *  - snarkd_last_error copies a message for the calling thread's last failure;
 *  - no function aborts the process, and a failed call leaves the CUDA context usable.
 */
#ifndef SNARKD_NATIVE_H
#define SNARKD_NATIVE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t snarkd_status;

/* Errors that are not CUDA runtime errors. Kept well above cudaError_t's range. */
#define SNARKD_OK 0
#define SNARKD_ERR_INVALID_ARGUMENT 100001
#define SNARKD_ERR_NO_DEVICE 100002

/* Copies the calling thread's last error message (NUL-terminated, truncated to len). */
void snarkd_last_error(char *buf, size_t len);

/* What the binding reports about one device. */
typedef struct {
    char name[256];
    uint64_t total_mem;   /* bytes */
    uint64_t free_mem;    /* bytes, as the driver reports at the time of the call */
    int32_t sm_count;
    int32_t cc_major;
    int32_t cc_minor;
    int32_t pci_bus_id;
} snarkd_device_info;

/* Number of CUDA devices visible to this process (0 when there is no driver or GPU). */
snarkd_status snarkd_device_count(int32_t *count);

/* Inventory of device `ordinal`. Queries the driver's free memory for that device only. */
snarkd_status snarkd_device_info_get(int32_t ordinal, snarkd_device_info *out);

/* Runtime and driver versions (e.g. 11080 for 11.8). */
snarkd_status snarkd_versions(int32_t *runtime_version, int32_t *driver_version);


/* ======================================================================================
 * Device memory, host pinned memory and copies.
 *
 * The native kernels never allocate device memory themselves: every buffer they use (data,
 * twiddle tables, MSM scratch) is allocated by package gpu through snarkd_device_alloc and
 * passed in, so the Go-side allocator accounts for every byte. No stream-ordered pools.
 * ====================================================================================== */

/* cudaMalloc on device `ordinal`; cudaErrorMemoryAllocation (2) when the device is full. */
snarkd_status snarkd_device_alloc(int32_t ordinal, size_t bytes, void **ptr);
snarkd_status snarkd_device_free(int32_t ordinal, void *ptr);
/* Page-locked host memory (cudaHostAlloc, portable). */
snarkd_status snarkd_host_alloc(size_t bytes, void **ptr);
snarkd_status snarkd_host_free(void *ptr);
/* Page-locks existing host memory for every device (cudaHostRegister, portable), so that copies
 * from it run at full PCIe speed; snarkd_host_unregister undoes it. */
snarkd_status snarkd_host_register(void *ptr, size_t bytes);
snarkd_status snarkd_host_unregister(void *ptr);
/* Synchronous copies between host (pinned or pageable) and device memory of `ordinal`. */
snarkd_status snarkd_memcpy_htod(int32_t ordinal, void *dst, const void *src, size_t bytes);
snarkd_status snarkd_memcpy_dtoh(int32_t ordinal, void *dst, const void *src, size_t bytes);
snarkd_status snarkd_memset_d(int32_t ordinal, void *dst, int32_t value, size_t bytes);
/* Asynchronous upload on the device's dedicated copy stream (non-blocking, one per device,
 * created on first use). Returns at once with *event_out, an event recorded after the copy, to
 * be passed exactly once to snarkd_event_wait. src must stay valid and unchanged until then
 * (pinned memory, for the copy to be asynchronous). On failure *event_out is NULL and nothing
 * of the copy is still running. */
snarkd_status snarkd_memcpy_htod_async(int32_t ordinal, void *dst, const void *src, size_t bytes,
                                       void **event_out);
/* Waits for an event from snarkd_memcpy_htod_async (cudaEventSynchronize) and destroys it, also
 * when the wait fails; the status is the copy's. */
snarkd_status snarkd_event_wait(int32_t ordinal, void *event);

/* Field and curve self-test: applies op to `count` inputs a[i], b[i] into out[i], on the
 * device (pointers are device memory of `ordinal`) when on_device != 0, else on the host with
 * the same source. Element sizes per op are documented in native/arith.cu. */
#define SNARKD_ARITH_FR_MUL 0
#define SNARKD_ARITH_FR_ADD 1
#define SNARKD_ARITH_FR_SUB 2
#define SNARKD_ARITH_FR_FROM_MONT 3
#define SNARKD_ARITH_FP_MUL 4
#define SNARKD_ARITH_FP_ADD 5
#define SNARKD_ARITH_FP_SUB 6
#define SNARKD_ARITH_FP2_MUL 7
#define SNARKD_ARITH_FP2_SQR 8
#define SNARKD_ARITH_G1_MADD 9   /* out = xyzz(a) + b (a, b affine) */
#define SNARKD_ARITH_G1_MIX 10   /* out = 2a + (a + b) through dbl and full add */
#define SNARKD_ARITH_G2_MADD 11
#define SNARKD_ARITH_G2_MIX 12
#define SNARKD_ARITH_FR_SQR 13
#define SNARKD_ARITH_FP_SQR 14
#define SNARKD_ARITH_FP_MUL_SUB 15 /* out = a·b - (a + b)·(a - b) */
snarkd_status snarkd_arith_test(int32_t ordinal, int32_t on_device, int32_t op, const void *a,
                                const void *b, void *out, size_t count);

/* ======================================================================================
 * NTT over Fr (BLS12-381 scalar field), in place on device buffers, natural order in and out.
 * ====================================================================================== */

/* A radix-2 domain of size 2^lg_n. All pointers are device memory inside one buffer of
 * snarkd_ntt_domain_bytes(lg_n, compact) bytes set up by snarkd_ntt_domain_init. */
typedef struct {
    uint32_t lg_n;
    uint32_t lg_split;    /* small power tables hold 2^lg_split entries */
    void *fwd;            /* n/2 Fr: omega^k; NULL in a compact domain */
    void *inv;            /* n/2 Fr: omega^-k; NULL in a compact domain */
    void *small;          /* 8 tables of 2^lg_split Fr, see snarkd_ntt_domain_init */
    void *levels;         /* the chunk stages' twiddles: omega_{2^c}^j, j < 2^(c-1), c = min(lg_n, 10) */
    void *passes;         /* twiddle tables of the global passes with small spans (ntt.cu) */
    uint64_t n_inv[4];    /* 1/n, Montgomery form */
    uint64_t z_inv[4];    /* 1/(g^n - 1), g = 7, Montgomery form */
} snarkd_ntt_domain;

#define SNARKD_NTT_MAX_LG 28

/* compact: no omega tables (n Fr less; the largest passes then compute their twiddles from the
 * small tables, a little slower). */
size_t snarkd_ntt_domain_bytes(uint32_t lg_n, int32_t compact);
/* host_tables: 8 consecutive tables of 2^lg_split Fr (Montgomery), for x in
 * (omega, omega^-1, g, g^-1): x^j then x^(j * 2^lg_split), j < 2^lg_split.
 * lg_split = (lg_n + 1) / 2. Expands the twiddle tables on the device. */
snarkd_status snarkd_ntt_domain_init(int32_t ordinal, uint32_t lg_n, int32_t compact, void *dev_buf,
                                     const void *host_tables, const uint64_t n_inv[4],
                                     const uint64_t z_inv[4], snarkd_ntt_domain *out);

#define SNARKD_NTT_FORWARD 0
#define SNARKD_NTT_INVERSE 1
#define SNARKD_NTT_COSET_FORWARD 2  /* evaluations on g*H of the coefficients in data */
#define SNARKD_NTT_COSET_INVERSE 3  /* coefficients from evaluations on g*H */
#define SNARKD_NTT_TO_COSET 4       /* evaluations on H -> evaluations on g*H (H step, one vector) */

/* data: 2^lg_n Fr on the device. elapsed_ms (may be NULL): device time by CUDA events. */
snarkd_status snarkd_ntt(int32_t ordinal, const snarkd_ntt_domain *d, void *data, int32_t kind,
                         float *elapsed_ms);

/* Groth16 H step on evaluations a, b, c (each 2^lg_n Fr on the device, natural order):
 * a <- coefficients of (A*B - C) / Z computed on the coset g*H, as cosetINTT(A*B)/Z minus
 * C's coefficients/Z (six transforms); b and c are clobbered. */
snarkd_status snarkd_ntt_h(int32_t ordinal, const snarkd_ntt_domain *d, void *a, void *b, void *c,
                           float *elapsed_ms);

/* Pointwise steps of an H step that holds fewer than three vectors on the device (after
 * SNARKD_NTT_TO_COSET on each): SNARKD_H_MUL a <- a*b; SNARKD_H_SUB_DIV_Z a <- (a - b)/Z on the
 * coset, with d->z_inv. a, b: 2^lg_n Fr on the device. */
#define SNARKD_H_MUL 0
#define SNARKD_H_SUB_DIV_Z 1
snarkd_status snarkd_ntt_h_combine(int32_t ordinal, const snarkd_ntt_domain *d, void *a,
                                   const void *b, int32_t op, float *elapsed_ms);

/* ======================================================================================
 * Multi-scalar multiplication in G1 and G2: Pippenger buckets, signed c-bit digits.
 * ====================================================================================== */

#define SNARKD_CURVE_G1 1
#define SNARKD_CURVE_G2 2

#define SNARKD_MSM_POINTS_ON_HOST 1   /* points streamed from host memory in chunks */
#define SNARKD_MSM_SCALARS_ON_HOST 2  /* scalars read from host memory */
#define SNARKD_MSM_SPLIT01 4          /* sum points with scalar 1 by batch addition, skip 0s */

/* A plan: the caller fills window_bits (0 = by size), chunk_log (0 = default) and flags; plan
 * fills the rest. The result of snarkd_msm_run is out_points extended-Jacobian points
 * (X, Y, ZZ, ZZZ; Montgomery; ZZ = 0 is infinity): for window w and block b, entry
 * w * blocks_per_window + b; then ones_blocks partial sums of the scalar-1 points. The MSM is
 * sum_w 2^(w * window_bits) * (sum_b entry[w][b]) + sum of the ones partials. */
typedef struct {
    uint32_t window_bits;
    uint32_t chunk_log;
    uint32_t flags;
    uint32_t num_windows;
    uint32_t blocks_per_window;
    uint32_t ones_blocks;
    uint32_t out_points;
    uint32_t reserved;
    uint64_t npoints;
    uint64_t chunk;
    uint64_t workspace_bytes;
} snarkd_msm_plan;

snarkd_status snarkd_msm_plan_make(int32_t ordinal, int32_t curve, uint64_t npoints,
                                   snarkd_msm_plan *plan);
/* points: affine (gnark-crypto layout) on the device, or on the host with POINTS_ON_HOST;
 * scalars: Fr Montgomery (fr.Element) on the device, or on the host with SCALARS_ON_HOST;
 * workspace: plan->workspace_bytes of device memory; out: host memory for plan->out_points
 * extended-Jacobian points (4 coordinates each). bucket_terms receives how many terms entered
 * the buckets (with SPLIT01: the scalars other than 0 and 1), so a caller can size the window
 * of its next MSM of the same kind. elapsed_ms and bucket_terms may be NULL. */
snarkd_status snarkd_msm_run(int32_t ordinal, int32_t curve, const snarkd_msm_plan *plan,
                             const void *points, const void *scalars, void *workspace, void *out,
                             float *elapsed_ms, uint64_t *bucket_terms);

/* ======================================================================================
 * Density gather (the A and B queries' scalars from the witness on the device).
 * ====================================================================================== */

/* dst[k] = src[i] for the k-th set bit i (k from 0) of the n-bit mask `words`, i < n: bit i is
 * bit i % 64 of 64-bit word i / 64. word_base[w] (uint32) is the number of set bits in the words
 * before w, one entry per word. src: n Fr; dst: room for as many Fr as bits are set. All
 * pointers are device memory of `ordinal`; elapsed_ms (may be NULL): device time. */
snarkd_status snarkd_gather(int32_t ordinal, void *dst, const void *src, const void *words,
                            const void *word_base, uint64_t n, float *elapsed_ms);

/* ======================================================================================
 * Sparse products (a, b, c of a partition from its compiled circuit and witness).
 * ====================================================================================== */

/* One matrix of a section in compressed sparse rows: row r's terms are [row_start[r],
 * row_start[r + 1]); a column has bit 31 set for an aux variable (else an input) and bit 30 for
 * a block's own variable (its index counted from the block's first), the low 30 bits are the
 * index; coef is an index into the coefficient dictionary, where 0 is +1 and 1 is −1. */
typedef struct {
    const uint32_t *row_start;
    const uint32_t *cols;
    const uint16_t *coef;
} snarkd_csr;

/* A compiled circuit on the device: prefix rows, then `blocks` blocks of block_rows rows each
 * (block i's local inputs start at prefix_inputs + i·block_inputs, its local aux at
 * prefix_aux + i·block_aux), then num_inputs input rows (a = input, b = c = 0). Moved terms (may
 * be absent: moved_start NULL): block row r's are entries [moved_start[r], moved_start[r + 1]),
 * each (matrix << 16 | coefficient index), reading in block i the variable
 * moved_cols[entry · blocks + i] (never block-local). coeffs: the dictionary, Fr. */
typedef struct {
    snarkd_csr prefix[3]; /* A, B, C */
    snarkd_csr block[3];
    const void *coeffs;
    const uint32_t *moved_start;
    const uint32_t *moved_term;
    const uint32_t *moved_cols;
    uint64_t prefix_rows, block_rows, blocks, num_inputs;
    uint64_t prefix_inputs, prefix_aux, block_inputs, block_aux;
} snarkd_r1cs;

/* a, b, c (domain Fr each, device) = A·z, B·z, C·z for z = (inputs, aux) (device), the rows
 * past the circuit's zero. *first_bad: the first row with a·b ≠ c, or -1. scratch: 8 bytes of
 * device memory for the search. All pointers but m and first_bad are device memory of
 * `ordinal`; the matrices' arrays too. elapsed_ms (may be NULL): device time. */
snarkd_status snarkd_sparse_products(int32_t ordinal, const snarkd_r1cs *m, const void *inputs,
                                     const void *aux, void *a, void *b, void *c, uint64_t domain,
                                     void *scratch, int64_t *first_bad, float *elapsed_ms);

#ifdef __cplusplus
}
#endif

#endif /* SNARKD_NATIVE_H */
