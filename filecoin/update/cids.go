package update

import (
	"fmt"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/snarkd/snarkd/filecoin/c1"
)

// Multicodec and multihash codes of Filecoin commitment CIDs (go-fil-commcid).
const (
	codecUnsealed = 0xf101 // fil-commitment-unsealed
	codecSealed   = 0xf102 // fil-commitment-sealed
	mhSha254      = 0x1012 // sha2-256-trunc254-padded
	mhPoseidon    = 0xb401 // poseidon-bls12_381-a2-fc1
)

func commitment(c cid.Cid, codec, mh uint64, what string) (c1.Domain, error) {
	var d c1.Domain
	if !c.Defined() {
		return d, fmt.Errorf("%s: undefined CID", what)
	}
	if c.Type() != codec {
		return d, fmt.Errorf("%s: CID %s has codec 0x%x, want 0x%x", what, c, c.Type(), codec)
	}
	h, err := multihash.Decode(c.Hash())
	if err != nil {
		return d, fmt.Errorf("%s: CID %s: %w", what, c, err)
	}
	if h.Code != mh || len(h.Digest) != 32 {
		return d, fmt.Errorf("%s: CID %s has multihash 0x%x of %d bytes, want 0x%x of 32", what, c, h.Code, len(h.Digest), mh)
	}
	copy(d[:], h.Digest)
	if _, err := d.Element(); err != nil {
		return d, fmt.Errorf("%s: CID %s: %w", what, c, err)
	}
	return d, nil
}

// InputsFromCIDs builds partition k's public inputs from the CIDs
// SectorUpdate.GenerateUpdateProofWithVanilla takes: the sector key (comm_r_old), the new sealed
// CID (comm_r_new) and the new unsealed CID (comm_d_new), with h = h_default.
func (p *Params) InputsFromCIDs(oldSealed, newSealed, newUnsealed cid.Cid, k int) (*PublicInputs, error) {
	rOld, err := commitment(oldSealed, codecSealed, mhPoseidon, "old sealed CID")
	if err != nil {
		return nil, err
	}
	rNew, err := commitment(newSealed, codecSealed, mhPoseidon, "new sealed CID")
	if err != nil {
		return nil, err
	}
	dNew, err := commitment(newUnsealed, codecUnsealed, mhSha254, "new unsealed CID")
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
	mk := func(codec, mh uint64, d c1.Domain) (cid.Cid, error) {
		h, err := multihash.Encode(d[:], mh)
		if err != nil {
			return cid.Undef, err
		}
		return cid.NewCidV1(codec, h), nil
	}
	if oldSealed, err = mk(codecSealed, mhPoseidon, e.CommROld); err != nil {
		return
	}
	if newSealed, err = mk(codecSealed, mhPoseidon, e.CommRNew); err != nil {
		return
	}
	newUnsealed, err = mk(codecUnsealed, mhSha254, e.CommDNew)
	return
}
