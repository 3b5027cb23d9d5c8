package cuzk

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/filecoin-project/go-state-types/abi"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/post"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
	"github.com/snarkd/snarkd/plugin/jobs"
	"github.com/snarkd/snarkd/rpcapi"
)

// kinds maps the wire's proof kinds onto the job manager's.
var kinds = map[pb.ProofKind]rpcapi.ProofKind{
	pb.ProofKind_POREP_SEAL_COMMIT:     rpcapi.KindPoRepC2,
	pb.ProofKind_SNAP_DEALS_UPDATE:     rpcapi.KindSnapProve,
	pb.ProofKind_WINDOW_POST_PARTITION: rpcapi.KindWindowPoSt,
	pb.ProofKind_WINNING_POST:          rpcapi.KindWinningPoSt,
	pb.ProofKind_SNARKD_TEST:           rpcapi.KindTest,
}

// QueueName is the proof_kind label GetStatus reports for a kind: the names a cuzk daemon uses,
// so that dashboards written for it read snarkd's queues too.
func QueueName(k rpcapi.ProofKind) string {
	if k == rpcapi.KindSnapProve {
		return "snap-update"
	}
	return string(k)
}

// protoField names, in the wire's terms, the request fields jobs.Validate reports in Go terms.
var protoField = map[string]string{
	"RequestID":        "request_id",
	"Kind":             "proof_kind",
	"Priority":         "priority",
	"RegisteredProof":  "registered_proof",
	"SectorSize":       "sector_size",
	"Phase1Out":        "vanilla_proof",
	"VanillaProofs":    "vanilla_proofs",
	"Randomness":       "randomness",
	"CommROld":         "comm_r_old",
	"CommRNew":         "comm_r_new",
	"CommDNew":         "comm_d_new",
	"Test":             "snarkd_test",
	"Test.Constraints": "snarkd_test.constraints",
	"Test.Partitions":  "snarkd_test.partitions",
	"PartitionIndex":   "partition_index",
	"SectorNumber":     "sector_number",
	"MinerID":          "miner_id",
}

func bad(field, format string, args ...any) error {
	return &rpcapi.ErrBadRequest{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// ToProofRequest turns a SubmitProofRequest into the job manager's request and checks it the
// way the job manager will, plus what only the wire format can get wrong: the Commit2In
// envelope around a PoRep C1 output and the bincode of PoSt vanilla proofs. Errors are
// *rpcapi.ErrBadRequest naming the wire's field.
func ToProofRequest(m *pb.SubmitProofRequest) (rpcapi.ProofRequest, error) {
	if m == nil {
		return rpcapi.ProofRequest{}, bad("submit", "missing")
	}
	kind, ok := kinds[m.ProofKind]
	if !ok {
		return rpcapi.ProofRequest{}, bad("proof_kind", "%s is not a proof kind; want POREP_SEAL_COMMIT, SNAP_DEALS_UPDATE, WINDOW_POST_PARTITION or WINNING_POST", kindName(m.ProofKind))
	}
	if m.RegisteredProof > math.MaxInt64 {
		return rpcapi.ProofRequest{}, bad("registered_proof", "%d is out of range", m.RegisteredProof)
	}
	req := rpcapi.ProofRequest{
		RequestID:       m.RequestId,
		Kind:            kind,
		RegisteredProof: int64(m.RegisteredProof),
		SectorSize:      abi.SectorSize(m.SectorSize),
		MinerID:         abi.ActorID(m.MinerId),
		SectorNumber:    abi.SectorNumber(m.SectorNumber),
		Randomness:      m.Randomness,
		PartitionIndex:  uint(m.PartitionIndex),
		CommROld:        m.CommROld,
		CommRNew:        m.CommRNew,
		CommDNew:        m.CommDNew,
	}
	prio, err := priority(m.Priority)
	if err != nil {
		return rpcapi.ProofRequest{}, err
	}
	req.Priority = prio
	if kind != rpcapi.KindTest && m.SnarkdTest != nil {
		return rpcapi.ProofRequest{}, bad("snarkd_test", "set on a %s request; it belongs to SNARKD_TEST only", m.ProofKind)
	}
	switch kind {
	case rpcapi.KindTest:
		if len(m.VanillaProof) > 0 || len(m.VanillaProofs) > 0 {
			return rpcapi.ProofRequest{}, bad("proof_kind", "SNARKD_TEST request carries vanilla proofs")
		}
		if t := m.SnarkdTest; t != nil {
			req.Test = &rpcapi.TestCircuit{Constraints: t.Constraints, Partitions: int(t.Partitions), Seed: t.Seed}
			if t.Partitions > math.MaxInt32 {
				return rpcapi.ProofRequest{}, bad("snarkd_test.partitions", "%d is out of range", t.Partitions)
			}
		}
	case rpcapi.KindPoRepC2:
		if len(m.VanillaProofs) > 0 {
			return rpcapi.ProofRequest{}, bad("vanilla_proofs", "set on a POREP_SEAL_COMMIT request, which takes its C1 output in vanilla_proof")
		}
		if err := porepInput(m, &req); err != nil {
			return rpcapi.ProofRequest{}, err
		}
	case rpcapi.KindWindowPoSt, rpcapi.KindWinningPoSt, rpcapi.KindSnapProve:
		if len(m.VanillaProof) > 0 {
			return rpcapi.ProofRequest{}, bad("vanilla_proof", "set on a %s request, which takes its vanilla proofs in vanilla_proofs", m.ProofKind)
		}
		req.VanillaProofs = m.VanillaProofs
	}
	// porepInput decoded the C1 output (strictly) already; the job manager decodes it once
	// more when the request is submitted, for the prover.
	if err := jobs.ValidateFields(&req); err != nil {
		return rpcapi.ProofRequest{}, wireField(err)
	}
	if kind == rpcapi.KindWindowPoSt || kind == rpcapi.KindWinningPoSt {
		if err := postVanilla(&req); err != nil {
			return rpcapi.ProofRequest{}, err
		}
	}
	return req, nil
}

func kindName(k pb.ProofKind) string {
	if name, ok := pb.ProofKind_name[int32(k)]; ok {
		return name
	}
	return fmt.Sprintf("value %d", int32(k))
}

// priority maps Curio's priorities onto the job manager's three classes. UNSPECIFIED keeps
// the kind's own class (WinningPoSt, WindowPoSt, the rest), as cuzk does.
func priority(p pb.Priority) (*rpcapi.Priority, error) {
	var c rpcapi.Priority
	switch p {
	case pb.Priority_PRIORITY_UNSPECIFIED:
		return nil, nil
	case pb.Priority_CRITICAL:
		c = rpcapi.PriorityWinningPoSt
	case pb.Priority_HIGH:
		c = rpcapi.PriorityWindowPoSt
	case pb.Priority_NORMAL, pb.Priority_LOW:
		c = rpcapi.PrioritySeal
	default:
		return nil, bad("priority", "value %d is not LOW, NORMAL, HIGH or CRITICAL", int32(p))
	}
	return &c, nil
}

// porepInput unwraps the Commit2In envelope ({SectorNum, Phase1Out, SectorSize}) Curio sends
// and checks the C1 output inside against the request's own fields.
func porepInput(m *pb.SubmitProofRequest, req *rpcapi.ProofRequest) error {
	if len(m.VanillaProof) == 0 {
		return bad("vanilla_proof", "empty; want the Commit2In JSON {SectorNum, Phase1Out, SectorSize}")
	}
	w, _, p, err := c1.DecodeCommit2In(m.VanillaProof)
	if err != nil {
		return bad("vanilla_proof", "%v", err)
	}
	// The envelope's unknown fields are ignored, as Lotus's own decoding ignores them; the C1
	// output's are named when the job manager decodes it.
	if unknown := c1.UnknownCommit2InFields(m.VanillaProof); len(unknown) > 0 {
		log.Warnw("Commit2In envelope has fields snarkd does not know; ignored them", "request", m.GetRequestId(), "fields", unknown)
	}
	if uint64(w.SectorNum) != m.SectorNumber {
		return bad("sector_number", "%d, but the Commit2In envelope is for sector %d", m.SectorNumber, w.SectorNum)
	}
	if int64(p.Proof) != req.RegisteredProof {
		return bad("registered_proof", "%d, but the C1 output is %s (%d)", req.RegisteredProof, p.Name, int64(p.Proof))
	}
	req.Phase1Out = w.Phase1Out
	return nil
}

// postVanilla decodes every PoSt vanilla proof so that bad bincode is refused before it is
// queued, with the index of the proof at fault.
func postVanilla(req *rpcapi.ProofRequest) error {
	p, err := post.Lookup(abi.RegisteredPoStProof(req.RegisteredProof))
	if err != nil {
		return bad("registered_proof", "%v", err)
	}
	for i, b := range req.VanillaProofs {
		if _, err := post.DecodeSectorVanilla(p, b); err != nil {
			return bad(fmt.Sprintf("vanilla_proofs[%d]", i), "not a bincode FallbackPoStSectorProof for %s: %v", p.Name, err)
		}
	}
	return nil
}

// wireField renames the field of a job manager validation error to the wire's name.
func wireField(err error) error {
	var br *rpcapi.ErrBadRequest
	if !errors.As(err, &br) {
		return err
	}
	field := br.Field
	if f, ok := protoField[field]; ok {
		field = f
	} else if head, rest, ok := strings.Cut(field, "."); ok {
		if f, ok := protoField[head]; ok {
			field = f + "." + rest
		}
	}
	return &rpcapi.ErrBadRequest{Field: field, Reason: br.Reason}
}
