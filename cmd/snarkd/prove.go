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

	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/rpcapi"
	"github.com/snarkd/snarkd/testcircuit"
)

// proofFlags are the flags of the commands that submit a job and follow it (runProof).
func proofFlags() []cli.Flag {
	return []cli.Flag{apiInfoFlag, jsonFlag,
		&cli.StringFlag{Name: "request-id", Usage: "idempotency key: the same ID again returns the same job"},
		&cli.StringFlag{Name: "out", Usage: "write the proof bytes to this file (default: print base64)"},
		&cli.BoolFlag{Name: "no-wait", Usage: "print the job ID and return without waiting"},
		&cli.BoolFlag{Name: "progress", Usage: "draw the progress bar even when stderr is not a terminal"},
	}
}

func proveCommand() *cli.Command {
	common := proofFlags()
	return &cli.Command{
		Name:  "prove",
		Usage: "submit proofs to the daemon and follow them",
		Subcommands: []*cli.Command{
			{
				Name:  "test",
				Usage: "prove the built-in test circuit (devnet parameters, generated at first use)",
				Flags: append([]cli.Flag{
					&cli.IntFlag{Name: "constraints", Value: 1 << 12, Usage: fmt.Sprintf("constraints per partition, %d..%d", testcircuit.MinConstraints, jobs.MaxTestConstraints)},
					&cli.IntFlag{Name: "partitions", Value: 1, Usage: fmt.Sprintf("partitions, 1..%d", jobs.MaxTestPartitions)},
					&cli.Uint64Flag{Name: "seed", Usage: "circuit seed"},
					&cli.StringFlag{Name: "priority", Usage: "queue class: winning-post, window-post or seal (default seal)"},
				}, common...),
				Action: func(c *cli.Context) error {
					req, err := testRequest(c)
					if err != nil {
						return err
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
					id, err := jobIDArg(c)
					if err != nil {
						return err
					}
					return follow(c, id)
				},
			},
			{
				Name:      "cancel",
				Usage:     "cancel a queued or running job",
				ArgsUsage: "JOB-ID",
				Flags:     []cli.Flag{apiInfoFlag, jsonFlag},
				Action:    cancelJob,
			},
		},
	}
}

// testRequest checks the flags of `prove test` and builds its request.
func testRequest(c *cli.Context) (rpcapi.ProofRequest, error) {
	n, parts := c.Int("constraints"), c.Int("partitions")
	if n < testcircuit.MinConstraints || n > jobs.MaxTestConstraints {
		return rpcapi.ProofRequest{}, usagef("--constraints %d: want %d..%d", n, testcircuit.MinConstraints, jobs.MaxTestConstraints)
	}
	if parts < 1 || parts > jobs.MaxTestPartitions {
		return rpcapi.ProofRequest{}, usagef("--partitions %d: want 1..%d", parts, jobs.MaxTestPartitions)
	}
	req := rpcapi.ProofRequest{RequestID: c.String("request-id"), Kind: rpcapi.KindTest,
		Test: &rpcapi.TestCircuit{Constraints: uint64(n), Partitions: parts, Seed: c.Uint64("seed")}}
	if p := c.String("priority"); p != "" {
		prio, err := parsePriority(p)
		if err != nil {
			return rpcapi.ProofRequest{}, err
		}
		req.Priority = &prio
	}
	if len(req.RequestID) > jobs.MaxRequestIDLen {
		return rpcapi.ProofRequest{}, usagef("--request-id: %d bytes, want at most %d", len(req.RequestID), jobs.MaxRequestIDLen)
	}
	return req, nil
}

// jobIDArg is the one JOB-ID argument of await and cancel.
func jobIDArg(c *cli.Context) (rpcapi.JobID, error) {
	if c.NArg() != 1 || c.Args().First() == "" {
		for _, a := range c.Args().Tail() {
			if strings.HasPrefix(a, "-") {
				return "", usagef("want one JOB-ID argument, got %d: flags go before it (%s)", c.NArg(), a)
			}
		}
		return "", usagef("want one JOB-ID argument, got %d (`snarkd jobs` lists the jobs)", c.NArg())
	}
	return rpcapi.JobID(c.Args().First()), nil
}

// cancelJob is `prove cancel`: exit 0 when it cancelled the job, exitAlreadyFinished when the
// job had finished before (nothing cancelled).
func cancelJob(c *cli.Context) error {
	id, err := jobIDArg(c)
	if err != nil {
		return err
	}
	api, closer, err := proverClient(c, false)
	if err != nil {
		return err
	}
	defer closer()
	job := func() (rpcapi.Job, error) {
		list, err := api.Jobs(c.Context, rpcapi.JobFilter{JobIDs: []rpcapi.JobID{id}, Limit: 1})
		if err != nil {
			return rpcapi.Job{}, err
		}
		if len(list) == 0 {
			return rpcapi.Job{}, &rpcapi.ErrJobNotFound{JobID: id}
		}
		return list[0], nil
	}
	alreadyFinished := func(j rpcapi.Job) error {
		if c.Bool("json") {
			finished := j.Finished
			if err := printJSON(c, cancelResult{JobID: j.ID, State: j.State, Finished: &finished}); err != nil {
				return err
			}
		}
		return cli.Exit(fmt.Sprintf("job %s had already finished (%s at %s): nothing to cancel", j.ID, j.State,
			j.Finished.Local().Format("15:04:05")), exitAlreadyFinished)
	}
	before, err := job()
	if err != nil {
		return err
	}
	if before.State.Final() {
		return alreadyFinished(before)
	}
	running, err := api.Cancel(c.Context, id)
	if err != nil {
		return err
	}
	if running {
		return printResult(c, cancelResult{JobID: id, Cancelled: true, State: rpcapi.JobRunning}, func(w io.Writer) {
			fmt.Fprintf(w, "cancelled job %s (it was running; it stops at its next step)\n", id)
		})
	}
	// Cancel reports false for a queued job it cancelled and for one that finished meanwhile.
	after, err := job()
	if err != nil {
		return err
	}
	if after.State != rpcapi.JobCancelled {
		return alreadyFinished(after)
	}
	return printResult(c, cancelResult{JobID: id, Cancelled: true, State: rpcapi.JobQueued}, func(w io.Writer) {
		fmt.Fprintf(w, "cancelled job %s (it was queued)\n", id)
	})
}

func parsePriority(s string) (rpcapi.Priority, error) {
	for _, p := range []rpcapi.Priority{rpcapi.PriorityWinningPoSt, rpcapi.PriorityWindowPoSt, rpcapi.PrioritySeal} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, usagef("--priority %q: want winning-post, window-post or seal", s)
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
	prog := newProgressOut(c)
	if prog.draw {
		if events, err := api.Events(c.Context, rpcapi.JobFilter{JobIDs: []rpcapi.JobID{id}}); err == nil {
			go func() {
				for ev := range events {
					showProgress(prog, ev)
				}
			}()
		}
	}
	res, err := api.Await(c.Context, id)
	prog.close()
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
	fmt.Fprintln(c.App.ErrWriter, jobSummary(res.Job, len(res.Proof)))
	if out := c.String("out"); out != "" {
		return os.WriteFile(out, res.Proof, 0o644)
	}
	fmt.Fprintln(c.App.Writer, base64.StdEncoding.EncodeToString(res.Proof))
	return nil
}

// jobSummary is the line `prove` ends with: where the job's time went. Parameter loading (or
// generation) is itemised: on a first proof it can be most of the total.
func jobSummary(j rpcapi.Job, proofBytes int) string {
	t := j.Timings
	if j.Kind == rpcapi.KindAggregateSeals {
		return fmt.Sprintf("job %s done: %d-byte aggregate, %s total (queue %s, SRS %s, aggregation %s, verify %s)",
			j.ID, proofBytes, ms(t.TotalMs), ms(t.QueueWaitMs), ms(t.SRSLoadMs), ms(t.ProveMs), ms(t.VerifyMs))
	}
	return fmt.Sprintf("job %s done: %d bytes, %d partition(s), %s total (queue %s, parameters %s, synthesis %s, proving %s, verify %s)",
		j.ID, proofBytes, j.Partitions, ms(t.TotalMs), ms(t.QueueWaitMs), ms(t.SRSLoadMs), ms(t.SynthesisMs), ms(t.ProveMs), ms(t.VerifyMs))
}

func ms(v uint64) time.Duration { return time.Duration(v) * time.Millisecond }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// showProgress redraws the job's line: a bar over partitions, the stage and the elapsed time.
func showProgress(p *progressOut, ev rpcapi.JobEvent) {
	n := max(ev.Partitions, 1)
	done := ev.Partition
	if ev.Type == rpcapi.EventDone || ev.Type == rpcapi.EventVerifying || ev.Type == rpcapi.EventAggregating {
		done = n
	}
	p.show(string(ev.Type), float64(done)/float64(n),
		fmt.Sprintf("%-32s %8s", progressStage(ev, n), ms(ev.ElapsedMs).Round(100*time.Millisecond)))
}

// progressStage is the stage showProgress shows: partition stages with their partition, and
// parameter loading with what is loaded or generated (it can take minutes: a bare
// "loading-params" would not say why).
func progressStage(ev rpcapi.JobEvent, n int) string {
	switch ev.Type {
	case rpcapi.EventSynthesizing, rpcapi.EventProving, rpcapi.EventAdmitted, rpcapi.EventPartitionProved:
		return fmt.Sprintf("%s partition %d/%d", ev.Type, ev.Partition+1, n)
	case rpcapi.EventLoadingParams:
		if ev.Detail != "" {
			return "parameters: " + ev.Detail
		}
		return "loading parameters"
	}
	return string(ev.Type)
}
