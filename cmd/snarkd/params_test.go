package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/update"
	"github.com/snarkd/snarkd/prover"
)

func TestParseSealProof(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want abi.RegisteredSealProof
		err  string
	}{
		{in: "StackedDrg2KiBV1_1", want: abi.RegisteredSealProof_StackedDrg2KiBV1_1},
		{in: "StackedDrg32GiBV1_2_Feat_NonInteractivePoRep", want: abi.RegisteredSealProof_StackedDrg32GiBV1_2_Feat_NiPoRep},
		{in: "0", want: abi.RegisteredSealProof_StackedDrg2KiBV1},
		{in: "8", want: abi.RegisteredSealProof_StackedDrg32GiBV1_1},
		{in: "2kib", want: abi.RegisteredSealProof_StackedDrg2KiBV1_1},
		{in: "64GiB", want: abi.RegisteredSealProof_StackedDrg64GiBV1_1},
		{in: "99", err: "unknown seal proof type"},
		{in: "3GiB", err: "unknown seal proof type"},
	} {
		p, err := parseSealProof(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || p.Proof != tc.want {
			t.Errorf("%s: %v %v, want %d", tc.in, p, err, tc.want)
		}
	}
}

// TestDistinctCircuits: one row per parameter file, covering every proof type's file.
func TestDistinctCircuits(t *testing.T) {
	files := map[string]bool{}
	for _, p := range distinctCircuits() {
		if files[p.ParamsFile()] {
			t.Errorf("%s listed twice", p.ParamsFile())
		}
		files[p.ParamsFile()] = true
	}
	for _, p := range prooftypes.All() {
		if !files[p.ParamsFile()] {
			t.Errorf("%s: its circuit is not listed", p.Name)
		}
	}
}

// TestParamsCheckCommand: an empty or missing directory fails; without a selection, a sector
// size with any file is needed in full and the others are skipped; a file that is not the
// published one fails naming both digests; --parameters-json replaces the digest table.
func TestParamsCheckCommand(t *testing.T) {
	dir := t.TempDir()
	p, _ := prooftypes.LookupName("StackedDrg2KiBV1_1")
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		app := newApp()
		app.Writer, app.ErrWriter = &out, &out
		app.ExitErrHandler = func(*cli.Context, error) {} // keep the test process alive
		err := app.Run(append([]string{"snarkd", "--repo", t.TempDir()}, args...))
		return out.String(), err
	}
	out, err := run("params", "check", "--dir", dir)
	if exitCode(err) != exitFailed || !strings.Contains(fmt.Sprint(err), "no parameter files in "+dir) ||
		!strings.Contains(fmt.Sprint(err), "snarkd params fetch") || !strings.Contains(out, "0 file(s): nothing to check") {
		t.Fatalf("empty directory: %v\n%s", err, out)
	}
	gone := filepath.Join(dir, "nope")
	if _, err := run("params", "check", "--dir", gone); exitCode(err) != exitFailed || !strings.Contains(fmt.Sprint(err), "parameter directory "+gone+": ") ||
		!strings.Contains(fmt.Sprint(err), "snarkd params gen") {
		t.Fatalf("missing directory: %v", err)
	}
	if _, err := run("params", "check", "--dir", dir, "--proof", "2KiB"); exitCode(err) != exitFailed || !strings.Contains(err.Error(), "2 parameter file(s) missing") {
		t.Fatalf("explicit proof type without files: %v", err)
	}
	if _, err := run("params", "check", "--dir", dir, "--sizes", "3GiB"); exitCode(err) != exitUsage {
		t.Fatalf("unknown size: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, p.VKFile()), []byte("not the published vk"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = run("params", "check", "--dir", dir)
	if exitCode(err) != exitFailed || !strings.Contains(out, "mismatch 2KiB") || !strings.Contains(out, "published "+prooftypes.PublishedFiles[p.VKFile()].Digest) ||
		!strings.Contains(out, " 1 mismatch\n") || !strings.Contains(out, "no files of 8MiB, 512MiB, 32GiB, 64GiB: not checked") ||
		!strings.Contains(out, "missing  2KiB   "+p.ParamsFile()) || strings.Contains(out, "32GiB  ") {
		t.Fatalf("wrong vk: %v\n%s", err, out)
	}
	// The same two files under a table that lists their digests.
	if err := os.WriteFile(filepath.Join(dir, p.ParamsFile()), []byte("test params"), 0o600); err != nil {
		t.Fatal(err)
	}
	table := map[string]prooftypes.Published{}
	for name, content := range map[string]string{p.VKFile(): "not the published vk", p.ParamsFile(): "test params"} {
		d, _ := prooftypes.FileDigest(strings.NewReader(content))
		table[name] = prooftypes.Published{CID: "QmTest", Digest: d, SectorSize: 2048}
	}
	js, _ := json.Marshal(table)
	tj := filepath.Join(t.TempDir(), "parameters.json")
	if err := os.WriteFile(tj, js, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = run("params", "check", "--dir", dir, "--proof", "StackedDrg2KiBV1_1", "--parameters-json", tj)
	if err != nil || !strings.Contains(out, "2 file(s): 2 ok") {
		t.Fatalf("test table: %v\n%s", err, out)
	}
	out, err = run("params", "check", "--dir", dir, "--proof", "StackedDrg2KiBV1_1", "--parameters-json", tj, "--json")
	var rows []paramCheck
	if err != nil || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 2 || rows[0].Status != "ok" {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, p.ParamsFile()), []byte("test paramz"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run("params", "check", "--dir", dir, "--proof", "StackedDrg2KiBV1_1", "--parameters-json", tj); exitCode(err) != exitFailed || !strings.Contains(out, "mismatch 2KiB   "+p.ParamsFile()) {
		t.Fatalf("changed params under the test table: %v\n%s", err, out)
	}
}

func TestParseCircuit(t *testing.T) {
	for _, tc := range []struct{ in, name, family string }{
		{"2KiB", "StackedDrg2KiBV1_1", "PoRep"},
		{"StackedDrgWinning2KiBV1", "StackedDrgWinning2KiBV1", "PoSt"},
		{"stackeddrgwindow32gibv1_1", "StackedDrgWindow32GiBV1_1", "PoSt"},
		{"UpdateStackedDrg2KiBV1", "UpdateStackedDrg2KiBV1", "SnapDeals"},
		{"UpdatePoseidonStackedDrg32GiBV1", "UpdatePoseidonStackedDrg32GiBV1", "SnapDeals"},
	} {
		f, err := parseCircuit(tc.in)
		if err != nil || f.Name != tc.name || f.Family != tc.family {
			t.Errorf("%s: %+v %v", tc.in, f, err)
		}
	}
	if _, err := parseCircuit("UpdateStackedDrg3KiBV1"); err == nil || !strings.Contains(err.Error(), "unknown proof type") {
		t.Errorf("unknown name: %v", err)
	}
	// The name in the prover's missing-parameters hint is one params gen accepts.
	up, _ := update.ForProof(abi.RegisteredUpdateProof_StackedDrg2KiBV1)
	if f, err := parseCircuit(prover.UpdateProofName(abi.RegisteredUpdateProof_StackedDrg2KiBV1)); err != nil || f.Base != up.ParamFile() {
		t.Errorf("prover's update name: %+v %v", f, err)
	}
}

// TestFilCircuits: one row per parameter file, covering every PoSt and SnapDeals file.
func TestFilCircuits(t *testing.T) {
	files := map[string]bool{}
	for _, f := range filCircuits() {
		if files[f.Base] {
			t.Errorf("%s listed twice", f.Base)
		}
		files[f.Base] = true
	}
	for _, p := range post.All() {
		if !files[p.ParamFile()] {
			t.Errorf("%s: its circuit is not listed", p.Name)
		}
	}
	for _, ps := range update.All() {
		if !files[ps.ParamFile()] {
			t.Errorf("%s: its circuit is not listed", updateName(ps))
		}
	}
}

// TestParamsGenPoSt: `params gen` writes WindowPoSt 2KiB parameters the prover's parameter
// cache loads, and `params check` finds that they are not the published ones.
func TestParamsGenPoSt(t *testing.T) {
	if testing.Short() {
		t.Skip("Groth16 setup in -short")
	}
	dir := t.TempDir()
	var out bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &out
	app.ExitErrHandler = func(*cli.Context, error) {}
	if err := app.Run([]string{"snarkd", "--repo", t.TempDir(), "params", "gen", "--dir", dir, "--proof", "StackedDrgWindow2KiBV1_1"}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	p, _ := post.Lookup(abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1)
	if _, err := prover.NewParamCache("").WithFilecoinDir(dir).PoSt(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	app = newApp()
	app.Writer, app.ErrWriter = &out, &out
	app.ExitErrHandler = func(*cli.Context, error) {}
	err := app.Run([]string{"snarkd", "--repo", t.TempDir(), "params", "check", "--dir", dir, "--proof", "StackedDrgWindow2KiBV1"})
	want := "mismatch StackedDrgWindow2KiBV1 " + p.ParamFile() + ".vk: digest "
	if err == nil || !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "published "+prooftypes.PublishedFiles[p.ParamFile()+".vk"].Digest) {
		t.Fatalf("params check of devnet PoSt parameters: %v\n%s", err, out.String())
	}
}

// TestPublishedFilesCoverCircuits: every circuit's parameter files carry the names of the
// official parameters.json (both SnapDeals variants included), and the table holds the 44
// circuit files and the SnarkPack SRS. A wrong identifier hash in a PoSt or SnapDeals circuit
// shows up here as a missing name.
func TestPublishedFilesCoverCircuits(t *testing.T) {
	names := map[string]bool{}
	for _, c := range filCircuits() {
		for _, name := range []string{c.Base + ".vk", c.Base + ".params"} {
			names[name] = true
			p, ok := prooftypes.PublishedFiles[name]
			if !ok {
				t.Errorf("%s: %s is not in the published parameters.json", c.Label, name)
				continue
			}
			if p.SectorSize != c.SectorSize {
				t.Errorf("%s: %s published for sector size %d, the circuit is for %d", c.Label, name, p.SectorSize, c.SectorSize)
			}
		}
	}
	for name, p := range prooftypes.PublishedFiles {
		if !names[name] && !(strings.HasSuffix(name, ".srs") && p.SectorSize == 0) {
			t.Errorf("published %s belongs to no circuit", name)
		}
	}
	if got := len(prooftypes.PublishedFiles); got != 45 {
		t.Errorf("%d published files, want 44 circuit files and the SRS", got)
	}
}
