package plugin

import (
	"context"
	"testing"

	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestRunnerReportsParamLoad: the pipeline's loading stage reaches the job manager as the
// loading-params event, before synthesizing, on a job's first use of its parameters only.
func TestRunnerReportsParamLoad(t *testing.T) {
	r := pipelineRunner{p: prover.New(prover.CPUBackend{}, prover.NewParamCache(t.TempDir()))}
	task := jobs.Task{ID: "j", Request: rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 64, Seed: 3}}}
	for _, tc := range []struct {
		name  string
		first rpcapi.EventType
	}{
		{"parameters generated", rpcapi.EventLoadingParams},
		{"parameters in memory", rpcapi.EventSynthesizing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []rpcapi.EventType
			if _, err := r.Run(context.Background(), task, func(st jobs.Stage, _, _ int, _ ...string) { got = append(got, st) }); err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || got[0] != tc.first {
				t.Fatalf("events %v, want %s first", got, tc.first)
			}
		})
	}
}
