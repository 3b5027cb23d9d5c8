package update

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/snarkd/snarkd/filecoin/c1"
	"github.com/snarkd/snarkd/filecoin/merkle"
)

// Synthetic is an update of production shape without a sector: sparse trees whose old replica
// is a random constant except at `touched` random nodes, where old replica and new data are
// random; every other node holds no new data. Because the challenges derive from comm_r_new,
// the touched nodes are chosen first, so challenged nodes usually carry zero new data; the
// proofs verify and the circuits are satisfied all the same.
func Synthetic(p *Params, h int, touched int, r io.Reader) (*Encoded, error) {
	if _, err := p.HSelect(h); err != nil {
		return nil, err
	}
	def, err := c1.RandomDomain(r)
	if err != nil {
		return nil, err
	}
	commC, err := c1.RandomDomain(r)
	if err != nil {
		return nil, err
	}
	old := map[uint64]c1.Domain{}
	data := map[uint64]c1.Domain{}
	var b [8]byte
	for len(old) < touched {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, err
		}
		i := binary.LittleEndian.Uint64(b[:]) % p.SectorNodes
		if old[i], err = c1.RandomDomain(r); err != nil {
			return nil, err
		}
		if data[i], err = c1.RandomDomain(r); err != nil {
			return nil, err
		}
	}
	rAr, err := merkle.Arities(p.TreeR(), p.SectorNodes)
	if err != nil {
		return nil, err
	}
	treeROld, err := merkle.NewSparse(old, def, rAr, merkle.Poseidon)
	if err != nil {
		return nil, fmt.Errorf("tree R old: %w", err)
	}
	var treeD *merkle.Tree
	if p.Poseidon {
		treeD, err = merkle.NewSparse(data, c1.Domain{}, rAr, merkle.Poseidon)
	} else {
		var bin []int
		if bin, err = merkle.BinaryArities(p.SectorNodes); err == nil {
			treeD, err = merkle.NewSparse(data, c1.Domain{}, bin, merkle.Sha254)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("tree D: %w", err)
	}
	commROld, err := merkle.Poseidon([]c1.Domain{commC, treeROld.Root()})
	if err != nil {
		return nil, err
	}
	commDNew := treeD.Root()
	phi := Phi(commDNew.MustElement(), commROld.MustElement())
	updated := make(map[uint64]c1.Domain, len(old))
	for i, o := range old {
		rho := Rho(phi, HighBits(i, p.ChallengeBitLen, h))
		d := data[i].MustElement()
		oe := o.MustElement()
		var n fr.Element
		n.Mul(&d, &rho).Add(&n, &oe)
		updated[i] = c1.DomainOf(&n)
	}
	treeRNew, err := merkle.NewSparse(updated, def, rAr, merkle.Poseidon)
	if err != nil {
		return nil, fmt.Errorf("tree R new: %w", err)
	}
	commRNew, err := merkle.Poseidon([]c1.Domain{commC, treeRNew.Root()})
	if err != nil {
		return nil, err
	}
	return &Encoded{Params: p, H: h, CommC: commC, CommROld: commROld, CommDNew: commDNew, CommRNew: commRNew,
		TreeROld: treeROld, TreeD: treeD, TreeRNew: treeRNew}, nil
}
