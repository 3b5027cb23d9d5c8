// Device and pinned host memory for package gpu's allocator, plain copies, uploads on one
// dedicated copy stream per device, and the per-device pools of streams and events
// (pool.cuh). Nothing else in native/ allocates device memory.
#include <mutex>
#include <vector>

#include "error.cuh"
#include "pool.cuh"

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

// One non-blocking copy stream per device, created on first use and kept for the process:
// uploads on it overlap kernels on the kernels' own streams, and it never synchronizes with
// the legacy default stream. Guarded by a mutex (not call_once) so that a failed creation is
// retried by the next upload instead of being remembered.
constexpr int32_t kMaxDevices = 64;
std::mutex copy_streams_mu;
cudaStream_t copy_streams[kMaxDevices];

// Makes ordinal current and returns its copy stream.
snarkd_status copy_stream(int32_t ordinal, cudaStream_t *out) {
    snarkd_status st = use_device(ordinal);
    if (st != SNARKD_OK) return st;
    if (ordinal >= kMaxDevices) {
        snarkd::set_last_error("device ordinal %d: at most %d devices have a copy stream", ordinal,
                               kMaxDevices);
        return SNARKD_ERR_NO_DEVICE;
    }
    std::lock_guard<std::mutex> lock(copy_streams_mu);
    if (copy_streams[ordinal] == nullptr) {
        cudaStream_t s = nullptr;
        SNARKD_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        copy_streams[ordinal] = s;
    }
    *out = copy_streams[ordinal];
    return SNARKD_OK;
}
}  // namespace

namespace snarkd {
snarkd_status select_device(int32_t ordinal) { return use_device(ordinal); }

namespace {
// Free streams and events per device (events: [0] without timing, [1] with). They never
// shrink: the pools hold at most what the callers used at once, a few per worker.
std::mutex pool_mu;
std::vector<cudaStream_t> free_streams[kMaxDevices];
std::vector<cudaEvent_t> free_events[2][kMaxDevices];

// Takes an element of a free list into *out; false when it is empty.
template <class T>
bool take_free(std::vector<T> &v, T *out) {
    std::lock_guard<std::mutex> lock(pool_mu);
    if (v.empty()) return false;
    *out = v.back();
    v.pop_back();
    return true;
}

template <class T>
void give_free(std::vector<T> &v, T x) {
    std::lock_guard<std::mutex> lock(pool_mu);
    v.push_back(x);
}

snarkd_status current_device(int *dev) {
    SNARKD_CHECK(cudaGetDevice(dev));
    if (*dev < 0 || *dev >= kMaxDevices) {
        set_last_error("device %d: at most %d devices have stream pools", *dev, kMaxDevices);
        return SNARKD_ERR_NO_DEVICE;
    }
    return SNARKD_OK;
}
}  // namespace

snarkd_status pool_get_stream(int *dev, cudaStream_t *out) {
    snarkd_status st = current_device(dev);
    if (st != SNARKD_OK) return st;
    if (take_free(free_streams[*dev], out)) return SNARKD_OK;
    SNARKD_CHECK(cudaStreamCreateWithFlags(out, cudaStreamNonBlocking));
    return SNARKD_OK;
}

void pool_put_stream(int dev, cudaStream_t s) {
    if (s == nullptr) return;
    if (dev < 0 || dev >= kMaxDevices || cudaStreamSynchronize(s) != cudaSuccess) {
        (void)cudaGetLastError();
        (void)cudaStreamDestroy(s);
        return;
    }
    give_free(free_streams[dev], s);
}

snarkd_status pool_get_event(bool timing, int *dev, cudaEvent_t *out) {
    snarkd_status st = current_device(dev);
    if (st != SNARKD_OK) return st;
    if (take_free(free_events[timing ? 1 : 0][*dev], out)) return SNARKD_OK;
    SNARKD_CHECK(cudaEventCreateWithFlags(out, timing ? cudaEventDefault : cudaEventDisableTiming));
    return SNARKD_OK;
}

void pool_put_event(bool timing, int dev, cudaEvent_t e) {
    if (e == nullptr) return;
    if (dev < 0 || dev >= kMaxDevices) {
        (void)cudaEventDestroy(e);
        return;
    }
    give_free(free_events[timing ? 1 : 0][dev], e);
}
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

extern "C" snarkd_status snarkd_host_register(void *ptr, size_t bytes) {
    if (ptr == nullptr || bytes == 0) return SNARKD_ERR_INVALID_ARGUMENT;
    SNARKD_CHECK(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable));
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_host_unregister(void *ptr) {
    SNARKD_CHECK(cudaHostUnregister(ptr));
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_memcpy_htod(int32_t ordinal, void *dst, const void *src,
                                            size_t bytes) {
    snarkd_status st = use_device(ordinal);
    if (st != SNARKD_OK) return st;
    // cudaMemcpy from pageable memory may return before the DMA has landed, and kernels on the
    // workers' non-blocking streams do not wait for the legacy stream: wait for the copy itself
    // (the legacy stream does not wait for those streams either).
    SNARKD_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cudaStreamLegacy));
    SNARKD_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_memcpy_htod_async(int32_t ordinal, void *dst, const void *src,
                                                  size_t bytes, void **event_out) {
    if (event_out == nullptr) return SNARKD_ERR_INVALID_ARGUMENT;
    *event_out = nullptr;
    cudaStream_t s = nullptr;
    snarkd_status st = copy_stream(ordinal, &s);
    if (st != SNARKD_OK) return st;
    // The event exists before the copy is enqueued, so that no failure below can leave a copy
    // in flight that the caller has no event for (it would free or reuse src under the DMA).
    cudaEvent_t ev = nullptr;
    int dev = 0;
    if ((st = snarkd::pool_get_event(false, &dev, &ev)) != SNARKD_OK) return st;
    cudaError_t err = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s);
    const char *what = "cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s)";
    if (err == cudaSuccess) {
        err = cudaEventRecord(ev, s);
        what = "cudaEventRecord(ev, s)";
    }
    if (err != cudaSuccess) {
        st = snarkd::cuda_status(err, what, __FILE__, __LINE__);
        // Whatever was enqueued must be finished before the caller may touch src again.
        (void)cudaStreamSynchronize(s);
        (void)cudaEventDestroy(ev);
        (void)cudaGetLastError();
        return st;
    }
    *event_out = ev;
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_event_wait(int32_t ordinal, void *event) {
    if (event == nullptr) return SNARKD_ERR_INVALID_ARGUMENT;
    cudaEvent_t ev = static_cast<cudaEvent_t>(event);
    snarkd_status st = use_device(ordinal);
    if (st == SNARKD_OK) {
        cudaError_t err = cudaEventSynchronize(ev);
        if (err != cudaSuccess)
            st = snarkd::cuda_status(err, "cudaEventSynchronize(ev)", __FILE__, __LINE__);
    }
    // Released on every path: the event is the caller's only handle and is never waited twice.
    // A completed event goes back to the pool of the device it came from (ordinal: the upload's).
    if (st == SNARKD_OK) {
        snarkd::pool_put_event(false, ordinal, ev);
        return st;
    }
    cudaError_t err = cudaEventDestroy(ev);
    if (err != cudaSuccess && st == SNARKD_OK)
        st = snarkd::cuda_status(err, "cudaEventDestroy(ev)", __FILE__, __LINE__);
    return st;
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
    // The legacy stream does not wait for the workers' non-blocking streams, so this waits
    // only for the memset, not for other partitions' kernels.
    SNARKD_CHECK(cudaMemsetAsync(dst, value, bytes, cudaStreamLegacy));
    SNARKD_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    return SNARKD_OK;
}
