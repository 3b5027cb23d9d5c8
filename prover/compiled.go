package prover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/cs"
	"github.com/snarkd/snarkd/groth16"
)

// compiledEntry is one compiled circuit of a parameter set, loading or loaded; comp and err are
// set before done is closed.
type compiledEntry struct {
	done chan struct{}
	comp *cs.Compiled
	err  error
}

// WithCircuitDir stores compiled circuits under dir ("" keeps them in memory only) and returns c.
func (c *ParamCache) WithCircuitDir(dir string) *ParamCache {
	c.mu.Lock()
	c.circuitDir = dir
	c.mu.Unlock()
	return c
}

// CircuitDir is the directory of stored compiled circuits ("" for none).
func (c *ParamCache) CircuitDir() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.circuitDir
}

// ErrNotCompiled answers Compiled without wait while the compiled circuit is still being read
// or recorded in the background: synthesize in full meanwhile.
var ErrNotCompiled = errors.New("compiled circuit not ready yet")

// Compiled returns the compiled circuit called key of the circuit that sp proves: from memory,
// else from <circuit dir>/<key>.r1cs, else recorded with build and stored there (a stored file
// that is damaged or of another shape is rebuilt, with a warning naming it). The circuit is
// kept with sp's entry, counted in its bytes against the memory limit, and dropped with it; a
// recording that failed is not retried until the parameters are loaded again.
//
// Without wait, a compiled circuit that is not in memory is read or recorded in the background
// (once) and ErrNotCompiled returned at once, so that no proof waits for a recording.
func (c *ParamCache) Compiled(ctx context.Context, sp *SealParams, key string, build func(context.Context) (*cs.Compiled, error), wait bool) (*cs.Compiled, error) {
	for {
		c.mu.Lock()
		var e *paramEntry
		for _, pe := range c.entries {
			if pe.ready && pe.sp == sp {
				e = pe
				break
			}
		}
		dir := c.circuitDir
		if e == nil {
			// Evicted, or not from this cache: compile for this request alone.
			c.mu.Unlock()
			if !wait {
				return nil, ErrNotCompiled
			}
			return loadOrCompile(ctx, dir, key, build)
		}
		ce, ok := e.compiled[key]
		if !ok {
			ce = &compiledEntry{done: make(chan struct{})}
			if e.compiled == nil {
				e.compiled = map[string]*compiledEntry{}
			}
			e.compiled[key] = ce
			c.mu.Unlock()
			if !wait {
				// Shared work, not this request's: it runs to its end whatever the request does.
				go c.fill(context.WithoutCancel(ctx), e, ce, dir, key, build)
				return nil, ErrNotCompiled
			}
			c.fill(ctx, e, ce, dir, key, build)
			return ce.comp, ce.err
		}
		c.mu.Unlock()
		if !wait {
			select {
			case <-ce.done:
			default:
				return nil, ErrNotCompiled
			}
		}
		select {
		case <-ce.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if ce.err == nil {
			return ce.comp, nil
		}
		if !isContextErr(ce.err) || ctx.Err() != nil {
			return nil, ce.err
		}
		// The request that was compiling went away; compile for this one.
	}
}

// fill reads or records ce for e and publishes it. A context error is forgotten (the next
// caller tries again); any other failure stays, so it is not retried for every partition.
func (c *ParamCache) fill(ctx context.Context, e *paramEntry, ce *compiledEntry, dir, key string, build func(context.Context) (*cs.Compiled, error)) {
	comp, err := loadOrCompile(ctx, dir, key, build)
	if err != nil && !isContextErr(err) {
		log.Errorw("compiled circuit unavailable; its proofs synthesize in full", "key", key, "err", err)
	}
	c.mu.Lock()
	ce.comp, ce.err = comp, err
	switch {
	case isContextErr(err):
		delete(e.compiled, key)
	case err == nil:
		e.bytes += comp.Bytes()
		c.fitLocked(e)
	}
	close(ce.done)
	c.mu.Unlock()
	c.notifyDropped()
}

// LoadOrCompile returns the compiled circuit called key from <dir>/<key>.r1cs, or records it
// with build and stores it there ("" keeps it in memory only), as a proof's first partition
// does: for tools that need the circuit before its first proof.
func LoadOrCompile(ctx context.Context, dir, key string, build func(context.Context) (*cs.Compiled, error)) (*cs.Compiled, error) {
	return loadOrCompile(ctx, dir, key, build)
}

// loadOrCompile reads dir/key.r1cs, or records the circuit with build and stores it there.
func loadOrCompile(ctx context.Context, dir, key string, build func(context.Context) (*cs.Compiled, error)) (*cs.Compiled, error) {
	path := ""
	if dir != "" {
		path = filepath.Join(dir, key+".r1cs")
		t0 := time.Now()
		comp, err := cs.LoadCompiled(path, key, buildID())
		switch {
		case err == nil:
			log.Infow("compiled circuit loaded", "file", path, "bytes", comp.Bytes(), "took", time.Since(t0))
			return comp, nil
		case errors.Is(err, fs.ErrNotExist):
		case errors.Is(err, cs.ErrCompiledFile):
			log.Warnw("stored compiled circuit refused; recording it again", "err", err)
		default:
			log.Warnw("cannot read the stored compiled circuit; recording it again", "file", path, "err", err)
		}
	}
	t0 := time.Now()
	comp, err := safeBuild(ctx, build)
	if err != nil {
		return nil, fmt.Errorf("compiling circuit %s: %w", key, err)
	}
	comp.Build = buildID()
	log.Infow("circuit compiled", "key", key, "rows", comp.NumConstraints(), "terms", comp.Terms(), "bytes", comp.Bytes(), "took", time.Since(t0))
	if path != "" {
		if err := comp.Store(path); err != nil {
			log.Warnw("compiled circuit not stored; it is recorded again after a restart", "err", err)
		} else {
			log.Infow("compiled circuit stored", "file", path)
		}
	}
	return comp, nil
}

// compiledSynthesis is one circuit's compiled path: the key and recording of its compiled
// circuit, its witness-only synthesis, and its full synthesis (fallback and referee).
type compiledSynthesis struct {
	key     string
	compile func(context.Context) (*cs.Compiled, error)
	witness func(context.Context, *cs.Compiled) (*cs.ProvingAssignment, error)
	// check, if set, checks a completed assignment further (its public inputs).
	check func(*cs.ProvingAssignment) error
	full  func(context.Context) (*cs.ProvingAssignment, error)
}

// synthesize builds a partition's assignment from the compiled circuit of sp's circuit: the
// witness-only assignment completed, fitted to sp's parameters, every row and the public inputs
// checked. Without a compiled circuit (p.fullSynthesis, or it is not in memory yet) it
// synthesizes in full. Any failure of the compiled path goes to full synthesis, whose answer
// stands: its error (an input error names the constraint) is the partition's, and its success
// means the compiled circuit is not this build's, which is then dropped (memory and file) and
// recorded again.
func (p *Pipeline) synthesize(ctx context.Context, sp *SealParams, ph *Phases, s compiledSynthesis) (*cs.ProvingAssignment, error) {
	full := func() (*cs.ProvingAssignment, error) {
		t0 := time.Now()
		pa, err := s.full(ctx)
		ph.Add(PhaseFullSynthesis, time.Since(t0))
		return pa, err
	}
	if p.fullSynthesis {
		return full()
	}
	t0 := time.Now()
	comp, err := p.params.Compiled(ctx, sp, s.key, s.compile, p.waitCompiled)
	ph.Add(PhaseCompile, time.Since(t0))
	switch {
	case errors.Is(err, ErrNotCompiled):
		log.Debugw("compiled circuit not ready; synthesizing in full", "key", s.key)
		return full()
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		log.Debugw("no compiled circuit; synthesizing in full", "key", s.key, "err", err)
		return full()
	}
	// referee synthesizes in full after the compiled path failed with err: full synthesis's
	// answer stands, and a success drops the compiled circuit.
	referee := func(err error) (*cs.ProvingAssignment, error) {
		pa, ferr := full()
		if ferr != nil {
			return nil, ferr
		}
		if err := s.holds(pa); err != nil {
			return nil, err
		}
		log.Errorw("compiled circuit disagrees with full synthesis; dropped, recorded again, and this partition proved from full synthesis",
			"key", s.key, "err", err)
		p.params.dropCompiled(sp, s.key, comp)
		return pa, nil
	}
	pa, err := p.completed(ctx, sp, ph, s, comp)
	if err == nil {
		if pa.Deferred() != nil {
			// The device checks the rows as it computes a, b and c; an unsatisfied row found
			// there goes to the referee as one found here would.
			p.referees.Store(pa, referee)
		}
		return pa, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return referee(err)
}

// completed is the compiled path of synthesize: witness-only synthesis, the products, and the
// checks (parameters' shape, every row, the public inputs).
func (p *Pipeline) completed(ctx context.Context, sp *SealParams, ph *Phases, s compiledSynthesis, comp *cs.Compiled) (_ *cs.ProvingAssignment, err error) {
	t0 := time.Now()
	pa, err := s.witness(ctx, comp)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			pa.Recycle() // pooled (and possibly device-registered) memory goes back
		}
	}()
	t1 := time.Now()
	ph.Add(PhaseWitness, t1.Sub(t0))
	if d, ok := p.backend.(ProductsDeferrer); ok && sp.PK != nil && d.DefersProducts(sp.PK, comp) {
		// The backend's device computes a, b and c from the witness (and checks every row).
		if err := comp.Defer(pa); err != nil {
			return nil, err
		}
	} else {
		// The rows are checked as the products compute them (counted in the products' time).
		row, err := comp.CompleteChecked(ctx, pa, 0)
		if err != nil {
			return nil, err
		}
		if row >= 0 {
			return nil, &cs.UnsatisfiedRowError{Row: row}
		}
	}
	t2 := time.Now()
	ph.Add(PhaseProducts, t2.Sub(t1))
	defer func() { ph.Add(PhaseCheck, time.Since(t2)) }()
	if sp.PK != nil {
		if err := groth16.CheckShape(sp.PK, pa); err != nil {
			return nil, err
		}
	}
	if s.check != nil {
		if err := s.check(pa); err != nil {
			return nil, err
		}
	}
	return pa, nil
}

// holds checks that pa satisfies every row and, with s.check, the further checks.
func (s compiledSynthesis) holds(pa *cs.ProvingAssignment) error {
	if row := cs.FirstUnsatisfied(pa); row >= 0 {
		return fmt.Errorf("partition not satisfied: row %d", row)
	}
	if s.check != nil {
		return s.check(pa)
	}
	return nil
}

// dropCompiled forgets comp, the compiled circuit called key of sp's entry, and its stored file,
// so that the next partition records it again.
func (c *ParamCache) dropCompiled(sp *SealParams, key string, comp *cs.Compiled) {
	c.mu.Lock()
	dir := c.circuitDir
	for _, e := range c.entries {
		if e.sp != sp {
			continue
		}
		if ce, ok := e.compiled[key]; ok && ce.comp == comp {
			delete(e.compiled, key)
			e.bytes -= comp.Bytes()
			comp.ReleaseVectors()
		}
	}
	c.mu.Unlock()
	if dir != "" {
		if err := os.Remove(filepath.Join(dir, key+".r1cs")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			log.Warnw("cannot remove the stale compiled circuit", "err", err)
		}
	}
}

// safeBuild runs build, turning a panic into an error: recording runs in the background, where a
// panic would end the daemon.
func safeBuild(ctx context.Context, build func(context.Context) (*cs.Compiled, error)) (comp *cs.Compiled, err error) {
	defer func() {
		if r := recover(); r != nil {
			comp, err = nil, fmt.Errorf("recording panicked: %v", r)
		}
	}()
	return build(ctx)
}

// BuildID names this build in stored compiled circuits, so that an upgraded snarkd records its
// circuits again rather than trusting files an earlier build wrote (a development build without
// a version or revision is "dev"). Tools that store circuits for the daemon stamp them with it.
func BuildID() string { return buildID() }

func buildID() string {
	v := buildinfo.Version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision":
				v += "+" + s.Value
			case s.Key == "vcs.modified" && s.Value == "true":
				v += "-dirty"
			}
		}
	}
	return v
}
