//go:build cuda

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/gpu/cuda"
)

func benchGPUCommand() *cli.Command {
	return &cli.Command{
		Name:  "gpu",
		Usage: "time the CUDA kernels (NTT, H step, MSM G1/G2) on one GPU and print a table",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "device", Value: 0, Usage: "GPU ordinal"},
			&cli.IntFlag{Name: "runs", Value: 5, Usage: "timed runs per case after one warm-up (median reported)"},
			&cli.StringFlag{Name: "ntt", Value: "20,24,26,27", Usage: "NTT and H-step sizes (log2, comma-separated)"},
			&cli.StringFlag{Name: "g1", Value: "20,22,24,26", Usage: "G1 MSM sizes: uniform scalars resident and streamed, and 95% 0/1 scalars"},
			&cli.StringFlag{Name: "g1-split", Value: "27", Usage: "extra sizes for the 95% 0/1 G1 MSM only"},
			&cli.StringFlag{Name: "g2", Value: "20,22,24,26", Usage: "G2 MSM sizes: resident and streamed"},
			&cli.StringFlag{Name: "g1-dense", Usage: "extra sizes for a uniform-scalar G1 MSM on the device only"},
			&cli.StringFlag{Name: "g2-dense", Usage: "extra sizes for a uniform-scalar G2 MSM on the device only"},
			&cli.StringFlag{Name: "windows", Usage: "window sizes (bits) the --g1-dense and --g2-dense MSMs run at; default: chosen by size"},
			&cli.UintFlag{Name: "distinct", Value: 20, Usage: "log2 of distinct random points, tiled to each size"},
			&cli.Uint64Flag{Name: "seed", Usage: "data seed (0: random)"},
			&cli.StringFlag{Name: "log", Usage: "file for per-run timings (default: stderr)"},
			&cli.BoolFlag{Name: "json", Usage: "print the rows as JSON instead of a table"},
		},
		Action: func(cctx *cli.Context) error {
			cfg := cuda.KernelBenchConfig{
				Ordinal:  cctx.Int("device"),
				Runs:     cctx.Int("runs"),
				Distinct: cctx.Uint("distinct"),
				Seed:     cctx.Uint64("seed"),
			}
			var err error
			if cfg.NTTLogs, err = parseLogs(cctx.String("ntt")); err != nil {
				return err
			}
			if cfg.G1Logs, err = parseLogs(cctx.String("g1")); err != nil {
				return err
			}
			if cfg.G1Split, err = parseLogs(cctx.String("g1-split")); err != nil {
				return err
			}
			if cfg.G2Logs, err = parseLogs(cctx.String("g2")); err != nil {
				return err
			}
			if cfg.G1Dense, err = parseLogs(cctx.String("g1-dense")); err != nil {
				return err
			}
			if cfg.G2Dense, err = parseLogs(cctx.String("g2-dense")); err != nil {
				return err
			}
			if cfg.Windows, err = parseWindows(cctx.String("windows")); err != nil {
				return err
			}
			var logw io.Writer = os.Stderr
			if p := cctx.String("log"); p != "" {
				f, err := os.Create(p)
				if err != nil {
					return err
				}
				defer f.Close()
				logw = f
			}
			cfg.Log = logw
			devs, err := cuda.Devices()
			if err != nil {
				return err
			}
			for _, d := range devs {
				if d.Ordinal == cfg.Ordinal {
					fmt.Fprintln(cctx.App.Writer, d.String())
				}
			}
			rows, err := cuda.KernelBench(cctx.Context, cfg)
			if cctx.Bool("json") {
				enc := json.NewEncoder(cctx.App.Writer)
				for _, r := range rows {
					_ = enc.Encode(r)
				}
			} else {
				cuda.FormatKernelBench(cctx.App.Writer, rows)
			}
			if err != nil {
				return fmt.Errorf("bench gpu: %w", err)
			}
			return nil
		},
	}
}
