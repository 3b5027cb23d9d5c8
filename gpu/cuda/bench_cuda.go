//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/gpu"
	"github.com/snarkd/snarkd/internal/cores"
	"github.com/snarkd/snarkd/internal/randpoints"
)

// KernelBenchConfig selects what KernelBench measures.
type KernelBenchConfig struct {
	Ordinal int
	Runs    int    // timed runs per case, after one warm-up (median reported)
	NTTLogs []uint // NTT and H-step sizes (log2)
	G1Logs  []uint // G1 MSM sizes, uniform scalars, resident and streamed, and 0/1-heavy
	G1Split []uint // extra sizes for the 0/1-heavy G1 MSM only (e.g. 27)
	G2Logs  []uint // G2 MSM sizes, resident and streamed
	G1Dense []uint // extra sizes for a uniform-scalar G1 MSM on the device only
	G2Dense []uint // the same for G2 (a dense witness's B_G2 MSM)
	Windows []uint // window sizes the G1Dense and G2Dense MSMs run at (none: chosen by size)
	// StreamChunk, when set, adds a case per G1 and G2 size with the scalars on the device and
	// the points streamed from pinned host memory in 2^StreamChunk-point chunks, as a partition
	// with the SRS streamed runs its H MSM.
	StreamChunk uint
	Distinct    uint // log2 of distinct random points, tiled to each size
	Seed        uint64
	// Log receives one line per timed run and per consistency check.
	Log io.Writer
}

// KernelBenchRow is one measured case.
type KernelBenchRow struct {
	Op     string        `json:"op"`
	LogN   uint          `json:"log_n"`
	Mode   string        `json:"mode"`
	Median time.Duration `json:"median"`
	Min    time.Duration `json:"min"`
	Max    time.Duration `json:"max"`
	Wall   time.Duration `json:"wall_median"`
	Runs   int           `json:"runs"`
	Note   string        `json:"note,omitempty"`
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func summarize(op string, lg uint, mode string, dev, wall []time.Duration, note string) KernelBenchRow {
	return KernelBenchRow{Op: op, LogN: lg, Mode: mode, Median: median(dev), Min: slices.Min(dev),
		Max: slices.Max(dev), Wall: median(wall), Runs: len(dev), Note: note}
}

// benchScalars fills v with pseudo-random elements below r (each a valid Montgomery form);
// kind "01" makes 95% of them 0 or 1.
func benchScalars(v []fr.Element, seed uint64, kind string) {
	workers := cores.N()
	per := (len(v) + workers - 1) / workers
	top := fr.Modulus().Rsh(fr.Modulus(), 192).Uint64() // r's top limb
	var one fr.Element
	one.SetOne()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min(len(v), (w+1)*per)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(part []fr.Element, s uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(s, s*0x9e3779b97f4a7c15+1))
			for i := range part {
				if kind == "01" {
					switch x := rng.IntN(100); {
					case x < 47:
						part[i] = fr.Element{}
						continue
					case x < 95:
						part[i] = one
						continue
					}
				}
				part[i] = fr.Element{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64N(top)}
			}
		}(v[lo:hi], seed+uint64(w)*1000003)
	}
	wg.Wait()
}

type benchEnv struct {
	ctx  context.Context
	cfg  KernelBenchConfig
	mem  *CUDAMemory
	rows []KernelBenchRow
}

func (e *benchEnv) logf(format string, args ...any) {
	if e.cfg.Log != nil {
		fmt.Fprintf(e.cfg.Log, format+"\n", args...)
	}
}

// timeRuns runs f once to warm up, then Runs times.
func (e *benchEnv) timeRuns(name string, f func() (time.Duration, error)) (dev, wall []time.Duration, err error) {
	for i := -1; i < e.cfg.Runs; i++ {
		t0 := time.Now()
		d, err := f()
		w := time.Since(t0)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		e.logf("%s run %d: device %.3f ms wall %.3f ms", name, i, ms(d), ms(w))
		if i >= 0 {
			dev = append(dev, d)
			wall = append(wall, w)
		}
	}
	return dev, wall, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (e *benchEnv) ntt() error {
	for _, lg := range e.cfg.NTTLogs {
		// Full domains (the full plan) and compact ones (lower plans: no omega tables).
		for _, compact := range []bool{false, true} {
			if err := e.nttDomain(lg, compact); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *benchEnv) nttDomain(lg uint, compact bool) error {
	n := 1 << lg
	dom, err := NewNTTDomain(e.cfg.Ordinal, e.mem, lg, compact)
	if err != nil {
		return err
	}
	defer func() { _ = dom.Close() }()
	mode, suffix := "device", ""
	if compact {
		mode, suffix = "device, compact tables", " compact"
	}
	host := make([]fr.Element, n)
	benchScalars(host, e.cfg.Seed+uint64(lg), "uniform")
	var bufs [3]gpu.DevicePtr
	defer func() {
		for _, b := range bufs {
			if b != 0 {
				_ = e.mem.Free(b)
			}
		}
	}()
	for i := range bufs {
		if bufs[i], err = e.mem.Alloc(uint64(n) * 32); err != nil {
			return err
		}
		if err := CopyHostToDevice(e.cfg.Ordinal, bufs[i], unsafe.Pointer(&host[0]), uint64(n)*32); err != nil {
			return err
		}
	}
	for _, kind := range []NTTKind{NTTForward, NTTInverse, NTTCosetForward, NTTCosetInverse} {
		name := fmt.Sprintf("NTT 2^%d %s%s", lg, kind, suffix)
		dev, wall, err := e.timeRuns(name, func() (time.Duration, error) { return dom.Transform(e.ctx, bufs[0], kind) })
		if err != nil {
			return err
		}
		e.rows = append(e.rows, summarize("NTT "+kind.String(), lg, mode, dev, wall, ""))
	}
	dev, wall, err := e.timeRuns(fmt.Sprintf("H step 2^%d%s", lg, suffix), func() (time.Duration, error) {
		return dom.ComputeH(e.ctx, bufs[0], bufs[1], bufs[2])
	})
	if err != nil {
		return err
	}
	e.rows = append(e.rows, summarize("H step (6 transforms)", lg, mode, dev, wall, ""))
	return nil
}

// msmCase times one MSM configuration and returns the last result (affine bytes) for
// cross-checks.
func (e *benchEnv) msmCase(curve gpu.Curve, lg uint, mode string, req *MSMRequest) (string, error) {
	var last string
	ws, err := MSMWorkspaceBytes(e.cfg.Ordinal, curve, req)
	if err != nil {
		return "", err
	}
	if req.Workspace, err = e.mem.Alloc(ws); err != nil {
		return "", err
	}
	defer func() { _ = e.mem.Free(req.Workspace); req.Workspace = 0 }()
	var st MSMStats
	name := fmt.Sprintf("MSM %s 2^%d %s", curveName(curve), lg, mode)
	dev, wall, err := e.timeRuns(name, func() (time.Duration, error) {
		var err error
		if curve == gpu.G1 {
			var r bls12381.G1Jac
			r, st, err = MSMG1(e.ctx, e.cfg.Ordinal, e.mem, req)
			var a bls12381.G1Affine
			a.FromJacobian(&r)
			last = a.String()
		} else {
			var r bls12381.G2Jac
			r, st, err = MSMG2(e.ctx, e.cfg.Ordinal, e.mem, req)
			var a bls12381.G2Affine
			a.FromJacobian(&r)
			last = a.String()
		}
		return st.DeviceTime, err
	})
	if err != nil {
		return "", err
	}
	note := fmt.Sprintf("c=%d, %d windows, workspace %s", st.WindowBits, st.Windows, gpu.FormatBytes(st.Workspace))
	e.rows = append(e.rows, summarize("MSM "+curveName(curve), lg, mode, dev, wall, note))
	return last, nil
}

func (e *benchEnv) msm(curve gpu.Curve, logs, splitOnly, dense []uint) error {
	all := slices.Concat(logs, splitOnly, dense)
	if len(all) == 0 {
		return nil
	}
	maxLg := slices.Max(all)
	n := 1 << maxLg
	psize := curve.AffineBytes()
	distinct := 1 << min(e.cfg.Distinct, maxLg)
	t0 := time.Now()
	var g1 []bls12381.G1Affine
	var g2 []bls12381.G2Affine
	var base unsafe.Pointer
	if curve == gpu.G1 {
		g1 = randpoints.G1(distinct, e.cfg.Seed)
		base = unsafe.Pointer(&g1[0])
	} else {
		g2 = randpoints.G2(distinct, e.cfg.Seed)
		base = unsafe.Pointer(&g2[0])
	}
	e.logf("%s: %d distinct points in %v", curveName(curve), distinct, time.Since(t0))
	// Points: pinned host copy (streamed runs) and a device copy (resident runs), tiled.
	maxStream := uint(0)
	for _, lg := range logs {
		maxStream = max(maxStream, lg)
	}
	var hostPts *PinnedBuffer
	var err error
	if len(logs) > 0 {
		if hostPts, err = AllocPinned(uint64(1<<maxStream) * psize); err != nil {
			return err
		}
		defer hostPts.Free()
		hb := hostPts.Bytes()
		src := unsafe.Slice((*byte)(base), uint64(distinct)*psize)
		for off := 0; off < len(hb); off += len(src) {
			copy(hb[off:], src)
		}
	}
	devPts, err := e.mem.Alloc(uint64(n) * psize)
	if err != nil {
		return err
	}
	defer e.mem.Free(devPts)
	for off := uint64(0); off < uint64(n)*psize; off += uint64(distinct) * psize {
		if err := CopyHostToDevice(e.cfg.Ordinal, devPts+gpu.DevicePtr(off), base, uint64(distinct)*psize); err != nil {
			return err
		}
	}
	// Scalars: uniform and 0/1-heavy, pinned host and device copies.
	scal, err := AllocPinned(uint64(n) * 32)
	if err != nil {
		return err
	}
	defer scal.Free()
	sc := unsafe.Slice((*fr.Element)(scal.Pointer()), n)
	devSc, err := e.mem.Alloc(uint64(n) * 32)
	if err != nil {
		return err
	}
	defer e.mem.Free(devSc)
	load := func(kind string) error {
		benchScalars(sc, e.cfg.Seed^0x5eed, kind)
		return CopyHostToDevice(e.cfg.Ordinal, devSc, unsafe.Pointer(&sc[0]), uint64(n)*32)
	}
	if err := load("uniform"); err != nil {
		return err
	}
	for _, lg := range logs {
		m := 1 << lg
		res, err := e.msmCase(curve, lg, "resident", &MSMRequest{N: m, PointsDevice: devPts, ScalarsDevice: devSc})
		if err != nil {
			return err
		}
		req := &MSMRequest{N: m, ScalarsHost: sc[:m]}
		if curve == gpu.G1 {
			req.G1Host = unsafe.Slice((*bls12381.G1Affine)(hostPts.Pointer()), m)
		} else {
			req.G2Host = unsafe.Slice((*bls12381.G2Affine)(hostPts.Pointer()), m)
		}
		res2, err := e.msmCase(curve, lg, "host-streamed", req)
		if err != nil {
			return err
		}
		if res != res2 {
			return fmt.Errorf("MSM %s 2^%d: resident and streamed results differ: %s vs %s", curveName(curve), lg, res, res2)
		}
		e.logf("MSM %s 2^%d: resident and streamed results agree", curveName(curve), lg)
		if c := e.cfg.StreamChunk; c != 0 {
			req.ScalarsHost, req.ScalarsDevice, req.ChunkLog = nil, devSc, c
			res3, err := e.msmCase(curve, lg, fmt.Sprintf("points streamed, 2^%d chunks", c), req)
			if err != nil {
				return err
			}
			if res != res3 {
				return fmt.Errorf("MSM %s 2^%d: resident and points-streamed results differ", curveName(curve), lg)
			}
		}
	}
	windows := e.cfg.Windows
	if len(windows) == 0 {
		windows = []uint{0}
	}
	for _, lg := range dense {
		var first string
		for i, c := range windows {
			mode := "resident"
			if c != 0 {
				mode = fmt.Sprintf("resident, c=%d", c)
			}
			res, err := e.msmCase(curve, lg, mode, &MSMRequest{N: 1 << lg, PointsDevice: devPts, ScalarsDevice: devSc, WindowBits: c})
			if err != nil {
				return err
			}
			if i == 0 {
				first = res
			} else if res != first {
				return fmt.Errorf("MSM %s 2^%d: windows %d and %d give different results", curveName(curve), lg, windows[0], c)
			}
		}
	}
	if curve != gpu.G1 {
		return nil
	}
	if err := load("01"); err != nil {
		return err
	}
	for _, lg := range slices.Concat(logs, splitOnly) {
		m := 1 << lg
		res, err := e.msmCase(curve, lg, "resident, 95% 0/1, split", &MSMRequest{N: m, PointsDevice: devPts, ScalarsDevice: devSc, Split01: true})
		if err != nil {
			return err
		}
		if lg <= 24 {
			res2, err := e.msmCase(curve, lg, "resident, 95% 0/1, no split", &MSMRequest{N: m, PointsDevice: devPts, ScalarsDevice: devSc})
			if err != nil {
				return err
			}
			if res != res2 {
				return fmt.Errorf("MSM G1 2^%d 0/1: split and plain results differ", lg)
			}
			e.logf("MSM G1 2^%d 0/1: split and plain results agree", lg)
		}
	}
	return nil
}

// KernelBench times the NTT, H step and MSM kernels on one device (CUDA events, median of
// cfg.Runs after a warm-up) on fresh pseudo-random data, cross-checking results between code
// paths, and returns one row per case.
func KernelBench(ctx context.Context, cfg KernelBenchConfig) ([]KernelBenchRow, error) {
	if cfg.Runs < 1 {
		cfg.Runs = 5
	}
	if cfg.Distinct == 0 {
		cfg.Distinct = 20
	}
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()
	}
	e := &benchEnv{ctx: ctx, cfg: cfg, mem: NewCUDAMemory(cfg.Ordinal)}
	e.logf("seed %d", cfg.Seed)
	if err := e.ntt(); err != nil {
		return e.rows, err
	}
	if err := e.msm(gpu.G1, cfg.G1Logs, cfg.G1Split, cfg.G1Dense); err != nil {
		return e.rows, err
	}
	if err := e.msm(gpu.G2, cfg.G2Logs, nil, cfg.G2Dense); err != nil {
		return e.rows, err
	}
	return e.rows, nil
}

// FormatKernelBench renders rows as a Markdown table.
func FormatKernelBench(w io.Writer, rows []KernelBenchRow) {
	fmt.Fprintln(w, "| op | size | mode | median ms | min ms | max ms | wall ms | runs | note |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | 2^%d | %s | %.2f | %.2f | %.2f | %.2f | %d | %s |\n", r.Op, r.LogN, r.Mode,
			ms(r.Median), ms(r.Min), ms(r.Max), ms(r.Wall), r.Runs, r.Note)
	}
}
