package main

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/internal/bench"
)

func benchAggregateCommand() *cli.Command {
	return &cli.Command{
		Name:  "aggregate",
		Usage: "time SnarkPack aggregation (AggregateSealProofs' work) of N proofs on the CPU, with the peak Go heap",
		Description: "By default the proofs and the SRS are random points: quick to make, the aggregates do not verify,\n" +
			"and the time is that of real proofs. --verify aggregates valid proofs (a simulated Groth16 key with\n" +
			"--inputs public inputs; 328 is a 32 GiB PoRep partition's) with a devnet SRS, and times the\n" +
			"verification too. A 32 GiB ProveCommitAggregate of 819 sectors aggregates 8190 proofs (8192 padded).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "proofs", Value: "8,64,512,8192", Usage: "comma-separated proof counts, 1.." + strconv.Itoa(snarkpack.MaxProofs) + " (padded to a power of two)"},
			&cli.StringFlag{Name: "aggregation", Value: "v2", Usage: "SnarkPack version: v1 or v2"},
			&cli.IntFlag{Name: "runs", Value: 1, Usage: "timed aggregations per count"},
			&cli.BoolFlag{Name: "verify", Usage: "valid proofs and a devnet SRS; time the verification too"},
			&cli.IntFlag{Name: "inputs", Value: 328, Usage: "public inputs per proof with --verify (ONE excluded)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per aggregation"},
		},
		Action: func(cctx *cli.Context) error {
			cfg := bench.AggregateConfig{Runs: cctx.Int("runs"), Verify: cctx.Bool("verify"), Inputs: cctx.Int("inputs"), JSON: cctx.Bool("json")}
			for _, f := range strings.Split(cctx.String("proofs"), ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n < 1 || snarkpack.TargetLen(n) > snarkpack.MaxProofs {
					return usagef("--proofs: bad count %q (want 1..%d, e.g. 8,64,512,8192)", f, snarkpack.MaxProofs)
				}
				cfg.Proofs = append(cfg.Proofs, n)
			}
			switch v := cctx.String("aggregation"); v {
			case "v1", "1", "SnarkPackV1":
				cfg.Version = snarkpack.V1
			case "v2", "2", "SnarkPackV2":
				cfg.Version = snarkpack.V2
			default:
				return usagef("--aggregation %q: want v1 or v2", v)
			}
			if cfg.Runs < 1 {
				return usagef("--runs %d: want at least 1", cfg.Runs)
			}
			if cfg.Verify && cfg.Inputs < 1 {
				return usagef("--inputs %d: want at least 1", cfg.Inputs)
			}
			return bench.Aggregate(cctx.Context, cfg, cctx.App.Writer)
		},
	}
}
