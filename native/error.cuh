// Shared error plumbing for native/: every CUDA call goes through SNARKD_CHECK, which records
// a message for snarkd_last_error and returns the error code to the caller instead of aborting.
#pragma once

#include <cuda_runtime.h>
#include "snarkd.h"

namespace snarkd {

// Records msg (printf-style) as this thread's last error.
void set_last_error(const char *fmt, ...);

// Converts a CUDA error into a status, recording where it happened. Clears sticky-free errors
// so that the next call on this thread does not see a stale cudaGetLastError.
snarkd_status cuda_status(cudaError_t err, const char *what, const char *file, int line);

}  // namespace snarkd

#define SNARKD_CHECK(call)                                                           \
    do {                                                                             \
        cudaError_t snarkd_err_ = (call);                                            \
        if (snarkd_err_ != cudaSuccess)                                              \
            return ::snarkd::cuda_status(snarkd_err_, #call, __FILE__, __LINE__);    \
    } while (0)
