package seal

import (
	"bytes"
	"context"
	"testing"

	"github.com/snarkd/snarkd/internal/fuzzedit"
)

// FuzzNewCommit2 feeds edited C1 outputs and raw bytes through decoding, verification, circuit
// construction and public-input generation: nothing may panic, and anything accepted must yield
// every partition's circuit and inputs.
func FuzzNewCommit2(f *testing.F) {
	good := sealed2KiB(f)
	bases := [][]byte{nil, good}
	at := func(s string) uint32 { return uint32(bytes.Index(good, []byte(s))) }
	for _, s := range []struct {
		base     uint8
		off, del uint32
		patch    string
	}{
		{1, 0, 0, ""}, // the whole output
		{1, at(`"index":1`), 9, `"index":7`},
		{1, at(`"layer_index":2`), 15, `"layer_index":1`},
		{1, at(`"rows":[[`), 9, `"rows":[[1,`},
		{1, uint32(len(good) - 1), 1, ""},
		{0, 0, 0, `{"registered_proof":"StackedDrg2KiBV1_1"}`},
	} {
		f.Add(s.base, s.off, s.del, []byte(s.patch))
	}
	f.Fuzz(func(t *testing.T, base uint8, off, del uint32, patch []byte) {
		b := fuzzedit.Splice(bases[int(base)%len(bases)], off, del, patch)
		c, err := NewCommit2(context.Background(), b, 5, 1000, Options{})
		if err != nil {
			return
		}
		for k := 0; k < c.Partitions(); k++ {
			if _, err := c.Circuit(k); err != nil {
				t.Fatalf("accepted output without a circuit for partition %d: %v", k, err)
			}
			if in, err := c.PublicInputs(k); err != nil || len(in) != c.Proof.PublicInputs()-1 {
				t.Fatalf("partition %d inputs: %d, %v", k, len(in), err)
			}
		}
	})
}
