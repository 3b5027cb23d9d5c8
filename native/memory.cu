// Device and pinned host memory for package gpu's allocator, and plain copies. Nothing else in
// native/ allocates device memory.
#include "error.cuh"

namespace {
snarkd_status use_device(int32_t ordinal) {
    int n = 0;
    SNARKD_CHECK(cudaGetDeviceCount(&n));
    if (ordinal < 0 || ordinal >= n) {
        snarkd::set_last_error("device ordinal %d out of range (have %d)", ordinal, n);
        return SNARKD_ERR_NO_DEVICE;
    }
    SNARKD_CHECK(cudaSetDevice(ordinal));
    return SNARKD_OK;
}
}  // namespace

namespace snarkd {
snarkd_status select_device(int32_t ordinal) { return use_device(ordinal); }
}  // namespace snarkd

extern "C" snarkd_status snarkd_device_alloc(int32_t ordinal, size_t bytes, void **ptr) {
    if (ptr == nullptr) return SNARKD_ERR_INVALID_ARGUMENT;
    *ptr = nullptr;
    snarkd_status st = use_device(ordinal);
    if (st != SNARKD_OK) return st;
    SNARKD_CHECK(cudaMalloc(ptr, bytes == 0 ? 1 : bytes));
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_device_free(int32_t ordinal, void *ptr) {
    snarkd_status st = use_device(ordinal);
    if (st != SNARKD_OK) return st;
    SNARKD_CHECK(cudaFree(ptr));
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_host_alloc(size_t bytes, void **ptr) {
    if (ptr == nullptr) return SNARKD_ERR_INVALID_ARGUMENT;
    *ptr = nullptr;
    SNARKD_CHECK(cudaHostAlloc(ptr, bytes == 0 ? 1 : bytes, cudaHostAllocPortable));
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_host_free(void *ptr) {
    SNARKD_CHECK(cudaFreeHost(ptr));
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_memcpy_htod(int32_t ordinal, void *dst, const void *src,
                                            size_t bytes) {
    snarkd_status st = use_device(ordinal);
    if (st != SNARKD_OK) return st;
    SNARKD_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_memcpy_dtoh(int32_t ordinal, void *dst, const void *src,
                                            size_t bytes) {
    snarkd_status st = use_device(ordinal);
    if (st != SNARKD_OK) return st;
    SNARKD_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_memset_d(int32_t ordinal, void *dst, int32_t value, size_t bytes) {
    snarkd_status st = use_device(ordinal);
    if (st != SNARKD_OK) return st;
    SNARKD_CHECK(cudaMemset(dst, value, bytes));
    SNARKD_CHECK(cudaDeviceSynchronize());
    return SNARKD_OK;
}
