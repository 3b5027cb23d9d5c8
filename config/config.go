// Package config loads snarkd's settings: built-in defaults, then the repo's config.toml, then
// SNARKD_* environment variables, then command-line flags (applied by the caller).
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// FileName is the config file inside the repo directory.
const FileName = "config.toml"

// Config is the whole daemon configuration. Every field carries its TOML key and the
// environment variable that overrides it; docs/config.md documents each one.
type Config struct {
	API    API    `toml:"API"`
	Log    Log    `toml:"Log"`
	Prover Prover `toml:"Prover"`
	Jobs   Jobs   `toml:"Jobs"`
	Lotus  Lotus  `toml:"Lotus"`
	Cuzk   Cuzk   `toml:"Cuzk"`
	GPU    GPU    `toml:"GPU"`
}

// DefaultVRAMHeadroom is the device memory kept free for other host processes (the gpu
// package's DefaultHeadroom; config does not import gpu).
const DefaultVRAMHeadroom = 512 << 20

// DefaultGPUWorkersPerDevice is how many partitions run on one GPU at once by default: one
// partition's uploads and CPU epilogue overlap the other's kernels.
const DefaultGPUWorkersPerDevice = 2

// GPU configures the GPU partition prover: which devices, how much of their memory it may
// plan with, and how many partitions run on each.
type GPU struct {
	// Simulate, when set ("2x16GiB", "1x80GB,2x24GiB"), proves on simulated GPUs of those sizes
	// (the arithmetic runs on the CPU inside the simulated kernel slots) whatever the build and
	// Prover.Backend say; empty uses real GPUs as Prover.Backend selects.
	Simulate string `toml:"Simulate" env:"SNARKD_GPU_SIMULATE"`
	// VRAMHeadroom is device memory admission leaves free on every GPU for other processes; 0
	// leaves none.
	VRAMHeadroom Bytes `toml:"VRAMHeadroom" env:"SNARKD_GPU_VRAM_HEADROOM"`
	// WorkersPerDevice is how many partitions run on one GPU at once.
	WorkersPerDevice int `toml:"WorkersPerDevice" env:"SNARKD_GPU_WORKERS_PER_DEVICE"`
	// PinnedBudget bounds page-locked host memory: upload buffers and the SRS vectors that
	// stream to the GPUs, locked in place; 0 means half of RAM.
	PinnedBudget Bytes `toml:"PinnedBudget" env:"SNARKD_GPU_PINNED_BUDGET"`
	// SRSResidency keeps the SRS of hot circuits in VRAM where it fits beside every worker's
	// largest plan.
	SRSResidency bool `toml:"SRSResidency" env:"SNARKD_GPU_SRS_RESIDENCY"`
	// Devices lists the GPU ordinals to use (the order of CUDA_VISIBLE_DEVICES, or of the
	// Simulate spec); empty uses every device.
	Devices []int `toml:"Devices,omitempty" env:"SNARKD_GPU_DEVICES"`
}

// Validate checks the GPU settings.
func (g GPU) Validate() error {
	if g.Simulate != "" {
		if err := checkSimSpec(g.Simulate); err != nil {
			return fmt.Errorf("GPU.Simulate %q: %w", g.Simulate, err)
		}
	}
	if g.WorkersPerDevice < 1 || g.WorkersPerDevice > 16 {
		return fmt.Errorf("GPU.WorkersPerDevice %d: want 1..16", g.WorkersPerDevice)
	}
	if g.PinnedBudget != 0 && g.PinnedBudget < 64<<20 {
		return fmt.Errorf("GPU.PinnedBudget %s: want 0 (half of RAM) or at least 64MiB", g.PinnedBudget)
	}
	seen := map[int]bool{}
	for _, d := range g.Devices {
		if d < 0 {
			return fmt.Errorf("GPU.Devices %v: ordinal %d is negative", g.Devices, d)
		}
		if seen[d] {
			return fmt.Errorf("GPU.Devices %v: ordinal %d is listed twice", g.Devices, d)
		}
		seen[d] = true
	}
	return nil
}

// checkSimSpec checks the syntax of a simulated GPU spec: comma-separated [COUNTx]SIZE
// groups, 1..64 devices a group, at least 1 GiB each (sim.ParseSpec builds the devices).
func checkSimSpec(spec string) error {
	for _, group := range strings.Split(spec, ",") {
		group = strings.TrimSpace(group)
		if group == "" {
			return errors.New("empty group; want [COUNTx]SIZE groups separated by commas, e.g. 2x16GiB")
		}
		size := group
		if i := strings.IndexAny(group, "xX"); i > 0 {
			n, err := strconv.Atoi(group[:i])
			if err != nil || n < 1 || n > 64 {
				return fmt.Errorf("bad device count %q in %q; want 1..64", group[:i], group)
			}
			size = group[i+1:]
		}
		b, err := ParseBytes(size)
		if err != nil {
			return err
		}
		if b < 1<<30 {
			return fmt.Errorf("%q: a simulated GPU needs at least 1GiB", group)
		}
	}
	return nil
}

// MinCuzkMessageBytes is the smallest gRPC message limit the cuzk service accepts: Curio's
// client sends and receives messages of up to 256 MiB.
const MinCuzkMessageBytes = 256 << 20

// Cuzk configures the cuzk.v1 gRPC proving service that Curio's [Cuzk] Address points at.
type Cuzk struct {
	// ListenAddress is unix:///path/to.sock or host:port; empty turns the service off.
	ListenAddress string `toml:"ListenAddress" env:"SNARKD_CUZK_LISTEN"`
	// Token, when set, must arrive on every call as "authorization: Bearer <token>" metadata.
	Token string `toml:"Token" env:"SNARKD_CUZK_TOKEN"`
	// TLSCertFile and TLSKeyFile turn on TLS for the service (both or neither).
	TLSCertFile string `toml:"TLSCertFile" env:"SNARKD_CUZK_TLS_CERT"`
	TLSKeyFile  string `toml:"TLSKeyFile" env:"SNARKD_CUZK_TLS_KEY"`
	// TLSClientCAFile, when set, requires client certificates signed by this CA (mutual TLS).
	TLSClientCAFile string `toml:"TLSClientCAFile" env:"SNARKD_CUZK_TLS_CLIENT_CA"`
	// MaxMessageBytes bounds one gRPC message either way (a 32 GiB PoRep C1 is about 50 MB).
	MaxMessageBytes Bytes `toml:"MaxMessageBytes" env:"SNARKD_CUZK_MAX_MESSAGE_BYTES"`
}

// DefaultJobsWorkers is how many jobs prove at once by default.
const DefaultJobsWorkers = 2

// DefaultDrainGrace is Jobs.DrainGrace's default: a 32 GiB PoRep C2 takes a few minutes on
// a GPU (tens on a CPU), so a stop rarely cuts one short.
const DefaultDrainGrace = Duration(10 * time.Minute)

// Jobs configures the job manager.
type Jobs struct {
	// Workers is how many jobs prove at once (besides the PoSt-only worker). Two by default: the
	// next job decodes, checks and starts synthesizing while the last partitions of the one
	// before are on the GPU; partitions in memory are bounded by the backend either way.
	Workers int `toml:"Workers" env:"SNARKD_JOBS_WORKERS"`
	// MaxPending bounds jobs queued or running; submissions beyond it are refused.
	MaxPending int `toml:"MaxPending" env:"SNARKD_JOBS_MAX_PENDING"`
	// Retention is how long finished jobs and delivered results stay in the journal.
	Retention Duration `toml:"Retention" env:"SNARKD_JOBS_RETENTION"`
	// DrainGrace is how long a stopping daemon (SIGTERM, `snarkd stop`) lets its running jobs
	// finish before it hands them back: long enough for a 32 GiB C2 by default, so that a
	// restart does not throw away minutes of proving.
	DrainGrace Duration `toml:"DrainGrace" env:"SNARKD_JOBS_DRAIN_GRACE"`
	// MaxTestConstraints and MaxTestPartitions bound a "test" job submitted with a token that
	// grants write but not admin (and through the cuzk service): each new (constraints, seed)
	// runs a setup whose parameters are kept in memory and under <repo>/params.
	MaxTestConstraints int `toml:"MaxTestConstraints" env:"SNARKD_JOBS_MAX_TEST_CONSTRAINTS"`
	MaxTestPartitions  int `toml:"MaxTestPartitions" env:"SNARKD_JOBS_MAX_TEST_PARTITIONS"`
	// AdminMaxTestConstraints and AdminMaxTestPartitions bound a "test" job submitted with an
	// admin token.
	AdminMaxTestConstraints int `toml:"AdminMaxTestConstraints" env:"SNARKD_JOBS_ADMIN_MAX_TEST_CONSTRAINTS"`
	AdminMaxTestPartitions  int `toml:"AdminMaxTestPartitions" env:"SNARKD_JOBS_ADMIN_MAX_TEST_PARTITIONS"`
}

// Bounds of the test circuit that no setting lifts (the jobs package's MaxTestConstraints and
// MaxTestPartitions are these).
const (
	TestConstraintsCeiling = 1 << 24
	TestPartitionsCeiling  = 16
)

// Defaults of the test-kind quotas.
const (
	DefaultMaxTestConstraints      = 1 << 16
	DefaultMaxTestPartitions       = 4
	DefaultAdminMaxTestConstraints = TestConstraintsCeiling
	DefaultAdminMaxTestPartitions  = TestPartitionsCeiling
	DefaultMaxTestSetups           = 4
)

// Lotus configures the lotus-miner attachment (the Lotus worker API and its callbacks).
type Lotus struct {
	// MinerAPIInfo is the miner's TOKEN:MULTIADDR (admin token); empty means no miner at start.
	MinerAPIInfo string `toml:"MinerAPIInfo" env:"SNARKD_MINER_API_INFO"`
	// WorkerURL is the address the miner dials back; empty derives it from API.ListenAddress.
	WorkerURL string `toml:"WorkerURL" env:"SNARKD_LOTUS_WORKER_URL"`
	// WorkerName is the Hostname reported in Info and in restart errors; empty uses the hostname.
	WorkerName string `toml:"WorkerName" env:"SNARKD_LOTUS_WORKER_NAME"`
	// Heartbeat is how often the miner's Session is polled.
	Heartbeat Duration `toml:"Heartbeat" env:"SNARKD_LOTUS_HEARTBEAT"`
	// ReturnRetryMin and ReturnRetryMax bound the backoff between Return* delivery attempts.
	ReturnRetryMin Duration `toml:"ReturnRetryMin" env:"SNARKD_LOTUS_RETURN_RETRY_MIN"`
	ReturnRetryMax Duration `toml:"ReturnRetryMax" env:"SNARKD_LOTUS_RETURN_RETRY_MAX"`
	// AuthCacheTTL is how long the miner's AuthVerify answer for a token is trusted.
	AuthCacheTTL Duration `toml:"AuthCacheTTL" env:"SNARKD_LOTUS_AUTH_CACHE_TTL"`
	// WorkerMode is what the worker does for the miner: "seal" (C2 and PRU2), "windowpost" or
	// "winningpost" (a PoSt worker, which Lotus keeps apart from sealing).
	WorkerMode string `toml:"WorkerMode" env:"SNARKD_LOTUS_WORKER_MODE"`
	// PoStParallelReads bounds the vanilla proofs a PoSt worker reads from storage at once.
	PoStParallelReads int `toml:"PoStParallelReads" env:"SNARKD_LOTUS_POST_PARALLEL_READS"`
	// PoStReadTimeout bounds reading one sector's vanilla proof; 0 means no limit.
	PoStReadTimeout Duration `toml:"PoStReadTimeout" env:"SNARKD_LOTUS_POST_READ_TIMEOUT"`
	// IgnoreResources reports IgnoreResources and no resource table in Info, so the miner's
	// scheduler sends every task it has and snarkd queues it; off, the MaxConcurrent* settings
	// below cap what one daemon is sent at once.
	IgnoreResources bool `toml:"IgnoreResources" env:"SNARKD_LOTUS_IGNORE_RESOURCES"`
	// MaxConcurrentC2, MaxConcurrentPRU2, MaxConcurrentWindowPoSt and MaxConcurrentWinningPoSt
	// are how many calls of each task type the miner sends this daemon at once (the resource
	// table of Info); 0 means the number of GPUs, or Jobs.Workers without GPUs.
	MaxConcurrentC2          int `toml:"MaxConcurrentC2" env:"SNARKD_LOTUS_MAX_CONCURRENT_C2"`
	MaxConcurrentPRU2        int `toml:"MaxConcurrentPRU2" env:"SNARKD_LOTUS_MAX_CONCURRENT_PRU2"`
	MaxConcurrentWindowPoSt  int `toml:"MaxConcurrentWindowPoSt" env:"SNARKD_LOTUS_MAX_CONCURRENT_WINDOW_POST"`
	MaxConcurrentWinningPoSt int `toml:"MaxConcurrentWinningPoSt" env:"SNARKD_LOTUS_MAX_CONCURRENT_WINNING_POST"`
}

// MaxConcurrentCeiling bounds the Lotus.MaxConcurrent* settings.
const MaxConcurrentCeiling = 256

// Lotus worker modes (Lotus.WorkerMode).
const (
	WorkerModeSeal        = "seal"
	WorkerModeWindowPoSt  = "windowpost"
	WorkerModeWinningPoSt = "winningpost"
)

// API configures the JSON-RPC endpoint.
type API struct {
	// ListenAddress is host:port for the HTTP server that serves /rpc/v0.
	ListenAddress string `toml:"ListenAddress" env:"SNARKD_API_LISTEN"`
	// MaxRequestBytes bounds one JSON-RPC request; a 64 GiB C1 output is about 100 MB of JSON.
	MaxRequestBytes Bytes `toml:"MaxRequestBytes" env:"SNARKD_API_MAX_REQUEST_BYTES"`
	// MaxReadRequestBytes bounds one request that carries no token granting write (no token,
	// or a read token): reads need kilobytes.
	MaxReadRequestBytes Bytes `toml:"MaxReadRequestBytes" env:"SNARKD_API_MAX_READ_REQUEST_BYTES"`
	// MaxConcurrentRequests bounds the request bodies larger than MaxReadRequestBytes that
	// are read and decoded at once.
	MaxConcurrentRequests int `toml:"MaxConcurrentRequests" env:"SNARKD_API_MAX_CONCURRENT_REQUESTS"`
	// RequireReadToken refuses requests without a valid token (HTTP 401) on /rpc/v0, /status
	// and /ui, so job metadata, proofs, status and events need a read token; off by default,
	// as in Lotus, where reads need no token. /healthz and /metrics stay open.
	RequireReadToken bool `toml:"RequireReadToken" env:"SNARKD_API_REQUIRE_READ_TOKEN"`
}

// DefaultMaxReadRequestBytes is API.MaxReadRequestBytes's default.
const DefaultMaxReadRequestBytes = 64 << 10

// DefaultMaxConcurrentRequests is API.MaxConcurrentRequests's default.
const DefaultMaxConcurrentRequests = 4

// Log configures go-log/v2.
type Log struct {
	// Level is the level of every snarkd logger: debug, info, warn, error.
	Level string `toml:"Level" env:"SNARKD_LOG_LEVEL"`
	// Format is "text" (colour on a terminal) or "json".
	Format string `toml:"Format" env:"SNARKD_LOG_FORMAT"`
}

// Prover selects how proofs are computed.
type Prover struct {
	// Backend is "auto" (CUDA when the binary has it and a GPU is visible), "cpu" or "cuda".
	Backend string `toml:"Backend" env:"SNARKD_PROVER_BACKEND"`
	// ParameterCache is the Filecoin parameter directory holding the .params and .vk files
	// under their published names; it takes the variable the Rust proofs stack uses, so one
	// directory serves lotus, curio and snarkd.
	ParameterCache string `toml:"ParameterCache" env:"FIL_PROOFS_PARAMETER_CACHE"`
	// ParameterMemoryLimit bounds the memory of loaded parameters (0: no limit); the least
	// recently used sets no proof holds are dropped when a load would exceed it.
	ParameterMemoryLimit Bytes `toml:"ParameterMemoryLimit" env:"SNARKD_PROVER_PARAMETER_MEMORY_LIMIT"`
	// Synthesis is "compiled" (witness-only synthesis, a, b, c from the circuit's matrices,
	// recorded once per shape under <repo>/circuits) or "full" (every linear combination built
	// and evaluated for each proof: several times slower, the reference path).
	Synthesis string `toml:"Synthesis" env:"SNARKD_PROVER_SYNTHESIS"`
	// MaxTestSetups bounds the distinct test-circuit setups (constraints, seed) kept, in memory
	// and under <repo>/params; the least recently used beyond it are dropped from both.
	MaxTestSetups int `toml:"MaxTestSetups" env:"SNARKD_PROVER_MAX_TEST_SETUPS"`
}

// Prover.Synthesis values.
const (
	SynthesisCompiled = "compiled"
	SynthesisFull     = "full"
)

// DefaultParameterCache is rust-fil-proofs' default parameter directory.
const DefaultParameterCache = "/var/tmp/filecoin-proof-parameters"

// Default returns the built-in configuration used when no file or override says otherwise.
func Default() Config {
	return Config{
		API: API{ListenAddress: "127.0.0.1:9810", MaxRequestBytes: 512 << 20,
			MaxReadRequestBytes: DefaultMaxReadRequestBytes, MaxConcurrentRequests: DefaultMaxConcurrentRequests},
		Log: Log{Level: "info", Format: "text"},
		Prover: Prover{Backend: "auto", ParameterCache: DefaultParameterCache, Synthesis: SynthesisCompiled,
			MaxTestSetups: DefaultMaxTestSetups},
		Jobs: Jobs{Workers: DefaultJobsWorkers, MaxPending: 1024, Retention: Duration(24 * time.Hour), DrainGrace: DefaultDrainGrace,
			MaxTestConstraints: DefaultMaxTestConstraints, MaxTestPartitions: DefaultMaxTestPartitions,
			AdminMaxTestConstraints: DefaultAdminMaxTestConstraints, AdminMaxTestPartitions: DefaultAdminMaxTestPartitions},
		Lotus: Lotus{
			Heartbeat:      Duration(10 * time.Second),
			ReturnRetryMin: Duration(time.Second),
			ReturnRetryMax: Duration(30 * time.Second),
			AuthCacheTTL:   Duration(5 * time.Minute),

			WorkerMode:        WorkerModeSeal,
			PoStParallelReads: 32,
		},
		Cuzk: Cuzk{MaxMessageBytes: MinCuzkMessageBytes},
		GPU: GPU{VRAMHeadroom: DefaultVRAMHeadroom, WorkersPerDevice: DefaultGPUWorkersPerDevice,
			SRSResidency: true},
	}
}

// Load reads <repo>/config.toml over the defaults (a missing file is not an error), then applies
// SNARKD_* variables from environ (os.Environ() format), and validates the result.
func Load(repo string, environ []string) (Config, error) {
	cfg := Default()
	path := filepath.Join(repo, FileName)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return cfg, fmt.Errorf("reading %s: %w", path, err)
	default:
		md, err := toml.Decode(string(data), &cfg)
		if err != nil {
			return cfg, fmt.Errorf("parsing %s: %w", path, err)
		}
		if und := md.Undecoded(); len(und) > 0 {
			keys := make([]string, len(und))
			for i, k := range und {
				keys[i] = k.String()
			}
			return cfg, fmt.Errorf("parsing %s: unknown setting(s) %s", path, strings.Join(keys, ", "))
		}
	}
	if err := applyEnv(&cfg, environ); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// Validate reports the first setting whose value cannot work.
func (c Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.API.ListenAddress); err != nil {
		return fmt.Errorf("API.ListenAddress %q: want host:port: %w", c.API.ListenAddress, err)
	}
	if c.API.MaxRequestBytes < 1<<20 {
		return fmt.Errorf("API.MaxRequestBytes %d: must be at least 1 MiB", c.API.MaxRequestBytes)
	}
	if c.API.MaxReadRequestBytes < 4<<10 || c.API.MaxReadRequestBytes > c.API.MaxRequestBytes {
		return fmt.Errorf("API.MaxReadRequestBytes %s: want at least 4KiB and at most API.MaxRequestBytes (%s)",
			c.API.MaxReadRequestBytes, c.API.MaxRequestBytes)
	}
	if c.API.MaxConcurrentRequests < 1 || c.API.MaxConcurrentRequests > 1024 {
		return fmt.Errorf("API.MaxConcurrentRequests %d: want 1..1024", c.API.MaxConcurrentRequests)
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error", "dpanic", "panic", "fatal":
	default:
		return fmt.Errorf("Log.Level %q: want debug, info, warn or error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		return fmt.Errorf("Log.Format %q: want text or json", c.Log.Format)
	}
	switch c.Prover.Backend {
	case "auto", "cpu", "cuda":
	default:
		return fmt.Errorf("Prover.Backend %q: want auto, cpu or cuda", c.Prover.Backend)
	}
	switch c.Prover.Synthesis {
	case SynthesisCompiled, SynthesisFull:
	default:
		return fmt.Errorf("Prover.Synthesis %q: want %s or %s", c.Prover.Synthesis, SynthesisCompiled, SynthesisFull)
	}
	if c.Prover.ParameterCache == "" {
		return fmt.Errorf("Prover.ParameterCache: empty; want the Filecoin parameter directory (default %s)", DefaultParameterCache)
	}
	if c.Jobs.Workers < 1 || c.Jobs.Workers > 256 {
		return fmt.Errorf("Jobs.Workers %d: want 1..256", c.Jobs.Workers)
	}
	if c.Jobs.MaxPending < 1 {
		return fmt.Errorf("Jobs.MaxPending %d: want at least 1", c.Jobs.MaxPending)
	}
	if c.Jobs.Retention < Duration(time.Minute) {
		return fmt.Errorf("Jobs.Retention %s: want at least 1m", c.Jobs.Retention)
	}
	if c.Jobs.DrainGrace < 0 {
		return fmt.Errorf("Jobs.DrainGrace %s: want 0 (hand running jobs back at once) or more", c.Jobs.DrainGrace)
	}
	if err := c.Jobs.validateTestQuotas(); err != nil {
		return err
	}
	if c.Prover.MaxTestSetups < 1 || c.Prover.MaxTestSetups > 1024 {
		return fmt.Errorf("Prover.MaxTestSetups %d: want 1..1024", c.Prover.MaxTestSetups)
	}
	if c.Lotus.WorkerURL != "" && !strings.HasPrefix(c.Lotus.WorkerURL, "http://") && !strings.HasPrefix(c.Lotus.WorkerURL, "https://") {
		return fmt.Errorf("Lotus.WorkerURL %q: want http://host:port/rpc/v0", c.Lotus.WorkerURL)
	}
	for name, d := range map[string]Duration{"Lotus.Heartbeat": c.Lotus.Heartbeat, "Lotus.ReturnRetryMin": c.Lotus.ReturnRetryMin,
		"Lotus.ReturnRetryMax": c.Lotus.ReturnRetryMax, "Lotus.AuthCacheTTL": c.Lotus.AuthCacheTTL} {
		if d <= 0 {
			return fmt.Errorf("%s %s: must be positive", name, d)
		}
	}
	if c.Lotus.ReturnRetryMax < c.Lotus.ReturnRetryMin {
		return fmt.Errorf("Lotus.ReturnRetryMax %s is below Lotus.ReturnRetryMin %s", c.Lotus.ReturnRetryMax, c.Lotus.ReturnRetryMin)
	}
	switch c.Lotus.WorkerMode {
	case WorkerModeSeal, WorkerModeWindowPoSt, WorkerModeWinningPoSt:
	default:
		return fmt.Errorf("Lotus.WorkerMode %q: want %s, %s or %s", c.Lotus.WorkerMode, WorkerModeSeal, WorkerModeWindowPoSt, WorkerModeWinningPoSt)
	}
	if c.Lotus.PoStParallelReads < 1 || c.Lotus.PoStParallelReads > 4096 {
		return fmt.Errorf("Lotus.PoStParallelReads %d: want 1..4096", c.Lotus.PoStParallelReads)
	}
	if c.Lotus.PoStReadTimeout < 0 {
		return fmt.Errorf("Lotus.PoStReadTimeout %s: must not be negative (0 means no limit)", c.Lotus.PoStReadTimeout)
	}
	for _, s := range []struct {
		key string
		v   int
	}{{"Lotus.MaxConcurrentC2", c.Lotus.MaxConcurrentC2}, {"Lotus.MaxConcurrentPRU2", c.Lotus.MaxConcurrentPRU2},
		{"Lotus.MaxConcurrentWindowPoSt", c.Lotus.MaxConcurrentWindowPoSt}, {"Lotus.MaxConcurrentWinningPoSt", c.Lotus.MaxConcurrentWinningPoSt}} {
		if s.v < 0 || s.v > MaxConcurrentCeiling {
			return fmt.Errorf("%s %d: want 0 (the number of GPUs, or Jobs.Workers without GPUs) or 1..%d", s.key, s.v, MaxConcurrentCeiling)
		}
	}
	if err := c.GPU.Validate(); err != nil {
		return err
	}
	return c.Cuzk.Validate()
}

// validateTestQuotas checks the test-kind quotas: within the test circuit's ceilings, and an
// admin token's at least a write token's.
func (j Jobs) validateTestQuotas() error {
	for _, q := range []struct {
		name      string
		v, lo, hi int
	}{
		{"Jobs.MaxTestConstraints", j.MaxTestConstraints, 1, TestConstraintsCeiling},
		{"Jobs.MaxTestPartitions", j.MaxTestPartitions, 1, TestPartitionsCeiling},
		{"Jobs.AdminMaxTestConstraints", j.AdminMaxTestConstraints, 1, TestConstraintsCeiling},
		{"Jobs.AdminMaxTestPartitions", j.AdminMaxTestPartitions, 1, TestPartitionsCeiling},
	} {
		if q.v < q.lo || q.v > q.hi {
			return fmt.Errorf("%s %d: want %d..%d", q.name, q.v, q.lo, q.hi)
		}
	}
	if j.AdminMaxTestConstraints < j.MaxTestConstraints {
		return fmt.Errorf("Jobs.AdminMaxTestConstraints %d is below Jobs.MaxTestConstraints %d", j.AdminMaxTestConstraints, j.MaxTestConstraints)
	}
	if j.AdminMaxTestPartitions < j.MaxTestPartitions {
		return fmt.Errorf("Jobs.AdminMaxTestPartitions %d is below Jobs.MaxTestPartitions %d", j.AdminMaxTestPartitions, j.MaxTestPartitions)
	}
	return nil
}

// Validate checks the cuzk service settings; an empty ListenAddress leaves the rest unchecked
// only where they cannot matter.
func (c Cuzk) Validate() error {
	if a := c.ListenAddress; a != "" {
		if path, ok := strings.CutPrefix(a, "unix://"); ok {
			if path == "" || !filepath.IsAbs(path) {
				return fmt.Errorf("Cuzk.ListenAddress %q: want unix:///absolute/path.sock", a)
			}
		} else if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("Cuzk.ListenAddress %q: want unix:///path.sock or host:port: %w", a, err)
		}
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return fmt.Errorf("Cuzk.TLSCertFile and Cuzk.TLSKeyFile: set both or neither")
	}
	if c.TLSClientCAFile != "" && c.TLSCertFile == "" {
		return fmt.Errorf("Cuzk.TLSClientCAFile needs Cuzk.TLSCertFile and Cuzk.TLSKeyFile")
	}
	if strings.ContainsAny(c.Token, " \t\r\n") {
		return fmt.Errorf("Cuzk.Token: must not contain whitespace")
	}
	if c.MaxMessageBytes < MinCuzkMessageBytes {
		return fmt.Errorf("Cuzk.MaxMessageBytes %d: must be at least 256 MiB (Curio sends up to 256 MiB)", c.MaxMessageBytes)
	}
	return nil
}

// EnvVars lists every variable Load understands (SNARKD_* and FIL_PROOFS_PARAMETER_CACHE), with its TOML path.
func EnvVars() map[string]string {
	out := map[string]string{}
	walkEnv(reflect.ValueOf(&Config{}).Elem(), "", func(_ reflect.Value, key, env string) error {
		out[env] = key
		return nil
	})
	return out
}

func applyEnv(cfg *Config, environ []string) error {
	vals := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && (strings.HasPrefix(k, "SNARKD_") || k == "FIL_PROOFS_PARAMETER_CACHE") {
			vals[k] = v
		}
	}
	return walkEnv(reflect.ValueOf(cfg).Elem(), "", func(f reflect.Value, key, env string) error {
		v, ok := vals[env]
		if !ok {
			return nil
		}
		if err := setField(f, v); err != nil {
			return fmt.Errorf("environment %s (%s): %w", env, key, err)
		}
		return nil
	})
}

func walkEnv(v reflect.Value, prefix string, fn func(f reflect.Value, key, env string) error) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
		key := prefix + name
		if sf.Type.Kind() == reflect.Struct {
			if err := walkEnv(v.Field(i), key+".", fn); err != nil {
				return err
			}
			continue
		}
		if env := sf.Tag.Get("env"); env != "" {
			if err := fn(v.Field(i), key, env); err != nil {
				return err
			}
		}
	}
	return nil
}

func setField(f reflect.Value, s string) error {
	switch p := f.Addr().Interface().(type) {
	case *Bytes:
		return p.UnmarshalText([]byte(s))
	case *Duration:
		return p.UnmarshalText([]byte(s))
	case *string:
		*p = s
	case *bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		*p = b
	case *int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		*p = n
	case *[]int: // comma-separated; empty means none
		var out []int
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			n, err := strconv.Atoi(f)
			if err != nil {
				return fmt.Errorf("%q: want comma-separated integers", s)
			}
			out = append(out, n)
		}
		*p = out
	default:
		return fmt.Errorf("unsupported setting type %s", f.Type())
	}
	return nil
}

// WriteDefault writes the commented default config.toml (DefaultFile) into repo unless one
// exists already.
func WriteDefault(repo string) (bool, error) {
	path := filepath.Join(repo, FileName)
	if _, err := os.Stat(path); err == nil {
		return false, nil
	}
	data, err := DefaultFile()
	if err != nil {
		return false, fmt.Errorf("rendering default config: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, nil
}
