package update

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

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
			b, err := e.PartitionProof(k)
			if err != nil {
				t.Fatal(err)
			}
			c, _, err := e.Params.Partition(b, e.Inputs(k))
			if err != nil {
				t.Fatal(err)
			}
			want, err := SynthesizeParallel(ctx, c, 2)
			if err != nil {
				t.Fatal(err)
			}
			got, err := SynthesizeWitness(ctx, c, comp, 2)
			if err != nil {
				t.Fatal(err)
			}
			for name, p := range map[string][2][]fr.Element{"a": {got.A, want.A}, "b": {got.B, want.B}, "c": {got.C, want.C}, "input": {got.Input, want.Input}, "aux": {got.Aux, want.Aux}} {
				if !slices.Equal(p[0], p[1]) {
					t.Fatalf("poseidon %v partition %d: %s differs", poseidon, k, name)
				}
			}
			for name, d := range map[string][2]*cs.Density{"a aux": {got.AAuxDensity, want.AAuxDensity}, "b input": {got.BInputDensity, want.BInputDensity}, "b aux": {got.BAuxDensity, want.BAuxDensity}} {
				if d[0].Len() != d[1].Len() || !slices.Equal(d[0].Words(), d[1].Words()) {
					t.Fatalf("poseidon %v partition %d: %s density differs", poseidon, k, name)
				}
			}
		}
		other := *e.Params
		other.Poseidon = !other.Poseidon
		b, _ := e.PartitionProof(0)
		c, _, _ := e.Params.Partition(b, e.Inputs(0))
		c.Params = &other
		if _, err := SynthesizeWitness(ctx, c, comp, 2); err == nil {
			t.Fatal("a compiled circuit of other parameters was used")
		}
	}
}

// A production-shape (32 GiB) partition completed from its compiled circuit, whose blocks read
// their challenges from the prefix (moved terms), satisfies every row. SNARKD_HEAVY_TESTS=1:
// about 14 GB of memory.
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
	b, err := e.PartitionProof(3)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := p.Partition(b, e.Inputs(3))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	pa, err := SynthesizeWitness(ctx, c, comp, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows, %d moved terms: witness and products in %v", len(pa.A), len(comp.Moved), time.Since(t0))
	if row := cs.FirstUnsatisfied(pa); row >= 0 {
		t.Fatalf("row %d not satisfied", row)
	}
}
