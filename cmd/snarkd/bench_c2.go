package main

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/internal/bench"
	"github.com/snarkd/snarkd/plugin"
	"github.com/snarkd/snarkd/prover"
)

func benchC2Command() *cli.Command {
	return &cli.Command{
		Name:  "c2",
		Usage: "prove synthetic PoRep C2 requests end to end through the daemon's pipeline and report throughput",
		Description: "Each proof goes from C1 output JSON through decoding, vanilla checks, synthesis, the prover backend\n" +
			"and verification, as the daemon runs it. --setup dummy uses keys of the real size whose proofs do not\n" +
			"verify (every proof is still checked; the report says so); --setup params reads the parameter directory.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "proof", Value: "32GiB", Usage: "seal proof type: a name (StackedDrg32GiBV1_1), its number, or a sector size (2KiB, 8MiB, 32GiB, 64GiB)"},
			&cli.IntFlag{Name: "proofs", Value: 4, Usage: "C2 requests proved back to back"},
			&cli.IntFlag{Name: "jobs", Value: config.DefaultJobsWorkers, Usage: "requests in flight at once, as the daemon's Jobs.Workers (at most --proofs)"},
			&cli.StringFlag{Name: "backend", Value: "auto", Usage: "auto, cpu or cuda"},
			&cli.StringFlag{Name: "synthesis", Value: config.SynthesisCompiled, Usage: "compiled or full"},
			&cli.StringFlag{Name: "setup", Value: "dummy", Usage: "dummy (keys of the real size, proofs do not verify) or params (the parameter directory's files)"},
			&cli.StringFlag{Name: "param-dir", Value: config.DefaultParameterCache, Usage: "parameter directory for --setup params", EnvVars: []string{"FIL_PROOFS_PARAMETER_CACHE"}},
			&cli.StringFlag{Name: "circuit-dir", Usage: "directory for compiled circuits (default: a temporary one, so the first proof compiles)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the synthetic C1 outputs"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
		},
		Action: runBenchC2,
	}
}

func runBenchC2(cctx *cli.Context) error {
	ctx := cctx.Context
	p, err := parseSealProof(cctx.String("proof"))
	if err != nil {
		return usagef("--proof: %w", err)
	}
	n, jobs := cctx.Int("proofs"), cctx.Int("jobs")
	if n < 1 {
		return usagef("--proofs %d: want at least 1", n)
	}
	if !cctx.IsSet("jobs") {
		jobs = min(jobs, n)
	}
	if jobs < 1 || jobs > n {
		return usagef("--jobs %d: want 1..%d (at most --proofs)", jobs, n)
	}
	synthesis, setup := cctx.String("synthesis"), cctx.String("setup")
	if synthesis != config.SynthesisCompiled && synthesis != config.SynthesisFull {
		return usagef("--synthesis %q: want compiled or full", synthesis)
	}
	if setup != "dummy" && setup != "params" {
		return usagef("--setup %q: want dummy or params", setup)
	}
	if p.Feature == prooftypes.NonInteractive {
		return usagef("--proof %s: NI-PoRep C2 is not supported yet", p.Name)
	}
	backendName, err := resolveBackend(cctx.String("backend"))
	if err != nil {
		return fmt.Errorf("--backend: %w", err)
	}
	cfg := bench.C2Config{Proof: p, Proofs: n, Jobs: jobs, Synthesis: synthesis, Setup: setup,
		ParamDir: cctx.String("param-dir"), CircuitDir: cctx.String("circuit-dir"), Seed: cctx.Uint64("seed"),
		BackendName: backendName, GoMemoryLimit: memLimit, Log: cctx.App.ErrWriter}
	if backendName == "cuda" {
		var opts plugin.Options
		sched, err := newGPUScheduler(config.Default().GPU, backendName, &opts)
		if err != nil {
			return err
		}
		defer sched.Close()
		if _, ok := opts.Backend.(*prover.GPUBackend); !ok {
			return fmt.Errorf("the cuda backend is %T", opts.Backend)
		}
		cfg.Backend, cfg.Sched = opts.Backend, sched
	}
	rep, err := bench.C2(ctx, cfg)
	if err != nil {
		return err
	}
	if cctx.Bool("json") {
		enc := json.NewEncoder(cctx.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.Format(cctx.App.Writer)
	return nil
}
