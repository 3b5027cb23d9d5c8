// Package bytesize parses human-written byte sizes ("512MiB", "1.5 GB", "16G", "1048576"). It
// is the one parser behind config sizes and --simulate-gpus specs; it lives here, below both,
// so that gpu/sim need not import config (docs/architecture.md: dependencies point down).
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// units maps a lower-cased unit to its multiplier. Bare K, M, G and T are binary, as nvidia-smi
// and most GPU documentation write memory sizes; KB…TB are decimal, as disk vendors write them.
var units = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
}

// Parse reads a size: a non-negative decimal number (with an optional fraction), optional
// spaces, and an optional case-insensitive unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB, K, M,
// G, T). Fractional byte counts are truncated. Sizes of 2^63 bytes or more are refused, so
// the result fits an int64 as well as a uint64.
func Parse(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	// Only ASCII digits and '.' belong to the number: ParseFloat would otherwise also take
	// exponents, signs, hex and "Inf", none of which anyone means in a size.
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mul, ok := units[unit]
	if !ok || num == "" {
		return 0, fmt.Errorf("size %q: want a number with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: bad number %q", s, num)
	}
	v := f * mul
	if v >= 1<<63 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return uint64(v), nil
}
