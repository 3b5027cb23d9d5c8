package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/repolock"
	"github.com/snarkd/snarkd/rpcapi"
)

// repoPath expands the --repo flag ("~/..." included) to an absolute path.
func repoPath(c *cli.Context) (string, error) {
	p := c.String("repo")
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("expanding --repo %q: %w", p, err)
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("resolving --repo %q: %w", p, err)
	}
	return abs, nil
}

// loadConfig reads the repo's config with env overrides, then applies the global log flags and
// sets up logging from the result and the GOLOG_* variables.
func loadConfig(c *cli.Context, repo string) (config.Config, error) {
	cfg, err := config.Load(repo, os.Environ())
	if err != nil {
		return cfg, err
	}
	if v := c.String("log-level"); v != "" {
		cfg.Log.Level = v
	}
	if v := c.String("log-format"); v != "" {
		cfg.Log.Format = v
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	if err := setupLogging(cfg.Log, os.Getenv); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// tokenFile holds an admin token for CLI clients on the same host (as Lotus's repo "token").
const tokenFile = "token"

// endpoint finds the daemon: --api-info / SNARKD_API_INFO (TOKEN:MULTIADDR) when given, else
// the repo's api and token files written by `snarkd run`.
func endpoint(c *cli.Context) (rpcapi.APIInfo, error) {
	if s := c.String("api-info"); s != "" {
		info, err := rpcapi.ParseAPIInfo(s)
		if err == nil {
			_, err = info.URL("http")
		}
		if err != nil {
			return info, usagef("--api-info (SNARKD_API_INFO): %w", err)
		}
		return info, nil
	}
	repo, err := repoPath(c)
	if err != nil {
		return rpcapi.APIInfo{}, err
	}
	addr, err := readAPIFile(repo)
	if err != nil {
		return rpcapi.APIInfo{}, err
	}
	info := rpcapi.APIInfo{Addr: addr}
	if tok, err := os.ReadFile(filepath.Join(repo, tokenFile)); err == nil {
		info.Token = strings.TrimSpace(string(tok))
	}
	return info, nil
}

// staleAPIFileError is a repo api file that no running daemon wrote: its daemon was killed or
// crashed without removing it.
type staleAPIFileError struct {
	Path, Addr string
	PID        int // the dead daemon's, when its lock file still names it
}

func (e *staleAPIFileError) Error() string {
	who := "a daemon that did not shut down cleanly"
	if e.PID != 0 {
		who = fmt.Sprintf("daemon pid %d, which did not shut down cleanly", e.PID)
	}
	return fmt.Sprintf("no snarkd daemon is running on this repo: %s (%s) is left from %s; "+
		"start one with `snarkd run` (it replaces the file) or remove it with `rm %s`", e.Path, e.Addr, who, e.Path)
}

// readAPIFile reads the endpoint the running daemon of repo wrote, and refuses a stale one.
func readAPIFile(repo string) (string, error) {
	path := filepath.Join(repo, apiFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if held, h, _ := repolock.Probe(repo); held {
			return "", fmt.Errorf("the daemon of repo %s (%s) has not written %s yet: try again once it prints its listening line", repo, h, path)
		}
		return "", fmt.Errorf("no running daemon found in repo %s (no %s): start one with `snarkd run`, or pass --api-info TOKEN:MULTIADDR", repo, path)
	}
	if err != nil {
		return "", fmt.Errorf("reading the daemon's endpoint %s: %w", path, err)
	}
	addr := strings.TrimSpace(string(b))
	held, h, err := repolock.Probe(repo)
	if err != nil {
		log.Debugw("cannot tell whether the repo's daemon runs", "err", err)
		return addr, nil
	}
	if !held {
		return "", &staleAPIFileError{Path: path, Addr: addr, PID: h.PID}
	}
	return addr, nil
}

// proverClient dials the daemon's native API, websocket when streaming is needed, and checks
// that the daemon speaks this build's API (checkVersion).
func proverClient(c *cli.Context, ws bool) (rpcapi.Prover, func(), error) {
	info, err := endpoint(c)
	if err != nil {
		return nil, nil, err
	}
	scheme := "http"
	if ws {
		scheme = "ws"
	}
	addr, err := info.URL(scheme)
	if err != nil {
		return nil, nil, err
	}
	if err := checkReachable(c, addr); err != nil {
		return nil, nil, err
	}
	api, closer, err := rpcapi.NewProverClient(c.Context, addr, info.Header())
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	if err := checkVersion(c, api); err != nil {
		closer()
		return nil, nil, err
	}
	return api, closer, nil
}

// checkReachable dials the endpoint's TCP address once, so that a daemon that is not there is
// reported as such (HTTP clients dial only at the first call, and say less).
func checkReachable(c *cli.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("API address %q: %w", rawURL, err)
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" || u.Scheme == "wss" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(c.Context, "tcp", host)
	if err != nil {
		from := "--api-info (SNARKD_API_INFO)"
		if c.String("api-info") == "" {
			from = "the repo's api file"
		}
		return fmt.Errorf("no snarkd daemon answers at %s (from %s): %w; is it running, and on this address?", host, from, err)
	}
	return conn.Close()
}

// apiInfoFlag is shared by the client commands.
var apiInfoFlag = &cli.StringFlag{
	Name:    "api-info",
	Usage:   "daemon to talk to, TOKEN:MULTIADDR (default: the daemon of --repo)",
	EnvVars: []string{"SNARKD_API_INFO"},
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"}

func printJSON(c *cli.Context, v interface{}) error {
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
