package main

import (
	"context"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/filecoin/update"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/groth16/gpuprove"
	"github.com/snarkd/snarkd/plugin"
	"github.com/snarkd/snarkd/prover"
)

func circuitCommand() *cli.Command {
	return &cli.Command{
		Name:  "circuit",
		Usage: "inspect the Filecoin circuits snarkd proves",
		Subcommands: []*cli.Command{
			{
				Name: "info",
				Usage: "constraints, public inputs, aux variables, a/b densities and FFT domain of each PoRep, " +
					"PoSt and SnapDeals (partition) circuit, from blank synthesis",
				Description: "Without --proof, one row per distinct PoRep and PoSt circuit (the proof types of one sector\n" +
					"size share a circuit and a parameter file unless their challenge counts differ). PoRep counts\n" +
					"come from blank syntheses with one and two challenges (every challenge block has the same\n" +
					"shape), PoSt counts from one sector block (densities shown as -); --full synthesizes each\n" +
					"whole blank circuit instead (minutes and GiBs for 32GiB/64GiB) and adds the SnapDeals\n" +
					"circuits, which --proof UpdateStackedDrg2KiBV1 (…) shows one at a time.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "proof", Usage: circuitFlagUsage},
					&cli.BoolFlag{Name: "full", Usage: "synthesize the whole blank circuit instead of extrapolating from challenge blocks"},
					jsonFlag,
					&cli.BoolFlag{Name: "progress", Usage: "draw the progress line even when stderr is not a terminal"},
				},
				Action: circuitInfo,
			},
			{
				Name:  "compile",
				Usage: "record a circuit's compiled R1CS (what the prover keeps per circuit shape) and store it",
				Description: "The daemon records each circuit shape's R1CS at its first proof, in the background (that\n" +
					"proof synthesizes in full meanwhile), and stores it under <repo>/circuits. This does it ahead\n" +
					"of time and reports its size; a stored file is read back and checked.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "proof", Required: true, Usage: circuitFlagUsage},
					&cli.StringFlag{Name: "dir", Usage: "where to store it (default: <repo>/circuits)"},
					jsonFlag,
				},
				Action: circuitCompile,
			},
		},
	}
}

// compileReport is what `snarkd circuit compile` prints.
type compileReport struct {
	Proof        string `json:"proof"`
	Key          string `json:"key"`
	File         string `json:"file"`
	Rows         int    `json:"rows"`
	Terms        int    `json:"terms"`
	Coefficients int    `json:"coefficients"`
	Flat         bool   `json:"flat"`
	MemoryBytes  uint64 `json:"memory_bytes"`
	// DeviceBytes is the compiled circuit's matrices as the GPU keeps them (gpuprove.CircuitBytes).
	DeviceBytes uint64  `json:"device_bytes"`
	FileBytes   int64   `json:"file_bytes"`
	CompileSec  float64 `json:"compile_s"`
	LoadSec     float64 `json:"load_s"`
}

func circuitCompile(c *cli.Context) error {
	f, err := parseCircuit(c.String("proof"))
	if err != nil {
		return usagef("--proof: %w", err)
	}
	dir := c.String("dir")
	if dir == "" {
		repo, err := repoPath(c)
		if err != nil {
			return err
		}
		dir = filepath.Join(repo, plugin.CircuitsDir)
	}
	t0 := time.Now()
	comp, err := f.compile(c.Context)
	if err != nil {
		return err
	}
	comp.Build = prover.BuildID() // the daemon reads only files of its own build
	rep := compileReport{Proof: f.Name, Key: comp.Key, File: filepath.Join(dir, comp.Key+".r1cs"), Rows: comp.NumConstraints(),
		Terms: comp.Terms(), Coefficients: len(comp.Coeffs), Flat: comp.Flat, MemoryBytes: comp.Bytes(),
		DeviceBytes: gpuprove.CircuitBytes(comp), CompileSec: time.Since(t0).Seconds()}
	if err := comp.Store(rep.File); err != nil {
		return err
	}
	t1 := time.Now()
	if _, err := cs.LoadCompiled(rep.File, comp.Key, comp.Build); err != nil {
		return fmt.Errorf("reading back %s: %w", rep.File, err)
	}
	rep.LoadSec = time.Since(t1).Seconds()
	if fi, err := os.Stat(rep.File); err == nil {
		rep.FileBytes = fi.Size()
	}
	if c.Bool("json") {
		return printJSON(c, rep)
	}
	fmt.Fprintf(c.App.Writer, "%s: %s\n  %d rows, %d stored terms, %d coefficients%s\n  %s in memory, %s on disk (%s), recorded in %.1fs, read back in %.2fs\n  %s of device matrices (resident with the SRS where the GPU computes a, b, c)\n",
		rep.Proof, rep.Key, rep.Rows, rep.Terms, rep.Coefficients, map[bool]string{true: ", every row stored (blocks differ)", false: ", one block stored"}[rep.Flat],
		gpu.FormatBytes(rep.MemoryBytes), gpu.FormatBytes(uint64(rep.FileBytes)), rep.File, rep.CompileSec, rep.LoadSec, gpu.FormatBytes(rep.DeviceBytes))
	return nil
}

func circuitInfo(c *cli.Context) error {
	full := c.Bool("full")
	var circuits []filCircuit
	if s := c.String("proof"); s != "" {
		f, err := parseCircuit(s)
		if err != nil {
			return err
		}
		circuits = []filCircuit{f}
	} else {
		for _, f := range filCircuits() {
			if f.Family != "SnapDeals" || full {
				circuits = append(circuits, f)
			}
		}
	}
	// A full synthesis of a large circuit takes minutes: say which circuit is being synthesized.
	var (
		mu          sync.Mutex
		cur         filCircuit
		curIdx      int
		curStart    time.Time
		t0          = time.Now()
		prog        = newProgressOut(c)
		curProgress = func() {
			mu.Lock()
			f, i, started := cur, curIdx, curStart
			mu.Unlock()
			if f.Name == "" {
				return
			}
			prog.show(f.Name, float64(i)/float64(len(circuits)), circuitProgressLine(i, len(circuits), f, infoStep(f, full), time.Since(started), time.Since(t0)))
		}
	)
	stop := prog.every(time.Second, curProgress)
	defer stop()
	var infos []*circuit.Info
	for i, f := range circuits {
		mu.Lock()
		cur, curIdx, curStart = f, i, time.Now()
		mu.Unlock()
		curProgress() // at once, so that a log names every circuit however fast it is
		info, err := filCircuitInfo(c.Context, f, full)
		if err != nil {
			return err
		}
		infos = append(infos, info)
	}
	mu.Lock()
	cur = filCircuit{}
	mu.Unlock()
	stop()
	fmt.Fprintln(c.App.ErrWriter, circuitInfoSummary(infos, time.Since(t0)))
	if c.Bool("json") {
		return printJSON(c, infos)
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "proof\tpartitions\tconstraints\tinputs\taux\ta_aux\tb_input\tb_aux\tdomain\tsynthesis\t")
	for _, i := range infos {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t2^%d\t%s\t\n", i.Proof, i.Partitions, i.Constraints, i.PublicInputs,
			i.AuxVariables, density(i.AAuxDensity), density(i.BInputDensity), density(i.BAuxDensity), i.DomainLog2, i.SynthesisTime.Round(time.Millisecond))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer, "\ninputs include ONE; constraints exclude the one x·0=0 row per input that Groth16 adds; - is a density not computed (--full); parameter files:")
	for _, i := range infos {
		fmt.Fprintf(c.App.Writer, "  %s: %s\n", i.Proof, i.ParamsFile)
	}
	return nil
}

// infoStep says what circuit info does for f: which blank synthesis.
func infoStep(f filCircuit, full bool) string {
	switch {
	case full || f.Family == "SnapDeals":
		return "blank synthesis of the whole circuit"
	case f.Seal != nil:
		return "blank synthesis with 1 and 2 challenges"
	}
	return "blank synthesis of one sector block"
}

// circuitProgressLine is one line of circuit info progress: which circuit of how many, its
// step, and the times of the circuit and of the command.
func circuitProgressLine(i, n int, f filCircuit, step string, took, total time.Duration) string {
	return fmt.Sprintf("circuit %d/%d %s: %s, %s (total %s)", i+1, n, f.Name, step, fmtElapsed(took), fmtElapsed(total))
}

// circuitInfoSummary is circuit info's last line on stderr: how many circuits, the time, and
// the slowest circuit's.
func circuitInfoSummary(infos []*circuit.Info, total time.Duration) string {
	line := fmt.Sprintf("%d circuit(s) synthesized in %s", len(infos), fmtElapsed(total))
	var slowest *circuit.Info
	for _, i := range infos {
		if slowest == nil || i.SynthesisTime > slowest.SynthesisTime {
			slowest = i
		}
	}
	if slowest != nil && len(infos) > 1 {
		line += fmt.Sprintf(" (slowest: %s, %s)", slowest.Proof, fmtElapsed(slowest.SynthesisTime))
	}
	return line
}

// density formats a density count; -1 is not computed.
func density(n int) string {
	if n < 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// filCircuitInfo reports the counts of one circuit: PoRep through circuit.(Quick)CircuitInfo,
// PoSt from one sector block (densities -1) unless full, SnapDeals from a whole blank synthesis.
func filCircuitInfo(ctx context.Context, f filCircuit, full bool) (*circuit.Info, error) {
	if f.Seal != nil {
		if full {
			return circuit.CircuitInfo(ctx, f.Seal)
		}
		return circuit.QuickCircuitInfo(ctx, f.Seal)
	}
	start := time.Now()
	partitions := 1
	if f.Family == "SnapDeals" {
		ps, err := update.FromSectorSize(f.SectorSize)
		if err != nil {
			return nil, err
		}
		if !strings.Contains(f.Name, "Poseidon") {
			partitions = ps.PartitionCount
		}
	}
	var sh cs.Shape
	aAux, bIn, bAux := -1, -1, -1
	if p := f.PoSt; p != nil && !full {
		var err error
		if sh, err = p.Config().Shape(ctx); err != nil {
			return nil, fmt.Errorf("blank synthesis of %s: %w", f.Name, err)
		}
	} else {
		s, err := cs.SynthesizeShape(ctx, f.Blank())
		if err != nil {
			return nil, fmt.Errorf("blank synthesis of %s: %w", f.Name, err)
		}
		sh, aAux, bIn, bAux = s.Shape(), s.AAuxDensity.Count(), s.BInputDensity.Count(), s.BAuxDensity.Count()
	}
	m := sh.DomainSize()
	return &circuit.Info{
		Proof: f.Name, SectorSize: f.SectorSize, Partitions: partitions,
		Constraints: sh.NumConstraints - sh.NumInputs, R1CSRows: sh.NumConstraints, PublicInputs: sh.NumInputs, AuxVariables: sh.NumAux,
		AAuxDensity: aAux, BInputDensity: bIn, BAuxDensity: bAux, Domain: m, DomainLog2: bits.Len(uint(m)) - 1,
		ParamsFile: f.Base + ".params", VKFile: f.Base + ".vk", SynthesisTime: time.Since(start), SynthesisShape: sh,
	}, nil
}
