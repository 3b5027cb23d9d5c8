#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "error.cuh"

namespace {
thread_local char last_error[1024];
}

namespace snarkd {

void set_last_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

snarkd_status cuda_status(cudaError_t err, const char *what, const char *file, int line) {
    // Reset the non-sticky error state; sticky errors (a faulted context) stay visible to
    // every later call, which is what the caller must learn.
    (void)cudaGetLastError();
    set_last_error("%s: %s (%s) at %s:%d", what, cudaGetErrorString(err), cudaGetErrorName(err),
                   file, line);
    return static_cast<snarkd_status>(err);
}

}  // namespace snarkd

extern "C" void snarkd_last_error(char *buf, size_t len) {
    if (buf == nullptr || len == 0) return;
    strncpy(buf, last_error, len - 1);
    buf[len - 1] = '\0';
}
