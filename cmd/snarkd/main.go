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

// repeatedStop receives the second and later SIGINT or SIGTERM: a draining daemon (run) skips
// the rest of its grace. The first cancels the command's context.
var repeatedStop = make(chan os.Signal, 1)

func main() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go forwardSignals(sigs, stop) // ends with the process
	memLimit, memLimitSource = memlimit.Set()
	// Spare Ps keep the RPC handlers answering while every core proves (package cores).
	cores.Spare()
	if err := newApp().RunContext(ctx, os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "snarkd:", err)
		stop()
		os.Exit(exitCode(err))
	}
}

// forwardSignals cancels the command's context at the first signal and hands later ones to
// repeatedStop (dropping one when the last is still unread: skipping twice is skipping once).
func forwardSignals(sigs <-chan os.Signal, cancel context.CancelFunc) {
	first := true
	for s := range sigs {
		if first {
			first = false
			cancel()
			continue
		}
		select {
		case repeatedStop <- s:
		default:
		}
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
			stopCommand("stop"),
			jobsCommand(),
			proveCommand(),
			aggregateCommand(),
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
