package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/rpcapi"
)

func proveCommand() *cli.Command {
	common := []cli.Flag{apiInfoFlag, jsonFlag,
		&cli.StringFlag{Name: "request-id", Usage: "idempotency key: the same ID again returns the same job"},
		&cli.StringFlag{Name: "out", Usage: "write the proof bytes to this file (default: print base64)"},
		&cli.BoolFlag{Name: "no-wait", Usage: "print the job ID and return without waiting"},
		&cli.BoolFlag{Name: "progress", Usage: "draw the progress bar even when stderr is not a terminal"},
	}
	return &cli.Command{
		Name:  "prove",
		Usage: "submit proofs to the daemon and follow them",
		Subcommands: []*cli.Command{
			{
				Name:  "test",
				Usage: "prove the built-in test circuit (devnet parameters, generated at first use)",
				Flags: append([]cli.Flag{
					&cli.IntFlag{Name: "constraints", Value: 1 << 12, Usage: "constraints per partition"},
					&cli.IntFlag{Name: "partitions", Value: 1, Usage: "partitions"},
					&cli.Uint64Flag{Name: "seed", Usage: "circuit seed"},
					&cli.StringFlag{Name: "priority", Usage: "queue class: winning-post, window-post or seal (default seal)"},
				}, common...),
				Action: func(c *cli.Context) error {
					req := rpcapi.ProofRequest{RequestID: c.String("request-id"), Kind: rpcapi.KindTest,
						Test: &rpcapi.TestCircuit{Constraints: uint64(c.Int("constraints")), Partitions: c.Int("partitions"), Seed: c.Uint64("seed")}}
					if p := c.String("priority"); p != "" {
						prio, err := parsePriority(p)
						if err != nil {
							return err
						}
						req.Priority = &prio
					}
					return runProof(c, req)
				},
			},
			{
				Name:  "c2",
				Usage: "prove a PoRep C2 from a C1 output (Commit2In JSON {SectorNum, Phase1Out, SectorSize} or raw C1 JSON)",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "c1", Required: true, Usage: "C1 output file"},
					&cli.Uint64Flag{Name: "miner", Required: true, Usage: "miner actor ID (e.g. 1000 for t01000); the C1 output does not carry it"},
					&cli.Uint64Flag{Name: "sector", Usage: "sector number (overrides the file's SectorNum)"},
				}, common...),
				Action: func(c *cli.Context) error {
					req, err := c2Request(c)
					if err != nil {
						return err
					}
					return runProof(c, req)
				},
			},
			{
				Name:      "await",
				Usage:     "wait for a job and print its proof",
				ArgsUsage: "JOB-ID",
				Flags:     common,
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return fmt.Errorf("want one job ID")
					}
					return follow(c, rpcapi.JobID(c.Args().First()))
				},
			},
			{
				Name:      "cancel",
				Usage:     "cancel a queued or running job",
				ArgsUsage: "JOB-ID",
				Flags:     []cli.Flag{apiInfoFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return fmt.Errorf("want one job ID")
					}
					api, closer, err := proverClient(c, false)
					if err != nil {
						return err
					}
					defer closer()
					was, err := api.Cancel(c.Context, rpcapi.JobID(c.Args().First()))
					if err != nil {
						return err
					}
					if was {
						fmt.Fprintln(c.App.Writer, "cancelled (it was running)")
					} else {
						fmt.Fprintln(c.App.Writer, "cancelled (or already finished)")
					}
					return nil
				},
			},
		},
	}
}

func parsePriority(s string) (rpcapi.Priority, error) {
	for _, p := range []rpcapi.Priority{rpcapi.PriorityWinningPoSt, rpcapi.PriorityWindowPoSt, rpcapi.PrioritySeal} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("--priority %q: want winning-post, window-post or seal", s)
}

func runProof(c *cli.Context, req rpcapi.ProofRequest) error {
	api, closer, err := proverClient(c, false)
	if err != nil {
		return err
	}
	res, err := api.Submit(c.Context, req)
	closer()
	if err != nil {
		return err
	}
	if c.Bool("no-wait") {
		if c.Bool("json") {
			return printJSON(c, res)
		}
		fmt.Fprintln(c.App.Writer, res.JobID)
		return nil
	}
	if !c.Bool("json") {
		fmt.Fprintf(c.App.ErrWriter, "job %s queued (position %d)\n", res.JobID, res.QueuePosition)
	}
	return follow(c, res.JobID)
}

// follow draws progress from the Events stream while Await waits for the result.
func follow(c *cli.Context, id rpcapi.JobID) error {
	api, closer, err := proverClient(c, true)
	if err != nil {
		return err
	}
	defer closer()
	draw := c.Bool("progress") || (!c.Bool("json") && isTerminal(c.App.ErrWriter))
	if draw {
		if events, err := api.Events(c.Context, rpcapi.JobFilter{JobIDs: []rpcapi.JobID{id}}); err == nil {
			go func() {
				for ev := range events {
					drawProgress(c.App.ErrWriter, ev)
				}
			}()
		}
	}
	res, err := api.Await(c.Context, id)
	if draw {
		fmt.Fprintln(c.App.ErrWriter)
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, res)
	}
	switch res.State {
	case rpcapi.JobFailed:
		return fmt.Errorf("job %s failed: %s", res.ID, res.Error)
	case rpcapi.JobCancelled:
		return fmt.Errorf("job %s was cancelled", res.ID)
	}
	fmt.Fprintf(c.App.ErrWriter, "job %s done: %d bytes, %d partition(s), %s total (queue %s, synthesis %s, proving %s, verify %s)\n",
		res.ID, len(res.Proof), res.Partitions, ms(res.Timings.TotalMs), ms(res.Timings.QueueWaitMs),
		ms(res.Timings.SynthesisMs), ms(res.Timings.ProveMs), ms(res.Timings.VerifyMs))
	if out := c.String("out"); out != "" {
		return os.WriteFile(out, res.Proof, 0o644)
	}
	fmt.Fprintln(c.App.Writer, base64.StdEncoding.EncodeToString(res.Proof))
	return nil
}

func ms(v uint64) time.Duration { return time.Duration(v) * time.Millisecond }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// drawProgress redraws one line: a bar over partitions, the stage and the elapsed time.
func drawProgress(w io.Writer, ev rpcapi.JobEvent) {
	const width = 30
	n := ev.Partitions
	if n <= 0 {
		n = 1
	}
	done := ev.Partition
	if ev.Type == rpcapi.EventDone || ev.Type == rpcapi.EventVerifying {
		done = n
	}
	fill := done * width / n
	bar := strings.Repeat("#", fill) + strings.Repeat(".", width-fill)
	stage := string(ev.Type)
	if ev.Type == rpcapi.EventSynthesizing || ev.Type == rpcapi.EventProving || ev.Type == rpcapi.EventAdmitted {
		stage = fmt.Sprintf("%s partition %d/%d", ev.Type, ev.Partition+1, n)
	}
	fmt.Fprintf(w, "\r[%s] %-32s %8s", bar, stage, ms(ev.ElapsedMs).Round(100*time.Millisecond))
}
