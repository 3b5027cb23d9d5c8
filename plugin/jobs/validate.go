package jobs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/filecoin/aggregate"
	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/post"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/filecoin/update"
	"github.com/snarkd/snarkd/rpcapi"
	"github.com/snarkd/snarkd/testcircuit"
)

// Limits on request fields that are cheap to check before anything is queued.
const (
	MaxRequestIDLen = 256
	// MaxTestConstraints bounds a test-circuit partition (2^24 constraints).
	MaxTestConstraints = config.TestConstraintsCeiling
	// MaxTestPartitions bounds the partitions of a test job.
	MaxTestPartitions = config.TestPartitionsCeiling
)

func bad(field, format string, args ...interface{}) error {
	return &rpcapi.ErrBadRequest{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Validate checks a request's shape: a known kind, fields that belong to it, and sizes that
// agree with its registered proof. It returns *rpcapi.ErrBadRequest naming the field.
func Validate(req *rpcapi.ProofRequest) error {
	_, err := Decode(req)
	return err
}

// Decoded is what validation decoded of a request, so that the prover does not decode it
// again: the C1 output of a PoRep C2 (nil for other kinds).
type Decoded struct {
	C1        *c1.Output
	SealProof *prooftypes.SealProof
}

// Decode is Validate that also returns what it decoded.
func Decode(req *rpcapi.ProofRequest) (*Decoded, error) {
	dec := &Decoded{}
	if err := validate(req, dec); err != nil {
		return nil, err
	}
	return dec, nil
}

// ValidateFields is Validate without decoding a PoRep C2's C1 output, for front doors that
// have decoded it already (strictly, with c1's decoders); Submit decodes it for the prover.
func ValidateFields(req *rpcapi.ProofRequest) error { return validate(req, nil) }

// validate checks req; it decodes the C1 output of a PoRep C2 into dec, or skips that when
// dec is nil.
func validate(req *rpcapi.ProofRequest, dec *Decoded) error {
	if len(req.RequestID) > MaxRequestIDLen {
		return bad("RequestID", "longer than %d bytes", MaxRequestIDLen)
	}
	if req.Priority != nil {
		switch *req.Priority {
		case rpcapi.PriorityWinningPoSt, rpcapi.PriorityWindowPoSt, rpcapi.PrioritySeal:
		default:
			return bad("Priority", "%d is not 0 (winning-post), 1 (window-post) or 2 (seal)", *req.Priority)
		}
	}
	switch req.Kind {
	case rpcapi.KindTest:
		t := req.Test
		if t == nil {
			return bad("Test", "required for kind %q", req.Kind)
		}
		if t.Constraints < testcircuit.MinConstraints || t.Constraints > MaxTestConstraints {
			return bad("Test.Constraints", "%d: want %d..%d", t.Constraints, testcircuit.MinConstraints, MaxTestConstraints)
		}
		if t.Partitions < 0 || t.Partitions > MaxTestPartitions {
			return bad("Test.Partitions", "%d: want 0..%d (0 means 1)", t.Partitions, MaxTestPartitions)
		}
		if len(req.Phase1Out) > 0 || len(req.VanillaProofs) > 0 {
			return bad("Kind", "test request carries Filecoin proof inputs")
		}
	case rpcapi.KindPoRepC2:
		spt := abi.RegisteredSealProof(req.RegisteredProof)
		size, err := spt.SectorSize()
		if err != nil {
			return bad("RegisteredProof", "%d is not a registered seal proof", req.RegisteredProof)
		}
		if req.SectorSize != 0 && req.SectorSize != size {
			return bad("SectorSize", "%d does not match seal proof %d (%d bytes)", req.SectorSize, spt, size)
		}
		if len(req.Phase1Out) == 0 {
			return bad("Phase1Out", "empty; want the C1 output JSON")
		}
		if !json.Valid(req.Phase1Out) {
			return bad("Phase1Out", "not JSON; want the C1 output (SealCommitPhase1Output) JSON")
		}
		if dec == nil {
			break
		}
		// Decoding is strict (shapes, counts, field ranges) and cheap next to the proof, so a
		// malformed C1 output is refused before it is queued; whether its vanilla proofs are
		// consistent is the prover's check.
		o, p, err := c1.Decode(req.Phase1Out)
		if err != nil {
			return bad("Phase1Out", "not a valid C1 output: %v", err)
		}
		if p.SectorSize != uint64(size) {
			return bad("RegisteredProof", "%d (%d-byte sectors) does not match the C1 output's %s", req.RegisteredProof, size, p.Name)
		}
		// Fields the decode ignored (as filecoin-proofs-api's serde does) are named once per
		// decoded request: a newer rust-fil-proofs, or a client bug, shows in the log.
		if unknown := c1.UnknownFields(req.Phase1Out); len(unknown) > 0 {
			log.Warnw("C1 output has fields snarkd does not know; ignored them, as filecoin-proofs-api does",
				"request", req.RequestID, "proof", p.Name, "fields", unknown)
		}
		dec.C1, dec.SealProof = o, p
	case rpcapi.KindWinningPoSt, rpcapi.KindWindowPoSt:
		pp, err := post.Lookup(abi.RegisteredPoStProof(req.RegisteredProof))
		if err != nil {
			return bad("RegisteredProof", "%d is not a registered PoSt proof", req.RegisteredProof)
		}
		if (pp.Kind == post.Winning) != (req.Kind == rpcapi.KindWinningPoSt) {
			return bad("RegisteredProof", "%d (%s) is not a %s proof type", req.RegisteredProof, pp.Name, req.Kind)
		}
		if req.SectorSize != 0 && uint64(req.SectorSize) != pp.SectorSize {
			return bad("SectorSize", "%d does not match PoSt proof %d (%d bytes)", req.SectorSize, req.RegisteredProof, pp.SectorSize)
		}
		if len(req.Randomness) != 32 {
			return bad("Randomness", "%d bytes, want 32", len(req.Randomness))
		}
		if len(req.VanillaProofs) == 0 {
			return bad("VanillaProofs", "empty")
		}
	case rpcapi.KindSnapProve:
		up, err := update.ForProof(abi.RegisteredUpdateProof(req.RegisteredProof))
		if err != nil {
			return bad("RegisteredProof", "%d is not a registered update proof", req.RegisteredProof)
		}
		if req.SectorSize != 0 && uint64(req.SectorSize) != up.SectorSize() {
			return bad("SectorSize", "%d does not match update proof %d (%d bytes)", req.SectorSize, req.RegisteredProof, up.SectorSize())
		}
		for name, c := range map[string][]byte{"CommROld": req.CommROld, "CommRNew": req.CommRNew, "CommDNew": req.CommDNew} {
			if len(c) != 32 {
				return bad(name, "%d bytes, want 32", len(c))
			}
		}
		if len(req.VanillaProofs) == 0 {
			return bad("VanillaProofs", "empty")
		}
	case rpcapi.KindAggregateSeals:
		if err := validateAggregate(req); err != nil {
			return err
		}
	case "":
		return bad("Kind", "missing; want one of %v", rpcapi.Kinds)
	default:
		return bad("Kind", "unknown proof kind %q; want one of %v", req.Kind, rpcapi.Kinds)
	}
	return nil
}

// validateAggregate checks an aggregate-seals request: its sectors' infos decoded
// (aggregate.Decode) and its C2 proofs' count and lengths; the proofs' points are decoded when
// it runs.
func validateAggregate(req *rpcapi.ProofRequest) error {
	a := req.Aggregate
	if a == nil {
		return bad("Aggregate", "required for kind %q: the sectors' infos and C2 proofs", req.Kind)
	}
	if len(req.Phase1Out) > 0 || len(req.VanillaProofs) > 0 || req.Test != nil {
		return bad("Kind", "%s request carries the inputs of another kind", req.Kind)
	}
	s, err := aggregate.Decode(abi.RegisteredSealProof(req.RegisteredProof), a.AggregateProof, req.MinerID, a.Infos)
	if err == nil {
		err = s.CheckProofs(a.Proofs)
	}
	var ie *aggregate.InputError
	if errors.As(err, &ie) {
		field := "Aggregate." + ie.Field
		if ie.Field == "SealProof" {
			field = "RegisteredProof"
		}
		return bad(field, "%s", ie.Reason)
	}
	if err != nil {
		return bad("Aggregate", "%v", err)
	}
	if req.SectorSize != 0 && uint64(req.SectorSize) != s.Proof.SectorSize {
		return bad("SectorSize", "%d does not match seal proof %d (%d bytes)", req.SectorSize, req.RegisteredProof, s.Proof.SectorSize)
	}
	return nil
}

// TestQuota bounds the "test" kind for one class of caller: each new (constraints, seed)
// runs a setup whose parameters are kept in memory and on disk, so callers who may prove but
// not administer the daemon get small circuits.
type TestQuota struct {
	// Class names the callers it applies to ("a write token", "an admin token"), for refusals.
	Class string
	// MaxConstraints and MaxPartitions bound Test.Constraints and Test.Partitions (0 means
	// 1); 0 leaves only MaxTestConstraints and MaxTestPartitions.
	MaxConstraints, MaxPartitions int
	// ConstraintsSetting and PartitionsSetting name the settings of the two bounds.
	ConstraintsSetting, PartitionsSetting string
	// Hint, when set, ends a refusal: how to get a larger quota.
	Hint string
}

// CheckTestQuota refuses a test request over q with *rpcapi.ErrBadRequest naming the field,
// the limit and its setting. Requests of other kinds and a nil q pass; call it after Validate.
func CheckTestQuota(req *rpcapi.ProofRequest, q *TestQuota) error {
	if q == nil || req.Kind != rpcapi.KindTest || req.Test == nil {
		return nil
	}
	hint := ""
	if q.Hint != "" {
		hint = "; " + q.Hint
	}
	if q.MaxConstraints > 0 && req.Test.Constraints > uint64(q.MaxConstraints) {
		return bad("Test.Constraints", "%d: over the limit of %d for %s (%s)%s",
			req.Test.Constraints, q.MaxConstraints, q.Class, q.ConstraintsSetting, hint)
	}
	if q.MaxPartitions > 0 && Partitions(req) > q.MaxPartitions {
		return bad("Test.Partitions", "%d: over the limit of %d for %s (%s)%s",
			req.Test.Partitions, q.MaxPartitions, q.Class, q.PartitionsSetting, hint)
	}
	return nil
}

// ContentHash identifies a request's content regardless of its RequestID.
func ContentHash(req rpcapi.ProofRequest) (string, error) {
	req.RequestID = ""
	b, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("hashing request: %w", err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// Partitions is the number of partitions a request proves, known before synthesis.
func Partitions(req *rpcapi.ProofRequest) int {
	switch req.Kind {
	case rpcapi.KindTest:
		if req.Test != nil && req.Test.Partitions > 0 {
			return req.Test.Partitions
		}
		return 1
	case rpcapi.KindPoRepC2:
		// NI-PoRep types have more partitions (13 for small sectors, 126 for 32/64 GiB).
		if p, err := prooftypes.Lookup(abi.RegisteredSealProof(req.RegisteredProof)); err == nil {
			return p.Partitions
		}
		return 1
	case rpcapi.KindSnapProve:
		return len(req.VanillaProofs)
	}
	return 1
}
