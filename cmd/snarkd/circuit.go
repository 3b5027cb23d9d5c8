package main

import (
	"context"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/filecoin/update"
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
				},
				Action: circuitInfo,
			},
		},
	}
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
	var infos []*circuit.Info
	for _, f := range circuits {
		info, err := filCircuitInfo(c.Context, f, full)
		if err != nil {
			return err
		}
		infos = append(infos, info)
	}
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
