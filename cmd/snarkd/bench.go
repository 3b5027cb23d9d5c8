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
			benchGPUCommand(),
		},
	}
}

// parseLogs reads a comma-separated list of log2 sizes ("20,24,26"); empty means none.
func parseLogs(s string) ([]uint, error) {
	var out []uint
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(f), "2^"))
		if f == "" {
			continue
		}
		v, err := strconv.ParseUint(f, 10, 8)
		if err != nil || v < 1 || v > 28 {
			return nil, fmt.Errorf("bad size %q (want log2 sizes 1..28, e.g. 20,24)", f)
		}
		out = append(out, uint(v))
	}
	return out, nil
}

// parseWindows reads a comma-separated list of Pippenger window sizes in bits ("20,22").
func parseWindows(s string) ([]uint, error) {
	var out []uint
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseUint(f, 10, 8)
		if err != nil || v < 4 || v > 24 {
			return nil, fmt.Errorf("bad window %q (want 4..24 bits, e.g. 20,22)", f)
		}
		out = append(out, uint(v))
	}
	return out, nil
}
