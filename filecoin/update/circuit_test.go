package update

import (
	"context"
	"os"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// Constraint counts of storage-proofs-update's tests/circuit.rs and tests/circuit_poseidon.rs
// (circuit-fingerprints §7.1); 5 public inputs each.
var fingerprints = []struct {
	nodes       uint64
	poseidon    bool
	constraints int
	heavy       bool
}{
	{1 << 5, false, 1248389, true},
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

// test_empty_sector_update_constraints_32gib (BenchCS over the blank circuit), both variants.
// Counting 81M constraints takes about a minute: SNARKD_HEAVY_TESTS=1.
func TestBlankFingerprints32GiB(t *testing.T) {
	if os.Getenv("SNARKD_HEAVY_TESTS") == "" {
		t.Skip("set SNARKD_HEAVY_TESTS=1")
	}
	for _, c := range []struct {
		poseidon    bool
		constraints int
	}{{true, 22305906}, {false, 81049499}} {
		p, err := FromSectorSize(prooftypes.SectorSize32GiB)
		if c.poseidon {
			p, err = FromSectorSizePoseidon(prooftypes.SectorSize32GiB)
		}
		if err != nil {
			t.Fatal(err)
		}
		s, err := cs.SynthesizeShape(context.Background(), Blank(p))
		if err != nil {
			t.Fatal(err)
		}
		sh := s.Shape()
		if got := sh.NumConstraints - sh.NumInputs; got != c.constraints || sh.NumInputs != 5 {
			t.Errorf("poseidon %v: %d constraints, %d inputs; want %d, 5", c.poseidon, got, sh.NumInputs, c.constraints)
		}
		t.Logf("poseidon %v: %d constraints, %d aux, domain %d", c.poseidon, sh.NumConstraints-sh.NumInputs, sh.NumAux, sh.DomainSize())
	}
}
