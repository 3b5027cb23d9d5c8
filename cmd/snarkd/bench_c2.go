package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/cuda"
	"github.com/snarkd/snarkd/internal/bench"
	"github.com/snarkd/snarkd/plugin"
	"github.com/snarkd/snarkd/prover"
)

// pipelineBenchFlags are the flags `bench c2` and `bench post` share; proof is the --proof flag.
func pipelineBenchFlags(proof cli.Flag, proofs int) []cli.Flag {
	return []cli.Flag{
		proof,
		&cli.IntFlag{Name: "proofs", Value: proofs, Usage: "requests proved back to back"},
		&cli.IntFlag{Name: "jobs", Value: config.DefaultJobsWorkers, Usage: "requests in flight at once, as the daemon's Jobs.Workers (at most --proofs); 1 measures a lone request's latency"},
		&cli.StringFlag{Name: "backend", Value: "auto", Usage: "auto, cpu or cuda"},
		&cli.StringFlag{Name: "card", Usage: "with cuda: admit as on a GPU of this much memory (24GiB, 16GiB), the usual headroom kept: the VRAM headroom leaves that much of each device"},
		&cli.StringFlag{Name: "synthesis", Value: config.SynthesisCompiled, Usage: "compiled or full"},
		&cli.StringFlag{Name: "setup", Value: "dummy", Usage: "dummy (keys of the real size, proofs do not verify) or params (the parameter directory's files)"},
		&cli.StringFlag{Name: "param-dir", Value: config.DefaultParameterCache, Usage: "parameter directory for --setup params", EnvVars: []string{"FIL_PROOFS_PARAMETER_CACHE"}},
		&cli.StringFlag{Name: "circuit-dir", Usage: "directory for compiled circuits (default: a temporary one, so the circuit is recorded once per run)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the synthetic requests"},
		&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
		&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile of the run (keys, circuits, every request) to `FILE`, for go tool pprof"},
	}
}

const pipelineBenchDescription = "Each request goes from its JSON inputs through decoding, vanilla checks, synthesis, the prover\n" +
	"backend and verification, as the daemon runs it. --setup dummy uses keys of the real size whose proofs do\n" +
	"not verify (every proof is still checked; the report says so); --setup params reads the parameter directory.\n" +
	"The first --jobs requests pay the parameter loads and the compiled circuit; the sustained rate and the\n" +
	"steady latency are measured after them. With a GPU the report adds each partition's device time and where\n" +
	"partitions waited (GPU queue, device memory, other partitions' kernels)."

func benchC2Command() *cli.Command {
	return &cli.Command{
		Name:  "c2",
		Usage: "prove synthetic PoRep C2 or SnapDeals requests end to end through the daemon's pipeline and report throughput",
		Description: pipelineBenchDescription + "\n\nPoRep C2 requests are synthetic C1 outputs; SnapDeals requests (--proof UpdateStackedDrg32GiBV1)\n" +
			"synthetic updates of sparse trees, every partition's vanilla proof.",
		Flags: pipelineBenchFlags(&cli.StringFlag{Name: "proof", Value: "32GiB",
			Usage: "seal proof type (StackedDrg32GiBV1_1, its number, or a sector size: 2KiB, 8MiB, 32GiB, 64GiB) or update proof type (UpdateStackedDrg32GiBV1)"}, 4),
		Action: func(cctx *cli.Context) error { return runPipelineBench(cctx, false) },
	}
}

func benchPoStCommand() *cli.Command {
	return &cli.Command{
		Name:        "post",
		Usage:       "prove synthetic WindowPoSt partitions or WinningPoSts end to end through the daemon's pipeline and report latency",
		Description: pipelineBenchDescription + "\n\nEach request is one partition full of sectors, from synthetic vanilla proofs.",
		Flags: pipelineBenchFlags(&cli.StringFlag{Name: "proof", Value: "StackedDrgWindow32GiBV1_1",
			Usage: "PoSt proof type (StackedDrgWindow32GiBV1_1, StackedDrgWinning32GiBV1)"}, 4),
		Action: func(cctx *cli.Context) error { return runPipelineBench(cctx, true) },
	}
}

// workloadOf resolves --proof: seal and update proof types for `bench c2`, PoSt types for
// `bench post`.
func workloadOf(s string, postBench bool) (*bench.Workload, error) {
	f, err := parseCircuit(s)
	if err != nil {
		return nil, err
	}
	switch {
	case postBench && f.PoSt != nil:
		return bench.PoStWorkload(f.PoSt), nil
	case postBench:
		return nil, fmt.Errorf("%s is not a PoSt proof type (StackedDrgWindow32GiBV1_1, StackedDrgWinning32GiBV1); `snarkd bench c2` proves it", f.Name)
	case f.PoSt != nil:
		return nil, fmt.Errorf("%s is a PoSt proof type: `snarkd bench post --proof %s`", f.Name, f.Name)
	case f.Seal != nil:
		if f.Seal.Feature == prooftypes.NonInteractive {
			// Its challenges depend on comm_r, which the synthetic C1 outputs of the benchmark
			// cannot honour; its partitions are the interactive type's circuit.
			return nil, fmt.Errorf("%s: bench c2 has no synthetic NI-PoRep C1 outputs (their challenges depend on comm_r); its partitions prove the circuit of %s",
				f.Name, strings.Replace(f.Name, "V1_2_Feat_NonInteractivePoRep", "V1_1", 1))
		}
		return bench.PoRepWorkload(f.Seal), nil
	}
	for pt := abi.RegisteredUpdateProof_StackedDrg2KiBV1; pt <= abi.RegisteredUpdateProof_StackedDrg64GiBV1; pt++ {
		if strings.EqualFold(prover.UpdateProofName(pt), f.Name) {
			return bench.SnapWorkload(pt)
		}
	}
	return nil, fmt.Errorf("%s has no registered update proof type, so no request can name it", f.Name)
}

func runPipelineBench(cctx *cli.Context, postBench bool) error {
	ctx := cctx.Context
	w, err := workloadOf(cctx.String("proof"), postBench)
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
	var card config.Bytes
	if s := cctx.String("card"); s != "" {
		if card, err = config.ParseBytes(s); err != nil || card == 0 {
			return usagef("--card %q: want a memory size such as 24GiB", s)
		}
	}
	backendName, err := resolveBackend(cctx.String("backend"))
	if err != nil {
		return fmt.Errorf("--backend: %w", err)
	}
	if card != 0 && backendName != "cuda" {
		return usagef("--card needs the cuda backend (this run proves on %s)", backendName)
	}
	cfg := bench.C2Config{Workload: w, Proofs: n, Jobs: jobs, Synthesis: synthesis, Setup: setup,
		ParamDir: cctx.String("param-dir"), CircuitDir: cctx.String("circuit-dir"), Seed: cctx.Uint64("seed"),
		BackendName: backendName, GoMemoryLimit: memLimit, Log: cctx.App.ErrWriter}
	if backendName == "cuda" {
		g := config.Default().GPU
		if card != 0 {
			if g.VRAMHeadroom, err = cardHeadroom(uint64(card)); err != nil {
				return usagef("--card: %w", err)
			}
			fmt.Fprintf(cctx.App.ErrWriter, "admission as on a %s card: VRAM headroom %s\n", gpu.FormatBytes(uint64(card)), gpu.FormatBytes(uint64(g.VRAMHeadroom)))
		}
		var opts plugin.Options
		sched, err := newGPUScheduler(g, backendName, &opts)
		if err != nil {
			return err
		}
		defer sched.Close()
		if _, ok := opts.Backend.(*prover.GPUBackend); !ok {
			return fmt.Errorf("the cuda backend is %T", opts.Backend)
		}
		cfg.Backend, cfg.Sched = opts.Backend, sched
	}
	stopProfile, err := startCPUProfile(cctx.String("cpuprofile"))
	if err != nil {
		return err
	}
	rep, err := bench.C2(ctx, cfg)
	if perr := stopProfile(); err == nil {
		err = perr
	}
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

// cardHeadroom is the VRAM headroom that leaves a card of card bytes, less the usual headroom,
// to admission on the smallest of this host's GPUs.
func cardHeadroom(card uint64) (config.Bytes, error) {
	devs, err := cuda.Devices()
	if err != nil {
		return 0, err
	}
	var smallest uint64
	for _, d := range devs {
		if smallest == 0 || d.TotalMem < smallest {
			smallest = d.TotalMem
		}
	}
	if card+gpu.DefaultHeadroom > smallest {
		return 0, fmt.Errorf("a %s card does not fit in this host's %s one", gpu.FormatBytes(card), gpu.FormatBytes(smallest))
	}
	return config.Bytes(smallest - card + gpu.DefaultHeadroom), nil
}
