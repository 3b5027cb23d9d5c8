package prover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/snarkd/snarkd/filecoin/aggregate"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
)

// SealAggregateRequest aggregates many sectors' C2 proofs into one SnarkPack proof
// (filecoin-ffi's AggregateSealProofs): the decoded aggregate info and each sector's C2 proof,
// in the info's order.
type SealAggregateRequest struct {
	Set    *aggregate.Set
	Proofs [][]byte
}

// AggregateSeals aggregates req's proofs on the CPU and verifies the aggregate, as parsed back
// from its bytes, against the seal proof type's verifying key with every partition's public
// inputs before it answers: an aggregate that does not verify is never an answer. Then the
// partition proof that does not verify against its sector's info is named (an
// *aggregate.InputError, as are malformed proofs), or, should every proof verify, the error is
// a self-check failure. Progress: loading-params while the SnarkPack SRS is first read, then
// aggregating and verifying (one "partition": the aggregate). The SRS and the .vk file are
// read from the cache's Filecoin parameter directory; the proving parameters are not needed.
func AggregateSeals(ctx context.Context, params *ParamCache, req SealAggregateRequest, progress Progress) (Result, error) {
	use := UsageFrom(ctx)
	if use == nil {
		ctx, use = WithUsage(ctx)
		defer use.Release()
	}
	res, err := aggregateSeals(ctx, params, req, progress)
	res.SRSLoad = use.SRSLoad()
	return res, err
}

func aggregateSeals(ctx context.Context, params *ParamCache, req SealAggregateRequest, progress Progress) (Result, error) {
	if progress == nil {
		progress = func(Stage, int, int, ...string) {}
	}
	s := req.Set
	ph := &Phases{}
	res := Result{Partitions: 1}
	tPlan := time.Now()
	proofs, err := s.ParseProofs(ctx, req.Proofs)
	if err != nil {
		return res, err
	}
	vk, err := params.SealVerifyingKey(s.Proof)
	if err != nil {
		return res, err
	}
	loadCtx := withLoadReport(ctx, func(l ParamLoad) { progress(StageLoadingParams, 0, 0, l.String()) })
	pk, err := params.AggregationKeys(loadCtx, s.Padded())
	if err != nil {
		return res, err
	}
	ph.Add(PhasePlan, time.Since(tPlan))

	progress(StageAggregating, 0, 1, fmt.Sprintf("%d sectors, %d proofs, %d padded, %s", len(s.Sectors), s.Proofs(), s.Padded(), s.Version))
	t0 := time.Now()
	b, err := s.Aggregate(ctx, pk, proofs)
	if err != nil {
		return res.with(ph), err
	}
	res.Prove = time.Since(t0)
	ph.Add(PhaseAggregate, res.Prove)

	progress(StageVerifying, 1, 1)
	t1 := time.Now()
	agg, err := s.ParseAggregate(b)
	if err == nil {
		err = s.Verify(ctx, pk.Verifier(), vk, agg)
	}
	res.Verify = time.Since(t1)
	ph.Add(PhaseVerify, res.Verify)
	if err != nil {
		if ctx.Err() != nil {
			return res.with(ph), ctx.Err()
		}
		if !errors.Is(err, snarkpack.ErrInvalid) {
			return res.with(ph), fmt.Errorf("self-check of the aggregate: %w", err)
		}
		if diag := s.Diagnose(ctx, vk, proofs); diag != nil {
			log.Warnw("seal aggregate refused: a proof does not verify against its sector's info", "proof", s.Proof.Name, "miner", s.Miner, "err", diag)
			return res.with(ph), diag
		}
		log.Errorw("seal aggregate does not verify though every proof does", "proof", s.Proof.Name, "sectors", len(s.Sectors), "proofs", s.Proofs(), "version", s.Version)
		return res.with(ph), fmt.Errorf("self-check: the SnarkPack aggregate of %d proofs does not verify, though every proof does: %w", s.Padded(), err)
	}
	log.Infow("seal proofs aggregated", "proof", s.Proof.Name, "miner", s.Miner, "sectors", len(s.Sectors), "proofs", s.Proofs(),
		"padded", s.Padded(), "version", s.Version, "bytes", len(b), "aggregate", res.Prove, "verify", res.Verify)
	res.Proof = b
	return res.with(ph), nil
}

// VerifySealAggregate checks an aggregate of set's sectors' proofs (filecoin-ffi's
// VerifyAggregateSeals): nil when it verifies, an error wrapping snarkpack.ErrInvalid when it
// does not, an *aggregate.InputError when its bytes do not decode or it holds another number of
// proofs than set's sectors, and other errors when the keys cannot be read (a
// *MissingParamsError without the .vk file, a *MissingSRSError without the SRS).
func VerifySealAggregate(ctx context.Context, params *ParamCache, set *aggregate.Set, proof []byte) error {
	agg, err := set.ParseAggregate(proof)
	if err != nil {
		return err
	}
	vk, err := params.SealVerifyingKey(set.Proof)
	if err != nil {
		return err
	}
	pk, err := params.AggregationKeys(ctx, set.Padded())
	if err != nil {
		return err
	}
	t0 := time.Now()
	err = set.Verify(ctx, pk.Verifier(), vk, agg)
	log.Debugw("seal aggregate verified", "proof", set.Proof.Name, "sectors", len(set.Sectors), "valid", err == nil, "took", time.Since(t0))
	return err
}

// SealVerifyingKey is the verifying key of p's partition circuit: that of its parameters when
// they are loaded, else its .vk file in the Filecoin parameter directory (checked point by
// point, and against the circuit's number of public inputs), read without the parameters.
func (c *ParamCache) SealVerifyingKey(p *prooftypes.SealProof) (*groth16.VerifyingKey, error) {
	c.mu.Lock()
	dir := c.filDir
	var vk *groth16.VerifyingKey
	if e, ok := c.entries[p.ParamsFile()]; ok && e.ready && e.sp != nil {
		vk = e.sp.VK
	}
	c.mu.Unlock()
	if vk == nil {
		if dir == "" {
			return nil, fmt.Errorf("no Filecoin parameter directory configured (Prover.ParameterCache / FIL_PROOFS_PARAMETER_CACHE): %s's verifying key is read from it", p.Name)
		}
		path := filepath.Join(dir, p.VKFile())
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, &MissingParamsError{Proof: p.Name, Path: path}
		}
		var err error
		if vk, err = groth16.OpenVerifyingKey(path, groth16.FilecoinReadOptions().VKCheck); err != nil {
			return nil, fmt.Errorf("loading %s verifying key: %w", p.Name, err)
		}
	}
	if len(vk.IC) != p.PublicInputs() {
		return nil, &ParamsMismatchError{Proof: p.Name, Got: len(vk.IC), Want: p.PublicInputs()}
	}
	return vk, nil
}
