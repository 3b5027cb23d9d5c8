package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/groth16/snarkpack"
)

// TestAggregateBench: every count is aggregated (padded as AggregateSealProofs pads) the asked
// number of times; with Verify the aggregates verify and the verification is timed; --json
// prints one object per run.
func TestAggregateBench(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	cfg := AggregateConfig{Proofs: []int{1, 3}, Version: snarkpack.V1, Runs: 2, Verify: true, Inputs: 5, JSON: true}
	if err := Aggregate(ctx, cfg, &out); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&out)
	var got []AggregateResult
	for dec.More() {
		var r AggregateResult
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 4 {
		t.Fatalf("%d results, want 4", len(got))
	}
	for i, r := range got {
		wantN, wantPadded := []int{1, 3}[i/2], []int{2, 4}[i/2]
		if r.Proofs != wantN || r.Padded != wantPadded || r.Run != i%2+1 || r.Version != "SnarkPackV1" || r.VerifySec == nil ||
			r.AggregateSec <= 0 || r.Bytes != snarkpack.Size(wantPadded) || r.PeakHeapMiB <= 0 {
			t.Fatalf("result %d: %+v", i, r)
		}
	}

	out.Reset()
	if err := Aggregate(ctx, AggregateConfig{Proofs: []int{4}, Version: snarkpack.V2, Runs: 1}, &out); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "random points") || !strings.Contains(s, "       4        4    1") {
		t.Fatalf("text output:\n%s", s)
	}
	for _, bad := range []AggregateConfig{{Runs: 1}, {Proofs: []int{0}, Runs: 1}, {Proofs: []int{snarkpack.MaxProofs + 1}, Runs: 1}, {Proofs: []int{2}}} {
		if err := Aggregate(ctx, bad, &out); err == nil {
			t.Fatalf("%+v accepted", bad)
		}
	}
}
