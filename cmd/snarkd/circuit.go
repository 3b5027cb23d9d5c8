package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

func circuitCommand() *cli.Command {
	return &cli.Command{
		Name:  "circuit",
		Usage: "inspect the Filecoin circuits snarkd proves",
		Subcommands: []*cli.Command{
			{
				Name: "info",
				Usage: "constraints, public inputs, aux variables, a/b densities and FFT domain of each PoRep " +
					"partition circuit, from blank synthesis",
				Description: "Without --proof, one row per distinct circuit (the proof types of one sector size share\n" +
					"a circuit and a parameter file unless their challenge counts differ). The counts come from\n" +
					"blank syntheses with one and two challenges (every challenge block has the same shape);\n" +
					"--full synthesizes the whole blank circuit instead (minutes and GiBs for 32GiB/64GiB).",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "proof", Usage: proofFlagUsage},
					&cli.BoolFlag{Name: "full", Usage: "synthesize the whole blank circuit instead of extrapolating from challenge blocks"},
					jsonFlag,
				},
				Action: circuitInfo,
			},
		},
	}
}

func circuitInfo(c *cli.Context) error {
	circuits := distinctCircuits()
	if s := c.String("proof"); s != "" {
		p, err := parseSealProof(s)
		if err != nil {
			return err
		}
		circuits = []*prooftypes.SealProof{p}
	}
	var infos []*circuit.Info
	for _, p := range circuits {
		var info *circuit.Info
		var err error
		if c.Bool("full") {
			info, err = circuit.CircuitInfo(c.Context, p)
		} else {
			info, err = circuit.QuickCircuitInfo(c.Context, p)
		}
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
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t2^%d\t%s\t\n", i.Proof, i.Partitions, i.Constraints, i.PublicInputs,
			i.AuxVariables, i.AAuxDensity, i.BInputDensity, i.BAuxDensity, i.DomainLog2, i.SynthesisTime.Round(time.Millisecond))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer, "\ninputs include ONE; constraints exclude the one x·0=0 row per input that Groth16 adds; parameter files:")
	for _, i := range infos {
		fmt.Fprintf(c.App.Writer, "  %s: %s\n", i.Proof, i.ParamsFile)
	}
	return nil
}
