package main

import "github.com/urfave/cli/v2"

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:        "bench",
		Usage:       "measure proving speed on this machine",
		Subcommands: []*cli.Command{
			// benchProveCommand and benchGPUCommand live in bench_prove.go and bench_gpu*.go.
		},
	}
}
