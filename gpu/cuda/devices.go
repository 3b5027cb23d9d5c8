package cuda

import (
	"errors"
	"fmt"

	"github.com/snarkd/snarkd/gpu"
)

// ErrNoCUDA is returned by every device call in a build without the `cuda` tag.
var ErrNoCUDA = errors.New("snarkd was built without CUDA support (build with `make cuda`)")

// NativeLib is the start of the SHA-256 of the native CUDA library linked in, set by the
// Makefile's cuda builds (empty otherwise). Go's build cache does not hash the library: the
// hash in the link flags is also what relinks a binary after only the library changed.
var NativeLib string

// Devices lists every visible device. A build without CUDA returns an empty list.
func Devices() ([]gpu.DeviceInfo, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	out := make([]gpu.DeviceInfo, 0, n)
	for i := 0; i < n; i++ {
		d, err := Inventory(i)
		if err != nil {
			return nil, fmt.Errorf("inventory of device %d: %w", i, err)
		}
		out = append(out, d)
	}
	return out, nil
}
