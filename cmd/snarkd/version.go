package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/rpcapi"
)

// checkDaemonVersion compares the daemon's Version answer with this CLI's build (version and
// API version, buildinfo). The same API version passes silently, however the builds differ.
// Another API version of the same major is compatible, so the command goes on after one
// warning line on w (the CLI's stderr) naming both versions: the daemon may lack a field or
// method this CLI knows, or the reverse. Another major version is an incompatible API: the
// command is refused, since requests could be misread rather than rejected.
func checkDaemonVersion(w io.Writer, daemon rpcapi.VersionInfo, cliVersion, cliAPI string) error {
	if daemon.APIVersion == cliAPI {
		return nil
	}
	versions := fmt.Sprintf("the daemon is snarkd %s (API %s), this CLI snarkd %s (API %s)",
		daemon.Version, daemon.APIVersion, cliVersion, cliAPI)
	dm, dok := apiMajor(daemon.APIVersion)
	cm, cok := apiMajor(cliAPI)
	if dok && cok && dm != cm {
		return fmt.Errorf("incompatible daemon: %s; their API major versions differ: use a snarkd CLI of the daemon's release", versions)
	}
	fmt.Fprintf(w, "snarkd: warning: API version mismatch: %s; the command goes on, but fields or methods one side added may be missing\n", versions)
	return nil
}

// apiMajor is the major part of a semantic version ("1.2.3", "v1.2"), and whether there is one.
func apiMajor(v string) (int, bool) {
	major, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	n, err := strconv.Atoi(major)
	return n, err == nil && n >= 0
}

// checkVersion asks the daemon for its Version and checks it against this build
// (checkDaemonVersion). A daemon that does not answer is not refused here: the command's own
// call reports why better.
func checkVersion(c *cli.Context, api rpcapi.Prover) error {
	v, err := api.Version(c.Context)
	if err != nil {
		log.Debugw("cannot check the daemon's version", "err", err)
		return nil
	}
	return checkDaemonVersion(c.App.ErrWriter, v, buildinfo.String(), buildinfo.APIVersion)
}
