//go:build cuda

package cuda

/*
#include "snarkd.h"
*/
import "C"

import (
	"time"

	"github.com/snarkd/snarkd/gpu"
)

// GatherDevice writes to dst, in order, the elements of src (n Fr on device ordinal) whose bit
// is set in the density mask at words (n bits, 64-bit words), bases holding the number of set
// bits before each word (GatherTableBytes lays both out). Returns the device time.
func GatherDevice(ordinal int, dst, src, words, bases gpu.DevicePtr, n uint64) (time.Duration, error) {
	var ms C.float
	if err := check("density gather", C.snarkd_gather(C.int32_t(ordinal), devPtr(dst), devPtr(src),
		devPtr(words), devPtr(bases), C.uint64_t(n), &ms)); err != nil {
		return 0, err
	}
	return msDuration(float64(ms)), nil
}
