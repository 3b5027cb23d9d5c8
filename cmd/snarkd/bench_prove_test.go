package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestBenchProveSeeded(t *testing.T) {
	var out bytes.Buffer
	app := &cli.App{Writer: &out, Commands: []*cli.Command{benchProveCommand()}}
	err := app.RunContext(context.Background(), []string{"snarkd", "prove", "--constraints", "256", "--runs", "1", "--setup", "seeded"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "verified") || !strings.Contains(out.String(), "msm h") {
		t.Errorf("unexpected output:\n%s", out.String())
	}
	for _, bad := range [][]string{
		{"--backend", "nope"},
		{"--constraints", "3"},
		{"--runs", "0"},
		{"--setup", "other"},
	} {
		args := append([]string{"snarkd", "prove", "--constraints", "64"}, bad...)
		if err := app.RunContext(context.Background(), args); err == nil {
			t.Errorf("%v: expected an error", bad)
		}
	}
}
