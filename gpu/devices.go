package gpu

import "fmt"

// Devices lists every visible device. A build without CUDA returns an empty list.
func Devices() ([]DeviceInfo, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	out := make([]DeviceInfo, 0, n)
	for i := 0; i < n; i++ {
		d, err := Inventory(i)
		if err != nil {
			return nil, fmt.Errorf("inventory of device %d: %w", i, err)
		}
		out = append(out, d)
	}
	return out, nil
}
