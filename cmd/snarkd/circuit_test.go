package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/porep/circuit"
	"github.com/snarkd/snarkd/prover"
)

func circuitInfoJSON(t *testing.T, args ...string) []circuit.Info {
	t.Helper()
	var out, errOut bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &errOut // progress goes to stderr, the JSON alone to stdout
	app.ExitErrHandler = func(*cli.Context, error) {}
	if err := app.Run(append([]string{"snarkd", "--repo", t.TempDir(), "circuit", "info", "--json"}, args...)); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	var infos []circuit.Info
	if err := json.Unmarshal(out.Bytes(), &infos); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return infos
}

// TestCircuitInfoPoStSnapDeals: the SnapDeals 2KiB fingerprint (1,705,039 constraints, 5
// inputs), and the PoSt counts from one sector block equal a whole blank synthesis.
func TestCircuitInfoPoStSnapDeals(t *testing.T) {
	snap := circuitInfoJSON(t, "--proof", "UpdateStackedDrg2KiBV1")
	if len(snap) != 1 || snap[0].Constraints != 1705039 || snap[0].PublicInputs != 5 || snap[0].Partitions != 1 {
		t.Fatalf("SnapDeals 2KiB: %+v", snap)
	}
	quick := circuitInfoJSON(t, "--proof", "StackedDrgWinning2KiBV1")
	full := circuitInfoJSON(t, "--proof", "StackedDrgWinning2KiBV1", "--full")
	q, f := quick[0], full[0]
	if q.Constraints != f.Constraints || q.PublicInputs != f.PublicInputs || q.AuxVariables != f.AuxVariables || q.Domain != f.Domain {
		t.Fatalf("WinningPoSt 2KiB quick %+v, full %+v", q, f)
	}
	if q.AAuxDensity != -1 || f.AAuxDensity <= 0 || q.PublicInputs != 133 {
		t.Fatalf("WinningPoSt 2KiB densities: quick %d, full %d; inputs %d", q.AAuxDensity, f.AAuxDensity, q.PublicInputs)
	}
}

// TestCircuitCompileForTheDaemon: `circuit compile` stores a file the daemon's loader accepts
// (stamped with this build), and reports the matrices' device bytes.
func TestCircuitCompileForTheDaemon(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &out
	app.ExitErrHandler = func(*cli.Context, error) {}
	if err := app.Run([]string{"snarkd", "--repo", t.TempDir(), "circuit", "compile", "--proof", "StackedDrgWinning2KiBV1", "--dir", dir, "--json"}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	var rep compileReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if rep.DeviceBytes == 0 || rep.DeviceBytes < uint64(rep.Terms)*4 {
		t.Errorf("device bytes %d for %d stored terms", rep.DeviceBytes, rep.Terms)
	}
	built := false
	comp, err := prover.LoadOrCompile(context.Background(), dir, rep.Key, func(context.Context) (*cs.Compiled, error) {
		built = true
		return nil, errors.New("the stored file was refused")
	})
	if err != nil || built || comp.NumConstraints() != rep.Rows {
		t.Fatalf("the daemon's loader on %s: %v (recorded again: %v)", rep.File, err, built)
	}
}
