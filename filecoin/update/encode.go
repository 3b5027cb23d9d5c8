package update

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/merkle"
	"github.com/snarkd/snarkd/filecoin/prooftypes"
)

// Encoded is a sector key with new data encoded into it: the new replica, its trees and the
// commitments of the update.
type Encoded struct {
	Params             *Params
	H                  int
	CommC              c1.Domain
	CommROld           c1.Domain
	CommDNew, CommRNew c1.Domain
	TreeROld           *merkle.Tree
	TreeD, TreeRNew    *merkle.Tree
}

// Encode is encode_into: new replica node i = old replica node i + data_i · rho(phi, high bits of
// i), with tree D (binary sha254, or tree-R-shaped Poseidon in the Poseidon variant) over the
// new data and tree R over the new replica. treeROld is the sector key's tree R (its leaves are
// the old replica), data the new unsealed nodes (Fr32-valid).
func Encode(ctx context.Context, p *Params, h int, commC c1.Domain, treeROld *merkle.Tree, data []c1.Domain) (*Encoded, error) {
	if uint64(len(data)) != p.SectorNodes || treeROld.Leaves() != p.SectorNodes {
		return nil, fmt.Errorf("%d data nodes and a %d-leaf tree R for %d-node sectors", len(data), treeROld.Leaves(), p.SectorNodes)
	}
	if _, err := p.HSelect(h); err != nil {
		return nil, err
	}
	rAr, err := merkle.Arities(p.TreeR(), p.SectorNodes)
	if err != nil {
		return nil, err
	}
	var treeD *merkle.Tree
	if p.Poseidon {
		treeD, err = merkle.NewDense(data, rAr, merkle.Poseidon)
	} else {
		var bin []int
		if bin, err = merkle.BinaryArities(p.SectorNodes); err == nil {
			treeD, err = merkle.NewDense(data, bin, merkle.Sha254)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("tree D: %w", err)
	}
	commROldD, err := merkle.Poseidon([]c1.Domain{commC, treeROld.Root()})
	if err != nil {
		return nil, err
	}
	commDNew := treeD.Root()
	phi := Phi(commDNew.MustElement(), commROldD.MustElement())
	replica := make([]c1.Domain, p.SectorNodes)
	shr := uint(p.ChallengeBitLen - h)
	var rho fr.Element
	high := ^uint64(0)
	for i := range replica {
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if hi := uint64(i) >> shr; hi != high {
			high, rho = hi, Rho(phi, hi)
		}
		d, err := data[i].Element()
		if err != nil {
			return nil, fmt.Errorf("data node %d: %w", i, err)
		}
		o := treeROld.Leaf(uint64(i)).MustElement()
		d.Mul(&d, &rho).Add(&d, &o)
		replica[i] = c1.DomainOf(&d)
	}
	treeRNew, err := merkle.NewDense(replica, rAr, merkle.Poseidon)
	if err != nil {
		return nil, fmt.Errorf("tree R new: %w", err)
	}
	commRNew, err := merkle.Poseidon([]c1.Domain{commC, treeRNew.Root()})
	if err != nil {
		return nil, err
	}
	return &Encoded{Params: p, H: h, CommC: commC, CommROld: commROldD, CommDNew: commDNew, CommRNew: commRNew,
		TreeROld: treeROld, TreeD: treeD, TreeRNew: treeRNew}, nil
}

// Inputs returns partition k's public inputs.
func (e *Encoded) Inputs(k int) *PublicInputs {
	return &PublicInputs{K: k, H: e.H, CommROld: e.CommROld.MustElement(), CommDNew: e.CommDNew.MustElement(), CommRNew: e.CommRNew.MustElement()}
}

// PartitionProof is generate_update_partition_proofs for partition k: the bincode vanilla proof
// a storage provider's PRU1 produces.
func (e *Encoded) PartitionProof(k int) ([]byte, error) {
	p := e.Params
	cs, err := p.Challenges(e.CommRNew.MustElement(), k)
	if err != nil {
		return nil, err
	}
	pp := PartitionProof{CommC: e.CommC}
	dShape, _ := p.treeD()
	for _, c := range cs {
		var cp ChallengeProof
		if cp.ROld, err = e.TreeROld.Proof(c, p.TreeR()); err != nil {
			return nil, err
		}
		if cp.DNew, err = e.TreeD.Proof(c, dShape); err != nil {
			return nil, err
		}
		if cp.RNew, err = e.TreeRNew.Proof(c, p.TreeR()); err != nil {
			return nil, err
		}
		pp.Challenges = append(pp.Challenges, cp)
	}
	if !p.Poseidon {
		start := uint(p.ChallengeBitLen - p.PartitionBitLen - p.ApexLeafBitLen)
		for j := 0; j < p.ApexLeafCount; j++ {
			leaf := (uint64(k*p.ApexLeafCount+j) << start)
			mp, err := e.TreeD.Proof(leaf, prooftypes.TreeShape{Base: 2})
			if err != nil {
				return nil, err
			}
			node, err := merkle.ComputeRoot(mp.Leaf, mp.Base[:start], merkle.Sha254)
			if err != nil {
				return nil, err
			}
			pp.ApexLeafs = append(pp.ApexLeafs, node)
		}
	}
	return pp.Encode(p.Poseidon)
}
