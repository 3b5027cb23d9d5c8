package post

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// Witness-only synthesis completed from the compiled circuit equals full synthesis, with and
// without sub-trees, and a compiled circuit of another configuration is refused.
func TestSynthesizeWitnessMatches(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []Config{
		{Sectors: 5, Challenges: 2, Tree: prooftypes.TreeShape{Base: 8}, Nodes: 64},
		{Sectors: 3, Challenges: 3, Tree: prooftypes.TreeShape{Base: 8, Sub: 8, Top: 2}, Nodes: 1 << 10},
	} {
		c, _ := randomCircuit(t, cfg, 3, 1)
		want, err := SynthesizeParallel(ctx, c, 2)
		if err != nil {
			t.Fatal(err)
		}
		comp, err := Compile(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		pa, err := WitnessOnly(ctx, c, comp, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := comp.Complete(ctx, pa, 2); err != nil {
			t.Fatal(err)
		}
		if err := pa.Diff(want); err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		other := cfg
		other.Sectors++
		if _, err := WitnessOnly(ctx, &Circuit{Config: other, Sectors: append(c.Sectors, c.Sectors[0])}, comp, 2); err == nil {
			t.Fatalf("%+v: a compiled circuit of another configuration was used", cfg)
		}
	}
}

// The registered 2KiB and 8MiB PoSt circuits (WinningPoSt and WindowPoSt, from synthetic
// vanilla proofs): witness-only synthesis completed from the compiled circuit equals full
// synthesis.
func TestSynthesizeWitnessProofTypes(t *testing.T) {
	ctx := context.Background()
	for _, p := range All() {
		if p.SectorSize > prooftypes.SectorSize8MiB {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			rnd := testRandomness(9)
			n := 1
			if p.Kind == Window {
				n = min(p.SectorCount, 3) // a short last partition is padded by repeating its last sector
			}
			vanilla := make([][]byte, n)
			for i := range vanilla {
				v, err := SyntheticSectorVanilla(p, uint64(100+i), rnd, i, rand.NewChaCha8([32]byte{byte(i)}))
				if err != nil {
					t.Fatal(err)
				}
				vanilla[i] = v
			}
			var prover [32]byte
			var part *Partition
			var err error
			if p.Kind == Window {
				part, err = WindowPartition(p, rnd, prover, vanilla, 0)
			} else {
				part, err = WinningPartition(p, rnd, prover, vanilla)
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := SynthesizeParallel(ctx, part.Circuit, 2)
			if err != nil {
				t.Fatal(err)
			}
			comp, err := Compile(ctx, part.Circuit.Config)
			if err != nil {
				t.Fatal(err)
			}
			pa, err := WitnessOnly(ctx, part.Circuit, comp, 2)
			if err != nil {
				t.Fatal(err)
			}
			if err := comp.Complete(ctx, pa, 2); err != nil {
				t.Fatal(err)
			}
			if err := pa.Diff(want); err != nil {
				t.Fatal(err)
			}
			if row := cs.FirstUnsatisfied(pa); row >= 0 {
				t.Fatalf("row %d not satisfied", row)
			}
		})
	}
}
