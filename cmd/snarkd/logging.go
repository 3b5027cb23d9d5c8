package main

import (
	"fmt"
	"os"
	"strings"

	logging "github.com/ipfs/go-log/v2"

	"github.com/snarkd/snarkd/config"
)

// The go-log variables snarkd honours as Lotus does (go-log reads them itself only at init, and
// setupLogging replaces that configuration).
const (
	envLogLevel  = "GOLOG_LOG_LEVEL"  // LEVEL and/or SUBSYSTEM=LEVEL, comma-separated
	envLogFmt    = "GOLOG_LOG_FMT"    // color, nocolor or json
	envLogFile   = "GOLOG_FILE"       // log to this file (instead of stderr, unless GOLOG_OUTPUT says)
	envLogURL    = "GOLOG_URL"        // a zap sink URL
	envLogOutput = "GOLOG_OUTPUT"     // stdout, stderr, file, url joined with '+'
	envLogLabels = "GOLOG_LOG_LABELS" // key=value pairs added to every line, comma-separated
)

// logSettings is go-log's configuration and what setupLogging reports once it applies.
type logSettings struct {
	logging.Config
	// levelFromEnv is set when GOLOG_LOG_LEVEL carries a level for every logger, which then
	// replaces Log.Level.
	levelFromEnv bool
}

// logConfig builds go-log's configuration: snarkd's Log settings (Log.Level, --log-level;
// Log.Format, --log-format) where the GOLOG_* variables (read with getenv) are unset, the
// variables where they are set, as go-log reads them for Lotus. isTerm tells whether an output
// is a terminal, for colour. A value go-log would ignore with a message is an error here, so
// that a typo does not leave the daemon logging at another level than asked.
func logConfig(l config.Log, getenv func(string) string, isTerm func(*os.File) bool) (logSettings, error) {
	lvl, err := logging.LevelFromString(l.Level)
	if err != nil {
		lvl = logging.LevelInfo // Validate has refused other values; "" is the default
	}
	s := logSettings{Config: logging.Config{Level: lvl, Stderr: true,
		SubsystemLevels: map[string]logging.LogLevel{}, Labels: map[string]string{}}}
	if v := getenv(envLogLevel); v != "" {
		for _, entry := range strings.Split(v, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			name, level, sub := strings.Cut(entry, "=")
			if !sub {
				level = name
			}
			parsed, err := logging.LevelFromString(strings.TrimSpace(level))
			if err != nil || (sub && strings.TrimSpace(name) == "") {
				return s, fmt.Errorf("%s %q: entry %q: want LEVEL or SUBSYSTEM=LEVEL, LEVEL one of debug, info, warn, error, dpanic, panic or fatal",
					envLogLevel, v, entry)
			}
			if sub {
				s.SubsystemLevels[strings.TrimSpace(name)] = parsed
			} else {
				s.Level, s.levelFromEnv = parsed, true
			}
		}
	}
	s.File, s.URL = getenv(envLogFile), getenv(envLogURL)
	if s.File != "" {
		s.Stderr = false // as go-log: a file replaces stderr unless GOLOG_OUTPUT names it too
	}
	if out := getenv(envLogOutput); out != "" {
		var std bool
		for _, o := range strings.Split(out, "+") {
			switch o {
			case "stdout":
				s.Stdout, std = true, true
			case "stderr":
				s.Stderr, std = true, true
			case "file":
				if s.File == "" {
					return s, fmt.Errorf("%s %q names file but %s is empty", envLogOutput, out, envLogFile)
				}
			case "url":
				if s.URL == "" {
					return s, fmt.Errorf("%s %q names url but %s is empty", envLogOutput, out, envLogURL)
				}
			default:
				return s, fmt.Errorf("%s %q: %q is none of stdout, stderr, file or url", envLogOutput, out, o)
			}
		}
		if std {
			s.Stdout, s.Stderr = strings.Contains("+"+out+"+", "+stdout+"), strings.Contains("+"+out+"+", "+stderr+")
		}
	}
	if labels := getenv(envLogLabels); labels != "" {
		for _, kv := range strings.Split(labels, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return s, fmt.Errorf("%s %q: label %q: want key=value", envLogLabels, labels, kv)
			}
			s.Labels[k] = v
		}
	}
	switch f := getenv(envLogFmt); f {
	case "color":
		s.Format = logging.ColorizedOutput
	case "nocolor":
		s.Format = logging.PlaintextOutput
	case "json":
		s.Format = logging.JSONOutput
	case "":
		switch {
		case l.Format == "json":
			s.Format = logging.JSONOutput
		case (s.Stderr && isTerm(os.Stderr)) || (s.Stdout && isTerm(os.Stdout)):
			s.Format = logging.ColorizedOutput
		default:
			s.Format = logging.PlaintextOutput // colour codes would garble files and journals
		}
	default:
		return s, fmt.Errorf("%s %q: want color, nocolor or json", envLogFmt, f)
	}
	return s, nil
}

// setupLogging configures go-log from snarkd's Log settings and the GOLOG_* variables
// (logConfig).
func setupLogging(l config.Log, getenv func(string) string) error {
	s, err := logConfig(l, getenv, func(f *os.File) bool { return isTerminal(f) })
	if err != nil {
		return err
	}
	logging.SetupLogging(s.Config)
	if s.levelFromEnv && s.Level.String() != l.Level {
		log.Infow(envLogLevel+" sets the level of every logger, not Log.Level (--log-level)", "level", s.Level.String(), "log_level", l.Level)
	}
	return nil
}
