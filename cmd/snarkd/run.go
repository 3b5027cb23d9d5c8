package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	logging "github.com/ipfs/go-log/v2"
	"github.com/urfave/cli/v2"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/cuzk"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/plugin"
	"github.com/snarkd/snarkd/prover"
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
			&cli.StringFlag{Name: "miner-api-info", Usage: "register with this lotus-miner, TOKEN:MULTIADDR with an admin token (overrides Lotus.MinerAPIInfo)"},
			&cli.StringFlag{Name: "worker-url", Usage: "URL the miner dials back, http://host:port/rpc/v0 (overrides Lotus.WorkerURL)"},
			&cli.StringFlag{Name: "cuzk-listen", Usage: "serve the cuzk.v1 gRPC proving API for Curio on unix:///path.sock or host:port (overrides Cuzk.ListenAddress)"},
			&cli.StringFlag{Name: "worker-mode", Usage: "what the daemon is to a lotus-miner: seal, windowpost or winningpost (overrides Lotus.WorkerMode)"},
			&cli.StringFlag{Name: "simulate-gpus", Usage: "prove on simulated GPUs of these sizes, e.g. 2x16GiB or 1x80GB,2x24GiB; the arithmetic runs on the CPU (overrides GPU.Simulate)"},
			&cli.StringFlag{Name: "vram-headroom", Usage: "device memory left free on every GPU for other processes, e.g. 512MiB, 0 for none (overrides GPU.VRAMHeadroom)"},
			&cli.IntFlag{Name: "gpu-workers", Usage: "partitions in flight on one GPU (overrides GPU.WorkersPerDevice)"},
		},
		Action: func(c *cli.Context) error {
			repo, err := repoPath(c)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(repo, 0o700); err != nil {
				return fmt.Errorf("creating repo %s: %w", repo, err)
			}
			if _, err := config.WriteDefault(repo); err != nil {
				return err
			}
			cfg, err := loadConfig(c, repo)
			if err != nil {
				return err
			}
			if v := c.String("listen"); v != "" {
				cfg.API.ListenAddress = v
			}
			if v := c.String("backend"); v != "" {
				cfg.Prover.Backend = v
			}
			if v := c.String("miner-api-info"); v != "" {
				cfg.Lotus.MinerAPIInfo = v
			}
			if v := c.String("worker-url"); v != "" {
				cfg.Lotus.WorkerURL = v
			}
			if v := c.String("cuzk-listen"); v != "" {
				cfg.Cuzk.ListenAddress = v
			}
			if v := c.String("worker-mode"); v != "" {
				cfg.Lotus.WorkerMode = v
			}
			if v := c.String("simulate-gpus"); v != "" {
				cfg.GPU.Simulate = v
			}
			if c.IsSet("vram-headroom") {
				b, err := config.ParseBytes(c.String("vram-headroom"))
				if err != nil {
					return fmt.Errorf("--vram-headroom: %w", err)
				}
				cfg.GPU.VRAMHeadroom = b
			}
			if c.IsSet("gpu-workers") {
				cfg.GPU.WorkersPerDevice = c.Int("gpu-workers")
			}
			if err := cfg.Validate(); err != nil {
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
			opts := plugin.Options{Repo: repo, BackendName: backend, Shutdown: stop}
			if backend != "cpu" {
				sched, err := newGPUScheduler(cfg.GPU, backend, &opts)
				if err != nil {
					return err
				}
				// Runs after Serve has closed the daemon (and its jobs): queued partitions fail,
				// running ones are cancelled, resident vectors and pinned buffers are freed.
				defer sched.Close()
			}
			daemon, err := plugin.Open(cfg, opts)
			if err != nil {
				return err
			}

			ln, err := net.Listen("tcp", cfg.API.ListenAddress)
			if err != nil {
				daemon.Close()
				return fmt.Errorf("listening on %s: %w", cfg.API.ListenAddress, err)
			}
			addr := ln.Addr().(*net.TCPAddr)
			info := apiInfo(addr)
			admin, err := daemon.Secret().NewToken(rpcapi.AllPermissions)
			if err == nil {
				err = os.WriteFile(filepath.Join(repo, tokenFile), []byte(admin+"\n"), 0o600)
			}
			if err == nil {
				err = os.WriteFile(filepath.Join(repo, apiFile), []byte(info+"\n"), 0o600)
			}
			if err != nil {
				ln.Close()
				daemon.Close()
				return fmt.Errorf("writing API endpoint files: %w", err)
			}
			defer os.Remove(filepath.Join(repo, apiFile))
			writePerms, _ := rpcapi.PermsUpTo(rpcapi.PermWrite)
			writeTok, err := daemon.Secret().NewToken(writePerms)
			if err != nil {
				ln.Close()
				daemon.Close()
				return err
			}
			if cfg.Cuzk.ListenAddress != "" {
				cz, err := cuzk.StartDaemon(cfg.Cuzk, daemon)
				if err != nil {
					ln.Close()
					daemon.Close()
					return err
				}
				defer cz.Stop()
				fmt.Fprintf(c.App.Writer, "cuzk gRPC proving API for Curio on %s\n", cz.Addr())
			}

			if !addr.IP.IsLoopback() {
				log.Warnw("API listening on a non-loopback address; anyone who can reach it can read job metadata without a token (proving needs a write token)", "listen", addr.String())
			}
			log.Infow("snarkd starting", "version", buildinfo.String(), "repo", repo, "backend", backend,
				"native", gpu.NativeLib, "listen", addr.String())
			fmt.Fprintf(c.App.Writer, "snarkd %s listening on http://%s%s (backend %s)\n",
				buildinfo.String(), addr, plugin.RPCPath, opts.BackendName)
			fmt.Fprintf(c.App.Writer, "SNARKD_API_INFO=%s:%s\n", writeTok, info)
			fmt.Fprintf(c.App.Writer, "(a write token; `snarkd auth api-info --perm admin` prints an admin one, and %s holds one for this host's CLI)\n",
				filepath.Join(repo, tokenFile))

			return daemon.Serve(ctx, ln, 30*time.Second)
		},
	}
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
		devs, err = gpu.SimulatedDevices(g.Simulate)
		if err != nil {
			return nil, fmt.Errorf("GPU.Simulate: %w", err)
		}
	} else if devs, err = gpu.HardwareDevices(); err != nil {
		return nil, fmt.Errorf("opening the GPUs: %w", err)
	}
	if devs, err = selectDevices(devs, g.Devices); err != nil {
		return nil, err
	}
	var sizer gpu.Sizer // nil: the model, which is what simulated devices run with
	if backend != backendSimulated {
		sizer = gpu.KernelSizer(devs[0].Info().Ordinal)
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

// logGPUEvent logs the scheduler's admissions (debug) and unpredicted out-of-memory (warn).
func logGPUEvent(e gpu.Event) {
	switch e.Type {
	case gpu.EventAdmitted:
		log.Debugw("partition admitted", "job", e.JobID, "partition", e.Index, "device", e.Device, "worker", e.Worker,
			"tier", e.Tier.String(), "srs_resident", e.SRSResident, "compact_ntt", e.CompactNTT, "bytes", gpu.FormatBytes(e.Bytes), "waited", e.Waited)
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
		if !gpu.CUDAEnabled {
			return "", fmt.Errorf("Prover.Backend is cuda but %w", gpu.ErrNoCUDA)
		}
		n, err := gpu.DeviceCount()
		if err != nil {
			return "", fmt.Errorf("Prover.Backend is cuda: %w", err)
		}
		if n == 0 {
			return "", fmt.Errorf("Prover.Backend is cuda but no CUDA device is visible")
		}
		return "cuda", nil
	default: // auto
		if !gpu.CUDAEnabled {
			return "cpu", nil
		}
		n, err := gpu.DeviceCount()
		if err != nil || n == 0 {
			log.Warnw("no usable CUDA device, proving on the CPU", "err", err)
			return "cpu", nil
		}
		return "cuda", nil
	}
}
