package main

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/gpu/cuda"
)

func devicesCommand() *cli.Command {
	return &cli.Command{
		Name:  "devices",
		Usage: "list the GPUs this binary can use (name, VRAM total and free, SMs)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			devs, err := cuda.Devices()
			if err != nil {
				return err
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(devs)
			}
			if !cuda.CUDAEnabled {
				fmt.Fprintln(c.App.Writer, "built without CUDA: proving runs on the CPU (build with `make cuda` for GPUs)")
				return nil
			}
			if rt, drv, err := cuda.Versions(); err == nil {
				fmt.Fprintf(c.App.Writer, "CUDA runtime %d.%d, driver %d.%d\n", rt/1000, rt%1000/10, drv/1000, drv%1000/10)
			}
			if len(devs) == 0 {
				fmt.Fprintln(c.App.Writer, "no CUDA device visible")
			}
			for _, d := range devs {
				fmt.Fprintln(c.App.Writer, d.String())
			}
			return nil
		},
	}
}
