//go:build cuda

package cuda

/*
#cgo CFLAGS: -I${SRCDIR}/../../native
#cgo LDFLAGS: -L${SRCDIR}/../../native/build -lsnarkd_native -L/usr/local/cuda/lib64 -L/usr/lib/x86_64-linux-gnu -lcudart_static -lstdc++ -lm -ldl -lpthread -lrt
#include <stdlib.h>
#include "snarkd.h"
*/
import "C"

import (
	"unsafe"

	"github.com/snarkd/snarkd/gpu"
)

// CUDAEnabled reports whether this binary carries the CUDA backend.
const CUDAEnabled = true

func lastError() string {
	buf := make([]byte, 1024)
	C.snarkd_last_error((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	return C.GoString((*C.char)(unsafe.Pointer(&buf[0])))
}

func check(op string, st C.snarkd_status) error {
	if st == 0 {
		return nil
	}
	return &gpu.Error{Op: op, Code: int(st), Message: lastError()}
}

// DeviceCount returns the number of CUDA devices this process can see.
func DeviceCount() (int, error) {
	var n C.int32_t
	if err := check("device count", C.snarkd_device_count(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Inventory describes device ordinal, including the driver's current free memory.
func Inventory(ordinal int) (gpu.DeviceInfo, error) {
	var info C.snarkd_device_info
	if err := check("device info", C.snarkd_device_info_get(C.int32_t(ordinal), &info)); err != nil {
		return gpu.DeviceInfo{}, err
	}
	return gpu.DeviceInfo{
		Ordinal:      ordinal,
		Name:         C.GoString(&info.name[0]),
		TotalMem:     uint64(info.total_mem),
		FreeMem:      uint64(info.free_mem),
		SMCount:      int(info.sm_count),
		ComputeMajor: int(info.cc_major),
		ComputeMinor: int(info.cc_minor),
		PCIBusID:     int(info.pci_bus_id),
	}, nil
}

// Versions returns the CUDA runtime version linked in and the driver's version (e.g. 11080).
func Versions() (runtime, driver int, err error) {
	var rt, drv C.int32_t
	if err := check("versions", C.snarkd_versions(&rt, &drv)); err != nil {
		return 0, 0, err
	}
	return int(rt), int(drv), nil
}
