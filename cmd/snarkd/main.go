// Command snarkd is the remote Groth16 prover daemon for Filecoin storage providers and its CLI.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/internal/cores"
	"github.com/snarkd/snarkd/internal/memlimit"
)

// memLimit is the Go runtime's soft memory limit set at start (memlimit.Set), and its source.
var memLimit, memLimitSource = uint64(0), ""

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	memLimit, memLimitSource = memlimit.Set()
	// Spare Ps keep the RPC handlers answering while every core proves (package cores).
	cores.Spare()
	if err := newApp().RunContext(ctx, os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "snarkd:", err)
		stop()
		os.Exit(exitCode(err))
	}
}

func newApp() *cli.App {
	app := &cli.App{
		Name:                 "snarkd",
		Usage:                "remote Groth16 prover for Filecoin (PoRep C2, WindowPoSt, WinningPoSt, SnapDeals)",
		Version:              buildinfo.String(),
		EnableBashCompletion: true,
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:    "repo",
				Usage:   "repo directory holding config.toml, the job journal and the API endpoint file",
				EnvVars: []string{"SNARKD_PATH"},
				Value:   "~/.snarkd",
			},
			&cli.StringFlag{
				Name:  "log-level",
				Usage: "log level: debug, info, warn, error (overrides Log.Level)",
			},
			&cli.StringFlag{
				Name:  "log-format",
				Usage: "log format: text or json (overrides Log.Format)",
			},
		},
		Commands: []*cli.Command{
			runCommand(),
			statusCommand(),
			jobsCommand(),
			proveCommand(),
			authCommand(),
			workerCommand(),
			devicesCommand(),
			benchCommand(),
			paramsCommand(),
			journalCommand(),
			circuitCommand(),
			demoCommand(),
		},
		// main prints every error and picks the exit code (exitCode); urfave/cli would exit
		// from inside for some of them.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError:   onUsageError,
		Action:         unknownCommand,
	}
	setUsageHandlers(app.Commands)
	return app
}
