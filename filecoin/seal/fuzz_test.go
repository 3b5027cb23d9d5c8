package seal

import (
	"bytes"
	"context"
	"testing"
)

// FuzzNewCommit2 feeds arbitrary bytes through decoding, verification, circuit construction and
// public-input generation: nothing may panic, and anything accepted must yield every partition's
// circuit and inputs.
func FuzzNewCommit2(f *testing.F) {
	good := sealed2KiB(f)
	f.Add(good)
	f.Add(bytes.Replace(good, []byte(`"index":1`), []byte(`"index":7`), 1))
	f.Add(bytes.Replace(good, []byte(`"layer_index":2`), []byte(`"layer_index":1`), 1))
	f.Add(bytes.Replace(good, []byte(`"rows":[[`), []byte(`"rows":[[1,`), 1))
	f.Add([]byte(`{"registered_proof":"StackedDrg2KiBV1_1"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
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
