package prover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/update"
	"github.com/snarkd/snarkd/rpcapi"
)

// get returns the entry called name, loading it with load at first use; hit reports that it
// was loaded already. A caller that finds a load in progress waits for it (for as long as its
// own ctx allows); a load that fails is forgotten, and one abandoned because its caller's ctx
// ended is taken over by the next waiter. estimateFile, a file name in the Filecoin parameter
// directory ("" for none), gives the size the memory limit reserves while the load runs. The
// entry is held for the request of ctx when ctx carries a Usage.
func (c *ParamCache) get(ctx context.Context, name string, meta ParamMeta, estimateFile string, generates func() bool, load func(context.Context) (*SealParams, error)) (e *paramEntry, hit bool, err error) {
	u := UsageFrom(ctx)
	report := loadReportFrom(ctx)
	var gen bool
	for {
		c.mu.Lock()
		var ok bool
		e, ok = c.entries[name]
		if ok && e.ready {
			c.useLocked(e, u)
			c.mu.Unlock()
			return e, true, nil
		}
		if ok {
			waitGen := e.generate
			c.mu.Unlock()
			report(ParamLoad{Circuit: name, Proof: meta.Proof, Generate: waitGen, Shared: true})
			t0 := time.Now()
			select {
			case <-e.done:
			case <-ctx.Done():
				return nil, false, ctx.Err()
			}
			u.addLoad(time.Since(t0))
			if e.err == nil {
				c.mu.Lock()
				c.useLocked(e, u)
				c.mu.Unlock()
				return e, false, nil
			}
			if isContextErr(e.err) && ctx.Err() == nil {
				continue // the loading request went away; load it for this one
			}
			return nil, false, e.err
		}
		// Only a miss asks whether the set will be generated (a stat, as estimateLocked does
		// under the lock); a hit reports nothing and the request goes straight to synthesis.
		gen = generates != nil && generates()
		e = &paramEntry{name: name, meta: meta, done: make(chan struct{}), bytes: c.estimateLocked(estimateFile), generate: gen}
		c.entries[name] = e
		c.fitLocked(e)
		c.mu.Unlock()
		c.notifyDropped()
		break
	}
	report(ParamLoad{Circuit: name, Proof: meta.Proof, Generate: gen})

	t0 := time.Now()
	sp, err := load(ctx)
	took := time.Since(t0)
	u.addLoad(took)
	defer c.notifyDropped()
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(e.done)
	if err == nil && sp == nil {
		err = fmt.Errorf("loading %s: no parameters", name)
	}
	if err != nil {
		e.err = err
		if c.entries[name] == e {
			delete(c.entries, name)
		}
		return nil, false, err
	}
	e.sp, e.ready, e.loadTime, e.loadedAt = sp, true, took, time.Now()
	e.bytes = uint64(sp.PK.ParametersSize())
	c.useLocked(e, u)
	if c.entries[name] == e {
		c.fitLocked(e)
	} else {
		c.droppedLocked(e) // evicted while loading
	}
	return e, false, nil
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// estimateLocked is the size of file in the Filecoin parameter directory, 0 when unknown: an
// uncompressed .params file is within a few bytes of the parameters' in-memory size. Only a
// stat: the file may be a FIFO or still being written.
func (c *ParamCache) estimateLocked(file string) uint64 {
	if file == "" || c.limit == 0 || c.filDir == "" {
		return 0
	}
	fi, err := os.Stat(filepath.Join(c.filDir, file))
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return uint64(fi.Size())
}

// useLocked marks e as just used and, when u is not nil, holds it for u's request.
func (c *ParamCache) useLocked(e *paramEntry, u *Usage) {
	c.clock++
	e.lastUse = c.clock
	if u.hold(c, e) {
		e.refs++
	}
}

// release ends one hold of e (Usage.Release).
func (c *ParamCache) release(e *paramEntry) {
	defer c.notifyDropped()
	c.mu.Lock()
	defer c.mu.Unlock()
	held := e.refs > 0
	if held {
		e.refs--
	}
	if e.refs == 0 {
		if held && c.entries[e.name] != e {
			c.droppedLocked(e) // evicted while in use
		}
		c.fitLocked(nil) // sets kept over the limit because they were in use may go now
	}
}

// fitLocked drops the least recently used sets that no proof holds (never keep) until the
// cache fits its memory limit.
func (c *ParamCache) fitLocked(keep *paramEntry) {
	if c.limit == 0 {
		return
	}
	var total uint64
	var idle []*paramEntry
	for _, e := range c.entries {
		total += e.bytes
		if e.ready && e.refs == 0 && e != keep {
			idle = append(idle, e)
		}
	}
	if total <= c.limit {
		c.overLimit = false
		return
	}
	sort.Slice(idle, func(a, b int) bool { return idle[a].lastUse < idle[b].lastUse })
	for _, e := range idle {
		if total <= c.limit {
			break
		}
		delete(c.entries, e.name)
		c.droppedLocked(e)
		total -= e.bytes
		log.Infow("dropped parameters to stay within the memory limit", "circuit", e.name, "bytes", e.bytes,
			"limit", c.limit, "cached", total)
	}
	if total > c.limit {
		if !c.overLimit {
			log.Warnw("parameter cache over its memory limit: the parameters in it are in use or being loaded, and a proof is never refused for the limit",
				"limit", c.limit, "cached", total)
		}
		c.overLimit = true
		return
	}
	c.overLimit = false
}

// post is PoSt for a PoSt proof type, with the entry.
func (c *ParamCache) post(ctx context.Context, p *post.Proof) (*paramEntry, bool, error) {
	return c.filecoin(ctx, postMeta(p), p.ParamFile(), "PoSt", checkInputs(p.Name, p.PublicInputs()))
}

func postMeta(p *post.Proof) ParamMeta {
	kind := rpcapi.KindWinningPoSt
	if p.Kind == post.Window {
		kind = rpcapi.KindWindowPoSt
	}
	return ParamMeta{Kind: kind, SectorSize: p.SectorSize, Proof: p.Name}
}

// update is Update with the entry.
func (c *ParamCache) update(ctx context.Context, name string, ps *update.Params) (*paramEntry, bool, error) {
	// k_and_h_select (h_select), comm_r_old, comm_d_new, comm_r_new, and ONE.
	return c.filecoin(ctx, updateMeta(name, ps), ps.ParamFile(), "SnapDeals", checkInputs(name, 5))
}

func updateMeta(name string, ps *update.Params) ParamMeta {
	return ParamMeta{Kind: rpcapi.KindSnapProve, SectorSize: ps.SectorNodes * prooftypes.NodeSize, Proof: name}
}

// PutPoSt is PutSeal for a PoSt proof type.
func (c *ParamCache) PutPoSt(ctx context.Context, p *post.Proof, sp *SealParams) error {
	return c.put(ctx, p.ParamFile()+".params", postMeta(p), sp)
}

// PutUpdate is PutSeal for the SnapDeals circuit of update proof type pt.
func (c *ParamCache) PutUpdate(ctx context.Context, pt abi.RegisteredUpdateProof, sp *SealParams) error {
	ps, err := update.ForProof(pt)
	if err != nil {
		return err
	}
	return c.put(ctx, ps.ParamFile()+".params", updateMeta(UpdateProofName(pt), ps), sp)
}

// put makes sp the entry called name, as if loaded.
func (c *ParamCache) put(ctx context.Context, name string, meta ParamMeta, sp *SealParams) error {
	_, _, err := c.get(ctx, name, meta, "", nil, func(context.Context) (*SealParams, error) { return sp, nil })
	return err
}

// UnknownCircuitError answers a proof kind and sector size that name no Filecoin circuit.
type UnknownCircuitError struct {
	Kind       Kind
	SectorSize uint64
	Err        error
}

func (e *UnknownCircuitError) Error() string {
	return fmt.Sprintf("no %s circuit for sector size %d: %v", e.Kind, e.SectorSize, e.Err)
}

func (e *UnknownCircuitError) Unwrap() error { return e.Err }

// circuit resolves the parameter set proving kind for sectors of sectorSize bytes: its name
// in the cache and how to fetch it. PoRep is the current interactive seal proof (V1_1; V1 and
// the synthetic types prove the same circuit), WindowPoSt the V1_1 proof type (V1 shares its
// parameters), SnapDeals the non-Poseidon update proof that RegisteredUpdateProof names.
func (c *ParamCache) circuit(kind Kind, sectorSize uint64) (string, func(context.Context) (*paramEntry, bool, error), error) {
	unknown := func(err error) error { return &UnknownCircuitError{Kind: kind, SectorSize: sectorSize, Err: err} }
	switch kind {
	case rpcapi.KindPoRepC2:
		p, err := prooftypes.ForSectorSize(sectorSize)
		if err != nil {
			return "", nil, unknown(err)
		}
		return p.ParamsFile(), func(ctx context.Context) (*paramEntry, bool, error) { return c.seal(ctx, p) }, nil
	case rpcapi.KindWinningPoSt, rpcapi.KindWindowPoSt:
		want := post.Winning
		if kind == rpcapi.KindWindowPoSt {
			want = post.Window
		}
		for _, p := range post.All() {
			if p.Kind == want && p.SectorSize == sectorSize && (want == post.Winning || p.APIVersion == prooftypes.APIVersion1_2_0) {
				return p.ParamFile() + ".params", func(ctx context.Context) (*paramEntry, bool, error) { return c.post(ctx, p) }, nil
			}
		}
		return "", nil, unknown(fmt.Errorf("not a Filecoin sector size"))
	case rpcapi.KindSnapProve:
		for pt := abi.RegisteredUpdateProof_StackedDrg2KiBV1; pt <= abi.RegisteredUpdateProof_StackedDrg64GiBV1; pt++ {
			ps, err := update.ForProof(pt)
			if err != nil {
				return "", nil, unknown(err)
			}
			if ps.SectorNodes*prooftypes.NodeSize == sectorSize {
				name := UpdateProofName(pt)
				return ps.ParamFile() + ".params", func(ctx context.Context) (*paramEntry, bool, error) { return c.update(ctx, name, ps) }, nil
			}
		}
		return "", nil, unknown(fmt.Errorf("not a Filecoin sector size"))
	}
	return "", nil, unknown(fmt.Errorf("parameters of %q are not in the Filecoin parameter directory", kind))
}

// ParamName is the cache's name for the parameters proving kind for sectors of sectorSize
// bytes (the .params file name), or an *UnknownCircuitError.
func (c *ParamCache) ParamName(kind Kind, sectorSize uint64) (string, error) {
	name, _, err := c.circuit(kind, sectorSize)
	return name, err
}

// Preloaded is the outcome of Preload.
type Preloaded struct {
	// Name is the set's name in the cache.
	Name string
	// AlreadyLoaded reports that the set was in memory before the call.
	AlreadyLoaded bool
	// Took is how long the call waited for the set to load (0 when it was in memory).
	Took time.Duration
	// Bytes is the set's in-memory size.
	Bytes uint64
}

// Preload loads the parameters proving kind for sectors of sectorSize bytes into the cache,
// exactly as the first proof would (the same files, checks and errors, e.g.
// *MissingParamsError), so that the first proof does not wait for them.
func (c *ParamCache) Preload(ctx context.Context, kind Kind, sectorSize uint64) (Preloaded, error) {
	name, fetch, err := c.circuit(kind, sectorSize)
	if err != nil {
		return Preloaded{}, err
	}
	t0 := time.Now()
	e, hit, err := fetch(WithoutUsage(ctx))
	if err != nil {
		return Preloaded{Name: name}, fmt.Errorf("preloading %s parameters: %w", kind, err)
	}
	out := Preloaded{Name: name, AlreadyLoaded: hit}
	if !hit {
		out.Took = time.Since(t0)
	}
	c.mu.Lock()
	out.Bytes = e.bytes
	c.mu.Unlock()
	if !hit {
		log.Infow("preloaded parameters", "circuit", name, "kind", kind, "sector_size", sectorSize, "bytes", out.Bytes, "took", out.Took)
	}
	return out, nil
}

// Evict drops the parameter set called name (as Loaded names it). It reports whether the set
// was loaded and the bytes the cache no longer holds; proofs in flight keep their reference
// (the memory is freed when the last of them ends) and later proofs load the set again. A set
// still loading is dropped too (wasLoaded false): its load completes for the requests waiting
// on it, and the cache does not keep it.
func (c *ParamCache) Evict(name string) (wasLoaded bool, freed uint64) {
	defer c.notifyDropped()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[name]
	if !ok {
		return false, 0
	}
	delete(c.entries, name)
	c.droppedLocked(e)
	if !e.ready {
		log.Infow("dropped parameters still loading", "circuit", name)
		return false, 0
	}
	log.Infow("evicted parameters", "circuit", name, "bytes", e.bytes, "in_use", e.refs)
	return true, e.bytes
}
