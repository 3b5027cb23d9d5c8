//go:build !cuda

package cuda

import (
	"errors"
	"testing"

	"github.com/snarkd/snarkd/gpu"
)

func TestHardwareDevicesWithoutCUDA(t *testing.T) {
	if devs, err := HardwareDevices(); !errors.Is(err, ErrNoCUDA) || devs != nil {
		t.Fatalf("HardwareDevices() = %v, %v; want ErrNoCUDA", devs, err)
	}
	if _, ok := KernelSizer(0).(gpu.ModelSizer); !ok {
		t.Fatal("KernelSizer without CUDA is not the model")
	}
}
