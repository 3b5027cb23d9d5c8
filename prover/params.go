package prover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/testcircuit"
)

// DevnetParamSeed derives the test circuit's parameters. They are insecure by design: anyone
// can forge test proofs. Only the "test" kind uses them.
var DevnetParamSeed = []byte("snarkd devnet test-circuit parameters v1")

// ParamCache loads proving parameters once and keeps them in memory; generated test-circuit
// parameters are also written to Dir so that later starts load instead of regenerating.
type ParamCache struct {
	dir string

	mu      sync.Mutex
	entries map[string]*paramEntry
}

type paramEntry struct {
	once  sync.Once
	pk    *groth16.Parameters
	err   error
	bytes uint64
	ready bool
}

// ParamInfo describes one cached parameter set.
type ParamInfo struct {
	Circuit string
	Bytes   uint64
	Loaded  bool
}

// NewParamCache caches on disk under dir ("" keeps them in memory only).
func NewParamCache(dir string) *ParamCache {
	return &ParamCache{dir: dir, entries: map[string]*paramEntry{}}
}

// Test returns the devnet parameters of testcircuit.New(constraints, seed), generating and
// caching them at first use.
func (c *ParamCache) Test(ctx context.Context, constraints int, seed uint64) (*groth16.Parameters, error) {
	name := fmt.Sprintf("test-%d-%d", constraints, seed)
	c.mu.Lock()
	e, ok := c.entries[name]
	if !ok {
		e = &paramEntry{}
		c.entries[name] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		e.pk, e.err = c.loadOrGenerate(ctx, name, constraints, seed)
		c.mu.Lock()
		if e.err == nil {
			e.bytes, e.ready = uint64(e.pk.ParametersSize()), true
		} else {
			// Let a later request try again (for example after a cancelled generation).
			delete(c.entries, name)
		}
		c.mu.Unlock()
	})
	return e.pk, e.err
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
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".params-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := pk.WriteTo(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Loaded lists the parameter sets in memory.
func (c *ParamCache) Loaded() []ParamInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ParamInfo
	for name, e := range c.entries {
		out = append(out, ParamInfo{Circuit: name, Bytes: e.bytes, Loaded: e.ready})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Circuit < out[b].Circuit })
	return out
}
