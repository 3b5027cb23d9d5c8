package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/plugin"
	"github.com/snarkd/snarkd/plugin/journal"
	"github.com/snarkd/snarkd/repolock"
)

// maxProblemsPrinted bounds the findings `journal check` and `journal repair` print.
const maxProblemsPrinted = 20

func journalCommand() *cli.Command {
	repoFlag := &cli.StringFlag{Name: "repo", Usage: "repo directory (default: the global --repo or SNARKD_PATH)"}
	return &cli.Command{
		Name:  "journal",
		Usage: "check or repair the job journal (<repo>/jobs.db) while the daemon is stopped",
		Subcommands: []*cli.Command{
			{
				Name:   "check",
				Usage:  "read the whole journal and report damage: exit 0 when intact, 1 when damaged",
				Flags:  []cli.Flag{repoFlag, jsonFlag},
				Action: journalCheck,
			},
			{
				Name: "repair",
				Usage: "salvage every readable job into a fresh journal, move the damaged file aside to " +
					"jobs.db.broken-<time> and print how many jobs were recovered and lost",
				Flags:  []cli.Flag{repoFlag, jsonFlag},
				Action: journalRepair,
			},
		},
	}
}

// journalRepo is the repo of a journal command: its own --repo, else the global one.
func journalRepo(c *cli.Context) (string, error) {
	if c.NArg() > 0 {
		return "", usagef("journal %s takes no arguments, got %q (--repo DIR names the repo)", c.Command.Name, c.Args().Slice())
	}
	if c.String("repo") == "" {
		c = c.Lineage()[1] // the journal command's context, which sees the global --repo
	}
	repo, err := repoPath(c)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(repo); err != nil || !st.IsDir() {
		return "", fmt.Errorf("no repo at %s (--repo DIR or SNARKD_PATH names it)", repo)
	}
	return repo, nil
}

// lockRepo takes the repo lock, so that no daemon runs on the journal meanwhile.
func lockRepo(repo, what string) (*repolock.Lock, error) {
	lock, err := repolock.Acquire(repo)
	var held *repolock.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("journal %s needs the daemon stopped: repo %s is in use by a %s", what, repo, held.Who())
	}
	return lock, err
}

// journalCheck is `snarkd journal check`.
func journalCheck(c *cli.Context) error {
	repo, err := journalRepo(c)
	if err != nil {
		return err
	}
	lock, err := lockRepo(repo, "check")
	if err != nil {
		return err
	}
	defer lock.Release()
	path := filepath.Join(repo, plugin.JournalFile)
	rep, err := journal.Check(path)
	if err != nil {
		return err
	}
	res := journalCheckResult{File: path, Exists: rep.Exists, Intact: rep.Intact(), Jobs: rep.Jobs, Bytes: rep.Size,
		Problems: append([]string{}, rep.Problems...)}
	err = printResult(c, res, func(w io.Writer) {
		switch {
		case !rep.Exists && rep.Intact():
			fmt.Fprintf(w, "%s: no journal yet; the daemon creates one at its first start\n", path)
		case rep.Intact():
			fmt.Fprintf(w, "%s: intact, %d jobs, %d bytes\n", path, rep.Jobs, rep.Size)
		default:
			fmt.Fprintf(w, "%s: damaged\n", path)
			printProblems(w, rep.Problems)
		}
	})
	if err != nil || rep.Intact() {
		return err
	}
	return cli.Exit(fmt.Sprintf("job journal %s is damaged: stop the daemon and run `snarkd journal repair --repo %s` to salvage the readable jobs", path, repo), exitFailed)
}

// journalRepair is `snarkd journal repair`.
func journalRepair(c *cli.Context) error {
	repo, err := journalRepo(c)
	if err != nil {
		return err
	}
	lock, err := lockRepo(repo, "repair")
	if err != nil {
		return err
	}
	defer lock.Release()
	path := filepath.Join(repo, plugin.JournalFile)
	res, err := journal.Repair(path)
	if err != nil {
		return err
	}
	out := journalRepairResult{File: path, Repaired: len(res.Problems) > 0, Problems: append([]string{}, res.Problems...),
		BrokenPath: res.BrokenPath, Recovered: res.Recovered, Lost: []lostJobJSON{}, Unknown: res.Unknown}
	for _, l := range res.Lost {
		out.Lost = append(out.Lost, lostJobJSON{ID: l.ID, Reason: l.Reason})
	}
	return printResult(c, out, func(w io.Writer) {
		if len(res.Problems) == 0 {
			fmt.Fprintf(w, "%s: intact, nothing to repair\n", path)
			return
		}
		fmt.Fprintf(w, "%s was damaged:\n", path)
		printProblems(w, res.Problems)
		if res.BrokenPath != "" {
			fmt.Fprintf(w, "moved the damaged file to %s (unchanged)\n", res.BrokenPath)
		}
		fmt.Fprintf(w, "wrote a fresh journal to %s\n", path)
		fmt.Fprintf(w, "recovered %d jobs, lost %d\n", res.Recovered, len(res.Lost))
		for _, l := range res.Lost {
			fmt.Fprintf(w, "  lost job %s: %s\n", l.ID, l.Reason)
		}
		if res.Unknown != "" {
			fmt.Fprintf(w, "note: %s\n", res.Unknown)
		}
	})
}

func printProblems(w io.Writer, problems []string) {
	for i, p := range problems {
		if i == maxProblemsPrinted {
			fmt.Fprintf(w, "  … and %d more\n", len(problems)-i)
			break
		}
		fmt.Fprintf(w, "  %s\n", p)
	}
}
