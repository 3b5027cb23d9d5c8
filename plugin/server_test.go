package plugin

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/rpcapi"
)

func serve(t *testing.T, cfg config.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(cfg, &ProverAPI{Backend: "cpu"}).Serve(ctx, ln, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func TestVersionOverJSONRPC(t *testing.T) {
	base := serve(t, config.Default())
	ctx := context.Background()
	api, closer, err := rpcapi.NewProverClient(ctx, base+RPCPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closer()
	v, err := api.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.Backend != "cpu" || v.APIVersion == "" {
		t.Fatalf("Version = %+v", v)
	}
}

func TestOversizeRequestRefused(t *testing.T) {
	cfg := config.Default()
	cfg.API.MaxRequestBytes = 1 << 20
	base := serve(t, cfg)
	body := `{"jsonrpc":"2.0","id":1,"method":"Prover.Version","params":["` + strings.Repeat("x", 2<<20) + `"]}`
	resp, err := http.Post(base+RPCPath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatalf("oversize request accepted with %d", resp.StatusCode)
	}
	// The server keeps answering other clients.
	resp, err = http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz after oversize request: %d", resp.StatusCode)
	}
}
