package porep

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// PublicParams is what public-input generation and verification need for one sector.
type PublicParams struct {
	Proof     *prooftypes.SealProof
	Graph     *Graph
	ReplicaID [32]byte
	CommD     [32]byte
	CommR     [32]byte
	Seed      [32]byte
}

// NewPublicParams builds the graph of the proof type and keeps the sector's public values.
func NewPublicParams(p *prooftypes.SealProof, replicaID, commD, commR, seed [32]byte) (*PublicParams, error) {
	g, err := NewGraph(p)
	if err != nil {
		return nil, err
	}
	return &PublicParams{Proof: p, Graph: g, ReplicaID: replicaID, CommD: commD, CommR: commR, Seed: seed}, nil
}

// FromOutput returns the public parameters of a (validated) C1 output.
func FromOutput(o *c1.Output, p *prooftypes.SealProof) (*PublicParams, error) {
	return NewPublicParams(p, o.ReplicaID, o.CommD, o.CommR, o.Seed)
}

// Challenges returns partition k's challenges.
func (pp *PublicParams) Challenges(k int) ([]uint64, error) {
	return Challenges(pp.Proof, pp.ReplicaID, pp.CommR, pp.Seed, k)
}

// PublicInputs returns partition k's circuit public inputs without the leading ONE, exactly as
// StackedCompound::generate_public_inputs: replica_id, comm_d, comm_r, then per challenge c the
// tree-D path (= c), the 6 DRG parents, the 8 expander parents, c itself (UInt64 packed), the
// tree-R path (= c) and the tree-C path of c (= c). Every PoR contributes one input, its packed
// path bits, which equal the opened leaf index.
func (pp *PublicParams) PublicInputs(k int) ([]fr.Element, error) {
	ch, err := pp.Challenges(k)
	if err != nil {
		return nil, err
	}
	out := make([]fr.Element, 0, pp.Proof.PublicInputs()-1)
	for name, d := range map[string]c1.Domain{"replica_id": pp.ReplicaID, "comm_d": pp.CommD, "comm_r": pp.CommR} {
		if _, err := d.Element(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	out = append(out, c1.Domain(pp.ReplicaID).MustElement(), c1.Domain(pp.CommD).MustElement(), c1.Domain(pp.CommR).MustElement())
	var base [prooftypes.BaseDegree]uint32
	var exp [prooftypes.ExpansionDegree]uint32
	var e fr.Element
	for _, c := range ch {
		out = append(out, *e.SetUint64(c))
		pp.Graph.BaseParents(uint32(c), &base)
		for _, p := range base {
			out = append(out, *e.SetUint64(uint64(p)))
		}
		pp.Graph.ExpParents(uint32(c), &exp)
		for _, p := range exp {
			out = append(out, *e.SetUint64(uint64(p)))
		}
		out = append(out, *e.SetUint64(c), *e.SetUint64(c), *e.SetUint64(c))
	}
	return out, nil
}
