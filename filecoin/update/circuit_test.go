package update

import (
	"context"
	"testing"

	"github.com/snarkd/snarkd/cs"
)

// Constraint counts of storage-proofs-update's tests/circuit.rs and tests/circuit_poseidon.rs
// (circuit-fingerprints §7.1); 5 public inputs each.
var fingerprints = []struct {
	nodes       uint64
	poseidon    bool
	constraints int
	heavy       bool
}{
	{1 << 5, false, 1248389, false},
	{1 << 6, false, 1705039, false},
	{1 << 7, false, 2165109, true},
	{1 << 8, false, 2620359, true},
	{1 << 9, false, 6300021, true},
	{1 << 10, false, 6760091, true},
	{1 << 5, true, 32164, false},
	{1 << 8, true, 47974, false},
}

func TestBlankFingerprints(t *testing.T) {
	for _, f := range fingerprints {
		if f.heavy && (testing.Short() || raceEnabled) {
			continue
		}
		var p *Params
		var err error
		if f.poseidon {
			p, err = FromSectorSizePoseidon(f.nodes * 32)
		} else {
			p, err = FromSectorSize(f.nodes * 32)
		}
		if err != nil {
			t.Fatal(err)
		}
		s, err := cs.SynthesizeShape(context.Background(), Blank(p))
		if err != nil {
			t.Fatal(err)
		}
		sh := s.Shape()
		if sh.NumInputs != 5 || sh.NumConstraints-sh.NumInputs != f.constraints {
			t.Errorf("nodes %d poseidon %v: %d inputs, %d constraints; want 5, %d", f.nodes, f.poseidon, sh.NumInputs, sh.NumConstraints-sh.NumInputs, f.constraints)
		}
	}
}
