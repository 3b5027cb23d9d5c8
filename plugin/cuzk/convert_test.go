package cuzk

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
)

var (
	fixturesOnce sync.Once
	fixturesErr  error
	c2in         []byte         // 2KiB PoRep Commit2In, miner 1000, sector 5
	winning      *cuzktest.PoSt // 2KiB WinningPoSt, one sector
	window       *cuzktest.PoSt // 2KiB WindowPoSt V1_1, two sectors
)

func fixtures(t testing.TB) {
	t.Helper()
	fixturesOnce.Do(func() {
		ctx := context.Background()
		if c2in, fixturesErr = cuzktest.Commit2In(ctx, abi.RegisteredSealProof_StackedDrg2KiBV1_1, 1000, 5, 1); fixturesErr != nil {
			return
		}
		if winning, fixturesErr = cuzktest.PoStInput(ctx, abi.RegisteredPoStProof_StackedDrgWinning2KiBV1, 1000, 1, 2); fixturesErr != nil {
			return
		}
		window, fixturesErr = cuzktest.PoStInput(ctx, abi.RegisteredPoStProof_StackedDrgWindow2KiBV1_1, 1000, 2, 3)
	})
	if fixturesErr != nil {
		t.Fatal(fixturesErr)
	}
}

// Curio-shaped requests, as lib/ffi's cuzk calls build them.
func porepReq() *pb.SubmitProofRequest {
	return &pb.SubmitProofRequest{RequestId: "porep-1000-5", ProofKind: pb.ProofKind_POREP_SEAL_COMMIT, SectorSize: 2048,
		RegisteredProof: uint64(abi.RegisteredSealProof_StackedDrg2KiBV1_1), Priority: pb.Priority_NORMAL,
		VanillaProof: c2in, SectorNumber: 5, MinerId: 1000}
}

func winningReq() *pb.SubmitProofRequest {
	return &pb.SubmitProofRequest{RequestId: "winpost-1000-0102", ProofKind: pb.ProofKind_WINNING_POST, SectorSize: 2048,
		RegisteredProof: uint64(winning.Proof), Priority: pb.Priority_CRITICAL, VanillaProofs: winning.Vanilla,
		MinerId: 1000, Randomness: winning.Randomness[:]}
}

func windowReq() *pb.SubmitProofRequest {
	return &pb.SubmitProofRequest{RequestId: "wdpost-1000-0-[1 2]", ProofKind: pb.ProofKind_WINDOW_POST_PARTITION, SectorSize: 2048,
		RegisteredProof: uint64(window.Proof), Priority: pb.Priority_HIGH, VanillaProofs: window.Vanilla,
		MinerId: 1000, Randomness: window.Randomness[:]}
}

func snapReq() *pb.SubmitProofRequest {
	c := bytes.Repeat([]byte{1}, 32)
	return &pb.SubmitProofRequest{RequestId: "snap-1000-5", ProofKind: pb.ProofKind_SNAP_DEALS_UPDATE, SectorSize: 2048,
		RegisteredProof: uint64(abi.RegisteredUpdateProof_StackedDrg2KiBV1), Priority: pb.Priority_NORMAL,
		VanillaProofs: [][]byte{{1, 2, 3}}, SectorNumber: 5, MinerId: 1000, CommROld: c, CommRNew: c, CommDNew: c}
}

func with(r *pb.SubmitProofRequest, f func(*pb.SubmitProofRequest)) *pb.SubmitProofRequest {
	r = proto.Clone(r).(*pb.SubmitProofRequest)
	f(r)
	return r
}

func envelope(t *testing.T, mutate func(map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(c2in, &m); err != nil {
		t.Fatal(err)
	}
	mutate(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFilecoinKinds: well-formed Curio requests of every Filecoin kind pass the wire checks and
// reach the job manager, which refuses kinds whose circuit is not in the build (Unimplemented,
// nothing queued) and runs the others (here without a parameter directory, so they fail with
// the reason; TestPoRep2KiBEndToEnd proves one).
func TestFilecoinKinds(t *testing.T) {
	fixtures(t)
	h := newHarness(t, config.Cuzk{})
	ctx := context.Background()
	for name, req := range map[string]*pb.SubmitProofRequest{
		"porep": porepReq(), "winning": winningReq(), "window": windowReq(), "snap": snapReq(),
	} {
		got, err := ToProofRequest(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "porep" {
			var w c1.Commit2In
			if err := json.Unmarshal(c2in, &w); err != nil || !bytes.Equal(got.Phase1Out, w.Phase1Out) {
				t.Fatalf("porep: Phase1Out is not the C1 output inside the envelope")
			}
		}
		res, err := h.client.Prove(ctx, &pb.ProveRequest{Submit: req})
		if err != nil {
			if name != "porep" {
				// PoSt and SnapDeals circuits are in the build: they are queued and run.
				t.Fatalf("%s: %v", name, err)
			}
			wantCode(t, err, codes.Unimplemented, "not supported yet")
			continue
		}
		if r := res.Result; r.Status != pb.AwaitProofResponse_COMPLETED && (r.Status != pb.AwaitProofResponse_FAILED || r.ErrorMessage == "") {
			t.Fatalf("%s: %v", name, r)
		}
	}
	st, err := h.client.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range st.Queues {
		if q.Pending != 0 || q.InProgress != 0 {
			t.Fatalf("queue %v after refused requests", q)
		}
	}
}

// TestMalformed: every bad request gets InvalidArgument naming the wire field, and disturbs
// nothing: a queued job stays queued and a good proof still proves.
func TestMalformed(t *testing.T) {
	fixtures(t)
	h := newHarness(t, config.Cuzk{})
	ctx := context.Background()
	release := h.runner.gate(50)
	defer release()
	held, err := h.client.SubmitProof(ctx, testReq("held", testN, 50, pb.Priority_NORMAL))
	if err != nil {
		t.Fatal(err)
	}
	h.waitStarted(t, "held")
	queued, err := h.client.SubmitProof(ctx, testReq("queued", testN, 51, pb.Priority_NORMAL))
	if err != nil {
		t.Fatal(err)
	}

	bigJunk := bytes.Repeat([]byte("x"), 20<<20) // beyond gRPC's 4 MiB default, within 256 MiB
	cases := []struct {
		name string
		req  *pb.SubmitProofRequest
		msg  string
	}{
		{"unspecified kind", with(porepReq(), func(r *pb.SubmitProofRequest) { r.ProofKind = 0 }), "proof_kind: PROOF_KIND_UNSPECIFIED is not a proof kind"},
		{"unknown kind", with(porepReq(), func(r *pb.SubmitProofRequest) { r.ProofKind = 99 }), "proof_kind: value 99 is not a proof kind"},
		{"unknown priority", with(porepReq(), func(r *pb.SubmitProofRequest) { r.Priority = 9 }), "priority: value 9"},
		{"C1 not JSON", with(porepReq(), func(r *pb.SubmitProofRequest) { r.VanillaProof = []byte("{not json") }), "vanilla_proof: malformed C1 output JSON"},
		{"C1 empty", with(porepReq(), func(r *pb.SubmitProofRequest) { r.VanillaProof = nil }), "vanilla_proof: empty"},
		{"C1 20 MiB junk", with(porepReq(), func(r *pb.SubmitProofRequest) { r.VanillaProof = bigJunk }), "vanilla_proof: malformed"},
		{"C1 without envelope", with(porepReq(), func(r *pb.SubmitProofRequest) {
			var w c1.Commit2In
			_ = json.Unmarshal(c2in, &w)
			r.VanillaProof = w.Phase1Out
		}), "vanilla_proof: c1 output: Phase1Out: missing: this is a bare C1 output"},
		{"C1 envelope without Phase1Out", with(porepReq(), func(r *pb.SubmitProofRequest) {
			r.VanillaProof = envelope(t, func(m map[string]any) { delete(m, "Phase1Out") })
		}), "Phase1Out: missing or empty"},
		{"C1 truncated", with(porepReq(), func(r *pb.SubmitProofRequest) {
			var w c1.Commit2In
			_ = json.Unmarshal(c2in, &w)
			w.Phase1Out = w.Phase1Out[:len(w.Phase1Out)/2]
			r.VanillaProof, _ = json.Marshal(w)
		}), "vanilla_proof: Commit2In.Phase1Out: malformed C1 output JSON"},
		{"C1 wrong envelope size", with(porepReq(), func(r *pb.SubmitProofRequest) {
			r.VanillaProof = envelope(t, func(m map[string]any) { m["SectorSize"] = 8 << 20 })
		}), "SectorSize: 8388608 does not match"},
		{"C1 other sector", with(porepReq(), func(r *pb.SubmitProofRequest) { r.SectorNumber = 6 }), "sector_number: 6, but the Commit2In envelope is for sector 5"},
		{"C1 other proof type", with(porepReq(), func(r *pb.SubmitProofRequest) { r.RegisteredProof = 0 }), "registered_proof: 0, but the C1 output is StackedDrg2KiBV1_1 (5)"},
		{"porep wrong sector size", with(porepReq(), func(r *pb.SubmitProofRequest) { r.SectorSize = 34359738368 }), "sector_size: 34359738368 does not match"},
		{"porep with vanilla_proofs", with(porepReq(), func(r *pb.SubmitProofRequest) { r.VanillaProofs = [][]byte{{1}} }), "vanilla_proofs: set on a POREP_SEAL_COMMIT request"},
		{"registered proof out of range", with(porepReq(), func(r *pb.SubmitProofRequest) { r.RegisteredProof = 1 << 63 }), "registered_proof: 9223372036854775808 is out of range"},
		{"PoSt bad bincode", with(winningReq(), func(r *pb.SubmitProofRequest) { r.VanillaProofs = [][]byte{{1, 2, 3}} }), "vanilla_proofs[0]: not a bincode FallbackPoStSectorProof for StackedDrgWinning2KiBV1"},
		{"PoSt truncated bincode", with(windowReq(), func(r *pb.SubmitProofRequest) {
			r.VanillaProofs = [][]byte{window.Vanilla[0], window.Vanilla[1][:len(window.Vanilla[1])-1]}
		}), "vanilla_proofs[1]: not a bincode FallbackPoStSectorProof"},
		{"PoSt trailing bytes", with(windowReq(), func(r *pb.SubmitProofRequest) {
			r.VanillaProofs = [][]byte{append(append([]byte{}, window.Vanilla[0]...), 0)}
		}), "vanilla_proofs[0]: not a bincode FallbackPoStSectorProof"},
		{"PoSt no vanilla", with(winningReq(), func(r *pb.SubmitProofRequest) { r.VanillaProofs = nil }), "vanilla_proofs: empty"},
		{"PoSt short randomness", with(winningReq(), func(r *pb.SubmitProofRequest) { r.Randomness = r.Randomness[:8] }), "randomness: 8 bytes, want 32"},
		{"PoSt window type for winning", with(winningReq(), func(r *pb.SubmitProofRequest) { r.RegisteredProof = uint64(window.Proof) }), "registered_proof: 10 (StackedDrgWindow2KiBV1_1) is not a winning-post proof type"},
		{"PoSt with vanilla_proof", with(windowReq(), func(r *pb.SubmitProofRequest) { r.VanillaProof = c2in }), "vanilla_proof: set on a WINDOW_POST_PARTITION request"},
		{"snap short comm", with(snapReq(), func(r *pb.SubmitProofRequest) { r.CommDNew = r.CommDNew[:31] }), "comm_d_new: 31 bytes, want 32"},
		{"snap unknown proof", with(snapReq(), func(r *pb.SubmitProofRequest) { r.RegisteredProof = 7 }), "registered_proof: 7 is not a registered update proof"},
		{"test without circuit", with(testReq("t", testN, 1, 0), func(r *pb.SubmitProofRequest) { r.SnarkdTest = nil }), "snarkd_test: required"},
		{"test too big", testReq("t", 1<<40, 1, 0), "snarkd_test.constraints: 1099511627776"},
		{"test circuit on porep", with(porepReq(), func(r *pb.SubmitProofRequest) { r.SnarkdTest = &pb.SnarkdTestCircuit{Constraints: 64} }), "snarkd_test: set on a POREP_SEAL_COMMIT request"},
		{"request ID too long", with(porepReq(), func(r *pb.SubmitProofRequest) { r.RequestId = strings.Repeat("r", 300) }), "request_id: longer than 256 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.client.SubmitProof(ctx, c.req)
			wantCode(t, err, codes.InvalidArgument, c.msg)
			_, err = h.client.Prove(ctx, &pb.ProveRequest{Submit: c.req})
			wantCode(t, err, codes.InvalidArgument, c.msg)
		})
	}
	_, err = h.client.Prove(ctx, &pb.ProveRequest{})
	wantCode(t, err, codes.InvalidArgument, "submit: missing")
	_, err = h.client.AwaitProof(ctx, &pb.AwaitProofRequest{})
	wantCode(t, err, codes.InvalidArgument, "job_id: empty")
	_, err = h.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: "no-such-job"})
	wantCode(t, err, codes.NotFound, "job no-such-job not found")

	// Nothing was disturbed: the two jobs are where they were, and both prove.
	st, err := h.client.GetStatus(ctx, &pb.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range st.Queues {
		want := [2]uint32{}
		if q.ProofKind == "test" {
			want = [2]uint32{1, 1}
		}
		if [2]uint32{q.Pending, q.InProgress} != want {
			t.Fatalf("queue %v after the bad requests, want pending/in progress %v", q, want)
		}
	}
	release()
	for _, j := range []struct {
		id   string
		seed uint64
	}{{held.JobId, 50}, {queued.JobId, 51}} {
		aw, err := h.client.AwaitProof(ctx, &pb.AwaitProofRequest{JobId: j.id})
		if err != nil || aw.Status != pb.AwaitProofResponse_COMPLETED {
			t.Fatalf("AwaitProof %s: %v %v", j.id, aw, err)
		}
		verifyTest(t, aw.Proof, testN, j.seed)
	}
}

func TestPriorityMapping(t *testing.T) {
	for _, c := range []struct {
		in   pb.Priority
		want string
	}{
		{pb.Priority_PRIORITY_UNSPECIFIED, "default"},
		{pb.Priority_LOW, "seal"},
		{pb.Priority_NORMAL, "seal"},
		{pb.Priority_HIGH, "window-post"},
		{pb.Priority_CRITICAL, "winning-post"},
	} {
		p, err := priority(c.in)
		got := "default"
		if p != nil {
			got = p.String()
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %s %v, want %s", c.in, got, err, c.want)
		}
	}
}

// FuzzToProofRequest feeds arbitrary wire bytes through the request decoder: it must never
// panic, and whatever it accepts must be a request the job manager accepts too.
func FuzzToProofRequest(f *testing.F) {
	// Cheap seeds: real fixtures would make every fuzz worker seal sectors first.
	rnd := bytes.Repeat([]byte{7}, 32)
	for _, r := range []*pb.SubmitProofRequest{
		{ProofKind: pb.ProofKind_POREP_SEAL_COMMIT, RegisteredProof: 5, SectorNumber: 1,
			VanillaProof: []byte(`{"SectorNum":1,"Phase1Out":"eyJyZWdpc3RlcmVkX3Byb29mIjoiU3RhY2tlZERyZzJLaUJWMV8xIn0=","SectorSize":2048}`)},
		{ProofKind: pb.ProofKind_WINNING_POST, RegisteredProof: 0, Randomness: rnd, VanillaProofs: [][]byte{make([]byte, 80)}},
		{ProofKind: pb.ProofKind_WINDOW_POST_PARTITION, RegisteredProof: 10, Randomness: rnd, VanillaProofs: [][]byte{make([]byte, 80)}},
		snapReq(), testReq("t", 64, 1, pb.Priority_HIGH),
	} {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m pb.SubmitProofRequest
		if err := proto.Unmarshal(b, &m); err != nil {
			return
		}
		req, err := ToProofRequest(&m)
		if err != nil {
			if !strings.Contains(err.Error(), "invalid proof request: ") {
				t.Fatalf("error without the field: %v", err)
			}
			return
		}
		if req.Kind == "" {
			t.Fatal("accepted a request without a kind")
		}
	})
}
