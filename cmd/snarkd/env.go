package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	logging "github.com/ipfs/go-log/v2"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/config"
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
