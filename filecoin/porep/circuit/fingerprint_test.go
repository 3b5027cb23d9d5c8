package circuit

import (
	"context"
	"testing"

	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// storage-proofs-porep tests/stacked_circuit.rs: nodes = 8 × base tree count, 2 layers, one
// challenge; TestConstraintSystem counts (ONE included in the inputs, input rows excluded).
func TestStackedCircuitFingerprints(t *testing.T) {
	tests := []struct {
		name        string
		tree        prooftypes.TreeShape
		nodes       uint64
		constraints int
	}{
		{"poseidon_base_2", prooftypes.TreeShape{Base: 2}, 8, 1_206_212},
		{"poseidon_base_8", prooftypes.TreeShape{Base: 8}, 8, 1_199_620},
		{"poseidon_sub_8_4", prooftypes.TreeShape{Base: 8, Sub: 4}, 32, 1_296_576},
		{"poseidon_top_8_4_2", prooftypes.TreeShape{Base: 8, Sub: 4, Top: 2}, 64, 1_346_982},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if raceEnabled && tc.name != "poseidon_base_8" {
				t.Skip("one stacked fingerprint under the race detector")
			}
			cfg := Config{Nodes: tc.nodes, Layers: 2, Challenges: 1, Tree: tc.tree}
			s, err := cs.SynthesizeShape(context.Background(), Blank(cfg))
			if err != nil {
				t.Fatal(err)
			}
			sh := s.Shape()
			if sh.NumInputs != 22 || sh.NumConstraints-sh.NumInputs != tc.constraints {
				t.Fatalf("inputs %d constraints %d, want 22 and %d", sh.NumInputs, sh.NumConstraints-sh.NumInputs, tc.constraints)
			}
		})
	}
}
