package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/sealer"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "fixtures for demos and tests",
		Subcommands: []*cli.Command{
			{
				Name: "seal",
				Usage: "seal a sector of random data in Go (2KiB or 8MiB: SDR labels, trees D, C and R) and write " +
					"its C1 output as Lotus's Commit2In JSON, ready for `snarkd prove c2`",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "proof", Value: "StackedDrg2KiBV1_1", Usage: proofFlagUsage},
					&cli.Uint64Flag{Name: "miner", Value: 1000, Usage: "miner actor ID the replica belongs to"},
					&cli.Uint64Flag{Name: "sector", Value: 1, Usage: "sector number"},
					&cli.StringFlag{Name: "out", Required: true, Usage: "Commit2In JSON file to write"},
					jsonFlag,
				},
				Action: func(c *cli.Context) error {
					p, err := parseSealProof(c.String("proof"))
					if err != nil {
						return err
					}
					if p.SectorSize > sealer.MaxSectorSize {
						return fmt.Errorf("%s: the Go sealer seals sectors of up to %d bytes", p.Name, sealer.MaxSectorSize)
					}
					t0 := time.Now()
					o, err := sealer.RandomC1(c.Context, p, abi.ActorID(c.Uint64("miner")), abi.SectorNumber(c.Uint64("sector")), rand.Reader)
					if err != nil {
						return err
					}
					phase1, err := o.Encode()
					if err != nil {
						return err
					}
					b, err := json.Marshal(c1.Commit2In{SectorNum: int64(c.Uint64("sector")), Phase1Out: phase1, SectorSize: p.SectorSize})
					if err != nil {
						return err
					}
					if err := os.WriteFile(c.String("out"), b, 0o600); err != nil {
						return err
					}
					took := time.Since(t0)
					res := demoSealResult{Proof: p.Name, Miner: c.Uint64("miner"), Sector: c.Uint64("sector"), Out: c.String("out"),
						TookSec: jsonSeconds(took)}
					return printResult(c, res, func(w io.Writer) {
						fmt.Fprintf(w, "sealed a %s sector (miner %d, sector %d) and wrote its C1 output to %s in %s\n",
							p.Name, c.Uint64("miner"), c.Uint64("sector"), c.String("out"), took.Round(time.Millisecond))
					})
				},
			},
		},
	}
}
