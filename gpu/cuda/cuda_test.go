//go:build cuda

package cuda

import "testing"

// TestDeviceInventory proves the cgo/CUDA path end to end on a GPU host; it skips where the
// driver reports no device (CI).
func TestDeviceInventory(t *testing.T) {
	n, err := DeviceCount()
	if err != nil {
		t.Fatalf("DeviceCount: %v", err)
	}
	if n == 0 {
		t.Skip("no CUDA device visible")
	}
	rt, drv, err := Versions()
	if err != nil {
		t.Fatalf("Versions: %v", err)
	}
	t.Logf("CUDA runtime %d, driver %d, %d device(s)", rt, drv, n)
	devs, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		t.Log(d.String())
		if d.Name == "" || d.TotalMem == 0 || d.SMCount <= 0 {
			t.Errorf("implausible inventory: %+v", d)
		}
		if d.FreeMem > d.TotalMem {
			t.Errorf("free %d > total %d", d.FreeMem, d.TotalMem)
		}
	}
	if _, err := Inventory(n); err == nil {
		t.Error("Inventory of an out-of-range ordinal succeeded")
	}
}
