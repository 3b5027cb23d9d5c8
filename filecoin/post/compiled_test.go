package post

import (
	"context"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

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
		for name, p := range map[string][2][]fr.Element{"a": {pa.A, want.A}, "b": {pa.B, want.B}, "c": {pa.C, want.C}, "input": {pa.Input, want.Input}, "aux": {pa.Aux, want.Aux}} {
			if !slices.Equal(p[0], p[1]) {
				t.Fatalf("%+v: %s differs", cfg, name)
			}
		}
		for name, d := range map[string][2]*cs.Density{"a aux": {pa.AAuxDensity, want.AAuxDensity}, "b input": {pa.BInputDensity, want.BInputDensity}, "b aux": {pa.BAuxDensity, want.BAuxDensity}} {
			if d[0].Len() != d[1].Len() || !slices.Equal(d[0].Words(), d[1].Words()) {
				t.Fatalf("%+v: %s density differs", cfg, name)
			}
		}
		other := cfg
		other.Sectors++
		if _, err := WitnessOnly(ctx, &Circuit{Config: other, Sectors: append(c.Sectors, c.Sectors[0])}, comp, 2); err == nil {
			t.Fatalf("%+v: a compiled circuit of another configuration was used", cfg)
		}
	}
}
