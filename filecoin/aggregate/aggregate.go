// Package aggregate aggregates the C2 proofs of many sectors into one SnarkPack proof and
// verifies such aggregates, as filecoin-proofs' aggregate_seal_commit_proofs and
// verify_aggregate_seal_commit_proofs do behind filecoin-ffi's AggregateSealProofs and
// VerifyAggregateSeals (a lotus-miner's ProveCommitAggregate, batches of NI-PoRep sectors).
//
// Every sector's partition proofs are aggregated in order, padded to a power of two by
// repeating the last; the transcript binds SHA-256 over each sector's seed and comm_r (comm_r
// alone for NI-PoRep, seal.AggregateInclude). Verification recomputes every partition's public
// inputs from the sector's miner, number, ticket, seed, comm_d and comm_r.
package aggregate

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/filecoin-project/go-state-types/abi"
	"github.com/filecoin-project/go-state-types/proof"

	"github.com/snarkd/snarkd/filecoin/commcid"
	"github.com/snarkd/snarkd/filecoin/porep"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/seal"
	"github.com/snarkd/snarkd/groth16"
	"github.com/snarkd/snarkd/groth16/snarkpack"
)

// FIP-0090 bounds on the NI-PoRep sectors of one aggregate (filecoin-proofs'
// FIP92_MIN_NI_POREP_AGGREGATION_PROOFS and FIP92_MAX_NI_POREP_AGGREGATION_PROOFS). They apply
// when more than one sector is aggregated: one sector is an NI-PoRep C2's own aggregate.
const (
	MinNonInteractiveSectors = 1
	MaxNonInteractiveSectors = 65
)

// InputError names the part of an aggregation or verification request that is malformed or
// inconsistent: Field is "SealProof", "AggregateProof", "Infos", "Infos[3].SealedCID",
// "Proofs[2]", "Proof" (the aggregate's bytes), …; retrying the same input cannot succeed.
type InputError struct {
	Field  string
	Reason string
}

func (e *InputError) Error() string { return e.Field + ": " + e.Reason }

func inputErr(field, format string, args ...any) error {
	return &InputError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// fieldErr is an InputError for field from err, whose message may start with the field's
// name already (commcid's do).
func fieldErr(field string, err error) error {
	return &InputError{Field: field, Reason: strings.TrimPrefix(err.Error(), field+": ")}
}

// Sector is one aggregated sector: what its partition proofs' public inputs derive from.
type Sector struct {
	Number abi.SectorNumber
	// Ticket is the sealing randomness; Seed the interactive randomness (NI-PoRep derives its
	// challenges from comm_r and ignores it).
	Ticket, Seed [32]byte
	CommR, CommD [32]byte
}

// Set is the sectors of one aggregate, in aggregation order, and how they are aggregated.
type Set struct {
	Proof   *prooftypes.SealProof
	Version snarkpack.Version
	Miner   abi.ActorID
	Sectors []Sector
}

// Decode checks and decodes filecoin-ffi's aggregate info (proof.AggregateSealVerifyProofAndInfos
// without its Proof): a known seal proof type shared by every sector, a known aggregation
// type, at least one sector (at most MaxNonInteractiveSectors for NI-PoRep), no more proofs
// than the SnarkPack SRS aggregates (snarkpack.MaxProofs after padding), commitment CIDs of the
// right codec and hash holding field elements, and 32 bytes of ticket and seed (an NI-PoRep
// seed may be empty: it is not used). Errors are *InputError.
func Decode(sealProof abi.RegisteredSealProof, aggregation abi.RegisteredAggregationProof, miner abi.ActorID, infos []proof.AggregateSealVerifyInfo) (*Set, error) {
	p, err := prooftypes.Lookup(sealProof)
	if err != nil {
		return nil, inputErr("SealProof", "%d is not a registered seal proof", sealProof)
	}
	v, err := snarkpack.VersionOf(int64(aggregation))
	if err != nil {
		return nil, inputErr("AggregateProof", "%d is not a registered aggregation proof (want 0 SnarkPackV1 or 1 SnarkPackV2)", aggregation)
	}
	n := len(infos)
	if n == 0 {
		return nil, inputErr("Infos", "empty: want one per aggregated sector")
	}
	if p.Feature == prooftypes.NonInteractive && n > 1 && (n < MinNonInteractiveSectors || n > MaxNonInteractiveSectors) {
		return nil, inputErr("Infos", "%d %s sectors: FIP-0090 aggregates %d to %d NI-PoRep sectors", n, p.Name, MinNonInteractiveSectors, MaxNonInteractiveSectors)
	}
	if proofs := n * p.Partitions; snarkpack.TargetLen(proofs) > snarkpack.MaxProofs {
		return nil, inputErr("Infos", "%d sectors of %d partitions are %d proofs (%d once padded to a power of two): a SnarkPack aggregate holds at most %d",
			n, p.Partitions, proofs, snarkpack.TargetLen(proofs), snarkpack.MaxProofs)
	}
	s := &Set{Proof: p, Version: v, Miner: miner, Sectors: make([]Sector, n)}
	for i, info := range infos {
		f := fmt.Sprintf("Infos[%d]", i)
		sec := &s.Sectors[i]
		sec.Number = info.Number
		commR, err := commcid.Sealed(info.SealedCID, f+".SealedCID")
		if err != nil {
			return nil, fieldErr(f+".SealedCID", err)
		}
		commD, err := commcid.Unsealed(info.UnsealedCID, f+".UnsealedCID")
		if err != nil {
			return nil, fieldErr(f+".UnsealedCID", err)
		}
		// get_seal_inputs refuses all-zero commitments.
		if commR.IsZero() {
			return nil, inputErr(f+".SealedCID", "all-zero comm_r")
		}
		if commD.IsZero() {
			return nil, inputErr(f+".UnsealedCID", "all-zero comm_d")
		}
		sec.CommR, sec.CommD = commR, commD
		if len(info.Randomness) != 32 {
			return nil, inputErr(f+".Randomness", "%d bytes, want the 32-byte sealing ticket", len(info.Randomness))
		}
		copy(sec.Ticket[:], info.Randomness)
		switch l := len(info.InteractiveRandomness); {
		case l == 32:
			copy(sec.Seed[:], info.InteractiveRandomness)
		case l == 0 && p.Feature == prooftypes.NonInteractive:
		default:
			return nil, inputErr(f+".InteractiveRandomness", "%d bytes, want the 32-byte interactive seed", l)
		}
	}
	return s, nil
}

// Proofs is how many partition proofs the set aggregates; Padded that count padded to the
// power of two the aggregate holds (snarkpack.TargetLen).
func (s *Set) Proofs() int { return len(s.Sectors) * s.Proof.Partitions }

// Padded is the number of proofs in the aggregate: Proofs padded to a power of two (at least 2).
func (s *Set) Padded() int { return snarkpack.TargetLen(s.Proofs()) }

// Include is what the aggregate's transcript binds (seal.AggregateInclude of the sectors'
// comm_r and seeds).
func (s *Set) Include() [32]byte {
	commRs := make([][32]byte, len(s.Sectors))
	seeds := make([][32]byte, len(s.Sectors))
	for i, sec := range s.Sectors {
		commRs[i], seeds[i] = sec.CommR, sec.Seed
	}
	return seal.AggregateInclude(s.Proof, commRs, seeds)
}

// CheckProofs checks the shape of the sectors' C2 proofs, cheaply: one per sector, each 192
// bytes per partition of the proof type (for NI-PoRep the concatenated circuit proofs, not an
// NI-PoRep C2 answer, which is an aggregate already).
func (s *Set) CheckProofs(proofs [][]byte) error {
	if len(proofs) != len(s.Sectors) {
		return inputErr("Proofs", "%d C2 proofs for %d sectors (Infos): want one per sector, in the same order", len(proofs), len(s.Sectors))
	}
	want := s.Proof.ProofBytes()
	for i, b := range proofs {
		if len(b) != want {
			return inputErr(fmt.Sprintf("Proofs[%d]", i), "%d bytes; a %s C2 proof is %d (%d partitions × %d)",
				len(b), s.Proof.Name, want, s.Proof.Partitions, groth16.ProofSize)
		}
	}
	return nil
}

// ParseProofs decodes the sectors' C2 proofs (CheckProofs first) into their partition proofs,
// sector by sector in partition order, with bellperson's checks: valid compressed points in
// the prime-order subgroups, none at infinity.
func (s *Set) ParseProofs(ctx context.Context, proofs [][]byte) ([]*groth16.Proof, error) {
	if err := s.CheckProofs(proofs); err != nil {
		return nil, err
	}
	parts := s.Proof.Partitions
	out := make([]*groth16.Proof, s.Proofs())
	err := parallel(ctx, len(out), func(j int) error {
		i, k := j/parts, j%parts
		p, err := groth16.ParseProof(proofs[i][k*groth16.ProofSize : (k+1)*groth16.ProofSize])
		if err != nil {
			return inputErr(fmt.Sprintf("Proofs[%d]", i), "partition %d: %v", k, err)
		}
		out[j] = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PublicInputs returns every partition's public inputs (ONE excluded), sector by sector in
// partition order, as filecoin-ffi's verification computes them (get_seal_inputs): the replica
// ID from the miner's prover ID, the sector number, ticket and comm_d, then the partition's
// challenges from it with the seed (or comm_r for NI-PoRep).
func (s *Set) PublicInputs(ctx context.Context) ([][]fr.Element, error) {
	g, err := porep.NewGraph(s.Proof)
	if err != nil {
		return nil, fmt.Errorf("%s graph: %w", s.Proof.Name, err)
	}
	proverID := prooftypes.ProverID(s.Miner)
	porepID := s.Proof.PoRepID()
	parts := s.Proof.Partitions
	out := make([][]fr.Element, s.Proofs())
	err = parallel(ctx, len(s.Sectors), func(i int) error {
		sec := s.Sectors[i]
		pp := &porep.PublicParams{Proof: s.Proof, Graph: g, CommD: sec.CommD, CommR: sec.CommR, Seed: sec.Seed,
			ReplicaID: porep.ReplicaID(proverID, uint64(sec.Number), sec.Ticket, sec.CommD, porepID)}
		for k := range parts {
			in, err := pp.PublicInputs(k)
			if err != nil {
				return inputErr(fmt.Sprintf("Infos[%d]", i), "public inputs of partition %d: %v", k, err)
			}
			out[i*parts+k] = in
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CheckVerifyingKey refuses a Groth16 verifying key of another circuit than the set's
// partition circuit (another number of public inputs).
func (s *Set) CheckVerifyingKey(vk *groth16.VerifyingKey) error {
	if len(vk.IC) != s.Proof.PublicInputs() {
		return fmt.Errorf("the %s verifying key has %d public inputs, the circuit %d (a key of another circuit?)",
			s.Proof.Name, len(vk.IC), s.Proof.PublicInputs())
	}
	return nil
}

// Aggregate aggregates the partition proofs (ParseProofs' order) with pk, a key for Padded()
// proofs, and returns the aggregate's bytes (bellperson's AggregateProof::write).
func (s *Set) Aggregate(ctx context.Context, pk *snarkpack.ProverKey, proofs []*groth16.Proof) ([]byte, error) {
	if len(proofs) != s.Proofs() {
		return nil, fmt.Errorf("aggregating %d proofs of %d sectors of %d partitions: want %d", len(proofs), len(s.Sectors), s.Proof.Partitions, s.Proofs())
	}
	padded, err := snarkpack.PadProofs(proofs)
	if err != nil {
		return nil, err
	}
	if pk.N != len(padded) {
		return nil, fmt.Errorf("SnarkPack key for %d proofs, the aggregate holds %d", pk.N, len(padded))
	}
	include := s.Include()
	agg, err := snarkpack.Aggregate(ctx, pk, include[:], padded, s.Version)
	if err != nil {
		return nil, fmt.Errorf("aggregating %d proofs (%d padded) with %s: %w", len(proofs), len(padded), s.Version, err)
	}
	b, err := agg.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("encoding the aggregate of %d proofs: %w", len(padded), err)
	}
	return b, nil
}

// ParseAggregate decodes an aggregate's bytes (checked: points on their curves and in their
// subgroups, GT elements in GT) and checks that it holds Padded() proofs.
func (s *Set) ParseAggregate(b []byte) (*snarkpack.AggregateProof, error) {
	if len(b) == 0 {
		return nil, inputErr("Proof", "empty: want the aggregate's bytes")
	}
	agg, err := snarkpack.ParseAggregateProof(b)
	if err != nil {
		return nil, fieldErr("Proof", err)
	}
	if agg.NumProofs() != s.Padded() {
		return nil, inputErr("Proof", "aggregates %d proofs; %d %s sectors of %d partitions are %d proofs, %d once padded",
			agg.NumProofs(), len(s.Sectors), s.Proof.Name, s.Proof.Partitions, s.Proofs(), s.Padded())
	}
	return agg, nil
}

// Verify checks an aggregate of the set's proofs against vk (the SnarkPack verifier key for
// Padded() proofs) and gvk (the seal proof type's Groth16 verifying key), with every
// partition's public inputs padded as the proofs were. An aggregate that does not verify is an
// error wrapping snarkpack.ErrInvalid.
func (s *Set) Verify(ctx context.Context, vk *snarkpack.VerifierKey, gvk *groth16.VerifyingKey, agg *snarkpack.AggregateProof) error {
	if err := s.CheckVerifyingKey(gvk); err != nil {
		return err
	}
	if vk.N != s.Padded() {
		return fmt.Errorf("SnarkPack verifier key for %d proofs, the aggregate holds %d", vk.N, s.Padded())
	}
	inputs, err := s.PublicInputs(ctx)
	if err != nil {
		return err
	}
	padded, err := snarkpack.PadInputs(inputs)
	if err != nil {
		return err
	}
	include := s.Include()
	return snarkpack.Verify(ctx, vk, gvk, padded, agg, include[:], s.Version)
}

// Diagnose finds the partition proof that does not verify against its sector's public inputs
// with gvk, for an aggregate that did not verify: an *InputError naming the sector (a proof of
// another sector, or an info that does not describe the sector the proof is of), or nil when
// every proof verifies. Each sector's proofs are batch-verified; those of a failing batch one by
// one.
func (s *Set) Diagnose(ctx context.Context, gvk *groth16.VerifyingKey, proofs []*groth16.Proof) error {
	if err := s.CheckVerifyingKey(gvk); err != nil {
		return err
	}
	pvk, err := groth16.Prepare(gvk)
	if err != nil {
		return fmt.Errorf("preparing the %s verifying key: %w", s.Proof.Name, err)
	}
	inputs, err := s.PublicInputs(ctx)
	if err != nil {
		return err
	}
	parts := s.Proof.Partitions
	bad := make([]int, len(s.Sectors)) // 1 + the first failing partition, per sector
	err = parallel(ctx, len(s.Sectors), func(i int) error {
		ps, in := proofs[i*parts:(i+1)*parts], inputs[i*parts:(i+1)*parts]
		if pvk.VerifyBatch(ps, in, nil) == nil {
			return nil
		}
		for k := range ps {
			if pvk.Verify(ps[k], in[k]) != nil {
				bad[i] = k + 1
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range bad {
		if k > 0 {
			return inputErr(fmt.Sprintf("Proofs[%d]", i), "partition %d of sector %d does not verify against the public inputs of Infos[%d] "+
				"(miner %d, its ticket, seed, comm_d and comm_r): a proof of another sector, or an info that does not describe this one",
				k-1, s.Sectors[i].Number, i, s.Miner)
		}
	}
	return nil
}

// parallel runs fn(0..n-1) on every core, taking indexes in order, and stops taking them at the
// first error. It returns the error of the lowest failing index (every lower index ran), or
// ctx's error.
func parallel(ctx context.Context, n int, fn func(i int) error) error {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		next   int
		failed = -1
		first  error
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if failed >= 0 || next >= n || ctx.Err() != nil {
			return 0, false
		}
		next++
		return next - 1, true
	}
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, ok := take()
				if !ok {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if failed < 0 || i < failed {
						failed, first = i, err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
