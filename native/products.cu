// Sparse products: a = A·z, b = B·z, c = C·z for a partition's witness z = (inputs, aux), from
// the compiled circuit's matrices (a prefix and one block template replayed at every block's
// offsets), straight into the domain buffers the H step reads. One thread per row; every row
// is checked (a·b = c) as it is computed, and the first row that fails is reported.
#include "field.cuh"
#include "error.cuh"
#include "pool.cuh"

namespace snarkd {
snarkd_status select_device(int32_t ordinal);
}

namespace {
using namespace snarkd;

constexpr int PRODUCT_THREADS = 256;
constexpr uint32_t COL_AUX = 1u << 31;
constexpr uint32_t COL_LOCAL = 1u << 30;
constexpr uint32_t COL_INDEX = COL_LOCAL - 1;

struct witness {
    const fr_t *in, *aux;
    const fr_t *coeffs;
};

// acc += coefficient k · v, with the dictionary's ±1 and the witness's 0 and 1 (most values of
// the Filecoin circuits are bits) taken without a multiplication.
__device__ __forceinline__ void add_term(fr_t &acc, uint16_t k, const fr_t &v, const fr_t *coeffs) {
    if (k == 0) {
        acc = acc + v;
    } else if (k == 1) {
        acc = acc - v;
    } else if (v.is_zero()) {
    } else if (v.is_one()) {
        acc = acc + coeffs[k];
    } else {
        acc = acc + coeffs[k] * v;
    }
}

__device__ __forceinline__ fr_t eval_row(const snarkd_csr &m, uint64_t r, const witness &z,
                                         uint64_t base_in, uint64_t base_aux) {
    fr_t acc = fr_t::zero();
    const uint32_t lo = m.row_start[r], hi = m.row_start[r + 1];
    for (uint32_t j = lo; j < hi; j++) {
        const uint32_t col = m.cols[j];
        const bool aux = (col & COL_AUX) != 0;
        uint64_t idx = col & COL_INDEX;
        if (col & COL_LOCAL) idx += aux ? base_aux : base_in;
        add_term(acc, m.coef[j], aux ? z.aux[idx] : z.in[idx], z.coeffs);
    }
    return acc;
}

__global__ void products_kernel(snarkd_r1cs m, witness z, fr_t *a, fr_t *b, fr_t *c, uint64_t domain,
                                unsigned long long *first_bad) {
    const uint64_t r = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= domain) return;
    const uint64_t body = m.prefix_rows + m.blocks * m.block_rows;
    if (r >= body) {
        // The input rows (input_i · 0 = 0), then the domain's padding.
        const uint64_t i = r - body;
        a[r] = i < m.num_inputs ? z.in[i] : fr_t::zero();
        b[r] = fr_t::zero();
        c[r] = fr_t::zero();
        return;
    }
    const snarkd_csr *sec = m.prefix;
    uint64_t local = r, base_in = 0, base_aux = 0, blk = 0;
    bool in_block = false;
    if (r >= m.prefix_rows) {
        const uint64_t q = r - m.prefix_rows;
        blk = q / m.block_rows;
        local = q - blk * m.block_rows;
        base_in = m.prefix_inputs + blk * m.block_inputs;
        base_aux = m.prefix_aux + blk * m.block_aux;
        sec = m.block;
        in_block = true;
    }
    fr_t v[3];
#pragma unroll
    for (int k = 0; k < 3; k++) v[k] = eval_row(sec[k], local, z, base_in, base_aux);
    if (in_block && m.moved_start != nullptr) {
        // Terms that read, in each block, a variable of the prefix (a per-block challenge).
        for (uint32_t e = m.moved_start[local]; e < m.moved_start[local + 1]; e++) {
            const uint32_t t = m.moved_term[e];
            const uint32_t col = m.moved_cols[(uint64_t)e * m.blocks + blk];
            const fr_t &x = (col & COL_AUX) ? z.aux[col & COL_INDEX] : z.in[col & COL_INDEX];
            const uint32_t mat = t >> 16;
            if (mat < 3) add_term(v[mat], (uint16_t)(t & 0xffff), x, z.coeffs);
        }
    }
    if (v[0] * v[1] != v[2]) atomicMin(first_bad, (unsigned long long)r);
    a[r] = v[0];
    b[r] = v[1];
    c[r] = v[2];
}

bool csr_ok(const snarkd_csr &c, uint64_t rows) {
    return rows == 0 || (c.row_start != nullptr && c.cols != nullptr && c.coef != nullptr);
}
}  // namespace

extern "C" snarkd_status snarkd_sparse_products(int32_t ordinal, const snarkd_r1cs *m, const void *inputs,
                                                const void *aux, void *a, void *b, void *c, uint64_t domain,
                                                void *scratch, int64_t *first_bad, float *elapsed_ms) {
    if (m == nullptr || first_bad == nullptr) {
        snarkd::set_last_error("sparse products: null argument");
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    *first_bad = -1;
    const uint64_t body = m->prefix_rows + m->blocks * m->block_rows;
    if (domain < body + m->num_inputs || (m->blocks > 0 && m->block_rows == 0)) {
        snarkd::set_last_error("sparse products: domain smaller than the circuit's rows");
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    bool ok = a != nullptr && b != nullptr && c != nullptr && scratch != nullptr && m->coeffs != nullptr &&
              (inputs != nullptr || m->num_inputs == 0);
    for (int k = 0; k < 3; k++) {
        ok = ok && csr_ok(m->prefix[k], m->prefix_rows) && csr_ok(m->block[k], m->blocks ? m->block_rows : 0);
    }
    if (m->moved_start != nullptr) ok = ok && m->moved_term != nullptr && m->moved_cols != nullptr;
    if (!ok) {
        snarkd::set_last_error("sparse products: null pointer");
        return SNARKD_ERR_INVALID_ARGUMENT;
    }
    if (domain == 0) {
        if (elapsed_ms) *elapsed_ms = 0;
        return SNARKD_OK;
    }
    snarkd_status s = snarkd::select_device(ordinal);
    if (s != SNARKD_OK) return s;
    event_timer tm(elapsed_ms);
    if ((s = tm.begin()) != SNARKD_OK) return s;
    SNARKD_CHECK(cudaMemsetAsync(scratch, 0xff, sizeof(unsigned long long), tm.st));
    witness z{(const fr_t *)inputs, (const fr_t *)aux, (const fr_t *)m->coeffs};
    const uint64_t blocks = (domain + PRODUCT_THREADS - 1) / PRODUCT_THREADS;
    products_kernel<<<(unsigned)blocks, PRODUCT_THREADS, 0, tm.st>>>(*m, z, (fr_t *)a, (fr_t *)b, (fr_t *)c,
                                                                      domain, (unsigned long long *)scratch);
    SNARKD_CHECK(cudaGetLastError());
    unsigned long long bad = ~0ull;
    SNARKD_CHECK(cudaMemcpyAsync(&bad, scratch, sizeof(bad), cudaMemcpyDeviceToHost, tm.st));
    if ((s = tm.end()) != SNARKD_OK) return s;
    *first_bad = bad == ~0ull ? -1 : (int64_t)bad;
    return SNARKD_OK;
}
