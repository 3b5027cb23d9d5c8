package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Bytes is a byte count that reads "512MiB", "2GiB", "1.5 GB" or a plain number.
type Bytes uint64

var byteUnits = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
}

// ParseBytes parses a size such as "512MiB" (binary), "1.5GB" (decimal) or "1048576".
func ParseBytes(s string) (Bytes, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !(unicode.IsDigit(r) || r == '.') })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mul, ok := byteUnits[unit]
	if !ok || num == "" {
		return 0, fmt.Errorf("size %q: want a number with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("size %q: bad number", s)
	}
	v := f * mul
	if v >= 1<<63 {
		return 0, fmt.Errorf("size %q: too large", s)
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
