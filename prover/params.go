package prover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/seal"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
	"github.com/snarkd/snarkd/internal/atomicfile"
	"github.com/snarkd/snarkd/rpcapi"
	"github.com/snarkd/snarkd/testcircuit"
)

// DevnetParamSeed derives the test circuit's parameters. They are insecure by design: anyone
// can forge test proofs. Only the "test" kind uses them.
var DevnetParamSeed = []byte("snarkd devnet test-circuit parameters v1")

// ParamCache loads proving parameters at first use and keeps them in memory: Filecoin
// circuits' from the Filecoin parameter directory (WithFilecoinDir), with the SnarkPack SRS
// there that aggregations use (AggregationKeys), and the test circuit's
// devnet parameters, which are generated at first use and written to dir so that later starts
// load them. Preload loads a set ahead of its first proof and Evict drops one; with a memory
// limit (WithMemoryLimit) the least recently used sets that no proof holds are dropped when a
// load would exceed it. A proof holds the parameters it got for as long as it runs, whatever
// the cache does meanwhile; the next proof loads them again.
type ParamCache struct {
	dir string
	// circuitDir holds compiled circuits (WithCircuitDir; guarded by mu).
	circuitDir string

	mu     sync.Mutex
	filDir string
	// srs reads the SnarkPack SRS of filDir at its first aggregation (AggregationKeys);
	// srsRead is set once it has.
	srs     *snarkpack.KeyCache
	srsRead bool
	limit   uint64
	entries map[string]*paramEntry
	clock   uint64 // LRU clock: bumped on every use
	// overLimit is set while the cache holds more than limit because nothing could be dropped;
	// it keeps the warning to one per episode.
	overLimit bool
	// onDrop is told about every set the cache dropped, once no proof holds it (dropped holds
	// them until it is called, outside the lock).
	onDrop  func(*groth16.Parameters)
	dropped []*groth16.Parameters
	// testMax bounds the test-circuit setups kept in memory and in dir (WithTestSetupLimit;
	// 0: no bound); testUsed is when each was last used by this process.
	testMax  int
	testUsed map[string]time.Time
}

// paramEntry is one parameter set, loading or loaded. Fields other than done, name and meta
// are guarded by the cache's mu; sp and err are set before done is closed.
type paramEntry struct {
	name string
	meta ParamMeta
	done chan struct{}

	sp       *SealParams
	err      error
	bytes    uint64 // in-memory size once ready; the file's size while loading
	ready    bool
	loadTime time.Duration
	loadedAt time.Time
	// generate is set while the set is being generated rather than read (the test circuit's
	// first use), for the requests that wait on it.
	generate bool
	lastUse  uint64
	refs     int
	// compiled holds the compiled circuits of the set's circuit, by key (ParamCache.Compiled);
	// their bytes are part of bytes.
	compiled map[string]*compiledEntry
}

// ParamMeta says which circuit a parameter set proves.
type ParamMeta struct {
	Kind Kind
	// SectorSize is the Filecoin sector size in bytes (0 for the test circuit).
	SectorSize uint64
	// Proof names the proof type whose request loaded the set (StackedDrg32GiBV1_1, …; proof
	// types of one circuit share a set).
	Proof string
}

// ParamInfo describes one cached parameter set.
type ParamInfo struct {
	// Circuit is the set's name: its .params file name, or test-<constraints>-<seed>.
	Circuit string
	ParamMeta
	// Bytes is the in-memory size of the loaded parameters (while loading: the file's size).
	Bytes  uint64
	Loaded bool
	// LoadTime is how long reading and checking the parameters took.
	LoadTime time.Duration
	LoadedAt time.Time
	// Refs counts proofs in flight that hold the set (those run through WithUsage).
	Refs int
}

// NewParamCache caches on disk under dir ("" keeps them in memory only).
func NewParamCache(dir string) *ParamCache {
	return &ParamCache{dir: dir, entries: map[string]*paramEntry{}, testUsed: map[string]time.Time{}}
}

// setOnDrop makes the cache call fn with the proving parameters of every set it dropped
// (evicted, or over its memory limit) once no proof holds them, outside its lock.
func (c *ParamCache) setOnDrop(fn func(*groth16.Parameters)) {
	c.mu.Lock()
	c.onDrop = fn
	c.mu.Unlock()
}

// droppedLocked records that e is out of the cache and no proof holds it any more; call it
// when the second of those becomes true.
func (c *ParamCache) droppedLocked(e *paramEntry) {
	for _, ce := range e.compiled {
		if ce.comp != nil {
			ce.comp.ReleaseVectors()
		}
	}
	if e.refs == 0 && e.sp != nil && e.sp.PK != nil && c.onDrop != nil {
		c.dropped = append(c.dropped, e.sp.PK)
	}
}

// notifyDropped calls onDrop for the sets dropped since the last call. Call it without the lock.
func (c *ParamCache) notifyDropped() {
	c.mu.Lock()
	fn, ds := c.onDrop, c.dropped
	c.dropped = nil
	c.mu.Unlock()
	for _, pk := range ds {
		fn(pk)
	}
}

// WithMemoryLimit bounds the bytes of parameters the cache keeps (0: no limit) and returns c.
// Before a load, and after one whose real size exceeds the file's, the least recently used
// sets that no proof holds are dropped until the total fits. Sets in use are never dropped for
// the limit, and a set larger than the limit is still loaded: a proof is never refused for it.
func (c *ParamCache) WithMemoryLimit(limit uint64) *ParamCache {
	c.mu.Lock()
	c.limit = limit
	c.fitLocked(nil)
	c.mu.Unlock()
	c.notifyDropped()
	return c
}

// MemoryLimit is the limit set with WithMemoryLimit (0: none).
func (c *ParamCache) MemoryLimit() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}

// Test returns the devnet parameters of testcircuit.New(constraints, seed), generating and
// caching them at first use.
func (c *ParamCache) Test(ctx context.Context, constraints int, seed uint64) (*groth16.Parameters, error) {
	name := fmt.Sprintf("test-%d-%d", constraints, seed)
	e, _, err := c.get(ctx, name, ParamMeta{Kind: rpcapi.KindTest, Proof: name}, "", func() bool { return !c.testOnDisk(name) }, func(ctx context.Context) (*SealParams, error) {
		pk, err := c.loadOrGenerate(ctx, name, constraints, seed)
		if err != nil {
			return nil, err
		}
		return &SealParams{PK: pk, VK: &pk.VK}, nil
	})
	if err != nil {
		return nil, err
	}
	c.pruneTests(name)
	return e.sp.PK, nil
}

// WithTestSetupLimit bounds the distinct test-circuit setups (constraints, seed) the cache
// keeps, in memory and as files in its directory (0: no bound), and returns c. Beyond it the
// least recently used are dropped from both, now (files left by earlier runs count) and after
// every use of a test setup. The setup just used and those that a proof holds or that are
// loading are never dropped (they count against the bound, so the cache may hold more while
// they are busy). A dropped setup is generated again when next asked for.
func (c *ParamCache) WithTestSetupLimit(n int) *ParamCache {
	c.mu.Lock()
	c.testMax = n
	c.mu.Unlock()
	c.pruneTests("")
	return c
}

// testSetupRe matches the file names of test-circuit setups (test-<constraints>-<seed>.params).
var testSetupRe = regexp.MustCompile(`^(test-[0-9]+-[0-9]+)\.params$`)

// pruneTests drops the least recently used test-circuit setups beyond testMax from memory and
// disk; used, when not empty, names the setup just used.
func (c *ParamCache) pruneTests(used string) {
	c.mu.Lock()
	bound, dir := c.testMax, c.dir
	now := time.Now()
	if used != "" {
		c.testUsed[used] = now
	}
	c.mu.Unlock()
	if bound <= 0 {
		return
	}
	// When each setup was last used: this process's record, else its file's modification time
	// (bumped at every use, so the order survives a restart), else when it was loaded.
	last := map[string]time.Time{}
	onDisk := map[string]bool{}
	if dir != "" {
		if used != "" {
			if err := os.Chtimes(filepath.Join(dir, used+".params"), now, now); err != nil && !errors.Is(err, os.ErrNotExist) {
				log.Debugw("recording use of test-circuit parameters", "circuit", used, "err", err)
			}
		}
		ents, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warnw("listing test-circuit parameters", "dir", dir, "err", err)
		}
		for _, de := range ents {
			m := testSetupRe.FindStringSubmatch(de.Name())
			if m == nil || !de.Type().IsRegular() {
				continue
			}
			if fi, err := de.Info(); err == nil {
				last[m[1]], onDisk[m[1]] = fi.ModTime(), true
			}
		}
	}
	c.mu.Lock()
	for name, e := range c.entries {
		if _, ok := last[name]; !ok && e.meta.Kind == rpcapi.KindTest {
			last[name] = e.loadedAt
		}
	}
	for name, t := range c.testUsed {
		if _, ok := last[name]; !ok {
			delete(c.testUsed, name) // neither in memory nor on disk any more
			continue
		}
		last[name] = t
	}
	names := make([]string, 0, len(last))
	for name := range last {
		names = append(names, name)
	}
	sort.Slice(names, func(a, b int) bool {
		if !last[names[a]].Equal(last[names[b]]) {
			return last[names[a]].After(last[names[b]])
		}
		return names[a] < names[b]
	})
	// The setup just used and those in use or loading stay; they count against the bound, and
	// the most recently used of the others fill what room is left.
	busy := func(name string) bool {
		e, ok := c.entries[name]
		return name == used || ok && (!e.ready || e.refs > 0)
	}
	kept := 0
	for _, name := range names {
		if busy(name) {
			kept++
		}
	}
	var remove []string
	for _, name := range names {
		if busy(name) {
			continue
		}
		if kept < bound {
			kept++
			continue
		}
		e, inMemory := c.entries[name]
		if inMemory {
			delete(c.entries, name)
			c.droppedLocked(e)
		}
		delete(c.testUsed, name)
		if onDisk[name] {
			remove = append(remove, name)
		}
		log.Infow("dropped test-circuit parameters beyond the bound on test setups kept (Prover.MaxTestSetups)",
			"circuit", name, "max", bound, "in_memory", inMemory, "on_disk", onDisk[name])
	}
	c.mu.Unlock()
	c.notifyDropped()
	for _, name := range remove {
		if err := os.Remove(filepath.Join(dir, name+".params")); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warnw("removing test-circuit parameters", "path", filepath.Join(dir, name+".params"), "err", err)
		}
	}
}

// testOnDisk reports whether the test-circuit setup name has a file in the cache's directory
// (loadOrGenerate reads it instead of generating; an unreadable one is generated again, which
// this does not foresee).
func (c *ParamCache) testOnDisk(name string) bool {
	if c.dir == "" {
		return false
	}
	fi, err := os.Stat(filepath.Join(c.dir, name+".params"))
	return err == nil && fi.Mode().IsRegular()
}

func (c *ParamCache) loadOrGenerate(ctx context.Context, name string, constraints int, seed uint64) (*groth16.Parameters, error) {
	path := ""
	if c.dir != "" {
		path = filepath.Join(c.dir, name+".params")
		pk, err := groth16.OpenParameters(path, groth16.ReadOptions{})
		if err == nil {
			log.Infow("loaded test-circuit parameters", "path", path)
			return pk, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			log.Warnw("regenerating unreadable test-circuit parameters", "path", path, "err", err)
		}
	}
	log.Infow("generating devnet test-circuit parameters", "constraints", constraints, "seed", seed)
	pk, err := testcircuit.DevnetParameters(ctx, constraints, seed, DevnetParamSeed)
	if err != nil {
		return nil, fmt.Errorf("generating test-circuit parameters (%d constraints): %w", constraints, err)
	}
	if path != "" {
		if err := writeParams(path, pk); err != nil {
			log.Warnw("caching test-circuit parameters", "path", path, "err", err)
		}
	}
	return pk, nil
}

// writeParams writes through a temporary file so a crash never leaves a torn file behind.
func writeParams(path string, pk *groth16.Parameters) error {
	return atomicfile.Write(path, 0o600, func(w io.Writer) error {
		_, err := pk.WriteTo(w)
		return err
	})
}

// Loaded lists the parameter sets in memory or loading, by name.
func (c *ParamCache) Loaded() []ParamInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]ParamInfo, 0, len(c.entries))
	for name, e := range c.entries {
		out = append(out, ParamInfo{Circuit: name, ParamMeta: e.meta, Bytes: e.bytes, Loaded: e.ready,
			LoadTime: e.loadTime, LoadedAt: e.loadedAt, Refs: e.refs})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Circuit < out[b].Circuit })
	return out
}

// SealParams are a PoRep circuit's proving parameters and the verifying key of its .vk file
// (the one filecoin-ffi verifies with; it must equal the .params file's prefix).
type SealParams struct {
	PK *groth16.Parameters
	VK *groth16.VerifyingKey
}

// MissingParamsError names the parameter file a proof type needs and where it was expected.
type MissingParamsError struct {
	Proof string
	Path  string
}

func (e *MissingParamsError) Error() string {
	return fmt.Sprintf("parameters for %s not found: %s does not exist; put the published parameter files in %s "+
		"(lotus fetch-params / curio fetch-params with FIL_PROOFS_PARAMETER_CACHE pointing there), "+
		"or for devnets and tests only run `snarkd params gen --proof %s` (INSECURE devnet parameters)",
		e.Proof, e.Path, filepath.Dir(e.Path), e.Proof)
}

// WithFilecoinDir sets the Filecoin parameter directory (FIL_PROOFS_PARAMETER_CACHE) where Seal
// finds .params and .vk files under their published names, and returns c.
func (c *ParamCache) WithFilecoinDir(dir string) *ParamCache {
	c.mu.Lock()
	if dir != c.filDir {
		c.srs, c.srsRead = nil, false
	}
	c.filDir = dir
	c.mu.Unlock()
	return c
}

// FilecoinDir is the Filecoin parameter directory.
func (c *ParamCache) FilecoinDir() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.filDir
}

// Seal returns the parameters of p's partition circuit from the Filecoin parameter directory,
// loading them at first use and keeping them: proof types of one sector size share one entry.
// Parameters whose vector lengths do not fit the circuit (seal.CheckParams) and a .vk file that
// differs from the .params file's verifying key are refused. A failure is not cached, so a
// file put in place later (say by `snarkd params gen`) is found by the next request.
func (c *ParamCache) Seal(ctx context.Context, p *prooftypes.SealProof) (*SealParams, error) {
	e, _, err := c.seal(ctx, p)
	if err != nil {
		return nil, err
	}
	return e.sp, nil
}

// PutSeal makes sp the parameters of p's partition circuit, as if loaded from the parameter
// directory: for benchmarks whose keys are not files (dummy keys of the real size).
func (c *ParamCache) PutSeal(ctx context.Context, p *prooftypes.SealProof, sp *SealParams) error {
	return c.put(ctx, p.ParamsFile(), sealMeta(p), sp)
}

func sealMeta(p *prooftypes.SealProof) ParamMeta {
	return ParamMeta{Kind: rpcapi.KindPoRepC2, SectorSize: p.SectorSize, Proof: p.Name}
}

func (c *ParamCache) seal(ctx context.Context, p *prooftypes.SealProof) (*paramEntry, bool, error) {
	return c.get(ctx, p.ParamsFile(), sealMeta(p), p.ParamsFile(), nil, func(ctx context.Context) (*SealParams, error) {
		return loadSealParams(ctx, c.FilecoinDir(), p)
	})
}

func loadSealParams(ctx context.Context, dir string, p *prooftypes.SealProof) (*SealParams, error) {
	return loadFilecoinParams(ctx, dir, p.Name, p.CacheID(), "PoRep", func(ctx context.Context, pk *groth16.Parameters) error {
		return seal.CheckParams(ctx, p, pk)
	})
}

// loadFilecoinParams loads base.params and base.vk of proof type name from dir, refusing a .vk
// that is not the .params file's verifying key and parameters that check refuses.
func loadFilecoinParams(ctx context.Context, dir, name, base, family string, check func(context.Context, *groth16.Parameters) error) (*SealParams, error) {
	if dir == "" {
		return nil, fmt.Errorf("no Filecoin parameter directory configured (Prover.ParameterCache / FIL_PROOFS_PARAMETER_CACHE)")
	}
	paramsPath, vkPath := filepath.Join(dir, base+".params"), filepath.Join(dir, base+".vk")
	for _, path := range []string{paramsPath, vkPath} {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, &MissingParamsError{Proof: name, Path: path}
		}
	}
	t0 := time.Now()
	vk, err := groth16.OpenVerifyingKey(vkPath, groth16.FilecoinReadOptions().VKCheck)
	if err != nil {
		return nil, fmt.Errorf("loading %s verifying key: %w", name, err)
	}
	pk, err := groth16.OpenParameters(paramsPath, groth16.FilecoinReadOptions())
	if err != nil {
		return nil, fmt.Errorf("loading %s parameters: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !bytes.Equal(vk.Bytes(), pk.VK.Bytes()) {
		return nil, fmt.Errorf("%s: %s is not the verifying key of %s (files from different setups?)", name, vkPath, paramsPath)
	}
	if err := check(ctx, pk); err != nil {
		return nil, fmt.Errorf("%s: %w", paramsPath, err)
	}
	log.Infow("loaded "+family+" parameters", "proof", name, "path", paramsPath, "bytes", pk.ParametersSize(), "took", time.Since(t0))
	return &SealParams{PK: pk, VK: vk}, nil
}

// Filecoin returns the parameters named base (.params / .vk in the Filecoin parameter
// directory) of proof type name, loading them at first use and keeping them; check refuses
// parameters of another circuit. A failure is not cached.
func (c *ParamCache) Filecoin(ctx context.Context, name, base, family string, check func(context.Context, *groth16.Parameters) error) (*SealParams, error) {
	e, _, err := c.filecoin(ctx, ParamMeta{Proof: name}, base, family, check)
	if err != nil {
		return nil, err
	}
	return e.sp, nil
}

func (c *ParamCache) filecoin(ctx context.Context, meta ParamMeta, base, family string, check func(context.Context, *groth16.Parameters) error) (*paramEntry, bool, error) {
	return c.get(ctx, base+".params", meta, base+".params", nil, func(ctx context.Context) (*SealParams, error) {
		return loadFilecoinParams(ctx, c.FilecoinDir(), meta.Proof, base, family, check)
	})
}

// ParamsMismatchError refuses parameters whose verifying key has another number of public
// inputs than the circuit they were loaded for.
type ParamsMismatchError struct {
	Proof     string
	Got, Want int
}

func (e *ParamsMismatchError) Error() string {
	return fmt.Sprintf("parameters do not fit %s: the verifying key has %d public inputs, the circuit %d", e.Proof, e.Got, e.Want)
}

// checkInputs refuses parameters whose vk.ic length is not want (public inputs with ONE).
func checkInputs(name string, want int) func(context.Context, *groth16.Parameters) error {
	return func(_ context.Context, pk *groth16.Parameters) error {
		if len(pk.VK.IC) != want {
			return &ParamsMismatchError{Proof: name, Got: len(pk.VK.IC), Want: want}
		}
		return nil
	}
}

// WriteFilecoinParams writes pk as base.params and its verifying key as base.vk in dir (each
// through a temporary file renamed into place), with base.meta holding sectorSize as the
// published .meta files do.
func WriteFilecoinParams(dir, base string, sectorSize uint64, pk *groth16.Parameters) error {
	return groth16.WriteParamFiles(dir, base, sectorSize, pk)
}
