package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/rpcapi"
)

func TestPrintGPUs(t *testing.T) {
	var b bytes.Buffer
	printGPUs(&b, []rpcapi.DeviceStatus{
		{Name: "cpu", Workers: 1},
		{Name: "Simulated GPU (16.0 GiB)", Ordinal: 1, VRAMTotal: 16 << 30, VRAMReserved: 3 << 29, VRAMLimit: 31 << 29,
			VRAMHeadroom: 512 << 20, Waiting: 2, Tiers: map[string]int{"full": 3, "partial": 1, "minimal": 0},
			Workers: 2, WorkersBusy: 1, WorkerStates: []rpcapi.DeviceWorker{
				{ID: 0, Busy: true, JobID: "j1", Kind: "porep-c2", Partition: 4, Tier: "partial", Bytes: 3 << 29},
				{ID: 1},
			}, Busy: &rpcapi.DeviceBusy{Seconds: 93.25, Recent: 0.87, Partitions: 40, Queued: 0.0125, Memory: 0, KernelWait: 0.4, Kernels: 1.2, Run: 1.9}},
	})
	out := b.String()
	for _, want := range []string{
		"GPU 1 Simulated GPU (16.0 GiB): reserved 1.5 GiB of 15.5 GiB (allocated 0 B, resident 0 B, headroom 512.0 MiB, other processes 0 B), 2 waiting; plans full 3, partial 1, minimal 0; workers 1/2 busy\n",
		"  worker 0: job j1 partition 4 (porep-c2), partial plan, 1.5 GiB, SRS streamed\n",
		"  worker 1: idle\n",
		"  busy 87 % of the last minute (1m33.25s of kernels since start); its 40 partitions on average: queued 13ms, memory 0s, other kernels 400ms, kernels 1.2s, run 1.9s\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "cpu") {
		t.Errorf("the CPU device was printed as a GPU:\n%s", out)
	}
}
