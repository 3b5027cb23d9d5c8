package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	logging "github.com/ipfs/go-log/v2"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/config"
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
// sets up logging from the result.
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
	setupLogging(cfg.Log)
	return cfg, nil
}

func setupLogging(l config.Log) {
	lvl, err := logging.LevelFromString(l.Level)
	if err != nil {
		lvl = logging.LevelInfo
	}
	format := logging.ColorizedOutput
	if l.Format == "json" {
		format = logging.JSONOutput
	} else if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice == 0 {
		format = logging.PlaintextOutput
	}
	logging.SetupLogging(logging.Config{Format: format, Level: lvl, Stderr: true})
	logging.SetAllLoggers(lvl)
}

// tokenFile holds an admin token for CLI clients on the same host (as Lotus's repo "token").
const tokenFile = "token"

// endpoint finds the daemon: --api-info / SNARKD_API_INFO (TOKEN:MULTIADDR) when given, else
// the repo's api and token files written by `snarkd run`.
func endpoint(c *cli.Context) (rpcapi.APIInfo, error) {
	if s := c.String("api-info"); s != "" {
		return rpcapi.ParseAPIInfo(s)
	}
	repo, err := repoPath(c)
	if err != nil {
		return rpcapi.APIInfo{}, err
	}
	addr, err := os.ReadFile(filepath.Join(repo, apiFile))
	if err != nil {
		return rpcapi.APIInfo{}, fmt.Errorf("no running daemon found in repo %s (start `snarkd run` or pass --api-info): %w", repo, err)
	}
	info := rpcapi.APIInfo{Addr: strings.TrimSpace(string(addr))}
	if tok, err := os.ReadFile(filepath.Join(repo, tokenFile)); err == nil {
		info.Token = strings.TrimSpace(string(tok))
	}
	return info, nil
}

// proverClient dials the daemon's native API; websocket when streaming is needed.
func proverClient(c *cli.Context, ws bool) (rpcapi.Prover, func(), error) {
	info, err := endpoint(c)
	if err != nil {
		return nil, nil, err
	}
	scheme := "http"
	if ws {
		scheme = "ws"
	}
	url, err := info.URL(scheme)
	if err != nil {
		return nil, nil, err
	}
	api, closer, err := rpcapi.NewProverClient(c.Context, url, info.Header())
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to %s: %w", url, err)
	}
	return api, closer, nil
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
