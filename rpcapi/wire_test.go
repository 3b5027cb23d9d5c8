package rpcapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/filecoin-project/go-state-types/abi"
	"github.com/google/uuid"
	"github.com/ipfs/go-cid"
)

// Vectors are the examples of Lotus's generated API documentation
// (documentation/en/api-methods-worker.md and api-methods-miner.md).
var exampleUUID = uuid.MustParse("07070707-0707-0707-0707-070707070707")
var exampleCid = cid.MustParse("bafy2bzacea3wsdh6y3a36tb3skempjoxqpuyompjbmfeyf34fi3uy6uue42v4")

func canon(t *testing.T, s string) string {
	t.Helper()
	// Compact, not re-encode: the field order of Lotus's JSON is part of the vector.
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("bad vector %s: %v", s, err)
	}
	return b.String()
}

func TestLotusWireVectors(t *testing.T) {
	sector := SectorRef{ID: abi.SectorID{Miner: 1000, Number: 9}, ProofType: 8}
	call := CallID{Sector: abi.SectorID{Miner: 1000, Number: 9}, ID: exampleUUID}
	for _, tc := range []struct {
		name string
		v    interface{}
		want string
	}{
		{"SealCommit2 params", []interface{}{sector, Commit1Out{7}},
			`[{"ID":{"Miner":1000,"Number":9},"ProofType":8},"Bw=="]`},
		{"CallID", call,
			`{"Sector":{"Miner":1000,"Number":9},"ID":"07070707-0707-0707-0707-070707070707"}`},
		{"ReturnSealCommit2 params", []interface{}{call, Proof{7}, &CallError{Code: 0, Message: "string value"}},
			`[{"Sector":{"Miner":1000,"Number":9},"ID":"07070707-0707-0707-0707-070707070707"},"Bw==",{"Code":0,"Message":"string value"}]`},
		{"ReturnSealCommit2 success", []interface{}{call, Proof{7}, (*CallError)(nil)},
			`[{"Sector":{"Miner":1000,"Number":9},"ID":"07070707-0707-0707-0707-070707070707"},"Bw==",null]`},
		{"ReturnSealCommit2 restart", []interface{}{call, Proof(nil), &CallError{Code: ErrTempWorkerRestart, Message: "worker [name: gpu1] restarted"}},
			`[{"Sector":{"Miner":1000,"Number":9},"ID":"07070707-0707-0707-0707-070707070707"},null,{"Code":101,"Message":"worker [name: gpu1] restarted"}]`},
		{"ProveReplicaUpdate2 params", []interface{}{sector, exampleCid, exampleCid, exampleCid, ReplicaVanillaProofs{[]byte("byte array")}},
			`[{"ID":{"Miner":1000,"Number":9},"ProofType":8},{"/":"bafy2bzacea3wsdh6y3a36tb3skempjoxqpuyompjbmfeyf34fi3uy6uue42v4"},{"/":"bafy2bzacea3wsdh6y3a36tb3skempjoxqpuyompjbmfeyf34fi3uy6uue42v4"},{"/":"bafy2bzacea3wsdh6y3a36tb3skempjoxqpuyompjbmfeyf34fi3uy6uue42v4"},["Ynl0ZSBhcnJheQ=="]]`},
		{"TaskTypes", map[TaskType]struct{}{TTCommit2: {}, TTProveReplicaUpdate2: {}},
			`{"seal/v0/commit/2":{},"seal/v0/provereplicaupdate/2":{}}`},
		{"Session", exampleUUID, `"07070707-0707-0707-0707-070707070707"`},
		{"Version", WorkerAPIVersion0, `67328`},
		{"Remove params", []interface{}{abi.SectorID{Miner: 1000, Number: 9}}, `[{"Miner":1000,"Number":9}]`},
		{"TaskDisable params", []interface{}{TTCommit2}, `["seal/v0/commit/2"]`},
		{"Info", WorkerInfo{Hostname: "string value", IgnoreResources: true, Resources: WorkerResources{
			MemPhysical: 42, MemUsed: 42, MemSwap: 42, MemSwapUsed: 42, CPUs: 42, GPUs: []string{"string value"},
			Resources: map[TaskType]map[abi.RegisteredSealProof]Resources{"post/v0/windowproof": {0: {
				MinMemory: 2048, MaxMemory: 2048, GPUUtilization: 1, MaxParallelism: 1, BaseMinMemory: 2048}}}}},
			`{"Hostname":"string value","IgnoreResources":true,"Resources":{"MemPhysical":42,"MemUsed":42,"MemSwap":42,"MemSwapUsed":42,"CPUs":42,"GPUs":["string value"],"Resources":{"post/v0/windowproof":{"0":{"MinMemory":2048,"MaxMemory":2048,"GPUUtilization":1,"MaxParallelism":1,"MaxParallelismGPU":0,"BaseMinMemory":2048,"MaxConcurrent":0}}}}}`},
		{"Paths", []StoragePath{{ID: "76f1988b-ef30-4d7e-b3ec-9a627f4ba5a8", Weight: 42, LocalPath: "string value", CanSeal: true, CanStore: true}},
			`[{"ID":"76f1988b-ef30-4d7e-b3ec-9a627f4ba5a8","Weight":42,"LocalPath":"string value","CanSeal":true,"CanStore":true}]`},
		{"Miner Version", MinerVersion{Version: "string value", APIVersion: 131840, BlockDelay: 42, Agent: "string value"},
			`{"Version":"string value","APIVersion":131840,"BlockDelay":42,"Agent":"string value"}`},
		{"AuthVerify result", []Permission{PermWrite}, `["write"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != canon(t, tc.want) {
				t.Fatalf("JSON mismatch\n got %s\nwant %s", got, canon(t, tc.want))
			}
			if _, ok := tc.v.([]interface{}); ok {
				return // param arrays: the elements are covered by their own vectors
			}
			// And back: decoding the Lotus JSON yields the same value.
			back := reflect.New(reflect.TypeOf(tc.v))
			if err := json.Unmarshal([]byte(tc.want), back.Interface()); err != nil {
				t.Fatalf("decoding Lotus JSON: %v", err)
			}
			again, _ := json.Marshal(back.Elem().Interface())
			if !bytes.Equal(again, got) {
				t.Fatalf("round trip changed JSON:\n%s\n%s", again, got)
			}
		})
	}
}

func TestCallIDString(t *testing.T) {
	c := CallID{Sector: abi.SectorID{Miner: 1000, Number: 9}, ID: exampleUUID}
	if got := c.String(); got != "1000-9-07070707-0707-0707-0707-070707070707" {
		t.Fatal(got)
	}
}

func TestAPIVersion(t *testing.T) {
	if WorkerAPIVersion0 != 67328 || MinerAPIVersion0 != 66816 {
		t.Fatalf("versions %d %d", WorkerAPIVersion0, MinerAPIVersion0)
	}
	if WorkerAPIVersion0.String() != "1.7.0" || !WorkerAPIVersion0.EqMajorMinor(NewAPIVersion(1, 7, 3)) ||
		WorkerAPIVersion0.EqMajorMinor(NewAPIVersion(1, 8, 0)) {
		t.Fatal("EqMajorMinor/String")
	}
}

func TestParseAPIInfo(t *testing.T) {
	for _, tc := range []struct {
		in, tok, http, ws, err string
	}{
		{in: "eyJhbGc.eyJB.sig:/ip4/127.0.0.1/tcp/2345/http", tok: "eyJhbGc.eyJB.sig", http: "http://127.0.0.1:2345/rpc/v0", ws: "ws://127.0.0.1:2345/rpc/v0"},
		{in: "/ip6/::1/tcp/9810/http", http: "http://[::1]:9810/rpc/v0", ws: "ws://[::1]:9810/rpc/v0"},
		{in: "tok:/dns/miner.example/tcp/443/https", tok: "tok", http: "https://miner.example:443/rpc/v0", ws: "wss://miner.example:443/rpc/v0"},
		{in: "http://10.0.0.1:1234", http: "http://10.0.0.1:1234/rpc/v0", ws: "ws://10.0.0.1:1234/rpc/v0"},
		{in: "", err: "empty"},
		{in: "justatoken", err: "TOKEN:MULTIADDR"},
		// Lotus's own formats (lotus-miner's MINER_API_INFO, the worker's, Curio's).
		{in: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJBbGxvdyI6WyJhZG1pbiJdfQ.c2ln:/ip4/1.2.3.4/tcp/2345/http", tok: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJBbGxvdyI6WyJhZG1pbiJdfQ.c2ln", http: "http://1.2.3.4:2345/rpc/v0", ws: "ws://1.2.3.4:2345/rpc/v0"},
		{in: "/ip4/1.2.3.4/tcp/2345", http: "http://1.2.3.4:2345/rpc/v0", ws: "ws://1.2.3.4:2345/rpc/v0"},
		{in: "tok:/dns4/miner.example/tcp/2345/http", tok: "tok", http: "http://miner.example:2345/rpc/v0", ws: "ws://miner.example:2345/rpc/v0"},
		{in: "tok:/dns6/miner.example/tcp/2345/ws", tok: "tok", http: "http://miner.example:2345/rpc/v0", ws: "ws://miner.example:2345/rpc/v0"},
		{in: "tok:/ip6/2001:db8::1/tcp/2345/http", tok: "tok", http: "http://[2001:db8::1]:2345/rpc/v0", ws: "ws://[2001:db8::1]:2345/rpc/v0"},
		{in: "/ip6zone/eth0/ip6/fe80::1/tcp/2345/http", http: "http://[fe80::1%25eth0]:2345/rpc/v0", ws: "ws://[fe80::1%25eth0]:2345/rpc/v0"},
		{in: "tok:/ip4/1.2.3.4/tcp/443/wss", tok: "tok", http: "https://1.2.3.4:443/rpc/v0", ws: "wss://1.2.3.4:443/rpc/v0"},
		{in: "tok:/ip4/1.2.3.4/tcp/443/tls/http", tok: "tok", http: "https://1.2.3.4:443/rpc/v0", ws: "wss://1.2.3.4:443/rpc/v0"},
		{in: "tok:/ip4/1.2.3.4/tcp/443/tls/ws", tok: "tok", http: "https://1.2.3.4:443/rpc/v0", ws: "wss://1.2.3.4:443/rpc/v0"},
		{in: "tok:https://miner.example/rpc/v1", tok: "tok", http: "https://miner.example/rpc/v1", ws: "wss://miner.example/rpc/v1"},
		{in: "ws://10.0.0.1:1234/", http: "ws://10.0.0.1:1234/rpc/v0", ws: "ws://10.0.0.1:1234/rpc/v0"},
		{in: "tok:/ip4/300.1.1.1/tcp/1/http", err: "300.1.1.1"},
		{in: "tok:/ip4/1.1.1.1/udp/1/http", err: "want /ip4"},
		{in: "tok:/ip4/1.1.1.1/tcp/x1/http", err: "x1"},
		{in: "tok:/ip4/1.1.1.1/tcp/70000/http", err: "70000"},
		{in: "tok:/ip4/1.1.1.1/http", err: "want /ip4"},
		{in: "tok:/unix/tmp/sock", err: "want /ip4"},
		{in: "tok:/ip4/1.1.1.1/tcp/1/quic", err: `unsupported protocol "quic"`},
		{in: "tok:/dns/x/tcp/1/https/extra", err: "want /ip4"},
		{in: "tok:/ip4//tcp/1/http", err: "want /ip4"},
	} {
		ai, err := ParseAPIInfo(tc.in)
		var hu, wu string
		if err == nil {
			hu, err = ai.URL("http")
		}
		if err == nil {
			wu, err = ai.URL("ws")
		}
		if tc.err != "" {
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.err)) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || ai.Token != tc.tok || hu != tc.http || wu != tc.ws {
			t.Errorf("%q: %+v %q %q %v", tc.in, ai, hu, wu, err)
		}
	}
}

func TestPermsUpTo(t *testing.T) {
	p, ok := PermsUpTo(PermWrite)
	if !ok || !reflect.DeepEqual(p, []Permission{"read", "write"}) {
		t.Fatal(p)
	}
	if _, ok := PermsUpTo("root"); ok {
		t.Fatal("unknown permission accepted")
	}
}

// TestProxyStructsCoverInterfaces fails when an interface changed without `go generate ./rpcapi`.
func TestProxyStructsCoverInterfaces(t *testing.T) {
	for _, tc := range []struct {
		iface   reflect.Type
		methods reflect.Type
	}{
		{reflect.TypeOf((*Prover)(nil)).Elem(), reflect.TypeOf(ProverMethods{})},
		{reflect.TypeOf((*Worker)(nil)).Elem(), reflect.TypeOf(WorkerMethods{})},
		{reflect.TypeOf((*Miner)(nil)).Elem(), reflect.TypeOf(MinerMethods{})},
	} {
		if tc.iface.NumMethod() != tc.methods.NumField() {
			t.Errorf("%s has %d methods, proxy %d fields: run go generate ./rpcapi", tc.iface, tc.iface.NumMethod(), tc.methods.NumField())
		}
		for i := 0; i < tc.methods.NumField(); i++ {
			f := tc.methods.Field(i)
			if _, ok := PermsUpTo(Permission(f.Tag.Get("perm"))); !ok {
				t.Errorf("%s.%s: bad perm tag %q", tc.iface, f.Name, f.Tag.Get("perm"))
			}
		}
	}
}

// TestPermTags: every method's permission is the one this table gives, so a change is made on
// purpose, here and in docs/api.md. The worker's and the miner's are Lotus's own
// (api/api_worker.go: every worker method is admin; api/api_storage.go and api/api_common.go
// for the miner's).
func TestPermTags(t *testing.T) {
	want := map[string]map[string]Permission{
		"Prover": {
			"Version": PermRead, "Status": PermRead, "Await": PermRead, "Jobs": PermRead, "Events": PermRead,
			"Submit": PermWrite, "Prove": PermWrite, "Cancel": PermWrite, "SealCommitPhase2": PermWrite,
			"GenerateWinningPoStWithVanilla": PermWrite, "GenerateSinglePartitionWindowPoStWithVanilla": PermWrite,
			"GenerateUpdateProofWithVanilla": PermWrite, "AggregateSealProofs": PermWrite, "VerifyAggregateSeals": PermWrite,
			"MinerAttach": PermAdmin, "Stop": PermAdmin,
		},
		"Miner": {
			"Version": PermRead, "Session": PermRead, "AuthVerify": PermRead,
			"WorkerConnect": PermAdmin, "ReturnSealCommit2": PermAdmin, "ReturnProveReplicaUpdate2": PermAdmin,
			"StorageFindSector": PermAdmin,
		},
	}
	for _, tc := range []struct {
		name    string
		methods reflect.Type
	}{{"Prover", reflect.TypeOf(ProverMethods{})}, {"Worker", reflect.TypeOf(WorkerMethods{})}, {"Miner", reflect.TypeOf(MinerMethods{})}} {
		seen := map[string]bool{}
		for i := 0; i < tc.methods.NumField(); i++ {
			f := tc.methods.Field(i)
			seen[f.Name] = true
			w, ok := want[tc.name][f.Name]
			if tc.name == "Worker" {
				w, ok = PermAdmin, true
			}
			if got := Permission(f.Tag.Get("perm")); !ok || got != w {
				t.Errorf("%s.%s: perm %q, the table says %q", tc.name, f.Name, got, w)
			}
		}
		for m := range want[tc.name] {
			if !seen[m] {
				t.Errorf("%s.%s is in the table but not in the API", tc.name, m)
			}
		}
	}
}

// TestErrorCodesClearOfLotus: a lotus-miner decodes worker errors with Lotus's registry
// (api/api_errors.go: FirstUserCode+0..11, -32005, -32002); our codes must not land there.
func TestErrorCodesClearOfLotus(t *testing.T) {
	for _, c := range []int{int(CodePermission), int(CodeBadRequest), int(CodeNotSupportedYet), int(CodeQueueFull),
		int(CodeJobNotFound), int(CodeRequestConflict), int(CodeJobFailed), int(CodeJobCancelled), int(CodeShuttingDown)} {
		if (c >= 2 && c <= 13) || c == -32005 || c == -32002 || c == 1 || c == 0 {
			t.Errorf("error code %d collides with Lotus's registry", c)
		}
	}
}
