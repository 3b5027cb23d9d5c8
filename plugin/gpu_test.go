package plugin

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/sim"
	"github.com/snarkd/snarkd/priority"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// TestGPUStatusAndMetrics: a daemon on a simulated GPU scheduler reports each device's books,
// tiers and workers in Status, and the plan counters and memory gauges on /metrics.
func TestGPUStatusAndMetrics(t *testing.T) {
	devs, err := sim.Devices("2x16GiB")
	if err != nil {
		t.Fatal(err)
	}
	metrics := NewGPUMetrics()
	sched, err := gpu.NewScheduler(gpu.Config{Devices: devs, WorkersPerDevice: 2, Metrics: metrics, SRSResidency: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	d, err := Open(config.Default(), Options{Repo: t.TempDir(), BackendName: "simulated",
		Backend: prover.NewGPUBackend(sched, "simulated"), GPUStatus: sched.Status, GPUMetrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	// One partition runs and is held while Status looks at its worker; a second one ran before.
	shape := gpu.Shape{LogDomain: 16, SRSKey: "test"}
	for q := range shape.Points {
		shape.Points[q] = 1 << 16
	}
	ctx := context.Background()
	resA, err := sched.Prove(ctx, gpu.Partition{JobID: "job-a", Kind: "porep-c2", Class: priority.Seal, Index: 0, Shape: shape},
		func(ctx context.Context, run *gpu.Run) error {
			return run.Kernel(ctx, "k", func() error { time.Sleep(20 * time.Millisecond); return nil })
		})
	if err != nil {
		t.Fatal(err)
	}
	running, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := sched.Prove(ctx, gpu.Partition{JobID: "job-b", Kind: "window-post", Class: priority.WindowPoSt, Index: 3, Shape: shape},
			func(context.Context, *gpu.Run) error { close(running); <-release; return nil })
		done <- err
	}()
	select {
	case <-running:
	case <-time.After(30 * time.Second):
		t.Fatal("partition did not start")
	}
	st, err := d.prover.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Backend != "simulated" || len(st.Devices) != 2 {
		t.Fatalf("Status: backend %q, %d devices", st.Backend, len(st.Devices))
	}
	tiers, busy := 0, 0
	var worker rpcapi.DeviceWorker
	for i, dev := range st.Devices {
		if dev.Ordinal != i || dev.VRAMTotal != 16<<30 || dev.Workers != 2 || dev.VRAMHeadroom != gpu.DefaultHeadroom ||
			dev.VRAMLimit != dev.VRAMTotal-dev.VRAMOthers-dev.VRAMHeadroom || len(dev.WorkerStates) != 2 {
			t.Errorf("device %d: %+v", i, dev)
		}
		for _, n := range dev.Tiers {
			tiers += n
		}
		busy += dev.WorkersBusy
		for _, w := range dev.WorkerStates {
			if w.Busy {
				worker = w
				if dev.VRAMReserved < w.Bytes || len(dev.CurrentJobIDs) != 1 || dev.CurrentJobIDs[0] != "job-b" {
					t.Errorf("device %d with a busy worker: %+v", i, dev)
				}
			}
		}
	}
	if b := st.Devices[resA.Device].Busy; b == nil || b.Partitions != 1 || b.Seconds < 0.02 || b.Kernels < 0.02 || b.Recent <= 0 {
		t.Errorf("device %d busy %+v after a partition of 20 ms of kernels", resA.Device, b)
	}
	if tiers != 2 || busy != 1 || worker.JobID != "job-b" || worker.Kind != "window-post" || worker.Partition != 3 || worker.Tier != "full" {
		t.Errorf("tiers %d, busy %d, worker %+v", tiers, busy, worker)
	}

	fams := parseMetrics(t, d.metricsText())
	for _, c := range []struct {
		name   string
		labels []string
		want   float64 // -1: any value
	}{
		{"snarkd_gpu_plans_granted_total", []string{`kind="porep-c2"`, `tier="full"`}, 1},
		{"snarkd_gpu_plans_granted_total", []string{`kind="window-post"`, `tier="full"`}, 1},
		{"snarkd_gpu_pinned_fallback_bytes_total", nil, 0},
		{"snarkd_gpu_vram_total_bytes", []string{`device="1"`}, 16 << 30},
		{"snarkd_gpu_vram_limit_bytes", []string{`device="0"`}, -1},
		{"snarkd_gpu_partitions_waiting", []string{`device="0"`}, 0},
		{"snarkd_gpu_partitions_queued", nil, 0},
		{"snarkd_gpu_pinned_in_place_bytes", nil, 0},
		{"snarkd_gpu_partitions_proved_total", []string{fmt.Sprintf(`device="%d"`, resA.Device), `kind="porep-c2"`}, 1},
		{"snarkd_gpu_partition_seconds_total", []string{fmt.Sprintf(`device="%d"`, resA.Device), `kind="porep-c2"`, `stage="kernels"`}, -1},
		{"snarkd_gpu_busy_seconds_total", []string{`device="0"`}, -1},
		{"snarkd_gpu_busy_ratio", []string{`device="1"`}, -1},
	} {
		v, ok := fams.value(c.name, c.labels...)
		if !ok || (c.want >= 0 && v != c.want) {
			t.Errorf("/metrics %s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	if f := fams["snarkd_gpu_busy_seconds_total"]; f == nil || f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("snarkd_gpu_busy_seconds_total is not a counter: %v", f)
	}
	metrics.AllocFailed(1, gpu.TierPartial)
	metrics.PinnedFallback(4096)
	fams = parseMetrics(t, d.metricsText())
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"snarkd_gpu_alloc_failed_total", []string{`device="1"`, `tier="partial"`}, 1},
		{"snarkd_gpu_pinned_fallback_total", nil, 1},
		{"snarkd_gpu_pinned_fallback_bytes_total", nil, 4096},
	} {
		if v, ok := fams.value(c.name, c.labels...); !ok || v != c.want {
			t.Errorf("/metrics %s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestCPUStatusUnchanged: without a GPU scheduler, Status keeps reporting the CPU with the job
// manager's workers, and /metrics has no GPU families.
func TestCPUStatusUnchanged(t *testing.T) {
	_, d := openDaemon(t, config.Default())
	st, err := d.prover.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Devices) != 1 || st.Devices[0].Name != "cpu" || st.Devices[0].Workers != config.DefaultJobsWorkers || st.Devices[0].Tiers != nil {
		t.Fatalf("Status devices: %+v", st.Devices)
	}
	if strings.Contains(string(d.metricsText()), "snarkd_gpu_") {
		t.Fatal("/metrics has GPU families on the cpu backend")
	}
}
