package itests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snarkd/snarkd/rpcapi"
)

// TestSimulatedGPUs: a daemon started with --simulate-gpus 2x16GiB proves a multi-partition
// test job through the GPU partition prover (admission, memory plans and workers of the
// scheduler; the arithmetic on the CPU inside the simulated kernel slots), the proof verifies,
// Status shows both GPUs with their books, tiers and workers, /metrics counts the plans and
// fills the phase, job and RPC histograms, and the Grafana dashboard in docs/ asks only for
// series the daemon serves.
func TestSimulatedGPUs(t *testing.T) {
	bin := buildDaemon(t)
	d := startDaemon(t, bin, t.TempDir(), []string{"SNARKD_LOG_LEVEL=debug"},
		"--simulate-gpus", "2x16GiB", "--gpu-workers", "2", "--vram-headroom", "1GiB")
	api := d.client(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	v, err := api.Version(ctx)
	if err != nil || v.Backend != "simulated" {
		t.Fatalf("Version = %+v, %v; want backend simulated", v, err)
	}
	const constraints, partitions, seed = 4096, 4, 21
	start := time.Now()
	res, err := api.Prove(ctx, rpcapi.ProofRequest{RequestID: "gpu-sim", Kind: rpcapi.KindTest,
		Test: &rpcapi.TestCircuit{Constraints: constraints, Partitions: partitions, Seed: seed}})
	if err != nil {
		t.Fatalf("Prove: %v", err)
	}
	logTiming(t, "test job on simulated GPUs", time.Since(start))
	if res.Job.State != rpcapi.JobDone || len(res.Proof) != 192*partitions {
		t.Fatalf("job %s: state %s, %d proof bytes, error %q", res.Job.ID, res.Job.State, len(res.Proof), res.Job.Error)
	}
	verifyTestProof(t, res.Proof, constraints, seed, partitions)
	// The scheduler knows the partitions by the daemon's job ID (Status, logs).
	logText, err := os.ReadFile(filepath.Join(d.repo, "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(logText), `"msg":"partition admitted","job":"`+string(res.Job.ID)+`"`); n < partitions {
		t.Errorf("daemon.log has %d admissions of job %s, want %d", n, res.Job.ID, partitions)
	}

	st, err := api.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Backend != "simulated" || len(st.Devices) != 2 {
		t.Fatalf("Status: backend %q, devices %+v", st.Backend, st.Devices)
	}
	granted := 0
	for i, dev := range st.Devices {
		if dev.Ordinal != i || dev.VRAMTotal != 16<<30 || dev.VRAMHeadroom != 1<<30 || dev.Workers != 2 ||
			len(dev.WorkerStates) != 2 || dev.VRAMLimit == 0 || dev.VRAMLimit > dev.VRAMTotal-dev.VRAMHeadroom {
			t.Errorf("device %d: %+v", i, dev)
		}
		if _, ok := dev.Tiers["full"]; !ok {
			t.Errorf("device %d: tiers %v lack full", i, dev.Tiers)
		}
		for _, n := range dev.Tiers {
			granted += n
		}
	}
	if granted < partitions {
		t.Errorf("Status counts %d plans granted, want at least %d", granted, partitions)
	}

	metrics := scrape(t, d.base+"/metrics")
	plans := 0.0
	for k, v := range metrics {
		if strings.HasPrefix(k, "snarkd_gpu_plans_granted_total{") {
			plans += v
		}
	}
	if plans < partitions || int(plans) != granted {
		t.Errorf("snarkd_gpu_plans_granted_total sums to %v, Status to %d; want at least %d", plans, granted, partitions)
	}
	if _, ok := metrics[`snarkd_gpu_vram_limit_bytes{device="1"}`]; !ok {
		t.Error("/metrics lacks snarkd_gpu_vram_limit_bytes for device 1")
	}

	// The histograms, parsed by Prometheus's text parser: every partition phase of the GPU path
	// observed once per partition, the job's duration and queue wait, the RPC calls made.
	fams := scrapeFamilies(t, d.base+"/metrics")
	phases := fams["snarkd_partition_phase_seconds"]
	for _, phase := range []string{"synthesis", "upload", "kernels", "assembly", "verify"} {
		checkHistogram(t, "partition phase "+phase, histogram(phases, map[string]string{"kind": "test", "phase": phase}), partitions)
	}
	checkHistogram(t, "job duration", histogram(fams["snarkd_job_duration_seconds"], map[string]string{"kind": "test", "outcome": "done"}), 1)
	checkHistogram(t, "queue wait", histogram(fams["snarkd_job_queue_wait_seconds"], map[string]string{"kind": "test"}), 1)
	checkHistogram(t, "Prover.Prove calls", histogram(fams["snarkd_rpc_request_duration_seconds"], map[string]string{"method": "Prover.Prove"}), 1)
	for _, name := range []string{"go_goroutines", "go_memstats_heap_inuse_bytes", "process_resident_memory_bytes", "process_cpu_seconds_total"} {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	checkDashboard(t, fams)

	out, err := runCLI(bin, d.repo, "status")
	if err != nil {
		t.Fatalf("snarkd status: %v\n%s", err, out)
	}
	for _, want := range []string{"backend simulated", "GPU 0 Simulated GPU", "GPU 1 Simulated GPU", "plans full ", "workers 0/2 busy"} {
		if !strings.Contains(out, want) {
			t.Errorf("snarkd status lacks %q:\n%s", want, out)
		}
	}
	t.Logf("snarkd status:\n%s", out)
}
