package update

import (
	"github.com/ipfs/go-cid"

	"github.com/snarkd/snarkd/filecoin/commcid"
)

// InputsFromCIDs builds partition k's public inputs from the CIDs
// SectorUpdate.GenerateUpdateProofWithVanilla takes: the sector key (comm_r_old), the new sealed
// CID (comm_r_new) and the new unsealed CID (comm_d_new), with h = h_default.
func (p *Params) InputsFromCIDs(oldSealed, newSealed, newUnsealed cid.Cid, k int) (*PublicInputs, error) {
	rOld, err := commcid.Sealed(oldSealed, "old sealed CID")
	if err != nil {
		return nil, err
	}
	rNew, err := commcid.Sealed(newSealed, "new sealed CID")
	if err != nil {
		return nil, err
	}
	dNew, err := commcid.Unsealed(newUnsealed, "new unsealed CID")
	if err != nil {
		return nil, err
	}
	in := &PublicInputs{K: k, H: p.HDefault(), CommROld: rOld.MustElement(), CommDNew: dNew.MustElement(), CommRNew: rNew.MustElement()}
	if _, err := p.Vector(in); err != nil {
		return nil, err
	}
	return in, nil
}

// CIDs returns the sealed and unsealed CIDs of an encoded update (comm_r_old, comm_r_new,
// comm_d_new), as Lotus passes them.
func (e *Encoded) CIDs() (oldSealed, newSealed, newUnsealed cid.Cid, err error) {
	if oldSealed, err = commcid.SealedCID(e.CommROld); err != nil {
		return
	}
	if newSealed, err = commcid.SealedCID(e.CommRNew); err != nil {
		return
	}
	newUnsealed, err = commcid.UnsealedCID(e.CommDNew)
	return
}
