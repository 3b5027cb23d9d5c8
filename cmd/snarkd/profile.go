package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile of what runs until the returned stop to path; an empty
// path profiles nothing. stop reports a profile that could not be completed.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	out, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		os.Remove(path) // created empty above; nothing will be written to it
		return nil, fmt.Errorf("--cpuprofile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := out.Close(); err != nil {
			return fmt.Errorf("--cpuprofile %s: %w", path, err)
		}
		return nil
	}, nil
}
