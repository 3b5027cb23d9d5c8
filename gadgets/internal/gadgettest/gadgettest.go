// Package gadgettest runs gadget synthesis in witness and blank mode and
// compares the two structures, for the gadget packages' tests.
package gadgettest

import (
	"os"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/cs"
)

// blank wraps a TestConstraintSystem so gadgets see blank mode: WitnessMode
// is false and value functions are never called (zero is recorded instead).
type blank struct {
	*cs.TestConstraintSystem
}

var zero fr.Element

func (b blank) Alloc(name string, _ cs.ValueFunc) (cs.Variable, error) {
	return b.TestConstraintSystem.AllocValue(name, &zero)
}

func (b blank) AllocValue(name string, _ *fr.Element) (cs.Variable, error) {
	return b.TestConstraintSystem.AllocValue(name, &zero)
}

func (b blank) AllocInput(name string, _ cs.ValueFunc) (cs.Variable, error) {
	return b.TestConstraintSystem.AllocInputValue(name, &zero)
}

func (b blank) AllocInputValue(name string, _ *fr.Element) (cs.Variable, error) {
	return b.TestConstraintSystem.AllocInputValue(name, &zero)
}

func (b blank) WitnessMode() bool { return false }

// Blank returns a blank-mode view of a fresh TestConstraintSystem, and that system.
func Blank() (cs.ConstraintSystem, *cs.TestConstraintSystem) {
	t := cs.NewTestConstraintSystem()
	return blank{t}, t
}

// Run synthesizes build in witness mode and in blank mode, fails the test if
// either errors or if the structures (bellpepper hash, names of inputs, aux
// and constraints) differ, and returns the witness system.
func Run(t testing.TB, build func(sys cs.ConstraintSystem) error) *cs.TestConstraintSystem {
	t.Helper()
	w := cs.NewTestConstraintSystem()
	if err := build(w); err != nil {
		t.Fatalf("witness synthesis: %v", err)
	}
	if err := w.Err(); err != nil {
		t.Fatalf("witness synthesis: %v", err)
	}
	bsys, b := Blank()
	if err := build(bsys); err != nil {
		t.Fatalf("blank synthesis: %v", err)
	}
	if err := b.Err(); err != nil {
		t.Fatalf("blank synthesis: %v", err)
	}
	if w.NumInputs() != b.NumInputs() || w.NumAux() != b.NumAux() || w.NumConstraints() != b.NumConstraints() {
		t.Fatalf("blank shape (%d, %d, %d) differs from witness (%d, %d, %d)",
			b.NumInputs(), b.NumAux(), b.NumConstraints(), w.NumInputs(), w.NumAux(), w.NumConstraints())
	}
	for i := 0; i < w.NumInputs(); i++ {
		if w.InputName(i) != b.InputName(i) {
			t.Fatalf("input %d: %q vs blank %q", i, w.InputName(i), b.InputName(i))
		}
	}
	for i := 0; i < w.NumAux(); i++ {
		if w.AuxName(i) != b.AuxName(i) {
			t.Fatalf("aux %d: %q vs blank %q", i, w.AuxName(i), b.AuxName(i))
		}
	}
	for i := 0; i < w.NumConstraints(); i++ {
		if w.ConstraintPath(i) != b.ConstraintPath(i) {
			t.Fatalf("constraint %d: %q vs blank %q", i, w.ConstraintPath(i), b.ConstraintPath(i))
		}
	}
	if wh, bh := w.Hash(), b.Hash(); wh != bh {
		t.Fatalf("blank hash %s differs from witness %s", bh, wh)
	}
	return w
}

// FlipAux adds one to the aux variable at path and returns the first
// unsatisfied constraint path ("" if none), restoring the value afterwards.
func FlipAux(t testing.TB, sys *cs.TestConstraintSystem, path string) string {
	t.Helper()
	old, err := sys.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	var v fr.Element
	one := fr.One()
	if old.IsZero() || old.IsOne() {
		v.Sub(&one, &old) // a bit flip
	} else {
		v.Add(&old, &one)
	}
	if err := sys.Set(path, v); err != nil {
		t.Fatal(err)
	}
	p, _ := sys.WhichIsUnsatisfied()
	if err := sys.Set(path, old); err != nil {
		t.Fatal(err)
	}
	return p
}

// Exhaustive reports whether GADGETS_EXHAUSTIVE=1 asks for every heavy case.
func Exhaustive() bool { return os.Getenv("GADGETS_EXHAUSTIVE") == "1" }

// Light reports whether heavy cases should be skipped: -short or -race,
// unless Exhaustive.
func Light() bool { return !Exhaustive() && (testing.Short() || RaceEnabled) }
