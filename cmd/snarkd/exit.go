package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes of the CLI (README.md, "Exit codes").
const (
	// exitFailed: the command failed (an error, a failed or cancelled job, a failed check).
	exitFailed = 1
	// exitUsage: a flag or argument is invalid; nothing was started or sent.
	exitUsage = 2
	// exitAlreadyFinished: `prove cancel` found the job already finished; nothing was cancelled.
	// (urfave/cli exits with 3 for an unknown help topic.)
	exitAlreadyFinished = 4
)

// usageError is an invalid flag or argument, found before the command did anything.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }
func (e *usageError) ExitCode() int { return exitUsage }

// usagef reports an invalid flag or argument; the message names it and the accepted values.
func usagef(format string, args ...interface{}) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// usage marks err, from parsing a flag or argument, as a usage error.
func usage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err}
}

// exitCode maps a command's error to the process exit status.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	// urfave/cli's missing-required-flag error has an unexported type.
	if fmt.Sprintf("%T", err) == "*cli.errRequiredFlags" {
		return exitUsage
	}
	return exitFailed
}

// onUsageError makes urfave/cli's flag parsing errors (an unknown flag, a value that does not
// parse) usage errors; main prints them.
func onUsageError(_ *cli.Context, err error, _ bool) error {
	return usagef("%v (--help lists the flags)", err)
}

// unknownCommand is the Action of the app and of commands that only group subcommands: help
// without arguments, a usage error naming the unknown command otherwise.
func unknownCommand(c *cli.Context) error {
	root := c.Command == nil || c.Command.Name == "" || c.Command.Name == c.App.Name
	if c.NArg() == 0 {
		if root {
			return cli.ShowAppHelp(c)
		}
		return cli.ShowSubcommandHelp(c)
	}
	parent := c.App.Name
	if !root {
		parent += " " + strings.TrimPrefix(c.Command.FullName(), c.App.Name+" ")
	}
	return usagef("unknown command %q: `%s --help` lists the commands", c.Args().First(), parent)
}

// setUsageHandlers installs onUsageError on every command below cmds, and unknownCommand on
// those that only group subcommands.
func setUsageHandlers(cmds []*cli.Command) {
	for _, c := range cmds {
		c.OnUsageError = onUsageError
		if c.Action == nil && len(c.Subcommands) > 0 {
			c.Action = unknownCommand
		}
		setUsageHandlers(c.Subcommands)
	}
}
