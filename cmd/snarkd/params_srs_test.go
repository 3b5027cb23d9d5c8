package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/groth16/snarkpack"
)

// TestParamsGenSRS: `params gen --srs` writes a devnet SnarkPack SRS under the published name,
// sized by --srs-proofs, that the prover's key cache reads; an existing file is refused without
// --force and kept with --if-missing; `params check` reports it as not the published SRS, as it
// does devnet parameters; bad flag combinations are usage errors before anything is written.
func TestParamsGenSRS(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, snarkpack.SRSFile)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing to generate", nil, "say what to generate"},
		{"not a power of two", []string{"--srs", "--srs-proofs", "12"}, "--srs-proofs 12: want a power of two"},
		{"too small", []string{"--srs", "--srs-proofs", "1"}, "--srs-proofs 1"},
		{"beyond what is read", []string{"--srs", "--srs-proofs", "32768"}, "--srs-proofs 32768"},
		{"size without --srs", []string{"--proof", "2KiB", "--srs-proofs", "16"}, "pass --srs too"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, append([]string{"params", "gen", "--dir", dir}, tc.args...)...)
			if exitCode(err) != exitUsage || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (exit %d), want a usage error naming %q", err, exitCode(err), tc.want)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("a refused command wrote %s", path)
			}
		})
	}

	out, stderr, err := runCLI(t, "params", "gen", "--dir", dir, "--srs", "--srs-proofs", "16", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var res paramsGenResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.SRS == nil || res.SRS.File != snarkpack.SRSFile ||
		res.SRS.MaxProofs != 16 || res.SRS.AlreadyPresent || res.Proof != "" || res.Dir != dir {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if !strings.Contains(stderr, "INSECURE") {
		t.Fatalf("no insecurity warning: %q", stderr)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != res.SRS.Bytes {
		t.Fatalf("%s: %v (%d bytes, reported %d)", path, err, fi.Size(), res.SRS.Bytes)
	}
	kc := snarkpack.KeyCache{Path: path}
	pk, err := kc.Keys(context.Background(), 16)
	if err != nil || pk.N != 16 || pk.Verifier() == nil {
		t.Fatalf("keys for 16 proofs from the devnet SRS: %v", err)
	}
	if _, err := kc.Keys(context.Background(), 32); err == nil {
		t.Fatal("an SRS for 16 proofs specialised to 32")
	}

	if _, _, err := runCLI(t, "params", "gen", "--dir", dir, "--srs"); err == nil || !strings.Contains(err.Error(), "pass --force") {
		t.Fatalf("existing SRS without --force: %v", err)
	}
	out, _, err = runCLI(t, "params", "gen", "--dir", dir, "--srs", "--if-missing")
	if err != nil || !strings.Contains(out, "SnarkPack SRS already in "+dir) {
		t.Fatalf("--if-missing: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "params", "gen", "--dir", dir, "--srs", "--srs-proofs", "4", "--force")
	if err != nil || !strings.Contains(out, "wrote "+snarkpack.SRSFile) || !strings.Contains(out, "aggregates up to 4 proofs") {
		t.Fatalf("--force: %v\n%s", err, out)
	}

	out, _, err = runCLI(t, "params", "check", "--dir", dir)
	if exitCode(err) != exitFailed || !strings.Contains(out, "mismatch SRS    "+snarkpack.SRSFile) ||
		!strings.Contains(out, "a devnet SRS from `snarkd params gen --srs` is not the published one") {
		t.Fatalf("params check of a devnet SRS: %v\n%s", err, out)
	}
}
