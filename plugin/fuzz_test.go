package plugin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// FuzzC1SealProof: arbitrary C1 bytes yield a seal proof or a bad-request error, never a panic.
func FuzzC1SealProof(f *testing.F) {
	for _, s := range []string{`{"registered_proof":"StackedDrg32GiBV1_1"}`, `{"registered_proof":7}`, `{`, `""`, `{"registered_proof":"StackedDrg2KiBV1_2_Feat_NiPoRep","x":[1,2]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		spt, err := C1SealProof(b)
		if err == nil && (spt < 0 || spt > 19) {
			t.Fatalf("seal proof %d out of range", spt)
		}
	})
}

// FuzzRPCRequest throws arbitrary bodies at /rpc/v0 of a real daemon with an admin token: no
// request may panic the server, and it keeps answering Version afterwards.
func FuzzRPCRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`,
		`{"jsonrpc":"2.0","id":1,"method":"Prover.Submit","params":[{"Kind":"test","Test":{"Constraints":0}}]}`,
		`{"jsonrpc":"2.0","id":1,"method":"Prover.Cancel","params":["nope"]}`,
		`{"jsonrpc":"2.0","id":1,"method":"Prover.Jobs","params":[{"Limit":-5,"States":["x"]}]}`,
		`{"jsonrpc":"2.0","id":1,"method":"Filecoin.SealCommit2","params":[{"ID":{"Miner":1000,"Number":9},"ProofType":99},"Bw=="]}`,
		`{"jsonrpc":"2.0","id":1,"method":"Filecoin.ProveReplicaUpdate2","params":[{"ID":{"Miner":1,"Number":1},"ProofType":8},{"/":"x"},null,{},[]]}`,
		`{"jsonrpc":"2.0","id":1,"method":"Filecoin.TaskDisable","params":["nope"]}`,
		`{"jsonrpc":"2.0","id":1,"method":"Prover.GenerateUpdateProofWithVanilla","params":[3,{"/":"bafy2bzacea3wsdh6y3a36tb3skempjoxqpuyompjbmfeyf34fi3uy6uue42v4"},null,null,null]}`,
		`[{"jsonrpc":"2.0","id":1,"method":"Prover.Status"},{"id":2}]`, `[]`, `{`, ``, `{"id":{"a":1}}`,
	} {
		f.Add([]byte(s))
	}
	cfg := config.Default()
	cfg.Jobs.MaxPending = 4
	d, err := Open(cfg, Options{Repo: f.TempDir(), BackendName: "cpu"})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(d.Close)
	perms := []string{"read", "write", "sign", "admin"}
	tok, _ := d.Secret().NewToken(toPerms(perms))
	h := d.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		// Shutdown would stop the daemon and MinerAttach would dial whatever address the
		// fuzzer invents; every other method is fair game.
		if strings.Contains(string(body), "Shutdown") || strings.Contains(string(body), "MinerAttach") {
			return
		}
		// Await, Prove and WaitQuiet may legitimately block: bound each request.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req := httptest.NewRequest("POST", RPCPath, strings.NewReader(string(body))).WithContext(ctx)
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		req = httptest.NewRequest("POST", RPCPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":[]}`))
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"Backend":"cpu"`) {
			t.Fatalf("daemon stopped answering after %q: %d %s", body, rec.Code, rec.Body.String())
		}
	})
}

// TestC1SealProofNames: every seal proof type is read back from the name a C1 output carries,
// NI-PoRep's "_Feat_NonInteractivePoRep" spelling included.
func TestC1SealProofNames(t *testing.T) {
	for _, p := range prooftypes.All() {
		got, err := C1SealProof([]byte(`{"registered_proof":"` + p.Name + `","vanilla_proofs":{}}`))
		if err != nil || got != p.Proof {
			t.Errorf("%s: %d %v", p.Name, got, err)
		}
	}
	if _, err := C1SealProof([]byte(`{"registered_proof":"StackedDrg2KiBV1_2_Feat_NiPoRep"}`)); err == nil {
		t.Error("the go-state-types spelling is not what C1 outputs carry")
	}
}
