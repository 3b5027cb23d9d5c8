package config

import (
	"fmt"
	"strconv"

	"github.com/snarkd/snarkd/internal/bytesize"
)

// Bytes is a byte count that reads "512MiB", "2GiB", "1.5 GB" or a plain number.
type Bytes uint64

// ParseBytes parses a size such as "512MiB" (binary), "1.5GB" (decimal), "16G" (binary) or
// "1048576"; internal/bytesize documents the syntax, which --simulate-gpus shares.
func ParseBytes(s string) (Bytes, error) {
	v, err := bytesize.Parse(s)
	if err != nil {
		return 0, fmt.Errorf("parsing byte size: %w", err)
	}
	return Bytes(v), nil
}

// UnmarshalText lets TOML files and environment variables use sizes with units.
func (b *Bytes) UnmarshalText(text []byte) error {
	v, err := ParseBytes(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// MarshalText writes the size in the largest binary unit that divides it exactly.
func (b Bytes) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

func (b Bytes) String() string {
	for _, u := range []struct {
		name string
		n    uint64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && uint64(b)%u.n == 0 {
			return fmt.Sprintf("%d%s", uint64(b)/u.n, u.name)
		}
	}
	return strconv.FormatUint(uint64(b), 10)
}
