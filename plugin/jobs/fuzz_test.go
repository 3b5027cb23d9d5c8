package jobs

import (
	"encoding/json"
	"testing"

	"github.com/snarkd/snarkd/rpcapi"
)

// FuzzProofRequest decodes arbitrary JSON as a ProofRequest (what Prover.Submit receives) and
// validates it: never a panic, and a valid request has a stable content hash and a positive
// partition count.
func FuzzProofRequest(f *testing.F) {
	for _, s := range []string{
		`{"Kind":"test","Test":{"Constraints":64,"Partitions":2,"Seed":1}}`,
		`{"Kind":"porep-c2","RegisteredProof":8,"SectorSize":34359738368,"Phase1Out":"e30="}`,
		`{"Kind":"window-post","RegisteredProof":13,"Randomness":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","VanillaProofs":["AQ=="]}`,
		`{"Kind":"snap-prove","RegisteredProof":3,"CommROld":"","VanillaProofs":[]}`,
		`{"Kind":"test","Priority":7}`, `{"Kind":"winning-post","RegisteredProof":-1}`, `{}`, `[]`, `null`,
		`{"Kind":"porep-c2","RegisteredProof":9223372036854775807,"Phase1Out":"bm90IGpzb24="}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var req rpcapi.ProofRequest
		if json.Unmarshal(b, &req) != nil {
			return
		}
		err := Validate(&req)
		h1, herr := ContentHash(req)
		if herr != nil {
			t.Fatal(herr)
		}
		if err != nil {
			return
		}
		if Partitions(&req) < 1 && req.Kind != rpcapi.KindSnapProve {
			t.Fatalf("valid request with %d partitions", Partitions(&req))
		}
		req.RequestID = "other"
		if h2, _ := ContentHash(req); h2 != h1 {
			t.Fatal("content hash depends on the request ID")
		}
	})
}
