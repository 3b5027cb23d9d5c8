// Package buildinfo carries the version stamped into snarkd binaries at link time.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is set with -ldflags "-X github.com/snarkd/snarkd/buildinfo.Version=...".
var Version = "dev"

// APIVersion is the semantic version of the native Prover API; clients compare its major part.
const APIVersion = "0.2.0"

// String returns the version with the VCS revision and Go version, e.g. "v0.1.0 (go1.26.8)".
func String() string {
	v := Version
	if v == "dev" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 {
					v = "dev-" + s.Value[:12]
				}
			}
		}
	}
	return fmt.Sprintf("%s (%s)", v, runtime.Version())
}
