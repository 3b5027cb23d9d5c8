package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/internal/bench"
)

func benchProveCommand() *cli.Command {
	return &cli.Command{
		Name:  "prove",
		Usage: "prove a synthetic circuit (about 7/8 boolean wires, like Filecoin witnesses) and time each step",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "backend", Value: "cpu", Usage: "prover backend: " + strings.Join(bench.ProveBackends(), ", ")},
			&cli.StringFlag{Name: "constraints", Value: "2^20", Usage: "R1CS rows including the input rows: N or 2^k"},
			&cli.StringFlag{Name: "circuit", Value: "test", Usage: "test (the synthetic circuit of --constraints) or a PoSt proof type (StackedDrgWinning32GiBV1, StackedDrgWindow32GiBV1_1) proved from synthetic vanilla proofs"},
			&cli.IntFlag{Name: "runs", Value: 3, Usage: "number of timed proofs"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "circuit seed"},
			&cli.StringFlag{Name: "setup", Value: "dummy", Usage: "keys: dummy (right shape, proofs do not verify; fast) or seeded (insecure real keys; proofs are verified)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per run"},
		},
		Action: func(cctx *cli.Context) error {
			return bench.Prove(cctx.Context, bench.ProveConfig{Backend: cctx.String("backend"), Circuit: cctx.String("circuit"),
				Constraints: cctx.String("constraints"), Runs: cctx.Int("runs"), Seed: cctx.Uint64("seed"),
				Setup: cctx.String("setup"), JSON: cctx.Bool("json")}, cctx.App.Writer)
		},
	}
}
