package main

import (
	"net"
	"strings"
	"testing"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/gpu/sim"
	"github.com/snarkd/snarkd/plugin"
)

func TestAPIInfo(t *testing.T) {
	for _, tc := range []struct {
		addr *net.TCPAddr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9810}, "/ip4/127.0.0.1/tcp/9810/http"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 1234}, "/ip4/127.0.0.1/tcp/1234/http"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 80}, "/ip6/::1/tcp/80/http"},
	} {
		if got := apiInfo(tc.addr); got != tc.want {
			t.Errorf("apiInfo(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

func TestResolveBackendWithoutCUDA(t *testing.T) {
	if b, err := resolveBackend("cpu"); err != nil || b != "cpu" {
		t.Fatalf("cpu: %q, %v", b, err)
	}
	b, err := resolveBackend("auto")
	if err != nil || (b != "cpu" && b != "cuda") {
		t.Fatalf("auto: %q, %v", b, err)
	}
}

func TestSelectDevices(t *testing.T) {
	devs, err := sim.Devices("3x16GiB")
	if err != nil {
		t.Fatal(err)
	}
	all, err := selectDevices(devs, nil)
	if err != nil || len(all) != 3 {
		t.Fatalf("no filter: %d devices, %v", len(all), err)
	}
	two, err := selectDevices(devs, []int{2, 0})
	if err != nil || len(two) != 2 || two[0].Info().Ordinal != 2 || two[1].Info().Ordinal != 0 {
		t.Fatalf("[2 0]: %v", err)
	}
	if _, err := selectDevices(devs, []int{3}); err == nil || !strings.Contains(err.Error(), "there is no GPU 3") {
		t.Fatalf("[3]: %v", err)
	}
	if _, err := selectDevices(nil, nil); err == nil {
		t.Fatal("no devices: no error")
	}
}

func TestNewGPUSchedulerSimulated(t *testing.T) {
	g := config.Default().GPU
	g.Simulate, g.WorkersPerDevice, g.VRAMHeadroom, g.Devices = "2x16GiB", 3, 0, []int{1}
	var opts plugin.Options
	sched, err := newGPUScheduler(g, backendSimulated, &opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Close()
	st := opts.GPUStatus()
	if len(st.Devices) != 1 || st.Devices[0].Info.Ordinal != 1 || len(st.Devices[0].Workers) != 3 ||
		st.Devices[0].Memory.Headroom != 0 {
		t.Fatalf("status: %+v", st)
	}
	if opts.Backend == nil || opts.Backend.Name() != "simulated" || opts.Backend.Concurrency() != 4 || // 3 workers + 1 prepared ahead
		opts.GPUMetrics == nil || len(opts.GPUs) != 1 {
		t.Fatalf("options: %+v", opts)
	}
}
