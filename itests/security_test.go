package itests

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/rpcapi"
)

// TestSecurityAndBadInput: permissions by token, forged tokens, an oversize request while
// another client proves, and typed errors for bad requests, all against the real daemon.
func TestSecurityAndBadInput(t *testing.T) {
	bin := buildDaemon(t)
	d := startDaemon(t, bin, t.TempDir(), []string{"SNARKD_API_MAX_REQUEST_BYTES=1MiB"})
	ctx := context.Background()
	url := d.base + "/rpc/v0"
	good := rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 64, Seed: 9}}
	readTok, err := runCLI(bin, d.repo, "auth", "create-token", "--perm", "read")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token string
	}{{"no token", ""}, {"read token", strings.TrimSpace(readTok)}} {
		api, closer, err := rpcapi.NewProverClient(ctx, url, d.header(tc.token))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := api.Jobs(ctx, rpcapi.JobFilter{}); err != nil {
			t.Errorf("%s: Jobs: %v", tc.name, err)
		}
		var perr *rpcapi.ErrPermission
		if _, err := api.Submit(ctx, good); !errors.As(err, &perr) || perr.Need != rpcapi.PermWrite {
			t.Errorf("%s: Submit: %v", tc.name, err)
		}
		if err := api.MinerAttach(ctx, "x", ""); !errors.As(err, &perr) || perr.Need != rpcapi.PermAdmin {
			t.Errorf("%s: MinerAttach: %v", tc.name, err)
		}
		closer()
	}
	// A token signed with another secret, or tampered with, never reaches a method.
	adminTok := d.adminToken(t, bin)
	parts := strings.Split(adminTok, ".")
	for _, tok := range []string{parts[0] + "." + parts[1] + ".AAAA", "eyJhbGciOiJub25lIn0." + parts[1] + ".", "x.y.z"} {
		api, closer, err := rpcapi.NewProverClient(ctx, url, d.header(tok))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := api.Version(ctx); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("token %.20q: %v", tok, err)
		}
		closer()
	}

	// An oversize request is refused with a clear error while another client proves.
	api := d.client(t, false)
	proved := make(chan error, 1)
	go func() {
		r, err := api.Prove(ctx, good)
		if err == nil && len(r.Proof) != 192 {
			err = errors.New("bad proof length")
		}
		proved <- err
	}()
	body := `{"jsonrpc":"2.0","id":1,"method":"Prover.Submit","params":[{"Kind":"test","Phase1Out":"` + strings.Repeat("A", 2<<20) + `"}]}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "API.MaxRequestBytes") {
		t.Fatalf("oversize: %d %s", resp.StatusCode, msg)
	}
	if err := <-proved; err != nil {
		t.Fatalf("concurrent prove disturbed: %v", err)
	}

	// Typed errors for bad requests, and nothing queued by them.
	for _, tc := range []struct {
		req   rpcapi.ProofRequest
		check func(error) bool
	}{
		{rpcapi.ProofRequest{Kind: "stark"}, func(err error) bool { var e *rpcapi.ErrBadRequest; return errors.As(err, &e) && e.Field == "Kind" }},
		{rpcapi.ProofRequest{Kind: rpcapi.KindPoRepC2, RegisteredProof: 8, SectorSize: 2048, Phase1Out: []byte("{}")},
			func(err error) bool {
				var e *rpcapi.ErrBadRequest
				return errors.As(err, &e) && e.Field == "SectorSize"
			}},
		{rpcapi.ProofRequest{Kind: rpcapi.KindWindowPoSt, RegisteredProof: 3, Randomness: make([]byte, 32), VanillaProofs: [][]byte{{1}}},
			func(err error) bool {
				var e *rpcapi.ErrBadRequest
				return errors.As(err, &e) && e.Field == "RegisteredProof"
			}},
		// A well-formed WinningPoSt request is queued (its vanilla proof is refused by the job).
		{rpcapi.ProofRequest{Kind: rpcapi.KindWinningPoSt, RegisteredProof: 3, Randomness: make([]byte, 32), VanillaProofs: [][]byte{{1}}},
			func(err error) bool { return err == nil }},
	} {
		if _, err := api.Submit(ctx, tc.req); !tc.check(err) {
			t.Errorf("%+v: %v (%T)", tc.req, err, err)
		}
	}
	c1, err := api.Submit(ctx, rpcapi.ProofRequest{RequestID: "dup", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 64, Seed: 9}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = api.Submit(ctx, rpcapi.ProofRequest{RequestID: "dup", Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 65, Seed: 9}})
	var conflict *rpcapi.ErrRequestConflict
	if !errors.As(err, &conflict) || conflict.JobID != c1.JobID {
		t.Errorf("conflicting request ID: %v", err)
	}
	if _, err := api.Await(ctx, "no-such-job"); !errors.As(err, new(*rpcapi.ErrJobNotFound)) {
		t.Errorf("await unknown job: %v", err)
	}
	// ffi-shaped calls answer the same typed errors.
	if _, err := api.SealCommitPhase2(ctx, []byte(c1For2KiB), 1, 1000); !errors.As(err, new(*rpcapi.ErrBadRequest)) || !strings.Contains(err.Error(), "Phase1Out") {
		t.Errorf("SealCommitPhase2 of a C1 head without a body: %v", err)
	}
	if _, err := api.SealCommitPhase2(ctx, []byte(`{"registered_proof":"StackedDrg3GiB"}`), 1, 1000); !errors.As(err, new(*rpcapi.ErrBadRequest)) {
		t.Errorf("SealCommitPhase2 bad C1: %v", err)
	}
}

// TestEventsOverWebsocket follows a job through Prover.Events.
func TestEventsOverWebsocket(t *testing.T) {
	bin := buildDaemon(t)
	d := startDaemon(t, bin, t.TempDir(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ws := d.client(t, true)
	events, err := ws.Events(ctx, rpcapi.JobFilter{Kinds: []rpcapi.ProofKind{rpcapi.KindTest}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ws.Submit(ctx, rpcapi.ProofRequest{Kind: rpcapi.KindTest, Test: &rpcapi.TestCircuit{Constraints: 64, Partitions: 2, Seed: 4}})
	if err != nil {
		t.Fatal(err)
	}
	var seq []string
	for ev := range events {
		if ev.JobID != res.JobID {
			t.Fatalf("foreign event %+v", ev)
		}
		s := string(ev.Type)
		if ev.Type == rpcapi.EventSynthesizing || ev.Type == rpcapi.EventProving {
			s += "#" + string(rune('0'+ev.Partition))
		}
		seq = append(seq, s)
		if ev.Type == rpcapi.EventDone {
			break
		}
	}
	// A fresh daemon generates the test circuit's parameters first: its own stage.
	want := "queued started loading-params synthesizing#0 proving#0 synthesizing#1 proving#1 verifying done"
	if got := strings.Join(seq, " "); got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	// Over plain HTTP the stream is refused with a clear error.
	if _, err := d.client(t, false).Events(ctx, rpcapi.JobFilter{}); err == nil {
		t.Fatal("Events over HTTP succeeded")
	}
}
