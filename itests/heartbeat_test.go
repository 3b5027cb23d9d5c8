package itests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/snarkd/snarkd/rpcapi"
)

// BenchmarkSessionWhileProving measures what lotus-miner's heartbeat sees: Filecoin.Session
// over HTTP every 50 ms while the daemon proves a test job on every core, and reports the
// latency percentiles over all calls (session-p50-ms, session-p99-ms, session-max-ms). Each
// iteration proves one job; the test parameters are set up before the timing. Settings:
// SNARKD_HEARTBEAT_CONSTRAINTS (default 262144), SNARKD_HEARTBEAT_PARTITIONS (12) and
// SNARKD_HEARTBEAT_BACKEND (cpu; cuda with a CUDA build in SNARKD_ITEST_BIN).
func BenchmarkSessionWhileProving(b *testing.B) {
	constraints := envInt(b, "SNARKD_HEARTBEAT_CONSTRAINTS", 1<<18)
	partitions := envInt(b, "SNARKD_HEARTBEAT_PARTITIONS", 12)
	backend := os.Getenv("SNARKD_HEARTBEAT_BACKEND")
	if backend == "" {
		backend = "cpu"
	}
	bin := buildDaemon(b)
	d := startDaemon(b, bin, b.TempDir(), nil, "--backend", backend)
	admin := d.adminToken(b, bin) // test jobs this large need the admin class's quota
	api, closer, err := rpcapi.NewProverClient(context.Background(), d.base+"/rpc/v0", d.header(admin))
	if err != nil {
		b.Fatal(err)
	}
	defer closer()
	ctx := context.Background()
	job := func(id string, parts int) rpcapi.ProofRequest {
		return rpcapi.ProofRequest{RequestID: id, Kind: rpcapi.KindTest,
			Test: &rpcapi.TestCircuit{Constraints: uint64(constraints), Partitions: parts, Seed: 77}}
	}
	t0 := time.Now()
	if _, err := api.Prove(ctx, job("heartbeat-setup", 1)); err != nil {
		b.Fatal(err)
	}
	b.Logf("setup and one partition of 2^%d: %s", bitsOf(constraints), time.Since(t0).Round(time.Millisecond))

	session := func() (time.Duration, error) {
		req, err := http.NewRequest("POST", d.base+"/rpc/v0", strings.NewReader(`{"jsonrpc":"2.0","method":"Filecoin.Session","params":[],"id":1}`))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+admin) // lotus-miner calls it with an admin token
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result"`) {
			return 0, fmt.Errorf("Session: HTTP %d %s %v", resp.StatusCode, body, err)
		}
		return took, nil
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		sub, err := api.Submit(ctx, job(fmt.Sprintf("heartbeat-%d", i), partitions))
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := api.Await(ctx, sub.JobID)
			done <- err
		}()
	sample:
		for {
			select {
			case err := <-done:
				if err != nil {
					b.Fatal(err)
				}
				break sample
			case <-time.After(50 * time.Millisecond):
			}
			took, err := session()
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, took)
		}
	}
	b.StopTimer()
	if len(lat) == 0 {
		b.Fatal("no Session call completed while proving")
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(len(lat)), "calls")
	b.ReportMetric(q(0.5), "session-p50-ms")
	b.ReportMetric(q(0.9), "session-p90-ms")
	b.ReportMetric(q(0.99), "session-p99-ms")
	b.ReportMetric(q(1), "session-max-ms")
}

// envInt reads a positive integer setting, or returns def.
func envInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// bitsOf is ⌈log2 n⌉.
func bitsOf(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}
