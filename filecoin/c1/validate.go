package c1

import (
	"errors"
	"fmt"

	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// Validate checks that the output is well formed for its registered proof type: the vanilla
// proof variant, partition and challenge counts, every Merkle path's variant, length, arity and
// indices, column heights, labeling-proof shapes, that commitments are non-zero, that every field
// element is canonical (< r), and that the copies of each challenge, comm_c and comm_r_last agree.
// It does not recompute hashes; porep.Verify does.
func (o *Output) Validate() (*prooftypes.SealProof, error) {
	p, err := prooftypes.LookupName(o.RegisteredProof)
	if err != nil {
		return nil, &FieldError{Field: "registered_proof", Err: err}
	}
	for name, d := range map[string]Domain{"comm_r": o.CommR, "comm_d": o.CommD, "replica_id": o.ReplicaID} {
		if _, err := d.Element(); err != nil {
			return nil, &FieldError{Field: name, Err: err}
		}
	}
	if o.CommD.IsZero() {
		return nil, fieldErr("comm_d", "all-zero commitment")
	}
	if o.CommR.IsZero() {
		return nil, fieldErr("comm_r", "all-zero commitment")
	}
	if o.Seed.IsZero() {
		return nil, fieldErr("seed", "all-zero challenge seed")
	}
	if len(o.VanillaProofs) != 1 {
		return nil, fieldErr("vanilla_proofs", "%d variants, want exactly one (%s)", len(o.VanillaProofs), p.VanillaName)
	}
	parts, ok := o.VanillaProofs[p.VanillaName]
	if !ok {
		for k := range o.VanillaProofs {
			return nil, fieldErr("vanilla_proofs", "variant %q does not match registered_proof %s (want %s)", k, p.Name, p.VanillaName)
		}
	}
	if len(parts) != p.Partitions {
		return nil, fieldErr("vanilla_proofs."+p.VanillaName, "%d partitions, %s has %d", len(parts), p.Name, p.Partitions)
	}
	v := validator{p: p, nodes: p.Nodes()}
	if v.dLevels, err = (prooftypes.TreeShape{Base: 2}).BaseLevels(v.nodes); err != nil {
		return nil, err
	}
	if v.rLevels, err = p.Tree.BaseLevels(v.nodes); err != nil {
		return nil, err
	}
	for k, part := range parts {
		if len(part) != p.ChallengesPerPartition {
			return nil, fieldErr(fmt.Sprintf("vanilla_proofs.%s[%d]", p.VanillaName, k), "%d challenge proofs, %s has %d per partition", len(part), p.Name, p.ChallengesPerPartition)
		}
		for i := range part {
			field := fmt.Sprintf("vanilla_proofs.%s[%d][%d]", p.VanillaName, k, i)
			if err := v.challenge(field, &part[i], o); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

type validator struct {
	p                *prooftypes.SealProof
	nodes            uint64
	dLevels, rLevels int
	commC, commRLast *Domain
}

func (v *validator) challenge(field string, c *ChallengeProof, o *Output) error {
	challenge := c.Challenge()
	if challenge == 0 || challenge >= v.nodes {
		return fieldErr(field+".replica_column_proofs.c_x.column.index", "challenge %d outside 1..%d", challenge, v.nodes-1)
	}
	// Tree D: binary SHA-256, a Single proof rooted at comm_d.
	dIdx, err := v.merkle(field+".comm_d_proofs", &c.CommDProofs, prooftypes.TreeShape{Base: 2}, v.dLevels)
	if err != nil {
		return err
	}
	if c.CommDProofs.Root != o.CommD {
		return fieldErr(field+".comm_d_proofs.root", "does not equal comm_d")
	}
	if dIdx != challenge {
		return fieldErr(field+".comm_d_proofs", "opens node %d, challenge is %d", dIdx, challenge)
	}
	rIdx, err := v.merkle(field+".comm_r_last_proof", &c.CommRLastProof, v.p.Tree, v.rLevels)
	if err != nil {
		return err
	}
	if rIdx != challenge {
		return fieldErr(field+".comm_r_last_proof", "opens node %d, challenge is %d", rIdx, challenge)
	}
	if v.commRLast == nil {
		v.commRLast = &c.CommRLastProof.Root
	} else if *v.commRLast != c.CommRLastProof.Root {
		return fieldErr(field+".comm_r_last_proof.root", "differs from comm_r_last of the first challenge")
	}

	rcp := &c.ReplicaColumnProofs
	if err := v.column(field+".replica_column_proofs.c_x", &rcp.CX); err != nil {
		return err
	}
	if len(rcp.DRGParents) != prooftypes.BaseDegree {
		return fieldErr(field+".replica_column_proofs.drg_parents", "%d columns, want %d", len(rcp.DRGParents), prooftypes.BaseDegree)
	}
	if len(rcp.ExpParents) != prooftypes.ExpansionDegree {
		return fieldErr(field+".replica_column_proofs.exp_parents", "%d columns, want %d", len(rcp.ExpParents), prooftypes.ExpansionDegree)
	}
	for j := range rcp.DRGParents {
		if err := v.column(fmt.Sprintf("%s.replica_column_proofs.drg_parents[%d]", field, j), &rcp.DRGParents[j]); err != nil {
			return err
		}
	}
	for j := range rcp.ExpParents {
		if err := v.column(fmt.Sprintf("%s.replica_column_proofs.exp_parents[%d]", field, j), &rcp.ExpParents[j]); err != nil {
			return err
		}
	}

	if len(c.LabelingProofs) != v.p.Layers {
		return fieldErr(field+".labeling_proofs", "%d proofs, %s has %d layers", len(c.LabelingProofs), v.p.Name, v.p.Layers)
	}
	for l := range c.LabelingProofs {
		lp := &c.LabelingProofs[l]
		f := fmt.Sprintf("%s.labeling_proofs[%d]", field, l)
		if err := v.labeling(f, lp.Parents, lp.LayerIndex, lp.Node, uint32(l+1), challenge); err != nil {
			return err
		}
	}
	ep := &c.EncodingProof
	return v.labeling(field+".encoding_proof", ep.Parents, ep.LayerIndex, ep.Node, uint32(v.p.Layers), challenge)
}

func (v *validator) labeling(field string, parents []Domain, layer uint32, node uint64, wantLayer uint32, challenge uint64) error {
	if layer != wantLayer {
		return fieldErr(field+".layer_index", "%d, want %d", layer, wantLayer)
	}
	if node != challenge {
		return fieldErr(field+".node", "%d, challenge is %d", node, challenge)
	}
	if len(parents) != prooftypes.TotalParents {
		return fieldErr(field+".parents", "%d labels, want %d", len(parents), prooftypes.TotalParents)
	}
	for j := range parents {
		if _, err := parents[j].Element(); err != nil {
			return fieldErr(fmt.Sprintf("%s.parents[%d]", field, j), "%v", err)
		}
	}
	return nil
}

func (v *validator) column(field string, cp *ColumnProof) error {
	col := &cp.Column
	if len(col.H) != 0 && string(col.H) != "null" {
		return fieldErr(field+".column._h", "must be null, got %s", string(col.H))
	}
	if uint64(col.Index) >= v.nodes {
		return fieldErr(field+".column.index", "%d outside the sector's %d nodes", col.Index, v.nodes)
	}
	if len(col.Rows) != v.p.Layers {
		return fieldErr(field+".column.rows", "%d rows, %s has %d layers", len(col.Rows), v.p.Name, v.p.Layers)
	}
	for j := range col.Rows {
		if _, err := col.Rows[j].Element(); err != nil {
			return fieldErr(fmt.Sprintf("%s.column.rows[%d]", field, j), "%v", err)
		}
	}
	idx, err := v.merkle(field+".inclusion_proof", &cp.InclusionProof, v.p.Tree, v.rLevels)
	if err != nil {
		return err
	}
	if idx != uint64(col.Index) {
		return fieldErr(field+".inclusion_proof", "opens node %d, column index is %d", idx, col.Index)
	}
	if v.commC == nil {
		v.commC = &cp.InclusionProof.Root
	} else if *v.commC != cp.InclusionProof.Root {
		return fieldErr(field+".inclusion_proof.root", "differs from comm_c of the first column")
	}
	return nil
}

// merkle checks a proof's variant, level counts, arities and element ranges, and returns the
// leaf index its path opens.
func (v *validator) merkle(field string, m *MerkleProof, shape prooftypes.TreeShape, baseLevels int) (uint64, error) {
	want := Single
	switch {
	case shape.Top > 0:
		want = Top
	case shape.Sub > 0:
		want = Sub
	}
	if m.Kind != want {
		return 0, fieldErr(field+".data", "variant %s, tree %s needs %s", m.Kind, shape, want)
	}
	if _, err := m.Root.Element(); err != nil {
		return 0, fieldErr(field+".root", "%v", err)
	}
	if _, err := m.Leaf.Element(); err != nil {
		return 0, fieldErr(field+".leaf", "%v", err)
	}
	var index, scale uint64 = 0, 1
	level := func(name string, path []PathElement, arity, count int) error {
		if len(path) != count {
			return fieldErr(field+"."+name, "%d levels, want %d", len(path), count)
		}
		for l := range path {
			pe := &path[l]
			f := fmt.Sprintf("%s.%s[%d]", field, name, l)
			if len(pe.Hashes) != arity-1 {
				return fieldErr(f+".hashes", "%d siblings, arity %d needs %d", len(pe.Hashes), arity, arity-1)
			}
			if pe.Index >= uint64(arity) {
				return fieldErr(f+".index", "%d out of range for arity %d", pe.Index, arity)
			}
			for h := range pe.Hashes {
				if _, err := pe.Hashes[h].Element(); err != nil {
					return fieldErr(fmt.Sprintf("%s.hashes[%d]", f, h), "%v", err)
				}
			}
			index += pe.Index * scale
			scale *= uint64(arity)
		}
		return nil
	}
	basePath := "path"
	if want != Single {
		basePath = "base_proof"
	}
	if err := level(basePath, m.Base, shape.Base, baseLevels); err != nil {
		return 0, err
	}
	subLevels, topLevels := 0, 0
	if shape.Sub > 0 {
		subLevels = 1
	}
	if shape.Top > 0 {
		topLevels = 1
	}
	if want != Single {
		if err := level("sub_proof", m.SubPath, max(shape.Sub, 2), subLevels); err != nil {
			return 0, err
		}
	} else if len(m.SubPath) != 0 || len(m.TopPath) != 0 {
		return 0, errors.New("internal: single proof with sub levels")
	}
	if want == Top {
		if err := level("top_proof", m.TopPath, shape.Top, topLevels); err != nil {
			return 0, err
		}
	}
	return index, nil
}
