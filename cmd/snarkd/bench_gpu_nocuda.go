//go:build !cuda

package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func benchGPUCommand() *cli.Command {
	return &cli.Command{
		Name:  "gpu",
		Usage: "time the CUDA kernels (needs a binary built with `make cuda`)",
		// The CUDA build's --json, so that a script passing it gets the error below, not a
		// flag error.
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the rows as JSON instead of a table"}},
		Action: func(*cli.Context) error {
			return errors.New("bench gpu: snarkd was built without CUDA support (build it with `make cuda`)")
		},
	}
}
