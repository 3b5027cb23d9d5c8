package circuit

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
	"github.com/snarkd/snarkd/gadgets/merkle"
)

func path(levels []c1.PathElement) ([]merkle.PathElement, error) {
	out := make([]merkle.PathElement, len(levels))
	for i := range levels {
		sibs := make([]fr.Element, len(levels[i].Hashes))
		for j := range sibs {
			e, err := levels[i].Hashes[j].Element()
			if err != nil {
				return nil, fmt.Errorf("level %d sibling %d: %w", i, j, err)
			}
			sibs[j] = e
		}
		out[i] = merkle.PathElement{Siblings: sibs, Index: int(levels[i].Index)}
	}
	return out, nil
}

func column(cp *c1.ColumnProof, layers int) (Column, error) {
	if len(cp.Column.Rows) != layers {
		return Column{}, fmt.Errorf("%d rows for %d layers", len(cp.Column.Rows), layers)
	}
	rows := make([]fr.Element, len(cp.Column.Rows))
	for i := range rows {
		e, err := cp.Column.Rows[i].Element()
		if err != nil {
			return Column{}, fmt.Errorf("row %d: %w", i, err)
		}
		rows[i] = e
	}
	p, err := path(cp.InclusionProof.Levels())
	return Column{Rows: rows, Path: p}, err
}

// FromC1 builds partition k's witness circuit from a C1 output (validated with c1.Decode or
// Output.Validate; a malformed one gives an error, never a panic, but only validation names the
// field), as
// StackedCompound::circuit does from the vanilla proofs (comm_c and comm_r_last are taken from the
// first challenge's openings; Validate guarantees every opening agrees).
func FromC1(o *c1.Output, p *prooftypes.SealProof, k int) (*Circuit, error) {
	parts := o.Partitions()
	if k < 0 || k >= len(parts) {
		return nil, fmt.Errorf("circuit: partition %d of %d", k, len(parts))
	}
	proofs := parts[k]
	if len(proofs) == 0 {
		return nil, fmt.Errorf("circuit: partition %d has no vanilla proofs", k)
	}
	w := &Witness{Challenges: make([]Challenge, len(proofs))}
	var err error
	for name, d := range map[string]struct {
		dst *fr.Element
		src c1.Domain
	}{
		"replica_id":  {&w.ReplicaID, o.ReplicaID},
		"comm_d":      {&w.CommD, o.CommD},
		"comm_r":      {&w.CommR, o.CommR},
		"comm_r_last": {&w.CommRLast, proofs[0].CommRLastProof.Root},
		"comm_c":      {&w.CommC, proofs[0].ReplicaColumnProofs.CX.InclusionProof.Root},
	} {
		if *d.dst, err = d.src.Element(); err != nil {
			return nil, fmt.Errorf("circuit: %s: %w", name, err)
		}
	}
	for i := range proofs {
		vp := &proofs[i]
		ch := &w.Challenges[i]
		if len(vp.LabelingProofs) == 0 {
			return nil, fmt.Errorf("circuit: challenge %d has no labeling proofs", i)
		}
		ch.Challenge = vp.LabelingProofs[0].Node
		if ch.DataLeaf, err = vp.CommDProofs.Leaf.Element(); err != nil {
			return nil, fmt.Errorf("circuit: challenge %d data leaf: %w", i, err)
		}
		if ch.CommDPath, err = path(vp.CommDProofs.Levels()); err != nil {
			return nil, fmt.Errorf("circuit: challenge %d comm_d path: %w", i, err)
		}
		if ch.CommRLastPath, err = path(vp.CommRLastProof.Levels()); err != nil {
			return nil, fmt.Errorf("circuit: challenge %d comm_r_last path: %w", i, err)
		}
		rcp := &vp.ReplicaColumnProofs
		if ch.CommCPath, err = path(rcp.CX.InclusionProof.Levels()); err != nil {
			return nil, fmt.Errorf("circuit: challenge %d comm_c path: %w", i, err)
		}
		for j := range rcp.DRGParents {
			c, err := column(&rcp.DRGParents[j], p.Layers)
			if err != nil {
				return nil, fmt.Errorf("circuit: challenge %d drg parent %d: %w", i, j, err)
			}
			ch.DRGParents = append(ch.DRGParents, c)
		}
		for j := range rcp.ExpParents {
			c, err := column(&rcp.ExpParents[j], p.Layers)
			if err != nil {
				return nil, fmt.Errorf("circuit: challenge %d exp parent %d: %w", i, j, err)
			}
			ch.ExpParents = append(ch.ExpParents, c)
		}
	}
	return &Circuit{Config: ConfigOf(p), Witness: w}, nil
}
