package main

import (
	"context"
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
			if err := cfg.Validate(); err != nil {
				return err
			}
			backend, err := resolveBackend(cfg.Prover.Backend)
			if err != nil {
				return err
			}

			ctx, stop := context.WithCancel(c.Context)
			defer stop()
			// The proving pipeline has only its CPU backend so far; GPUs are inventoried for
			// Status and the Lotus Info, and the backend reported is what actually proves.
			opts := plugin.Options{Repo: repo, BackendName: "cpu", Shutdown: stop}
			if backend == "cuda" {
				log.Warn("the GPU partition prover is not wired into the pipeline yet; proving on the CPU")
				if devs, err := gpu.Devices(); err == nil {
					for _, d := range devs {
						opts.GPUs = append(opts.GPUs, d.Name)
						opts.Devices = append(opts.Devices, rpcapi.DeviceStatus{Name: d.Name, VRAMTotal: d.TotalMem, VRAMFree: d.FreeMem})
					}
				}
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
				"listen", addr.String())
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
