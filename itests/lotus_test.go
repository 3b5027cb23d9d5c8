package itests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/commcid"
	"github.com/snarkd/snarkd/rpcapi"
)

var lotusEnv = []string{
	"SNARKD_LOTUS_HEARTBEAT=200ms",
	"SNARKD_LOTUS_RETURN_RETRY_MIN=50ms",
	"SNARKD_LOTUS_RETURN_RETRY_MAX=200ms",
	"SNARKD_LOTUS_WORKER_NAME=itest-worker",
}

// c1For2KiB is the head of a C1 output: enough for the seal proof type to be read.
const c1For2KiB = `{"registered_proof":"StackedDrg2KiBV1_1","comm_r":[1],"comm_d":[2]}`

// rawCall posts one JSON-RPC request and returns the compacted "result" or "error".
func rawCall(t *testing.T, url, token, body string) (result, rpcErr string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var env struct {
		Result json.RawMessage
		Error  json.RawMessage
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s -> %d %s", body, resp.StatusCode, b)
	}
	return compact(env.Result), compact(env.Error)
}

func compact(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	var out bytes.Buffer
	_ = json.Compact(&out, b)
	return out.String()
}

var uuidRe = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`

// TestLotusMinerFlow is the lotus-miner attachment end to end: WorkerConnect handshake,
// Session polling, SealCommit2 and ProveReplicaUpdate2 answered with a CallID at once and
// their verdicts through Return*, the JSON of Lotus's API documentation, task toggles, and
// re-registration after a miner restart.
func TestLotusMinerFlow(t *testing.T) {
	bin := buildDaemon(t)
	m := newStandIn(t, 100*time.Millisecond)
	d := startDaemon(t, bin, t.TempDir(), lotusEnv, "--miner-api-info", m.apiInfo())

	waitFor(t, "WorkerConnect", func() bool { _, ok := m.worker(); return ok })
	w, _ := m.worker()
	m.mu.Lock()
	handshake := strings.Join(m.handshake, ",")
	m.mu.Unlock()
	if handshake != "Version,Session,Info,TaskTypes" {
		t.Fatalf("handshake %s", handshake)
	}
	if w.Info.Hostname != "itest-worker" || w.Info.IgnoreResources || w.Info.Resources.CPUs == 0 ||
		len(w.Info.Resources.Resources[rpcapi.TTCommit2]) == 0 {
		t.Fatalf("Info %+v", w.Info)
	}
	if len(w.Tasks) != 2 {
		t.Fatalf("TaskTypes %v", w.Tasks)
	}
	waitFor(t, "three Session polls", func() bool { m.mu.Lock(); defer m.mu.Unlock(); return m.polls >= 3 })

	// The raw requests of Lotus's documentation (api-methods-worker.md), with a token the miner
	// signed: the daemon accepts it through the miner's AuthVerify.
	minerTok, _ := m.secret.NewToken([]rpcapi.Permission{"admin"})
	rpcURL := d.base + "/rpc/v0"
	res, rerr := rawCall(t, rpcURL, minerTok, `{"jsonrpc":"2.0","method":"Filecoin.Version","params":[],"id":1}`)
	if res != "67328" {
		t.Fatalf("Version: %s %s", res, rerr)
	}
	res, _ = rawCall(t, rpcURL, minerTok, `{"jsonrpc":"2.0","method":"Filecoin.TaskTypes","params":[],"id":2}`)
	if res != `{"seal/v0/commit/2":{},"seal/v0/provereplicaupdate/2":{}}` {
		t.Fatalf("TaskTypes: %s", res)
	}
	res, _ = rawCall(t, rpcURL, minerTok, `{"jsonrpc":"2.0","method":"Filecoin.Session","params":[],"id":3}`)
	if res != `"`+w.Session.String()+`"` {
		t.Fatalf("Session: %s", res)
	}
	res, _ = rawCall(t, rpcURL, minerTok, `{"jsonrpc":"2.0","method":"Filecoin.Paths","params":[],"id":4}`)
	if res != `[]` {
		t.Fatalf("Paths: %s", res)
	}
	_, rerr = rawCall(t, rpcURL, minerTok, `{"jsonrpc":"2.0","method":"Filecoin.AddPiece","params":[{"ID":{"Miner":1000,"Number":9},"ProofType":8},[1024],1024,null],"id":5}`)
	if rerr != `{"code":1,"message":"method not supported"}` {
		t.Fatalf("AddPiece: %s", rerr)
	}

	// SealCommit2 with the documentation's exact params: a CallID at once...
	res, rerr = rawCall(t, rpcURL, minerTok, `{"jsonrpc":"2.0","method":"Filecoin.SealCommit2","params":[{"ID":{"Miner":1000,"Number":9},"ProofType":8},"Bw=="],"id":6}`)
	callRe := regexp.MustCompile(`^\{"Sector":\{"Miner":1000,"Number":9\},"ID":"(` + uuidRe + `)"\}$`)
	mm := callRe.FindStringSubmatch(res)
	if mm == nil {
		t.Fatalf("SealCommit2 result %s (error %s)", res, rerr)
	}
	// ...and the verdict through ReturnSealCommit2: "Bw==" is not a C1 output.
	ret := m.nextReturn(t)
	wantRaw := regexp.MustCompile(`^\[\{"Sector":\{"Miner":1000,"Number":9\},"ID":"` + mm[1] + `"\},null,\{"Code":0,"Message":"invalid proof request: Phase1Out: [^"]*\[name: itest-worker\]"\}\]$`)
	if ret.Method != "Filecoin.ReturnSealCommit2" || !wantRaw.MatchString(compact(ret.Raw)) {
		t.Fatalf("return %s %s", ret.Method, ret.Raw)
	}

	// JSON with a C1 output's head but not its body: the prover refuses it, and the miner is
	// told why with a CallError, never a fake proof (lotus_c2_test.go proves real C1 outputs).
	ctx := context.Background()
	call, err := w.API.SealCommit2(ctx, rpcapi.SectorRef{ID: abi.SectorID{Miner: 1000, Number: 10}, ProofType: abi.RegisteredSealProof_StackedDrg2KiBV1_1}, []byte(c1For2KiB))
	if err != nil {
		t.Fatal(err)
	}
	ret = m.nextReturn(t)
	if ret.CallID != call || ret.Proof != nil || ret.Err == nil || ret.Err.Code != rpcapi.ErrUnknown ||
		!strings.Contains(ret.Err.Message, "Phase1Out: ") || !strings.Contains(ret.Err.Message, "C1 output") {
		t.Fatalf("C2 return %+v (call %v)", ret, call)
	}

	// ProveReplicaUpdate2 with the documentation's params: their CIDs are not commitment CIDs
	// (dag-cbor), so the call is refused at once, naming the argument.
	_, rpcErr := rawCall(t, rpcURL, minerTok, `{"jsonrpc":"2.0","method":"Filecoin.ProveReplicaUpdate2","params":[{"ID":{"Miner":1000,"Number":9},"ProofType":8},{"/":"bafy2bzacea3wsdh6y3a36tb3skempjoxqpuyompjbmfeyf34fi3uy6uue42v4"},{"/":"bafy2bzacea3wsdh6y3a36tb3skempjoxqpuyompjbmfeyf34fi3uy6uue42v4"},{"/":"bafy2bzacea3wsdh6y3a36tb3skempjoxqpuyompjbmfeyf34fi3uy6uue42v4"},["Ynl0ZSBhcnJheQ=="]],"id":7}`)
	if !strings.Contains(rpcErr, "sectorKey") || !strings.Contains(rpcErr, "codec 0x71, want 0xf102") {
		t.Fatalf("ProveReplicaUpdate2 with non-commitment CIDs: error %s", rpcErr)
	}
	// With commitment CIDs the call is queued; the SnapDeals circuit refuses one vanilla proof
	// for a 16-partition update, and the miner is told why.
	sealedCID, _ := commcid.SealedCID(c1.Domain{1})
	unsealedCID, _ := commcid.UnsealedCID(c1.Domain{2})
	res, _ = rawCall(t, rpcURL, minerTok, fmt.Sprintf(`{"jsonrpc":"2.0","method":"Filecoin.ProveReplicaUpdate2","params":[{"ID":{"Miner":1000,"Number":9},"ProofType":8},{"/":"%s"},{"/":"%s"},{"/":"%s"},["Ynl0ZSBhcnJheQ=="]],"id":7}`, sealedCID, sealedCID, unsealedCID))
	if callRe.FindStringSubmatch(res) == nil {
		t.Fatalf("ProveReplicaUpdate2 result %s", res)
	}
	ret = m.nextReturn(t)
	if ret.Method != "Filecoin.ReturnProveReplicaUpdate2" || ret.Err == nil || !strings.Contains(ret.Err.Message, "VanillaProofs: 1 vanilla proofs, a 34359738368-byte sector update has 16 partitions") {
		t.Fatalf("PRU2 return %+v", ret)
	}

	// Task toggles and enable/disable, as `lotus-worker tasks` and the scheduler use them.
	if err := w.API.TaskDisable(ctx, rpcapi.TTCommit2); err != nil {
		t.Fatal(err)
	}
	tasks, _ := w.API.TaskTypes(ctx)
	if _, ok := tasks[rpcapi.TTCommit2]; ok || len(tasks) != 1 {
		t.Fatalf("after TaskDisable: %v", tasks)
	}
	if _, err := w.API.SealCommit2(ctx, rpcapi.SectorRef{ID: abi.SectorID{Miner: 1000, Number: 11}, ProofType: 5}, []byte(c1For2KiB)); err == nil {
		t.Fatal("SealCommit2 accepted while disabled")
	}
	if err := w.API.TaskEnable(ctx, rpcapi.TTCommit2); err != nil {
		t.Fatal(err)
	}
	if err := w.API.SetEnabled(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.API.Session(ctx); err == nil {
		t.Fatal("Session answered while disabled")
	}
	if err := w.API.SetEnabled(ctx, true); err != nil {
		t.Fatal(err)
	}
	if s, err := w.API.Session(ctx); err != nil || s != w.Session {
		t.Fatalf("Session after re-enable: %s %v", s, err)
	}
	if err := w.API.WaitQuiet(ctx); err != nil {
		t.Fatal(err)
	}

	// A forged token is refused before any method runs.
	forged := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJBbGxvdyI6WyJhZG1pbiJdfQ.c2lnbmF0dXJl"
	req, _ := http.NewRequest("POST", rpcURL, strings.NewReader(`{"jsonrpc":"2.0","method":"Filecoin.Session","params":[],"id":1}`))
	req.Header.Set("Authorization", "Bearer "+forged)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("forged token: %d", resp.StatusCode)
	}

	// The miner restarts: the daemon sees the new session and registers again.
	m.restart()
	waitFor(t, "re-registration after miner restart", func() bool { _, ok := m.worker(); return ok })
	w2, _ := m.worker()
	if w2.Session != w.Session {
		t.Fatalf("worker session changed across a miner restart: %s -> %s", w.Session, w2.Session)
	}
	st, err := d.client(t, false).Status(ctx)
	if err != nil || st.Miner == nil || !st.Miner.Connected {
		t.Fatalf("status after miner restart: %+v %v", st.Miner, err)
	}
}

// TestWorkerConnectCommand attaches a daemon started without a miner through the CLI.
func TestWorkerConnectCommand(t *testing.T) {
	bin := buildDaemon(t)
	m := newStandIn(t, 100*time.Millisecond)
	repo := t.TempDir()
	d := startDaemon(t, bin, repo, lotusEnv)
	out, err := runCLI(bin, repo, "worker", "connect", "--miner-api-info", m.apiInfo())
	if err != nil || !strings.Contains(out, "registered with lotus-miner") {
		t.Fatalf("worker connect: %v\n%s", err, out)
	}
	if _, ok := m.worker(); !ok {
		t.Fatal("miner saw no WorkerConnect")
	}
	// A bad miner address is a clear error, not a hang.
	out, err = runCLI(bin, repo, "worker", "connect", "--miner-api-info", "tok:/ip4/127.0.0.1/tcp/1/http")
	if err == nil || !strings.Contains(out, "Version") {
		t.Fatalf("unreachable miner: %v\n%s", err, out)
	}
	// The first miner is still trusted and registered.
	st, err := runCLI(bin, repo, "status")
	if err != nil || !strings.Contains(st, "connected") || strings.Contains(st, "NOT connected") {
		t.Fatalf("status after failed connect: %v\n%s", err, st)
	}
	// The attachment survives a crash: the restarted daemon registers again by itself.
	first, _ := m.worker()
	d.kill()
	startDaemon(t, bin, repo, lotusEnv)
	waitFor(t, "registration after the daemon restart", func() bool {
		w, ok := m.worker()
		return ok && w.Session != first.Session
	})
}
