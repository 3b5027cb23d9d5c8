package porep

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/merkle"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/internal/cores"
)

// ErrInconsistent marks a C1 output whose vanilla proofs do not prove what they claim.
var ErrInconsistent = errors.New("inconsistent C1 output")

// VerifyError names the partition, challenge and field of a C1 output that failed verification.
// Partition and Challenge are -1 for sector-level checks.
type VerifyError struct {
	Partition, Challenge int
	Field                string
	Reason               string
}

func (e *VerifyError) Error() string {
	if e.Partition < 0 {
		return fmt.Sprintf("inconsistent C1 output: %s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("inconsistent C1 output: partition %d challenge %d: %s: %s", e.Partition, e.Challenge, e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInconsistent) hold.
func (e *VerifyError) Unwrap() error { return ErrInconsistent }

// SectorIdentity, when given to Verify, lets it check that the replica ID is the one the prover
// and sector derive (filecoin-ffi derives prover_id from the miner actor id).
type SectorIdentity struct {
	ProverID     [32]byte
	SectorNumber uint64
}

// Verify validates a C1 output's structure (Output.Validate) and then checks it the way rust-fil-proofs' vanilla verification and the
// circuit would: the challenges are the ones derived from replica_id and seed (or comm_r), every
// Merkle path leads to comm_d, comm_c or comm_r_last, the parent columns are the graph's parents,
// every layer's label of the challenged node is the hash of its parents' labels, the replica node
// is the data plus the last label, and comm_r = Poseidon(comm_c, comm_r_last). A failure names
// what is inconsistent. With id non-nil it also checks the replica ID derivation.
func Verify(ctx context.Context, o *c1.Output, p *prooftypes.SealProof, id *SectorIdentity) error {
	vp, err := o.Validate()
	if err != nil {
		return err
	}
	if vp != p {
		return &VerifyError{Partition: -1, Challenge: -1, Field: "registered_proof", Reason: fmt.Sprintf("is %s, expected %s", vp.Name, p.Name)}
	}
	pp, err := FromOutput(o, p)
	if err != nil {
		return err
	}
	if id != nil {
		want := ReplicaID(id.ProverID, id.SectorNumber, o.Ticket, o.CommD, p.PoRepID())
		if want != o.ReplicaID {
			return &VerifyError{Partition: -1, Challenge: -1, Field: "replica_id",
				Reason: fmt.Sprintf("does not derive from prover id, sector %d, ticket, comm_d and %s's porep id", id.SectorNumber, p.Name)}
		}
	}
	parts := o.Partitions()
	if len(parts) == 0 || len(parts[0]) == 0 {
		return &VerifyError{Partition: -1, Challenge: -1, Field: "vanilla_proofs", Reason: "no proofs"}
	}
	commC := parts[0][0].ReplicaColumnProofs.CX.InclusionProof.Root
	commRLast := parts[0][0].CommRLastProof.Root
	commR, err := merkle.Poseidon([]c1.Domain{commC, commRLast})
	if err != nil {
		return err
	}
	if commR != o.CommR {
		return &VerifyError{Partition: -1, Challenge: -1, Field: "comm_r", Reason: "is not Poseidon(comm_c, comm_r_last) of the vanilla proofs"}
	}
	// Challenges are independent: check them concurrently, report the first failure in order.
	type job struct {
		k, i      int
		challenge uint64
	}
	var jobs []job
	for k, part := range parts {
		ch, err := pp.Challenges(k)
		if err != nil {
			return err
		}
		for i := range part {
			jobs = append(jobs, job{k, i, ch[i]})
		}
	}
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(cores.N(), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				if err := ctx.Err(); err != nil {
					errs[j] = err
					continue
				}
				jb := jobs[j]
				errs[j] = pp.verifyChallenge(&parts[jb.k][jb.i], jb.challenge)
			}
		}()
	}
	for j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	for j, err := range errs {
		if err != nil {
			var ve *VerifyError
			if errors.As(err, &ve) {
				ve.Partition, ve.Challenge = jobs[j].k, jobs[j].i
			}
			return err
		}
	}
	return nil
}

func inconsistent(field, format string, args ...any) error {
	return &VerifyError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

func (pp *PublicParams) verifyChallenge(c *c1.ChallengeProof, challenge uint64) error {
	if got := c.Challenge(); got != challenge {
		return inconsistent("replica_column_proofs.c_x.column.index", "challenges node %d, the derived challenge is %d", got, challenge)
	}
	if c.LabelingProofs[0].Node != challenge {
		return inconsistent("labeling_proofs[0].node", "is %d, the derived challenge is %d", c.LabelingProofs[0].Node, challenge)
	}
	if err := merkle.VerifyProof(&c.CommDProofs, merkle.Sha254); err != nil {
		return inconsistent("comm_d_proofs", "%v", err)
	}
	if err := merkle.VerifyProof(&c.CommRLastProof, merkle.Poseidon); err != nil {
		return inconsistent("comm_r_last_proof", "%v", err)
	}
	rcp := &c.ReplicaColumnProofs
	var base [prooftypes.BaseDegree]uint32
	var exp [prooftypes.ExpansionDegree]uint32
	pp.Graph.BaseParents(uint32(challenge), &base)
	pp.Graph.ExpParents(uint32(challenge), &exp)
	if err := verifyColumn("replica_column_proofs.c_x", &rcp.CX); err != nil {
		return err
	}
	for j := range rcp.DRGParents {
		f := fmt.Sprintf("replica_column_proofs.drg_parents[%d]", j)
		if rcp.DRGParents[j].Column.Index != base[j] {
			return inconsistent(f+".column.index", "is node %d, DRG parent %d of node %d is %d", rcp.DRGParents[j].Column.Index, j, challenge, base[j])
		}
		if err := verifyColumn(f, &rcp.DRGParents[j]); err != nil {
			return err
		}
	}
	for j := range rcp.ExpParents {
		f := fmt.Sprintf("replica_column_proofs.exp_parents[%d]", j)
		if rcp.ExpParents[j].Column.Index != exp[j] {
			return inconsistent(f+".column.index", "is node %d, expander parent %d of node %d is %d", rcp.ExpParents[j].Column.Index, j, challenge, exp[j])
		}
		if err := verifyColumn(f, &rcp.ExpParents[j]); err != nil {
			return err
		}
	}
	layers := pp.Proof.Layers
	parents := make([]c1.Domain, 0, prooftypes.Degree)
	for l := 1; l <= layers; l++ {
		parents = parents[:0]
		for j := range rcp.DRGParents {
			parents = append(parents, rcp.DRGParents[j].Column.Rows[l-1])
		}
		if l > 1 {
			for j := range rcp.ExpParents {
				parents = append(parents, rcp.ExpParents[j].Column.Rows[l-2])
			}
		}
		full := RepeatParents(parents)
		lp := &c.LabelingProofs[l-1]
		for j := range full {
			if lp.Parents[j] != full[j] {
				return inconsistent(fmt.Sprintf("labeling_proofs[%d].parents[%d]", l-1, j), "differs from the parent columns' layer-%d labels", l)
			}
		}
		label := Label(pp.ReplicaID, uint32(l), challenge, full)
		if label != rcp.CX.Column.Rows[l-1] {
			return inconsistent(fmt.Sprintf("replica_column_proofs.c_x.column.rows[%d]", l-1), "layer-%d label of node %d is not the hash of its parents' labels", l, challenge)
		}
		if l == layers {
			for j := range full {
				if c.EncodingProof.Parents[j] != full[j] {
					return inconsistent(fmt.Sprintf("encoding_proof.parents[%d]", j), "differs from the last layer's parents")
				}
			}
			enc, err := Encode(c.CommDProofs.Leaf, label)
			if err != nil {
				return inconsistent("comm_d_proofs.leaf", "%v", err)
			}
			if enc != c.CommRLastProof.Leaf {
				return inconsistent("comm_r_last_proof.leaf", "replica node %d is not data + last-layer label", challenge)
			}
		}
	}
	return nil
}

func verifyColumn(field string, cp *c1.ColumnProof) error {
	h, err := merkle.Poseidon(cp.Column.Rows)
	if err != nil {
		return inconsistent(field+".column.rows", "%v", err)
	}
	if h != cp.InclusionProof.Leaf {
		return inconsistent(field+".inclusion_proof.leaf", "is not the hash of the column's labels")
	}
	if err := merkle.VerifyProof(&cp.InclusionProof, merkle.Poseidon); err != nil {
		return inconsistent(field+".inclusion_proof", "%v", err)
	}
	return nil
}
