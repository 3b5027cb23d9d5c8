package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/plugin/auth"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/plugin/journal"
	"github.com/snarkd/snarkd/plugin/lotus"
	"github.com/snarkd/snarkd/prover"
	"github.com/snarkd/snarkd/rpcapi"
)

// JournalFile is the job journal inside the repo.
const JournalFile = "jobs.db"

// ParamsDir holds generated test-circuit parameters inside the repo.
const ParamsDir = "params"

// CircuitsDir holds compiled circuits (one file per circuit shape) inside the repo.
const CircuitsDir = "circuits"

// MinerFile remembers the miner attached with MinerAttach (`snarkd worker connect`), so that a
// restarted daemon registers again and can deliver the results it still holds.
const MinerFile = "lotus-miner.json"

type minerRecord struct {
	APIInfo   string
	WorkerURL string
}

// Options are what the daemon needs besides its configuration.
type Options struct {
	// Repo is the repo directory (journal, keystore, parameter cache).
	Repo string
	// BackendName is the resolved backend ("cpu", "cuda" or "simulated"); Backend proves
	// partitions (nil: the CPU).
	BackendName string
	Backend     prover.Backend
	// Devices are reported by Status when GPUStatus is nil; GPUs names go into the Lotus Info.
	Devices []rpcapi.DeviceStatus
	GPUs    []string
	// GPUStatus, when set (a GPU backend), reports the GPU scheduler's devices, books, tiers
	// and workers for Status and the /metrics gauges (gpu.Scheduler.Status).
	GPUStatus func() gpu.Status
	// GPUMetrics are the counters the GPU scheduler reports to (gpu.Config.Metrics), rendered
	// on /metrics.
	GPUMetrics *GPUMetrics
	// Shutdown stops the daemon (Filecoin.Shutdown); nil: Daemon.Stop, the drain a signal starts.
	Shutdown func()
	// Ready, when set, is called by Serve once the configured lotus-miner attachment has been
	// parsed and started, just before the API answers on addr; an error from it ends Serve.
	Ready func(addr net.Addr) error
}

// Daemon is the assembled service. Open it, Serve it, and it closes everything when Serve ends.
type Daemon struct {
	cfg      config.Config
	backend  string
	secret   auth.Secret
	verifier *auth.Verifier
	journal  *journal.Journal
	pipeline *prover.Pipeline
	jobs     *jobs.Manager
	worker   *lotus.WorkerAPI
	attacher *lotus.Attacher
	prover   *ProverAPI
	server   *Server
	cancel   context.CancelFunc

	gpuStatus  func() gpu.Status
	gpuMetrics *GPUMetrics
	prom       *daemonMetrics
	name       string
	repo       string
	ready      func(net.Addr) error

	deliverer *lotus.Deliverer

	// stopMu orders Stop's calls: the first starts the drain, later ones skip its grace.
	stopMu sync.Mutex
	stops  int
	// stopping is closed by the first Stop; Serve then drains and returns.
	stopping chan struct{}
}

// Open builds the daemon: it loads (or creates) the token secret, opens the journal, recovers
// jobs from it and starts the provers. Jobs start before the API serves; that is fine, nothing
// can reach them until Serve.
func Open(cfg config.Config, opts Options) (*Daemon, error) {
	secret, err := auth.LoadOrCreateSecret(opts.Repo)
	if err != nil {
		return nil, err
	}
	name := cfg.Lotus.WorkerName
	if name == "" {
		if name, err = os.Hostname(); err != nil {
			name = "snarkd"
		}
	}
	j, err := journal.Open(filepath.Join(opts.Repo, JournalFile))
	if err != nil {
		if errors.As(err, new(*journal.CorruptError)) {
			return nil, fmt.Errorf("%w; the daemon does not start on a damaged journal: `snarkd journal check --repo %s` lists the damage, `snarkd journal repair --repo %s` salvages every readable job into a fresh journal and keeps the damaged file", err, opts.Repo, opts.Repo)
		}
		return nil, err
	}
	backend := opts.Backend
	if backend == nil {
		backend = prover.CPUBackend{}
	}
	params := prover.NewParamCache(filepath.Join(opts.Repo, ParamsDir)).WithFilecoinDir(cfg.Prover.ParameterCache).
		WithMemoryLimit(uint64(cfg.Prover.ParameterMemoryLimit)).WithCircuitDir(filepath.Join(opts.Repo, CircuitsDir)).
		WithTestSetupLimit(cfg.Prover.MaxTestSetups)
	prom := newDaemonMetrics()
	pipe := prover.New(backend, params).WithFullSynthesis(cfg.Prover.Synthesis == config.SynthesisFull).
		WithPhaseObserver(prom.observePhase)
	log.Infow("Filecoin parameters are read from the parameter directory on first use", "dir", cfg.Prover.ParameterCache,
		"memory_limit", cfg.Prover.ParameterMemoryLimit)
	m, err := jobs.Open(j, pipelineRunner{p: pipe}, jobs.Config{
		Workers: cfg.Jobs.Workers, MaxPending: cfg.Jobs.MaxPending, Retention: cfg.Jobs.Retention.D(),
		RestartError: lotus.RestartMessage(name), Observer: prom,
	})
	if err != nil {
		j.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	verifier := auth.NewVerifier(secret, cfg.Lotus.AuthCacheTTL.D())
	d := &Daemon{
		cfg: cfg, backend: opts.BackendName, secret: secret, verifier: verifier, journal: j,
		pipeline: pipe, jobs: m, cancel: cancel, name: name, repo: opts.Repo,
		gpuStatus: opts.GPUStatus, gpuMetrics: opts.GPUMetrics, prom: prom, ready: opts.Ready,
		stopping: make(chan struct{}),
	}
	prom.reg.MustRegister(stateCollector{d})
	shutdown := opts.Shutdown
	if shutdown == nil {
		shutdown = func() { d.Stop() }
	}
	d.worker = lotus.NewWorkerAPI(m, name, opts.GPUs, shutdown)
	d.worker.SetResources(lotus.ResourceConfig{
		IgnoreResources: cfg.Lotus.IgnoreResources, CPUConcurrency: cfg.Jobs.Workers,
		MaxConcurrent: map[rpcapi.TaskType]int{
			rpcapi.TTCommit2: cfg.Lotus.MaxConcurrentC2, rpcapi.TTProveReplicaUpdate2: cfg.Lotus.MaxConcurrentPRU2,
			rpcapi.TTGenerateWindowPoSt: cfg.Lotus.MaxConcurrentWindowPoSt, rpcapi.TTGenerateWinningPoSt: cfg.Lotus.MaxConcurrentWinningPoSt,
		},
	})
	d.attacher = lotus.NewAttacher(ctx, verifier, cfg.Lotus.Heartbeat.D())
	if mode := lotus.Mode(cfg.Lotus.WorkerMode); mode != lotus.ModeSeal {
		vf := lotus.NewVanillaFetcher(d.attacher.Storage, cfg.Lotus.PoStParallelReads, cfg.Lotus.PoStReadTimeout.D(), nil)
		if err := d.worker.SetMode(mode, vf); err != nil {
			cancel()
			m.Close()
			j.Close()
			return nil, err
		}
		log.Infow("Lotus PoSt worker: advertising only its PoSt task type", "mode", mode)
	}
	d.deliverer = lotus.NewDeliverer(m, d.attacher.Miner, name, cfg.Lotus.ReturnRetryMin.D(), cfg.Lotus.ReturnRetryMax.D())
	m.OnFinal(d.deliverer.OnFinal)
	devices := opts.Devices
	if len(devices) == 0 {
		devices = []rpcapi.DeviceStatus{{Name: "cpu"}}
	}
	d.prover = &ProverAPI{Backend: opts.BackendName, jobs: m, params: pipe.Params(), attacher: d.attacher,
		started: time.Now(), devices: devices, gpuStatus: opts.GPUStatus, remember: d.rememberMiner, stop: d.Stop}
	d.prover.writeQuota, d.prover.adminQuota = testQuotas(cfg.Jobs)
	d.server = New(cfg, Handlers{
		Prover: d.prover, Worker: d.worker, Verify: verifier.Verify,
		Metrics: http.HandlerFunc(d.metrics), Status: http.HandlerFunc(d.status), UI: http.HandlerFunc(d.ui),
		ObserveRPC: prom.observeRPC,
	})
	return d, nil
}

// Secret is the daemon's token secret (for minting tokens).
func (d *Daemon) Secret() auth.Secret { return d.secret }

// Prover is the native API in process: the job manager behind /rpc/v0's Prover namespace,
// without its HTTP, JSON and permission layers (in-process services such as cuzk use it, so
// that a request's bytes are not re-encoded on the way to the job manager).
func (d *Daemon) Prover() rpcapi.Prover { return d.prover }

// Params is the proving pipeline's parameter cache.
func (d *Daemon) Params() *prover.ParamCache { return d.pipeline.Params() }

// Handler is the HTTP handler.
func (d *Daemon) Handler() http.Handler { return d.server.Handler() }

// Serve answers on ln until ctx ends or Stop is called, drains (Stop: running jobs finish
// within Jobs.DrainGrace while the API keeps answering, then the rest is handed back), and
// closes the daemon. With Lotus.MinerAPIInfo set it registers with that miner in the
// background. Options.Ready runs before the first request is answered. grace bounds the HTTP
// server's shutdown after the drain.
func (d *Daemon) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	defer d.Close()
	workerURL := d.cfg.Lotus.WorkerURL
	if workerURL == "" {
		u, err := lotus.WorkerURL(ln.Addr())
		switch {
		case err == nil:
			workerURL = u
		case !errors.Is(err, lotus.ErrWildcardListen):
			if d.cfg.Lotus.MinerAPIInfo != "" {
				return err
			}
		default:
			// Every interface: the address is derived from the miner's connection, at start for
			// a configured miner and at MinerAttach for one attached later (which may sit on
			// another network).
			d.prover.listen = ln.Addr()
			if d.cfg.Lotus.MinerAPIInfo == "" {
				log.Infow("the API listens on every interface and Lotus.WorkerURL is empty: the address a lotus-miner "+
					"dials back is derived when one is attached", "listen", ln.Addr().String())
			}
		}
	}
	d.prover.workerURL = workerURL
	switch rec, err := d.rememberedMiner(); {
	case d.cfg.Lotus.MinerAPIInfo != "":
		if workerURL == "" {
			if workerURL, err = d.prover.deriveWorkerURL(ctx, d.cfg.Lotus.MinerAPIInfo); err != nil {
				return fmt.Errorf("Lotus.MinerAPIInfo: %w", err)
			}
		}
		if err := d.attacher.Attach(ctx, d.cfg.Lotus.MinerAPIInfo, workerURL, false); err != nil {
			return fmt.Errorf("Lotus.MinerAPIInfo: %w", err)
		}
	case err != nil:
		log.Warnw("ignoring the remembered lotus-miner", "file", MinerFile, "err", err)
	case rec != nil:
		if rec.WorkerURL != "" {
			workerURL = rec.WorkerURL
		} else if workerURL == "" {
			if workerURL, err = d.prover.deriveWorkerURL(ctx, rec.APIInfo); err != nil {
				log.Warnw("remembered lotus-miner: not registering again", "err", err)
				break
			}
		}
		log.Infow("registering again with the lotus-miner attached before the restart", "worker", workerURL)
		if err := d.attacher.Attach(ctx, rec.APIInfo, workerURL, false); err != nil {
			log.Warnw("remembered lotus-miner", "err", err)
		}
	}
	if d.ready != nil {
		if err := d.ready(ln.Addr()); err != nil {
			return err
		}
	}
	// The API keeps answering through the drain (Await, Status, the miner's calls), so it
	// stops on its own context, after the drain, not on ctx.
	srvCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServing()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		select {
		case <-ctx.Done():
			d.Stop()
		case <-d.stopping:
			// Stopped through the API (`snarkd stop`, Shutdown): a signal now, such as
			// systemd's SIGTERM, is a second stop and skips the rest of the grace.
			done := make(chan struct{})
			defer close(done)
			go func() {
				select {
				case <-ctx.Done():
					d.Stop()
				case <-done:
				}
			}()
		case <-srvCtx.Done():
			return // the server failed; Close hands the running jobs back
		}
		d.drain()
		stopServing()
	}()
	err := d.server.Serve(srvCtx, ln, grace)
	stopServing()
	<-drained
	return err
}

// Stop makes the daemon drain and exit, and returns the drain's state. The first call (a
// signal, `snarkd stop`, the Lotus Shutdown call) starts the drain: the job manager refuses new
// work and starts no queued job (StartDrain), the Lotus worker answers Session with "worker
// disabled" so that the miner's scheduler sends nothing more, and Serve lets the running jobs
// finish until Jobs.DrainGrace has passed, then hands back the rest and returns. A later call
// skips the rest of the grace.
func (d *Daemon) Stop() rpcapi.DrainStatus {
	d.stopMu.Lock()
	defer d.stopMu.Unlock()
	d.stops++
	if d.stops == 1 {
		grace := d.cfg.Jobs.DrainGrace.D()
		log.Infow("stop requested: draining", "grace", grace)
		d.jobs.StartDrain(time.Now().Add(grace))
		_ = d.worker.SetEnabled(context.Background(), false)
		close(d.stopping)
	} else {
		log.Warnw("stop requested again while draining: skipping the rest of the grace", "requests", d.stops)
		d.jobs.SkipDrain()
	}
	if st := d.jobs.DrainStatus(); st != nil {
		return *st
	}
	return rpcapi.DrainStatus{}
}

// deliverWait bounds how long a drained daemon waits for the miner to take the results of
// the Lotus calls it handed back (code 101) before it exits; what is not delivered stays in the
// journal and goes at the next start.
const deliverWait = 15 * time.Second

// drain runs the drain Stop started, then gives the Lotus calls it failed a moment to reach
// the miner, so that the miner reschedules them now rather than when the daemon is back.
func (d *Daemon) drain() {
	until := time.Now()
	if st := d.jobs.DrainStatus(); st != nil {
		until = st.Until
	}
	ctx, cancel := context.WithDeadline(context.Background(), until)
	defer cancel()
	d.jobs.Drain(ctx)
	if m := d.attacher.Status(); m == nil || !m.Connected {
		return
	}
	deadline := time.Now().Add(deliverWait)
	for d.jobs.Undelivered() > 0 {
		if time.Now().After(deadline) {
			log.Warnw("results not yet taken by the miner; they stay in the journal for the next start", "results", d.jobs.Undelivered())
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Close stops registration, delivery and the provers, and closes the journal. Running jobs
// stay journaled as running and are re-queued at the next start.
func (d *Daemon) Close() {
	d.cancel()
	d.attacher.Close()
	d.deliverer.Close()
	d.jobs.Close()
	if err := d.journal.Close(); err != nil {
		log.Warnw("closing journal", "err", err)
	}
}

// rememberMiner records a successful MinerAttach for the next start (0600: it holds a token).
func (d *Daemon) rememberMiner(apiInfo, workerURL string) error {
	b, err := json.Marshal(minerRecord{APIInfo: apiInfo, WorkerURL: workerURL})
	if err != nil {
		return err
	}
	tmp := filepath.Join(d.repo, MinerFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("remembering the miner: %w", err)
	}
	return os.Rename(tmp, filepath.Join(d.repo, MinerFile))
}

func (d *Daemon) rememberedMiner() (*minerRecord, error) {
	b, err := os.ReadFile(filepath.Join(d.repo, MinerFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec minerRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc
}
