//go:build !linux

package gpu

// physicalMemory is unknown off Linux.
func physicalMemory() uint64 { return 0 }
