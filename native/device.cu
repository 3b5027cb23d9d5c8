// Device inventory for the Go side's scheduler: name, memory and SM count per device.
#include <cstring>
#include <mutex>

#include "error.cuh"

namespace {
// Properties that never change while the process runs, read once per device:
// cudaGetDeviceProperties is slow, and the scheduler refreshes free memory often.
constexpr int MAX_DEVICES = 64;
std::mutex props_mu;
cudaDeviceProp props[MAX_DEVICES];
bool have_props[MAX_DEVICES];

snarkd_status device_props(int ordinal, cudaDeviceProp *out) {
    std::lock_guard<std::mutex> lock(props_mu);
    if (ordinal >= MAX_DEVICES) {
        SNARKD_CHECK(cudaGetDeviceProperties(out, ordinal));
        return SNARKD_OK;
    }
    if (!have_props[ordinal]) {
        SNARKD_CHECK(cudaGetDeviceProperties(&props[ordinal], ordinal));
        have_props[ordinal] = true;
    }
    *out = props[ordinal];
    return SNARKD_OK;
}
}  // namespace

extern "C" snarkd_status snarkd_device_count(int32_t *count) {
    if (count == nullptr) return SNARKD_ERR_INVALID_ARGUMENT;
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
        (void)cudaGetLastError();
        *count = 0;
        return SNARKD_OK;
    }
    SNARKD_CHECK(err);
    *count = n;
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_device_info_get(int32_t ordinal, snarkd_device_info *out) {
    if (out == nullptr) return SNARKD_ERR_INVALID_ARGUMENT;
    int n = 0;
    SNARKD_CHECK(cudaGetDeviceCount(&n));
    if (ordinal < 0 || ordinal >= n) {
        snarkd::set_last_error("device ordinal %d out of range (have %d)", ordinal, n);
        return SNARKD_ERR_NO_DEVICE;
    }
    cudaDeviceProp prop;
    snarkd_status st = device_props(ordinal, &prop);
    if (st != SNARKD_OK) return st;
    int prev = 0;
    SNARKD_CHECK(cudaGetDevice(&prev));
    SNARKD_CHECK(cudaSetDevice(ordinal));
    size_t free_b = 0, total_b = 0;
    cudaError_t err = cudaMemGetInfo(&free_b, &total_b);
    cudaSetDevice(prev);
    SNARKD_CHECK(err);
    memset(out, 0, sizeof *out);
    strncpy(out->name, prop.name, sizeof out->name - 1);
    out->total_mem = total_b;
    out->free_mem = free_b;
    out->sm_count = prop.multiProcessorCount;
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    out->pci_bus_id = prop.pciBusID;
    return SNARKD_OK;
}

extern "C" snarkd_status snarkd_versions(int32_t *runtime_version, int32_t *driver_version) {
    if (runtime_version == nullptr || driver_version == nullptr) return SNARKD_ERR_INVALID_ARGUMENT;
    int rt = 0, drv = 0;
    SNARKD_CHECK(cudaRuntimeGetVersion(&rt));
    SNARKD_CHECK(cudaDriverGetVersion(&drv));
    *runtime_version = rt;
    *driver_version = drv;
    return SNARKD_OK;
}
