package prover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
)

// MissingSRSError names the SnarkPack SRS file an aggregation needs and where it was expected.
type MissingSRSError struct {
	Path string
}

func (e *MissingSRSError) Error() string {
	return fmt.Sprintf("SnarkPack SRS not found: %s does not exist; aggregating proofs (the NI-PoRep C2 answer) needs it: "+
		"`snarkd params fetch --srs` puts the published file in %s, or for devnets and tests only "+
		"`snarkd params gen --srs` writes an INSECURE devnet one", e.Path, filepath.Dir(e.Path))
}

// AggregationKeys returns the SnarkPack prover key for n proofs (a power of two; its Verifier
// is the matching verifier key), specialised from the SRS file (snarkpack.SRSFile) in the
// Filecoin parameter directory. The file is read at first use and kept, next to the
// parameters it aggregates proofs of; a missing file is a *MissingSRSError, and a failure is
// not kept, so a file put in place later is found by the next request.
func (c *ParamCache) AggregationKeys(ctx context.Context, n int) (*snarkpack.ProverKey, error) {
	c.mu.Lock()
	dir, kc, read := c.filDir, c.srs, c.srsRead
	if kc == nil && dir != "" {
		kc = &snarkpack.KeyCache{Path: filepath.Join(dir, snarkpack.SRSFile)}
		c.srs = kc
	}
	c.mu.Unlock()
	if dir == "" {
		return nil, fmt.Errorf("no Filecoin parameter directory configured (Prover.ParameterCache / FIL_PROOFS_PARAMETER_CACHE): aggregation reads %s from it", snarkpack.SRSFile)
	}
	t0 := time.Now()
	if !read {
		loadReportFrom(ctx)(ParamLoad{Circuit: snarkpack.SRSFile})
	}
	pk, err := kc.Keys(ctx, n)
	if !read {
		UsageFrom(ctx).addLoad(time.Since(t0))
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, &MissingSRSError{Path: kc.Path}
	}
	if err != nil {
		return nil, fmt.Errorf("SnarkPack keys for %d proofs: %w", n, err)
	}
	if !read {
		c.mu.Lock()
		if c.srs == kc {
			c.srsRead = true
		}
		c.mu.Unlock()
		log.Infow("SnarkPack SRS read", "path", kc.Path, "proofs", n, "took", time.Since(t0))
	}
	return pk, nil
}

// aggregation turns a request's verified partition proofs into one SnarkPack aggregate, the
// request's answer (filecoin-proofs' NI-PoRep C2): the proofs and their public inputs are
// padded to key.N by repeating the last, and include is bound into the transcript.
type aggregation struct {
	key     *snarkpack.ProverKey
	include []byte
	version snarkpack.Version
}

// newAggregation resolves the keys aggregating n proofs (padded to snarkpack.TargetLen(n)).
func (p *Pipeline) newAggregation(ctx context.Context, n int, include []byte, v snarkpack.Version) (*aggregation, error) {
	key, err := p.params.AggregationKeys(ctx, snarkpack.TargetLen(n))
	if err != nil {
		return nil, err
	}
	return &aggregation{key: key, include: include, version: v}, nil
}

// run aggregates proofs (partition order; inputs are their public inputs, ONE excluded) and
// verifies the encoded aggregate, as parsed back from its bytes, against vk: an aggregate that
// does not verify is an error (counted in res.Unverified with WithUnverifiedProofs), never an
// answer. Aggregation and verification are timed in ph and reported to the phase observer.
func (a *aggregation) run(ctx context.Context, p *Pipeline, kind Kind, vk *groth16.VerifyingKey, proofs []*groth16.Proof, inputs [][]fr.Element, ph *Phases, res *Result) ([]byte, error) {
	padded, err := snarkpack.PadProofs(proofs)
	if err != nil {
		return nil, err
	}
	paddedIn, err := snarkpack.PadInputs(inputs)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	agg, err := snarkpack.Aggregate(ctx, a.key, a.include, padded, a.version)
	if err != nil {
		return nil, fmt.Errorf("aggregating %d proofs (%d padded): %w", len(proofs), len(padded), err)
	}
	b, err := agg.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("encoding the aggregate of %d proofs: %w", len(padded), err)
	}
	took := time.Since(t0)
	ph.Add(PhaseAggregate, took)
	p.observePhase(kind, PartitionAggregate, took)

	t1 := time.Now()
	back, err := snarkpack.ParseAggregateProof(b)
	if err == nil {
		err = snarkpack.Verify(ctx, a.key.Verifier(), vk, paddedIn, back, a.include, a.version)
	}
	verify := time.Since(t1)
	ph.Add(PhaseVerify, verify)
	res.Verify += verify
	p.observePhase(kind, PartitionAggregateVerify, verify)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if p.unverified && errors.Is(err, snarkpack.ErrInvalid) {
			res.Unverified++
			return b, nil
		}
		log.Errorw("SnarkPack aggregate does not verify", "kind", kind, "proofs", len(proofs), "padded", len(padded), "backend", p.backend.Name(), "err", err)
		return nil, fmt.Errorf("self-check: the SnarkPack aggregate of %d proofs does not verify: %w", len(padded), err)
	}
	log.Infow("proofs aggregated", "kind", kind, "proofs", len(proofs), "padded", len(padded), "bytes", len(b),
		"aggregate", took, "verify", verify)
	return b, nil
}
