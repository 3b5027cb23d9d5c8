package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/rpcapi"
)

// stopCommand is `snarkd stop` (and `snarkd worker stop`, lotus-worker's name): the daemon
// drains as at SIGTERM.
func stopCommand(name string) *cli.Command {
	return &cli.Command{
		Name: name,
		Usage: "make the daemon drain and exit, as SIGTERM does: it refuses new work, lets running jobs finish " +
			"within Jobs.DrainGrace, hands back the rest (proved after its next start) and exits 0; again skips the grace",
		Flags: []cli.Flag{apiInfoFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("%s takes no arguments, got %q", name, c.Args().Slice())
			}
			api, closer, err := proverClient(c, false)
			if err != nil {
				return err
			}
			defer closer()
			st, err := api.Stop(c.Context)
			if err != nil {
				return fmt.Errorf("asking the daemon to stop: %w", err)
			}
			return printResult(c, st, func(w io.Writer) { printDrain(w, &st, time.Now()) })
		},
	}
}

// printDrain is the line `stop` and `status` print about a drain.
func printDrain(w io.Writer, st *rpcapi.DrainStatus, now time.Time) {
	jobs := fmt.Sprintf("%d job(s) running, %d queued (kept in the journal for the next start)", st.Running, st.Queued)
	switch {
	case st.Skipped:
		fmt.Fprintf(w, "draining: %s; grace skipped, running jobs are handed back and the daemon exits\n", jobs)
	case st.Running == 0:
		fmt.Fprintf(w, "draining: %s; nothing runs, the daemon exits\n", jobs)
	default:
		fmt.Fprintf(w, "draining: %s; the daemon exits when they finish, or at %s (in %s) handing back what still runs; "+
			"stop again to skip the grace\n", jobs, st.Until.Local().Format("15:04:05"), max(st.Until.Sub(now), 0).Round(time.Second))
	}
}

// taskShortNames are lotus-worker's short names of the task types snarkd can run
// (sealtasks.TaskType.Short), which `worker tasks` takes as lotus-worker does.
var taskShortNames = map[rpcapi.TaskType]string{
	rpcapi.TTCommit2:             "C2",
	rpcapi.TTProveReplicaUpdate2: "PR2",
	rpcapi.TTGenerateWindowPoSt:  "WDP",
	rpcapi.TTGenerateWinningPoSt: "WNP",
}

// knownTaskTypes are taskShortNames' keys in a fixed order.
var knownTaskTypes = []rpcapi.TaskType{rpcapi.TTCommit2, rpcapi.TTProveReplicaUpdate2, rpcapi.TTGenerateWindowPoSt, rpcapi.TTGenerateWinningPoSt}

// parseTaskType takes a short name (C2, case-insensitive) or a full task type.
func parseTaskType(s string) (rpcapi.TaskType, error) {
	for _, tt := range knownTaskTypes {
		if strings.EqualFold(s, taskShortNames[tt]) || s == string(tt) {
			return tt, nil
		}
	}
	names := make([]string, 0, len(knownTaskTypes))
	for _, tt := range knownTaskTypes {
		names = append(names, fmt.Sprintf("%s (%s)", taskShortNames[tt], tt))
	}
	return "", usagef("task type %q: want one of %s", s, strings.Join(names, ", "))
}

// taskName renders a task type with its short name.
func taskName(tt rpcapi.TaskType) string {
	if short, ok := taskShortNames[tt]; ok {
		return fmt.Sprintf("%s (%s)", short, tt)
	}
	return string(tt)
}

// tasksResult is `worker tasks enable|disable --json`.
type tasksResult struct {
	// Changed are the task types enabled or disabled by this command.
	Changed []rpcapi.TaskType `json:"changed"`
	// Enabled are the task types the worker advertises to the miner now.
	Enabled []rpcapi.TaskType `json:"enabled"`
}

// workerTasksCommand is lotus-worker's `tasks enable|disable`: the task types the daemon
// advertises to the miner (Filecoin.TaskEnable, TaskDisable).
func workerTasksCommand() *cli.Command {
	sub := func(name string, enable bool) *cli.Command {
		verb := "stop advertising task types to the miner (it sends no more of them; calls already queued run)"
		if enable {
			verb = "advertise task types to the miner again"
		}
		return &cli.Command{
			Name:      name,
			Usage:     verb,
			ArgsUsage: "--all | TASK... (C2, PR2, WDP, WNP, or the full task type)",
			Flags: []cli.Flag{apiInfoFlag, jsonFlag,
				&cli.BoolFlag{Name: "all", Usage: "every task type of the daemon's worker mode"}},
			Action: func(c *cli.Context) error {
				var want []rpcapi.TaskType
				switch {
				case c.Bool("all") && c.NArg() > 0:
					return usagef("--all and task types %q: give one or the other", c.Args().Slice())
				case c.Bool("all"):
					want = knownTaskTypes
				case c.NArg() == 0:
					return usagef("expected at least one task type (C2, PR2, WDP, WNP) or --all")
				}
				for _, a := range c.Args().Slice() {
					tt, err := parseTaskType(a)
					if err != nil {
						return err
					}
					if !slices.Contains(want, tt) {
						want = append(want, tt)
					}
				}
				w, closer, err := workerClient(c)
				if err != nil {
					return err
				}
				defer closer()
				set := w.TaskDisable
				if enable {
					set = w.TaskEnable
				}
				res := tasksResult{Changed: []rpcapi.TaskType{}, Enabled: []rpcapi.TaskType{}}
				for _, tt := range want {
					if err := set(c.Context, tt); err != nil {
						if c.Bool("all") {
							// --all names every type; the daemon's mode handles only some.
							log.Debugw("task type not handled by this worker", "task", tt, "err", err)
							continue
						}
						return fmt.Errorf("%s %s: %w", name, taskName(tt), err)
					}
					res.Changed = append(res.Changed, tt)
				}
				if len(res.Changed) == 0 {
					return fmt.Errorf("%s --all: the daemon handles none of %v", name, knownTaskTypes)
				}
				on, err := w.TaskTypes(c.Context)
				if err != nil {
					return fmt.Errorf("listing enabled task types: %w", err)
				}
				for _, tt := range knownTaskTypes {
					if _, ok := on[tt]; ok {
						res.Enabled = append(res.Enabled, tt)
					}
				}
				return printResult(c, res, func(w io.Writer) {
					for _, tt := range res.Changed {
						fmt.Fprintf(w, "%sd %s\n", name, taskName(tt))
					}
					names := make([]string, 0, len(res.Enabled))
					for _, tt := range res.Enabled {
						names = append(names, taskName(tt))
					}
					if len(names) == 0 {
						names = []string{"none (the miner sends this worker nothing)"}
					}
					fmt.Fprintf(w, "advertised task types: %s\n", strings.Join(names, ", "))
				})
			},
		}
	}
	return &cli.Command{
		Name:        "tasks",
		Usage:       "enable or disable the task types advertised to the miner, as lotus-worker tasks does",
		Subcommands: []*cli.Command{sub("enable", true), sub("disable", false)},
	}
}

// waitQuietResult is `worker wait-quiet --json`.
type waitQuietResult struct {
	Quiet    bool  `json:"quiet"`
	WaitedMs int64 `json:"waited_ms"`
}

// workerWaitQuietCommand is lotus-worker's `wait-quiet` (Filecoin.WaitQuiet).
func workerWaitQuietCommand() *cli.Command {
	return &cli.Command{
		Name: "wait-quiet",
		Usage: "block until no Lotus call is queued or running (after `worker tasks disable --all`, before a stop " +
			"that should hand nothing back to the miner)",
		Flags: []cli.Flag{apiInfoFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("wait-quiet takes no arguments, got %q", c.Args().Slice())
			}
			w, closer, err := workerClient(c)
			if err != nil {
				return err
			}
			defer closer()
			start := time.Now()
			if err := w.WaitQuiet(c.Context); err != nil {
				return fmt.Errorf("waiting for the worker to be quiet: %w", err)
			}
			waited := time.Since(start)
			return printResult(c, waitQuietResult{Quiet: true, WaitedMs: waited.Milliseconds()}, func(w io.Writer) {
				fmt.Fprintf(w, "quiet: no Lotus call queued or running (waited %s)\n", waited.Round(time.Millisecond))
			})
		},
	}
}

// workerClient dials the daemon's Lotus worker API (namespace Filecoin), after checking the
// daemon's version through the native API as every client command does.
func workerClient(c *cli.Context) (rpcapi.Worker, func(), error) {
	_, closer, err := proverClient(c, false)
	if err != nil {
		return nil, nil, err
	}
	closer()
	info, err := endpoint(c)
	if err != nil {
		return nil, nil, err
	}
	addr, err := info.URL("http")
	if err != nil {
		return nil, nil, err
	}
	w, wcloser, err := rpcapi.NewWorkerClient(c.Context, addr, info.Header())
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	return w, wcloser, nil
}
