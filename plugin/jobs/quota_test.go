package jobs

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/rpcapi"
)

// TestCheckTestQuota: a test request over its caller's quota is refused with the typed
// bad-request error naming the field, the limit, its setting and, where given, how to get
// more; requests within it, of other kinds, or without a quota pass.
func TestCheckTestQuota(t *testing.T) {
	q := &TestQuota{Class: "a write token", MaxConstraints: 1 << 16, MaxPartitions: 4,
		ConstraintsSetting: "Jobs.MaxTestConstraints", PartitionsSetting: "Jobs.MaxTestPartitions", Hint: "ask an admin"}
	test := func(constraints uint64, partitions int) *rpcapi.ProofRequest {
		return &rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: constraints, Partitions: partitions}}
	}
	for _, tc := range []struct {
		name  string
		req   *rpcapi.ProofRequest
		q     *TestQuota
		field string // "" for a pass
		want  []string
	}{
		{"within", test(1<<16, 4), q, "", nil},
		{"partitions 0 means 1", test(64, 0), &TestQuota{MaxPartitions: 1}, "", nil},
		{"too many constraints", test(1<<16+1, 1), q, "Test.Constraints",
			[]string{"65537: over the limit of 65536 for a write token (Jobs.MaxTestConstraints); ask an admin"}},
		{"too many partitions", test(64, 5), q, "Test.Partitions",
			[]string{"5: over the limit of 4 for a write token (Jobs.MaxTestPartitions)"}},
		{"2^24 x 16", test(1<<24, 16), q, "Test.Constraints", []string{"Jobs.MaxTestConstraints"}},
		{"no quota", test(1<<24, 16), nil, "", nil},
		{"zero bounds", test(1<<24, 16), &TestQuota{Class: "an admin token"}, "", nil},
		{"other kind", &rpcapi.ProofRequest{Kind: rpcapi.KindWinningPoSt}, q, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTestQuota(tc.req, tc.q)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var bad *rpcapi.ErrBadRequest
			if !errors.As(err, &bad) || bad.Field != tc.field {
				t.Fatalf("err = %v, want ErrBadRequest on %s", err, tc.field)
			}
			for _, w := range tc.want {
				if !strings.Contains(bad.Reason, w) {
					t.Fatalf("reason %q does not say %q", bad.Reason, w)
				}
			}
		})
	}
}

// TestSubmitTestQuota: Submit applies SubmitOpts.TestQuota before anything is queued; a
// refusal counts as rejected and stores nothing.
func TestSubmitTestQuota(t *testing.T) {
	g := newGateRunner()
	m := open(t, filepath.Join(t.TempDir(), "j.db"), g, Config{Workers: 1})
	q := &TestQuota{Class: "a write token", MaxConstraints: 16, ConstraintsSetting: "Jobs.MaxTestConstraints"}
	req := testReq("big", 1)
	req.Test.Constraints = 17
	var bad *rpcapi.ErrBadRequest
	if _, err := m.Submit(req, SubmitOpts{TestQuota: q}); !errors.As(err, &bad) || bad.Field != "Test.Constraints" {
		t.Fatalf("over the quota: %v", err)
	}
	if js := m.Jobs(rpcapi.JobFilter{}); len(js) != 0 {
		t.Fatalf("refused request stored: %+v", js)
	}
	if s := m.Snapshot(); s.Stats.Rejected != 1 {
		t.Fatalf("rejected = %d, want 1", s.Stats.Rejected)
	}
	if _, err := m.Submit(testReq("small", 1), SubmitOpts{TestQuota: q}); err != nil {
		t.Fatalf("within the quota: %v", err)
	}
	waitStart(t, g)
	g.release <- struct{}{}
}
