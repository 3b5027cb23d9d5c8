package cuzk

import (
	"strings"
	"testing"

	"github.com/snarkd/snarkd/config"
)

// TestConfigValidate covers the Cuzk settings' validation (config.Cuzk.Validate), which
// `snarkd run` applies before starting the service.
func TestConfigValidate(t *testing.T) {
	ok := config.Default().Cuzk
	for _, c := range []struct {
		name string
		mut  func(*config.Cuzk)
		err  string
	}{
		{"default is off and valid", func(*config.Cuzk) {}, ""},
		{"unix socket", func(c *config.Cuzk) { c.ListenAddress = "unix:///run/snarkd/cuzk.sock" }, ""},
		{"tcp", func(c *config.Cuzk) { c.ListenAddress = "127.0.0.1:9820" }, ""},
		{"relative socket", func(c *config.Cuzk) { c.ListenAddress = "unix://cuzk.sock" }, "Cuzk.ListenAddress"},
		{"no port", func(c *config.Cuzk) { c.ListenAddress = "127.0.0.1" }, "Cuzk.ListenAddress"},
		{"cert without key", func(c *config.Cuzk) { c.TLSCertFile = "c.pem" }, "set both or neither"},
		{"client CA without cert", func(c *config.Cuzk) { c.TLSClientCAFile = "ca.pem" }, "Cuzk.TLSClientCAFile needs"},
		{"token with space", func(c *config.Cuzk) { c.Token = "a b" }, "Cuzk.Token"},
		{"small messages", func(c *config.Cuzk) { c.MaxMessageBytes = 4 << 20 }, "at least 256 MiB"},
	} {
		cfg := ok
		c.mut(&cfg)
		err := cfg.Validate()
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
	if ok.MaxMessageBytes < config.MinCuzkMessageBytes || ok.ListenAddress != "" {
		t.Errorf("defaults %+v: want the service off and 256 MiB messages", ok)
	}
}
