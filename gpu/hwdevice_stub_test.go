//go:build !cuda

package gpu

import (
	"errors"
	"testing"
)

func TestHardwareDevicesWithoutCUDA(t *testing.T) {
	if devs, err := HardwareDevices(); !errors.Is(err, ErrNoCUDA) || devs != nil {
		t.Fatalf("HardwareDevices() = %v, %v; want ErrNoCUDA", devs, err)
	}
	if _, ok := KernelSizer(0).(ModelSizer); !ok {
		t.Fatal("KernelSizer without CUDA is not the model")
	}
}
