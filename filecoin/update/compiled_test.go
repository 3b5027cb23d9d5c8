package update

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// Witness-only synthesis completed from the compiled circuit equals full synthesis, for both
// variants (2KiB), and a compiled circuit of other parameters is refused.
func TestSynthesizeWitnessMatches(t *testing.T) {
	ctx := context.Background()
	for _, poseidon := range []bool{true, false} {
		if !poseidon && raceEnabled {
			continue // 1.7M-row syntheses
		}
		e := encoded(t, poseidon)
		comp, err := Compile(ctx, e.Params)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < e.Params.PartitionCount; k++ {
			c := partitionCircuit(t, e, k)
			want, err := SynthesizeParallel(ctx, c, 2)
			if err != nil {
				t.Fatal(err)
			}
			got, err := synthesizeWitness(ctx, c, comp, 2)
			if err != nil {
				t.Fatal(err)
			}
			if err := got.Diff(want); err != nil {
				t.Fatalf("poseidon %v partition %d: %v", poseidon, k, err)
			}
		}
		other := *e.Params
		other.Poseidon = !other.Poseidon
		b, _ := e.PartitionProof(0)
		c, _, _ := e.Params.Partition(b, e.Inputs(0))
		c.Params = &other
		if _, err := synthesizeWitness(ctx, c, comp, 2); err == nil {
			t.Fatal("a compiled circuit of other parameters was used")
		}
	}
}

// A production-shape (32 GiB) partition completed from its compiled circuit, whose blocks read
// their challenges from the prefix (moved terms), satisfies every row and equals full
// synthesis. SNARKD_HEAVY_TESTS=1: about 14 GB of memory for the compiled path, several times
// that for full synthesis (a GPU host's memory).
func TestSynthesizeWitnessProductionShape(t *testing.T) {
	if os.Getenv("SNARKD_HEAVY_TESTS") == "" {
		t.Skip("81M-row witness; SNARKD_HEAVY_TESTS=1")
	}
	ctx := context.Background()
	p, err := FromSectorSize(prooftypes.SectorSize32GiB)
	if err != nil {
		t.Fatal(err)
	}
	comp, err := Compile(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if comp.Flat || len(comp.Moved) == 0 {
		t.Fatalf("flat %v, %d moved terms: want one block template with moved prefix reads", comp.Flat, len(comp.Moved))
	}
	e, err := Synthetic(p, p.HDefault(), 64, rand.NewChaCha8([32]byte{3}))
	if err != nil {
		t.Fatal(err)
	}
	c := partitionCircuit(t, e, 3)
	t0 := time.Now()
	pa, err := synthesizeWitness(ctx, c, comp, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows, %d moved terms: witness and products in %v", len(pa.A), len(comp.Moved), time.Since(t0))
	if row := cs.FirstUnsatisfied(pa); row >= 0 {
		t.Fatalf("row %d not satisfied", row)
	}
	t0 = time.Now()
	want, err := SynthesizeParallel(ctx, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("full synthesis in %v", time.Since(t0))
	if err := pa.Diff(want); err != nil {
		t.Fatalf("compiled and full synthesis differ: %v", err)
	}
}

// At 8MiB, from synthetic sparse sectors (every partition, both variants), the compiled path's
// witness and a, b, c equal full synthesis's.
func TestSynthesizeWitnessMatches8MiB(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("multi-million-row syntheses; CI runs them without -race")
	}
	ctx := context.Background()
	for _, poseidon := range []bool{false, true} {
		p, err := FromSectorSize(prooftypes.SectorSize8MiB)
		if poseidon {
			p, err = FromSectorSizePoseidon(prooftypes.SectorSize8MiB)
		}
		if err != nil {
			t.Fatal(err)
		}
		e, err := Synthetic(p, p.HDefault(), 64, rand.NewChaCha8([32]byte{8}))
		if err != nil {
			t.Fatal(err)
		}
		comp, err := Compile(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < p.PartitionCount; k++ {
			c := partitionCircuit(t, e, k)
			want, err := SynthesizeParallel(ctx, c, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := synthesizeWitness(ctx, c, comp, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := got.Diff(want); err != nil {
				t.Fatalf("poseidon %v partition %d: %v", poseidon, k, err)
			}
			t.Logf("poseidon %v partition %d of %d: %d rows equal", poseidon, k, p.PartitionCount, len(want.A))
		}
	}
}

// partitionCircuit is partition k's circuit from e's partition proof.
func partitionCircuit(t *testing.T, e *Encoded, k int) *Circuit {
	t.Helper()
	b, err := e.PartitionProof(k)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := e.Params.Partition(b, e.Inputs(k))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// synthesizeWitness is SynthesizeParallel without constraints: WitnessOnly, then comp, the
// compiled circuit of c's parameters, supplies a, b, c and the densities. The result equals
// SynthesizeParallel's.
func synthesizeWitness(ctx context.Context, c *Circuit, comp *cs.Compiled, workers int) (*cs.ProvingAssignment, error) {
	pa, err := WitnessOnly(ctx, c, comp, workers)
	if err != nil {
		return nil, err
	}
	if err := comp.Complete(ctx, pa, workers); err != nil {
		return nil, fmt.Errorf("update circuit: %w", err)
	}
	return pa, nil
}
