// Density gather: the scalars of a query whose bases exist only for some variables (Groth16's
// A and B queries skip the variables that no A or B term reads), packed on the device from the
// witness already uploaded for L, instead of gathered on the host and uploaded a second time.
#include "error.cuh"
#include "pool.cuh"

namespace snarkd {
snarkd_status select_device(int32_t ordinal);
}

namespace {
using namespace snarkd;

struct fr_raw {
    uint64_t v[4];
};

constexpr int GATHER_THREADS = 256;

// Thread i copies src[i] to its rank among the set bits when bit i is set: consecutive threads
// read consecutive elements, and write consecutive ones where the mask is dense.
__global__ void gather_kernel(fr_raw *dst, const fr_raw *src, const uint64_t *words,
                              const uint32_t *word_base, uint64_t n) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint64_t w = words[i >> 6];
    const uint32_t b = (uint32_t)(i & 63);
    if (((w >> b) & 1) == 0) return;
    const uint64_t below = b == 0 ? 0 : (w & ((~0ull) >> (64 - b)));
    dst[(uint64_t)word_base[i >> 6] + (uint64_t)__popcll(below)] = src[i];
}
}  // namespace

extern "C" snarkd_status snarkd_gather(int32_t ordinal, void *dst, const void *src,
                                       const void *words, const void *word_base, uint64_t n,
                                       float *elapsed_ms) {
    if (n == 0) {
        if (elapsed_ms) *elapsed_ms = 0;
        return SNARKD_OK;
    }
    if (dst == nullptr || src == nullptr || words == nullptr || word_base == nullptr) {
        snarkd::set_last_error("gather: null pointer");
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    snarkd_status s = snarkd::select_device(ordinal);
    if (s != SNARKD_OK) return s;
    event_timer tm(elapsed_ms);
    if ((s = tm.begin()) != SNARKD_OK) return s;
    const uint64_t blocks = (n + GATHER_THREADS - 1) / GATHER_THREADS;
    gather_kernel<<<(unsigned)blocks, GATHER_THREADS, 0, tm.st>>>(
        (fr_raw *)dst, (const fr_raw *)src, (const uint64_t *)words, (const uint32_t *)word_base, n);
    SNARKD_CHECK(cudaGetLastError());
    return tm.end();
}
