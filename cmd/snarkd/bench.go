package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure proving speed on this machine",
		Subcommands: []*cli.Command{
			benchProveCommand(),
			benchC2Command(),
			benchPoStCommand(),
			benchGPUCommand(),
			benchAggregateCommand(),
		},
	}
}

// parseLogs reads a comma-separated list of log2 sizes ("20,24,26" or "2^20"); empty means none.
func parseLogs(s string) ([]uint, error) {
	return parseUints(s, "2^", 1, 28, "size", "log2 sizes 1..28, e.g. 20,24")
}

// parseWindows reads a comma-separated list of Pippenger window sizes in bits ("20,22").
func parseWindows(s string) ([]uint, error) {
	return parseUints(s, "", 4, 24, "window", "4..24 bits, e.g. 20,22")
}

// parseUints reads comma-separated integers in [lo, hi], each optionally prefixed.
func parseUints(s, prefix string, lo, hi uint64, what, want string) ([]uint, error) {
	var out []uint
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if prefix != "" {
			f = strings.TrimSpace(strings.TrimPrefix(f, prefix))
		}
		if f == "" {
			continue
		}
		v, err := strconv.ParseUint(f, 10, 8)
		if err != nil || v < lo || v > hi {
			return nil, fmt.Errorf("bad %s %q (want %s)", what, f, want)
		}
		out = append(out, uint(v))
	}
	return out, nil
}
