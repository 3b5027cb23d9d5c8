package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	logging "github.com/ipfs/go-log/v2"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/gpu/cuda"
	"github.com/snarkd/snarkd/gpu/sim"
	"github.com/snarkd/snarkd/internal/cores"
	"github.com/snarkd/snarkd/plugin"
	"github.com/snarkd/snarkd/plugin/cuzk"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/repolock"
	"github.com/snarkd/snarkd/rpcapi"
)

var log = logging.Logger("snarkd/cmd")

// apiFile is the repo file holding the daemon's API endpoint, for CLI clients on the same host.
const apiFile = "api"

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "start the proving daemon",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Usage: "host:port for the JSON-RPC API (overrides API.ListenAddress)"},
			&cli.StringFlag{Name: "backend", Usage: "proving backend: auto, cpu or cuda (overrides Prover.Backend)"},
			&cli.StringFlag{Name: "miner-api-info", Usage: "register with this lotus-miner, TOKEN:MULTIADDR with an admin token (overrides Lotus.MinerAPIInfo, SNARKD_MINER_API_INFO and MINER_API_INFO)"},
			&cli.StringFlag{Name: "worker-url", Usage: "URL the miner dials back, http://host:port/rpc/v0 (overrides Lotus.WorkerURL; default: the listen address, or with --listen 0.0.0.0:PORT this host's address on the connection to the miner)"},
			&cli.StringFlag{Name: "cuzk-listen", Usage: "serve the cuzk.v1 gRPC proving API for Curio on unix:///path.sock or host:port (overrides Cuzk.ListenAddress)"},
			&cli.StringFlag{Name: "worker-mode", Usage: "what the daemon is to a lotus-miner: seal, windowpost or winningpost (overrides Lotus.WorkerMode)"},
			&cli.BoolFlag{Name: "windowpost", Usage: "lotus-worker's name for --worker-mode windowpost"},
			&cli.BoolFlag{Name: "winningpost", Usage: "lotus-worker's name for --worker-mode winningpost"},
			&cli.StringFlag{Name: "simulate-gpus", Usage: "prove on simulated GPUs of these sizes, e.g. 2x16GiB or 1x80GB,2x24GiB; the arithmetic runs on the CPU (overrides GPU.Simulate)"},
			&cli.StringFlag{Name: "vram-headroom", Usage: "device memory left free on every GPU for other processes, e.g. 512MiB, 0 for none (overrides GPU.VRAMHeadroom)"},
			&cli.IntFlag{Name: "gpu-workers", Usage: "partitions in flight on one GPU (overrides GPU.WorkersPerDevice)"},
		},
		Action: runDaemon,
	}
}

// runOverride is a flag of `snarkd run` that overrides a setting.
type runOverride struct {
	flag  string
	apply func(cfg *config.Config, c *cli.Context) error
}

// stringOverride is a string flag that replaces the setting it points at.
func stringOverride(flag string, setting func(*config.Config) *string) runOverride {
	return runOverride{flag, func(cfg *config.Config, c *cli.Context) error {
		*setting(cfg) = c.String(flag)
		return nil
	}}
}

// postOverride is lotus-worker's boolean flag for the PoSt worker mode of the same name:
// true sets Lotus.WorkerMode (postFlags has refused contradicting flags), false changes nothing.
func postOverride(mode string) runOverride {
	return runOverride{mode, func(cfg *config.Config, c *cli.Context) error {
		if c.Bool(mode) {
			cfg.Lotus.WorkerMode = mode
		}
		return nil
	}}
}

// runOverrides are the flags of `snarkd run` that override settings, in the order they apply.
var runOverrides = []runOverride{
	stringOverride("listen", func(c *config.Config) *string { return &c.API.ListenAddress }),
	stringOverride("backend", func(c *config.Config) *string { return &c.Prover.Backend }),
	stringOverride("miner-api-info", func(c *config.Config) *string { return &c.Lotus.MinerAPIInfo }),
	stringOverride("worker-url", func(c *config.Config) *string { return &c.Lotus.WorkerURL }),
	stringOverride("cuzk-listen", func(c *config.Config) *string { return &c.Cuzk.ListenAddress }),
	stringOverride("worker-mode", func(c *config.Config) *string { return &c.Lotus.WorkerMode }),
	postOverride(config.WorkerModeWindowPoSt),
	postOverride(config.WorkerModeWinningPoSt),
	stringOverride("simulate-gpus", func(c *config.Config) *string { return &c.GPU.Simulate }),
	{"vram-headroom", func(cfg *config.Config, c *cli.Context) error {
		b, err := config.ParseBytes(c.String("vram-headroom"))
		cfg.GPU.VRAMHeadroom = b
		return err
	}},
	{"gpu-workers", func(cfg *config.Config, c *cli.Context) error {
		cfg.GPU.WorkersPerDevice = c.Int("gpu-workers")
		return nil
	}},
}

// runConfig is the daemon's configuration: the repo's config.toml, SNARKD_* variables and
// lotus-worker's MINER_API_INFO (whose errors name the setting), then the flags, each checked on its own so that an error
// names the flag. The repo need not exist yet.
func runConfig(c *cli.Context, repo string) (config.Config, error) {
	cfg, err := loadConfig(c, repo)
	if err != nil {
		return cfg, err
	}
	minerFrom := "config.toml Lotus.MinerAPIInfo"
	if lotusInfo := os.Getenv(lotusMinerAPIInfoEnv); lotusInfo != "" {
		// lotus-worker's variable, so that a worker's environment file serves snarkd as is; it
		// sits beside SNARKD_MINER_API_INFO in the environment layer, below it.
		if os.Getenv(snarkdMinerAPIInfoEnv) == "" {
			cfg.Lotus.MinerAPIInfo, minerFrom = lotusInfo, lotusMinerAPIInfoEnv
		} else if !c.IsSet("miner-api-info") {
			log.Infow("both "+snarkdMinerAPIInfoEnv+" and "+lotusMinerAPIInfoEnv+" are set: using "+snarkdMinerAPIInfoEnv,
				"ignored", lotusMinerAPIInfoEnv)
		}
	}
	if minerFrom != lotusMinerAPIInfoEnv && os.Getenv(snarkdMinerAPIInfoEnv) != "" {
		minerFrom = snarkdMinerAPIInfoEnv
	}
	// --miner-api-info replaces whatever the file or the environment named (and is checked
	// below), so a stale variable does not stop a daemon started with the flag.
	if !c.IsSet("miner-api-info") {
		if err := checkMinerAPIInfo(cfg.Lotus.MinerAPIInfo); err != nil {
			if minerFrom == lotusMinerAPIInfoEnv {
				err = fmt.Errorf("%s: %w", lotusMinerAPIInfoEnv, err)
			}
			return cfg, err
		}
	}
	if err := postFlags(c); err != nil {
		return cfg, err
	}
	for _, o := range runOverrides {
		if !c.IsSet(o.flag) {
			continue
		}
		err := o.apply(&cfg, c)
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil {
			err = checkMinerAPIInfo(cfg.Lotus.MinerAPIInfo)
		}
		if err != nil {
			return cfg, usagef("--%s: %w", o.flag, err)
		}
	}
	if c.IsSet("miner-api-info") {
		minerFrom = "--miner-api-info"
	}
	if cfg.Lotus.MinerAPIInfo != "" {
		log.Infow("lotus-miner to register with", "from", minerFrom)
	}
	return cfg, nil
}

// The environment variables that name the lotus-miner: snarkd's (Lotus.MinerAPIInfo) and
// lotus-worker's, which SNARKD_MINER_API_INFO overrides when both are set.
const (
	snarkdMinerAPIInfoEnv = "SNARKD_MINER_API_INFO"
	lotusMinerAPIInfoEnv  = "MINER_API_INFO"
)

// postFlags refuses contradictory uses of lotus-worker's booleans for the PoSt worker modes
// (--windowpost, --winningpost, named as the modes they select): both at once, or one beside a
// --worker-mode that names another mode.
func postFlags(c *cli.Context) error {
	var given []string
	for _, mode := range []string{config.WorkerModeWindowPoSt, config.WorkerModeWinningPoSt} {
		if c.Bool(mode) {
			given = append(given, mode)
		}
	}
	switch {
	case len(given) == 2:
		return usagef("--windowpost and --winningpost contradict each other: a daemon is one kind of PoSt worker " +
			"(Lotus.WorkerMode); run one daemon per mode")
	case len(given) == 1 && c.IsSet("worker-mode") && c.String("worker-mode") != given[0]:
		return usagef("--%s and --worker-mode %s contradict each other: --%s is --worker-mode %s",
			given[0], c.String("worker-mode"), given[0], given[0])
	}
	return nil
}

// checkMinerAPIInfo parses Lotus.MinerAPIInfo the way the attachment will, so that a value
// that cannot work stops the daemon before it starts.
func checkMinerAPIInfo(s string) error {
	if s == "" {
		return nil
	}
	info, err := rpcapi.ParseAPIInfo(s)
	if err == nil {
		_, err = info.URL("http")
	}
	if err != nil {
		return fmt.Errorf("Lotus.MinerAPIInfo: %w (`lotus-miner auth api-info --perm admin` prints it)", err)
	}
	return nil
}

// runDaemon is `snarkd run`. Every flag and setting is checked before the repo is touched; the
// listening line and SNARKD_API_INFO are printed only once the daemon is about to answer.
func runDaemon(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("run takes no arguments, got %q (flags go before them: --help lists them)", c.Args().Slice())
	}
	repo, err := repoPath(c)
	if err != nil {
		return err
	}
	cfg, err := runConfig(c, repo)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(repo, 0o700); err != nil {
		return fmt.Errorf("creating repo %s: %w", repo, err)
	}
	lock, err := repolock.Acquire(repo)
	if err != nil {
		return err
	}
	defer lock.Release()
	// Holding the lock, any api file is a killed daemon's: clients must not dial it meanwhile.
	apiPath := filepath.Join(repo, apiFile)
	if err := os.Remove(apiPath); err == nil {
		log.Infow("removed the api file a previous daemon left behind", "file", apiPath)
	}
	defer os.Remove(apiPath)
	if _, err := config.WriteDefault(repo); err != nil {
		return err
	}
	backend := backendSimulated
	if cfg.GPU.Simulate != "" {
		if cfg.Prover.Backend != "auto" {
			log.Warnw("GPU.Simulate is set: proving on simulated GPUs, not on the configured backend",
				"backend", cfg.Prover.Backend, "simulate", cfg.GPU.Simulate)
		}
	} else if backend, err = resolveBackend(cfg.Prover.Backend); err != nil {
		return err
	}

	ctx, stop := context.WithCancel(c.Context)
	defer stop()
	// Shutdown (Filecoin.Shutdown) is left to the daemon: it drains as at a signal.
	opts := plugin.Options{Repo: repo, BackendName: backend}
	if backend != "cpu" {
		sched, err := newGPUScheduler(cfg.GPU, backend, &opts)
		if err != nil {
			return err
		}
		// Runs after Serve has closed the daemon (and its jobs): queued partitions fail,
		// running ones are cancelled, resident vectors and pinned buffers are freed.
		defer sched.Close()
	}
	var (
		daemon *plugin.Daemon
		cuzkOn string
	)
	opts.Ready = func(a net.Addr) error {
		return announce(c, cfg, announcement{repo: repo, backend: backend, lock: lock, daemon: daemon, addr: a.(*net.TCPAddr), cuzk: cuzkOn})
	}
	daemon, err = plugin.Open(cfg, opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.API.ListenAddress)
	if err != nil {
		daemon.Close()
		return fmt.Errorf("listening on %s: %w", cfg.API.ListenAddress, err)
	}
	if cfg.Cuzk.ListenAddress != "" {
		cz, err := cuzk.StartDaemon(cfg.Cuzk, daemon)
		if err != nil {
			ln.Close()
			daemon.Close()
			return err
		}
		defer cz.Stop()
		cuzkOn = fmt.Sprint(cz.Addr())
	}
	// The first signal cancels ctx, which makes Serve drain; a second one skips the rest of
	// the drain's grace.
	served := make(chan struct{})
	defer close(served)
	go func() {
		for {
			select {
			case s := <-repeatedStop:
				log.Warnw("second stop signal", "signal", s.String())
				daemon.Stop()
			case <-served:
				return
			}
		}
	}()
	return daemon.Serve(ctx, ln, 30*time.Second)
}

// announcement is what announce reports.
type announcement struct {
	repo, backend string
	lock          *repolock.Lock
	daemon        *plugin.Daemon
	addr          *net.TCPAddr
	cuzk          string // the cuzk service's address; empty when it is off
}

// announce runs when the daemon is about to answer on addr: it writes the api and token files
// for the local CLI, records the address in the repo lock, and prints the endpoint and the API
// info string (the lines scripts wait for come last).
func announce(c *cli.Context, cfg config.Config, a announcement) error {
	repo, daemon, addr := a.repo, a.daemon, a.addr
	info := apiInfo(addr)
	url := fmt.Sprintf("http://%s%s", addr, plugin.RPCPath)
	admin, err := daemon.Secret().NewToken(rpcapi.AllPermissions)
	if err == nil {
		err = os.WriteFile(filepath.Join(repo, tokenFile), []byte(admin+"\n"), 0o600)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(repo, apiFile), []byte(info+"\n"), 0o600)
	}
	if err == nil {
		err = a.lock.SetListen(url)
	}
	if err != nil {
		return fmt.Errorf("writing API endpoint files: %w", err)
	}
	writePerms, _ := rpcapi.PermsUpTo(rpcapi.PermWrite)
	writeTok, err := daemon.Secret().NewToken(writePerms)
	if err != nil {
		return err
	}
	if !addr.IP.IsLoopback() && !cfg.API.RequireReadToken {
		log.Warnw("API listening on a non-loopback address; anyone who can reach it can read job metadata and proofs without a token (proving needs a write token; API.RequireReadToken makes reads need one too)", "listen", addr.String())
	}
	w := c.App.Writer
	if mode := cfg.Lotus.WorkerMode; mode != config.WorkerModeSeal {
		if st, err := daemon.Prover().Status(c.Context); err == nil && st.Miner == nil {
			log.Warnw("Lotus PoSt worker without a lotus-miner", "mode", mode)
			fmt.Fprintf(w, "no lotus-miner attached: as a %s worker this daemon gets no PoSt work until one is "+
				"(`snarkd worker connect --miner-api-info TOKEN:MULTIADDR`, or start it with --miner-api-info)\n", mode)
		}
	}
	if a.cuzk != "" {
		fmt.Fprintf(w, "cuzk gRPC proving API for Curio on %s\n", a.cuzk)
	}
	log.Infow("snarkd starting", "version", buildinfo.String(), "repo", repo, "backend", a.backend,
		"native", cuda.NativeLib, "listen", addr.String(), "go_memory_limit", gpu.FormatBytes(memLimit), "memory_limit_from", memLimitSource,
		"compute_goroutines", cores.N(), "gomaxprocs", runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "snarkd %s listening on %s (backend %s)\n", buildinfo.String(), url, a.backend)
	fmt.Fprintf(w, "SNARKD_API_INFO=%s:%s\n", writeTok, info)
	fmt.Fprintf(w, "(a write token; `snarkd auth api-info --perm admin` prints an admin one, and %s holds one for this host's CLI)\n",
		filepath.Join(repo, tokenFile))
	return nil
}

// apiInfo renders the endpoint as a Lotus-style multiaddr, e.g. /ip4/127.0.0.1/tcp/9810/http.
func apiInfo(addr *net.TCPAddr) string {
	proto := "ip4"
	ip := addr.IP
	if ip.To4() == nil {
		proto = "ip6"
	}
	if ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
		proto = "ip4"
	}
	return fmt.Sprintf("/%s/%s/tcp/%s/http", proto, ip, strconv.Itoa(addr.Port))
}

// backendSimulated is the backend name of --simulate-gpus (GPU.Simulate).
const backendSimulated = "simulated"

// newGPUScheduler opens the GPUs of backend ("cuda": the hardware devices; "simulated": those
// of g.Simulate), keeps the ones g.Devices lists, starts the partition scheduler over them and
// fills opts with the GPU backend, its status and metrics. The caller closes the scheduler.
func newGPUScheduler(g config.GPU, backend string, opts *plugin.Options) (*gpu.Scheduler, error) {
	var (
		devs []gpu.Device
		err  error
	)
	if backend == backendSimulated {
		devs, err = sim.Devices(g.Simulate)
		if err != nil {
			return nil, fmt.Errorf("GPU.Simulate: %w", err)
		}
	} else if devs, err = cuda.HardwareDevices(); err != nil {
		return nil, fmt.Errorf("opening the GPUs: %w", err)
	}
	if devs, err = selectDevices(devs, g.Devices); err != nil {
		return nil, err
	}
	var sizer gpu.Sizer // nil: the model, which is what simulated devices run with
	if backend != backendSimulated {
		sizer = cuda.KernelSizer(devs[0].Info().Ordinal)
	}
	metrics := plugin.NewGPUMetrics()
	sched, err := gpu.NewScheduler(gpu.Config{
		Devices: devs, WorkersPerDevice: g.WorkersPerDevice, Sizer: sizer,
		Allocator:    gpu.AllocatorConfig{Headroom: uint64(g.VRAMHeadroom), NoHeadroom: g.VRAMHeadroom == 0},
		PinnedBudget: uint64(g.PinnedBudget), SRSResidency: g.SRSResidency,
		Metrics: metrics, OnEvent: logGPUEvent,
	})
	if err != nil {
		return nil, fmt.Errorf("starting the GPU scheduler: %w", err)
	}
	st := sched.Status()
	for _, d := range st.Devices {
		opts.GPUs = append(opts.GPUs, d.Info.Name)
		log.Infow("GPU", "device", d.Info.String(), "headroom", gpu.FormatBytes(d.Memory.Headroom),
			"others", gpu.FormatBytes(d.Memory.Others), "workers", len(d.Workers))
	}
	log.Infow("GPU partition prover", "backend", backend, "devices", len(devs), "workers_per_device", g.WorkersPerDevice,
		"vram_headroom", g.VRAMHeadroom.String(), "pinned_budget", gpu.FormatBytes(st.Pinned.Budget), "srs_residency", g.SRSResidency)
	opts.Backend = prover.NewGPUBackend(sched, backend)
	opts.GPUStatus = sched.Status
	opts.GPUMetrics = metrics
	return sched, nil
}

// selectDevices keeps the devices whose ordinals want lists, in want's order; empty want keeps
// every device.
func selectDevices(devs []gpu.Device, want []int) ([]gpu.Device, error) {
	if len(devs) == 0 {
		return nil, errors.New("no GPU to prove on")
	}
	if len(want) == 0 {
		return devs, nil
	}
	byOrdinal := map[int]gpu.Device{}
	var have []int
	for _, d := range devs {
		o := d.Info().Ordinal
		byOrdinal[o] = d
		have = append(have, o)
	}
	out := make([]gpu.Device, 0, len(want))
	for _, o := range want {
		d, ok := byOrdinal[o]
		if !ok {
			return nil, fmt.Errorf("GPU.Devices %v: there is no GPU %d (devices: %v)", want, o, have)
		}
		out = append(out, d)
	}
	return out, nil
}

// logGPUEvent logs the scheduler's admissions and proved partitions (debug) and unpredicted
// out-of-memory (warn).
func logGPUEvent(e gpu.Event) {
	switch e.Type {
	case gpu.EventAdmitted:
		log.Debugw("partition admitted", "job", e.JobID, "partition", e.Index, "device", e.Device, "worker", e.Worker,
			"tier", e.Tier.String(), "srs_resident", e.SRSResident, "compact_ntt", e.CompactNTT, "bytes", gpu.FormatBytes(e.Bytes), "waited", e.Waited)
	case gpu.EventDone:
		t := e.Times
		log.Debugw("partition proved", "job", e.JobID, "partition", e.Index, "device", e.Device, "worker", e.Worker,
			"queued", t.Queued, "memory_wait", t.Memory, "kernel_wait", t.KernelWait, "kernels", t.Kernels, "run", t.Run)
	case gpu.EventAllocFailed:
		log.Warnw("GPU allocation failed despite admission (another process took memory); retrying with a smaller plan",
			"job", e.JobID, "partition", e.Index, "device", e.Device, "tier", e.Tier.String(), "err", e.Err)
	}
}

// resolveBackend turns the configured backend into the one this binary and host can run.
func resolveBackend(want string) (string, error) {
	switch want {
	case "cpu":
		return "cpu", nil
	case "cuda":
		if !cuda.CUDAEnabled {
			return "", fmt.Errorf("Prover.Backend is cuda but %w", cuda.ErrNoCUDA)
		}
		n, err := cuda.DeviceCount()
		if err != nil {
			return "", fmt.Errorf("Prover.Backend is cuda: %w", err)
		}
		if n == 0 {
			return "", fmt.Errorf("Prover.Backend is cuda but no CUDA device is visible")
		}
		return "cuda", nil
	default: // auto
		if !cuda.CUDAEnabled {
			return "cpu", nil
		}
		n, err := cuda.DeviceCount()
		if err != nil || n == 0 {
			log.Warnw("no usable CUDA device, proving on the CPU", "err", err)
			return "cpu", nil
		}
		return "cuda", nil
	}
}
