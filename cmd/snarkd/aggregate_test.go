package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/snarkd/snarkd/filecoin/aggregate/aggregatetest"
	"github.com/snarkd/snarkd/groth16/snarkpack"
)

// aggregateFiles writes fx's aggregate info (version v) and one C2 proof file per sector (the
// first raw, the others base64 as `prove c2` prints them) into dir.
func aggregateFiles(t *testing.T, dir string, fx *aggregatetest.Fixture, v abi.RegisteredAggregationProof) (info string, proofs []string) {
	t.Helper()
	info = filepath.Join(dir, "info.json")
	writeJSON(t, info, fx.Info(v))
	for i, p := range fx.Proofs {
		f := filepath.Join(dir, "c2-"+string(rune('a'+i)))
		data := p
		if i > 0 {
			data = []byte(base64.StdEncoding.EncodeToString(p) + "\n")
		}
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
		proofs = append(proofs, f)
	}
	return info, proofs
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAggregateCLIRefusesBadInput: the aggregate commands check the info file, the proof files
// and their flags before anything is sent, naming the file and what is wrong (usage errors).
func TestAggregateCLIRefusesBadInput(t *testing.T) {
	t.Setenv("SNARKD_API_INFO", "")
	t.Setenv("SNARKD_PATH", "")
	fx, err := aggregatetest.New(abi.RegisteredSealProof_StackedDrg2KiBV1_1, 1000, 1, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	info, proofs := aggregateFiles(t, dir, fx, abi.RegisteredAggregationProof_SnarkPackV2)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	typo := write("typo.json", `{"Miner":1000,"SealProof":3,"Infoz":[]}`)
	noCID := fx.Info(1)
	noCID.Infos[1].SealedCID = noCID.Infos[1].UnsealedCID
	badCID := filepath.Join(dir, "badcid.json")
	writeJSON(t, badCID, noCID)
	short := write("short", string(fx.Proofs[1][:100]))
	repo := filepath.Join(dir, "repo")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no info", []string{"aggregate", "seals", proofs[0]}, `Required flag "info" not set`},
		{"info missing", []string{"aggregate", "seals", "--info", filepath.Join(dir, "none.json")}, "--info: open"},
		{"info not JSON", []string{"aggregate", "seals", "--info", proofs[1], proofs[0]}, "not an aggregate info JSON object"},
		{"info field misspelt", []string{"aggregate", "seals", "--info", typo}, `unknown field "Infoz"`},
		{"bad CID", []string{"aggregate", "seals", "--info", badCID, proofs[0], proofs[1]}, "Infos[1].SealedCID: CID"},
		{"bad aggregation", []string{"aggregate", "seals", "--info", info, "--aggregation", "v3", proofs[0], proofs[1]}, `--aggregation "v3": want v1 (SnarkPackV1) or v2`},
		{"a file missing", []string{"aggregate", "seals", "--info", info, proofs[0]}, "1 C2 proof files for the 2 sectors of --info"},
		{"a proof short", []string{"aggregate", "seals", "--info", info, proofs[0], short}, short + " (sector 2): 100 bytes; a StackedDrg2KiBV1_1 C2 proof is 192"},
		{"flag after files", []string{"aggregate", "seals", "--info", info, proofs[0], "--out"}, "--out: flags go before the C2 proof files"},
		{"nothing to verify", []string{"aggregate", "verify", "--info", info}, "--info " + info + " has no Proof; give the aggregate's file with --proof"},
		{"bench: bad count", []string{"bench", "aggregate", "--proofs", "8,0"}, `--proofs: bad count "0" (want 1..16384`},
		{"bench: too many", []string{"bench", "aggregate", "--proofs", "16385"}, `--proofs: bad count "16385"`},
		{"bench: bad version", []string{"bench", "aggregate", "--aggregation", "v9"}, `--aggregation "v9": want v1 or v2`},
		{"bench: no runs", []string{"bench", "aggregate", "--runs", "0"}, "--runs 0: want at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runApp(t, append([]string{"--repo", repo}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errOut, exitUsage, tc.want)
			}
			if _, err := os.Stat(repo); err == nil {
				t.Fatal("the repo was created")
			}
		})
	}
}

// TestAggregateCLIWithDaemon: `aggregate seals` aggregates C2 proof files (raw and base64)
// through an in-process daemon into an aggregate that `aggregate verify` accepts (exit 0,
// --json too) and refuses under another seed or version (exit 1).
func TestAggregateCLIWithDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a daemon")
	}
	t.Setenv("SNARKD_PATH", "")
	t.Setenv("SNARKD_API_INFO", "")
	fx, err := aggregatetest.New(abi.RegisteredSealProof_StackedDrg2KiBV1_1, 1000, 1, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	params := t.TempDir()
	if err := fx.WriteKeys(params, 4); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FIL_PROOFS_PARAMETER_CACHE", params)
	repo := t.TempDir()
	startInProcessDaemon(t, repo)
	dir := t.TempDir()
	info, proofs := aggregateFiles(t, dir, fx, abi.RegisteredAggregationProof_SnarkPackV2)
	out := filepath.Join(dir, "aggregate")

	stdout, stderr, code := runApp(t, append([]string{"--repo", repo, "aggregate", "seals", "--info", info, "--out", out}, proofs...)...)
	if code != 0 || !strings.Contains(stderr, "-byte aggregate") {
		t.Fatalf("aggregate seals: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	agg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(agg) != snarkpack.Size(4) {
		t.Fatalf("aggregate of %d bytes, want %d", len(agg), snarkpack.Size(4))
	}
	stdout, _, code = runApp(t, "--repo", repo, "aggregate", "verify", "--info", info, "--proof", out)
	if code != 0 || !strings.Contains(stdout, "valid: the SnarkPackV2 aggregate of 3 StackedDrg2KiBV1_1 sectors (3 proofs, 4 padded) verifies") {
		t.Fatalf("aggregate verify: exit %d, %q", code, stdout)
	}
	// The aggregate in the info's Proof, base64 as Lotus's JSON has it.
	withProof := fx.Info(abi.RegisteredAggregationProof_SnarkPackV2)
	withProof.Proof = agg
	full := filepath.Join(dir, "full.json")
	writeJSON(t, full, withProof)
	v := jsonObject(t, 0, "--repo", repo, "aggregate", "verify", "--info", full, "--json")
	if v["valid"] != true || v["sectors"] != 3.0 || v["padded"] != 4.0 || v["aggregation"] != "SnarkPackV2" {
		t.Fatalf("aggregate verify --json = %v", v)
	}
	v = jsonObject(t, exitFailed, "--repo", repo, "aggregate", "verify", "--info", full, "--aggregation", "v1", "--json")
	if v["valid"] != false || v["aggregation"] != "SnarkPackV1" {
		t.Fatalf("as SnarkPackV1: %v", v)
	}
	seed := withProof
	seed.Infos = append([]proof.AggregateSealVerifyInfo(nil), withProof.Infos...)
	seed.Infos[0].InteractiveRandomness = bytes.Repeat([]byte{7}, 32)
	writeJSON(t, full, seed)
	if _, stderr, code := runApp(t, "--repo", repo, "aggregate", "verify", "--info", full); code != exitFailed || !strings.Contains(stderr, "invalid: the SnarkPackV2 aggregate of 3 StackedDrg2KiBV1_1 sectors (3 proofs, 4 padded) does not verify") {
		t.Fatalf("another seed: exit %d, %q", code, stderr)
	}
	// Base64 on stdout without --out, and the job is listed under its kind.
	stdout, _, code = runApp(t, append([]string{"--repo", repo, "aggregate", "seals", "--info", info, "--aggregation", "v1"}, proofs...)...)
	if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(stdout)); code != 0 || err != nil || len(b) != len(agg) || bytes.Equal(b, agg) {
		t.Fatalf("aggregate seals --aggregation v1: exit %d, %d bytes (%v), same as v2's: %v", code, len(b), err, bytes.Equal(b, agg))
	}
	if stdout, _, code := runApp(t, "--repo", repo, "jobs", "--kind", "aggregate-seals"); code != 0 || strings.Count(stdout, "aggregate-seals") != 2 {
		t.Fatalf("jobs --kind aggregate-seals: exit %d\n%s", code, stdout)
	}
}

// startInProcessDaemon runs `snarkd run` on repo (CPU backend, a free loopback port) until the
// test ends, and waits for its api file.
func startInProcessDaemon(t *testing.T, repo string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		app := newApp()
		app.Writer, app.ErrWriter = &strings.Builder{}, &strings.Builder{}
		done <- app.RunContext(ctx, []string{"snarkd", "--repo", repo, "run", "--listen", "127.0.0.1:0", "--backend", "cpu"})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("daemon did not stop")
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(repo, apiFile)); err == nil {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("daemon stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("daemon did not write its api file")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// FuzzAggregateFiles feeds arbitrary bytes to the readers of the aggregate commands' files:
// nothing may panic, and a proof file in base64 reads as the bytes it encodes.
func FuzzAggregateFiles(f *testing.F) {
	f.Add([]byte(`{"Miner":1000,"SealProof":3,"AggregateProof":1,"Proof":null,"Infos":[{"Number":1,"Randomness":"AA==","InteractiveRandomness":null,"SealedCID":{"/":"bagboea4b5abcb3z4"},"UnsealedCID":null}]}`))
	f.Add([]byte("  Zm9v\nYmFy \n"))
	f.Add([]byte{0, 1, 2, 0xff, ' ', '\n'})
	f.Fuzz(func(t *testing.T, data []byte) {
		if info, err := parseAggregateInfo(data); err == nil {
			if _, err := json.Marshal(info); err != nil {
				t.Fatalf("an accepted info does not encode: %v", err)
			}
		}
		_ = decodeProofFile(data)
		if b := base64.StdEncoding.EncodeToString(data); !bytes.Equal(decodeProofFile([]byte(b)), data) {
			t.Fatalf("base64 of %x does not read back", data)
		}
	})
}
