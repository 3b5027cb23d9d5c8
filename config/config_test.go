package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadPrecedence(t *testing.T) {
	repo := t.TempDir()
	file := `
[API]
ListenAddress = "0.0.0.0:1234"
MaxRequestBytes = "1GiB"
[Log]
Level = "debug"
`
	if err := os.WriteFile(filepath.Join(repo, FileName), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(repo, []string{"SNARKD_LOG_LEVEL=warn", "SNARKD_PROVER_BACKEND=cpu", "OTHER=1"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.API.ListenAddress != "0.0.0.0:1234" {
		t.Errorf("file value lost: %q", cfg.API.ListenAddress)
	}
	if cfg.API.MaxRequestBytes != 1<<30 {
		t.Errorf("MaxRequestBytes = %d", cfg.API.MaxRequestBytes)
	}
	if cfg.Log.Level != "warn" {
		t.Errorf("env did not override file: %q", cfg.Log.Level)
	}
	if cfg.Prover.Backend != "cpu" {
		t.Errorf("env not applied: %q", cfg.Prover.Backend)
	}
	if cfg.Log.Format != "text" {
		t.Errorf("default lost: %q", cfg.Log.Format)
	}
}

func TestLoadMissingFileGivesDefaults(t *testing.T) {
	cfg, err := Load(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Fatalf("got %+v, want defaults", cfg)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		env        []string
		want       string
	}{
		{"unknown key", "[API]\nListen = \"x\"\n", nil, "unknown setting(s) API.Listen"},
		{"bad toml", "[API\n", nil, "parsing"},
		{"bad listen", "", []string{"SNARKD_API_LISTEN=nope"}, "API.ListenAddress"},
		{"bad size", "", []string{"SNARKD_API_MAX_REQUEST_BYTES=12 parsecs"}, "SNARKD_API_MAX_REQUEST_BYTES"},
		{"tiny size", "[API]\nMaxRequestBytes = \"1KiB\"\n", nil, "at least 1 MiB"},
		{"tiny read size", "", []string{"SNARKD_API_MAX_READ_REQUEST_BYTES=1KiB"}, "API.MaxReadRequestBytes 1KiB: want at least 4KiB"},
		{"read size over max", "[API]\nMaxRequestBytes = \"1MiB\"\nMaxReadRequestBytes = \"2MiB\"\n", nil, "at most API.MaxRequestBytes (1MiB)"},
		{"no concurrent requests", "", []string{"SNARKD_API_MAX_CONCURRENT_REQUESTS=0"}, "API.MaxConcurrentRequests 0: want 1..1024"},
		{"bad concurrent requests", "", []string{"SNARKD_API_MAX_CONCURRENT_REQUESTS=many"}, "SNARKD_API_MAX_CONCURRENT_REQUESTS"},
		{"bad level", "", []string{"SNARKD_LOG_LEVEL=loud"}, "Log.Level"},
		{"bad format", "[Log]\nFormat = \"xml\"\n", nil, "Log.Format"},
		{"bad backend", "", []string{"SNARKD_PROVER_BACKEND=tpu"}, "Prover.Backend"},
		{"bad worker mode", "[Lotus]\nWorkerMode = \"post\"\n", nil, "Lotus.WorkerMode"},
		{"no parallel reads", "", []string{"SNARKD_LOTUS_POST_PARALLEL_READS=0"}, "Lotus.PoStParallelReads"},
		{"negative read timeout", "", []string{"SNARKD_LOTUS_POST_READ_TIMEOUT=-1s"}, "Lotus.PoStReadTimeout"},
		{"negative c2 concurrency", "[Lotus]\nMaxConcurrentC2 = -1\n", nil, "Lotus.MaxConcurrentC2 -1: want 0"},
		{"too much post concurrency", "", []string{"SNARKD_LOTUS_MAX_CONCURRENT_WINDOW_POST=257"}, "Lotus.MaxConcurrentWindowPoSt 257"},
		{"bad ignore resources", "", []string{"SNARKD_LOTUS_IGNORE_RESOURCES=sometimes"}, "SNARKD_LOTUS_IGNORE_RESOURCES"},
		{"bad sim spec", "", []string{"SNARKD_GPU_SIMULATE=2x"}, "GPU.Simulate"},
		{"bad sim count", "[GPU]\nSimulate = \"0x16GiB\"\n", nil, "bad device count"},
		{"tiny sim gpu", "[GPU]\nSimulate = \"2x512MiB\"\n", nil, "at least 1GiB"},
		{"empty sim group", "[GPU]\nSimulate = \"16GiB,\"\n", nil, "empty group"},
		{"bad headroom", "", []string{"SNARKD_GPU_VRAM_HEADROOM=lots"}, "SNARKD_GPU_VRAM_HEADROOM"},
		{"no gpu workers", "[GPU]\nWorkersPerDevice = 0\n", nil, "GPU.WorkersPerDevice 0: want 1..16"},
		{"too many gpu workers", "", []string{"SNARKD_GPU_WORKERS_PER_DEVICE=17"}, "GPU.WorkersPerDevice 17"},
		{"tiny pinned budget", "[GPU]\nPinnedBudget = \"1MiB\"\n", nil, "GPU.PinnedBudget 1MiB"},
		{"bad residency", "", []string{"SNARKD_GPU_SRS_RESIDENCY=maybe"}, "SNARKD_GPU_SRS_RESIDENCY"},
		{"negative device", "[GPU]\nDevices = [0, -1]\n", nil, "ordinal -1 is negative"},
		{"duplicate device", "", []string{"SNARKD_GPU_DEVICES=1,1"}, "ordinal 1 is listed twice"},
		{"bad device list", "", []string{"SNARKD_GPU_DEVICES=0;1"}, "SNARKD_GPU_DEVICES"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := t.TempDir()
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(repo, FileName), []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(repo, tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestWriteDefaultRoundTrips(t *testing.T) {
	repo := t.TempDir()
	wrote, err := WriteDefault(repo)
	if err != nil || !wrote {
		t.Fatalf("WriteDefault = %v, %v", wrote, err)
	}
	if wrote, err := WriteDefault(repo); err != nil || wrote {
		t.Fatalf("second WriteDefault overwrote: %v, %v", wrote, err)
	}
	cfg, err := Load(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Fatalf("round trip changed config: %+v", cfg)
	}
}

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Bytes
		err  bool
	}{
		{"1048576", 1 << 20, false},
		{"512MiB", 512 << 20, false},
		{"512 mib", 512 << 20, false},
		{"1.5GiB", 3 << 29, false},
		{"2GB", 2e9, false},
		{"16G", 16 << 30, false},
		{"", 0, true},
		{"GiB", 0, true},
		{"-1", 0, true},
		{"12 parsecs", 0, true},
	} {
		got, err := ParseBytes(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v", tc.in, got, err)
		}
	}
	if s := Bytes(512 << 20).String(); s != "512MiB" {
		t.Errorf("String = %q", s)
	}
}

func TestEnvVarsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatalf("docs/config.md: %v", err)
	}
	for env, key := range EnvVars() {
		if !strings.Contains(string(doc), env) || !strings.Contains(string(doc), key) {
			t.Errorf("docs/config.md does not document %s (%s)", key, env)
		}
	}
}

func TestGPUDefaults(t *testing.T) {
	g := Default().GPU
	if g.Simulate != "" || g.VRAMHeadroom != 512<<20 || g.WorkersPerDevice != 2 || g.PinnedBudget != 0 ||
		!g.SRSResidency || g.Devices != nil {
		t.Fatalf("GPU defaults = %+v", g)
	}
}

func TestGPUFileAndEnv(t *testing.T) {
	repo := t.TempDir()
	file := `
[GPU]
Simulate = "1x80GB,2x24GiB"
VRAMHeadroom = "1GiB"
Devices = [2, 0]
SRSResidency = false
`
	if err := os.WriteFile(filepath.Join(repo, FileName), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(repo, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := GPU{Simulate: "1x80GB,2x24GiB", VRAMHeadroom: 1 << 30, WorkersPerDevice: 2, Devices: []int{2, 0}}
	if !reflect.DeepEqual(cfg.GPU, want) {
		t.Fatalf("from file: %+v, want %+v", cfg.GPU, want)
	}
	cfg, err = Load(repo, []string{"SNARKD_GPU_SIMULATE=2x16GiB", "SNARKD_GPU_VRAM_HEADROOM=0",
		"SNARKD_GPU_WORKERS_PER_DEVICE=3", "SNARKD_GPU_PINNED_BUDGET=8GiB", "SNARKD_GPU_SRS_RESIDENCY=true",
		"SNARKD_GPU_DEVICES=1, 3"})
	if err != nil {
		t.Fatal(err)
	}
	want = GPU{Simulate: "2x16GiB", VRAMHeadroom: 0, WorkersPerDevice: 3, PinnedBudget: 8 << 30,
		SRSResidency: true, Devices: []int{1, 3}}
	if !reflect.DeepEqual(cfg.GPU, want) {
		t.Fatalf("from env: %+v, want %+v", cfg.GPU, want)
	}
	// An empty SNARKD_GPU_DEVICES means every device, overriding the file's list.
	cfg, err = Load(repo, []string{"SNARKD_GPU_DEVICES="})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.GPU.Devices) != 0 {
		t.Fatalf("SNARKD_GPU_DEVICES= left %v", cfg.GPU.Devices)
	}
}
