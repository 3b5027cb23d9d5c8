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

#ifdef __cplusplus
}
#endif

#endif /* SNARKD_NATIVE_H */
