package itests

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/rpcapi"
)

// TestReadTokenAndTestQuota against the real daemon: SNARKD_API_REQUIRE_READ_TOKEN=true refuses
// reads without a token (401 on /rpc/v0 and /status; /healthz and /metrics stay open) while a
// token reads; and SNARKD_JOBS_MAX_TEST_CONSTRAINTS bounds a write token's test jobs (refused
// with the typed bad-request error naming the setting) but not an admin token's.
func TestReadTokenAndTestQuota(t *testing.T) {
	bin := buildDaemon(t)
	d := startDaemon(t, bin, t.TempDir(), []string{"SNARKD_API_REQUIRE_READ_TOKEN=true", "SNARKD_JOBS_MAX_TEST_CONSTRAINTS=1024"})
	ctx := context.Background()
	for _, tc := range []struct {
		path, token string
		status      int
	}{
		{"/status", "", http.StatusUnauthorized},
		{"/status", d.token, http.StatusOK},
		{"/healthz", "", http.StatusOK},
		{"/metrics", "", http.StatusOK},
	} {
		r, _ := http.NewRequest("GET", d.base+tc.path, nil)
		if tc.token != "" {
			r.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("GET %s (token %v): %d, want %d", tc.path, tc.token != "", resp.StatusCode, tc.status)
		}
	}
	anon, closer, err := rpcapi.NewProverClient(ctx, d.base+"/rpc/v0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	if _, err := anon.Jobs(ctx, rpcapi.JobFilter{}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("Jobs without a token: %v, want a 401 refusal", err)
	}
	api := d.client(t, false)
	if _, err := api.Jobs(ctx, rpcapi.JobFilter{}); err != nil {
		t.Errorf("Jobs with the write token: %v", err)
	}

	var bad *rpcapi.ErrBadRequest
	for _, c := range []uint64{1 << 24, 2048} {
		req := rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: c, Seed: 1}}
		if _, err := api.Submit(ctx, req); !errors.As(err, &bad) || bad.Field != "Test.Constraints" ||
			!strings.Contains(bad.Reason, "over the limit of 1024 for a write token (Jobs.MaxTestConstraints)") {
			t.Fatalf("%d-constraint test job with the write token: %v, want the typed refusal naming Jobs.MaxTestConstraints", c, err)
		}
	}
	admin, closer2, err := rpcapi.NewProverClient(ctx, d.base+"/rpc/v0", d.header(d.adminToken(t, bin)))
	if err != nil {
		t.Fatal(err)
	}
	defer closer2()
	res, err := admin.Prove(ctx, rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 2048, Seed: 1}})
	if err != nil || res.State != rpcapi.JobDone {
		t.Fatalf("2048-constraint test job with an admin token: %+v %v", res.Job, err)
	}
}
