// Streams and events from per-device pools, created on first use and kept for the process.
// Creating a stream or an event takes a driver lock that another thread's uploads can hold for
// tens of milliseconds; a kernel call that created its stream while holding the GPU left the
// GPU idle that long (22–38 ms per H step with the other worker uploading).
#pragma once

#include "error.cuh"

namespace snarkd {

// A non-blocking stream of the current device; *dev receives that device.
snarkd_status pool_get_stream(int *dev, cudaStream_t *out);
// Returns an idle stream of device dev to its pool; a stream that fails to synchronize is
// destroyed instead.
void pool_put_stream(int dev, cudaStream_t s);
// An event of the current device, with timing or without (cudaEventDisableTiming).
snarkd_status pool_get_event(bool timing, int *dev, cudaEvent_t *out);
// Returns an event that nothing waits for any more to device dev's pool.
void pool_put_event(bool timing, int dev, cudaEvent_t e);

// A pooled stream for one call's kernels, timed with pooled events when out is set.
struct event_timer {
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaStream_t st = nullptr;
    int dev = 0;
    float *out;
    explicit event_timer(float *o) : out(o) {}
    snarkd_status begin() {
        snarkd_status s = pool_get_stream(&dev, &st);
        if (s == SNARKD_OK && out) s = pool_get_event(true, &dev, &start);
        if (s == SNARKD_OK && out) s = pool_get_event(true, &dev, &stop);
        if (s != SNARKD_OK) return s;
        if (out) SNARKD_CHECK(cudaEventRecord(start, st));
        return SNARKD_OK;
    }
    snarkd_status end() {
        if (out) SNARKD_CHECK(cudaEventRecord(stop, st));
        SNARKD_CHECK(cudaStreamSynchronize(st));
        if (out) SNARKD_CHECK(cudaEventElapsedTime(out, start, stop));
        return SNARKD_OK;
    }
    ~event_timer() {
        pool_put_stream(dev, st);  // synchronizes first
        pool_put_event(true, dev, start);
        pool_put_event(true, dev, stop);
    }
};

}  // namespace snarkd
