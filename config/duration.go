package config

import (
	"fmt"
	"time"
)

// Duration is a time span written as Go durations are: "10s", "1m30s", "24h".
type Duration time.Duration

// UnmarshalText lets TOML files and environment variables use "10s".
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("duration %q: want a number with a unit, e.g. 10s, 5m, 24h", text)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as time.Duration prints it.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

func (d Duration) String() string { return time.Duration(d).String() }

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }
