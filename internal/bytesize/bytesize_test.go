package bytesize

import (
	"strings"
	"testing"
)

// TestParse covers the union of what config.ParseBytes and gpu/sim's spec parser accepted
// before they shared this parser.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  string
	}{
		{"1048576", 1 << 20, ""},
		{"1000", 1000, ""},
		{"0", 0, ""},
		{"  7B ", 7, ""},
		{"512MiB", 512 << 20, ""},
		{"512 mib", 512 << 20, ""},
		{"512MIB", 512 << 20, ""},
		{"1.5GiB", 3 << 29, ""},
		{"1.5KB", 1500, ""},
		{"2GB", 2e9, ""},
		{"1.5 GB", 1.5e9, ""},
		{"1TB", 1e12, ""},
		{"2TiB", 2 << 40, ""},
		{"16G", 16 << 30, ""},
		{"2g", 2 << 30, ""},
		{"4K", 4 << 10, ""},
		{"3M", 3 << 20, ""},
		{"1T", 1 << 40, ""},
		{"80GB", 80e9, ""},
		{"1.9", 1, ""},
		{"", 0, "want a number"},
		{"GiB", 0, "want a number"},
		{"-1", 0, "want a number"},
		{"-1GiB", 0, "want a number"},
		{"1PiB", 0, "want a number"},
		{"12 parsecs", 0, "want a number"},
		{"1e9", 0, "want a number"},
		{"1..5GiB", 0, "bad number"},
		{"8388608TiB", 0, "too large"},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %d, %v; want an error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}
