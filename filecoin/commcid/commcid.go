// Package commcid converts between Filecoin commitment CIDs and the 32-byte commitments the
// circuits take: comm_r in a fil-commitment-sealed CID with a poseidon-bls12_381-a2-fc1
// multihash, comm_d in a fil-commitment-unsealed CID with sha2-256-trunc254-padded.
package commcid

import (
	"fmt"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"

	"github.com/snarkd/snarkd/filecoin/c1"
)

// Multicodec and multihash codes of Filecoin commitment CIDs, as go-fil-commcid pairs them,
// taken from go-cid's and go-multihash's tables rather than written out by hand.
const (
	CodecUnsealed = cid.FilCommitmentUnsealed           // fil-commitment-unsealed, 0xf101
	CodecSealed   = cid.FilCommitmentSealed             // fil-commitment-sealed, 0xf102
	HashSha254    = multihash.SHA2_256_TRUNC254_PADDED  // sha2-256-trunc254-padded, 0x1012
	HashPoseidon  = multihash.POSEIDON_BLS12_381_A1_FC1 // poseidon-bls12_381-a2-fc1, 0xb401
)

// Sealed returns the comm_r of a sealed-sector CID; what names the CID in errors.
func Sealed(c cid.Cid, what string) (c1.Domain, error) {
	return decode(c, CodecSealed, HashPoseidon, what)
}

// Unsealed returns the comm_d of an unsealed-data CID; what names the CID in errors.
func Unsealed(c cid.Cid, what string) (c1.Domain, error) {
	return decode(c, CodecUnsealed, HashSha254, what)
}

// SealedCID is the CID Lotus uses for comm_r.
func SealedCID(d c1.Domain) (cid.Cid, error) { return encode(CodecSealed, HashPoseidon, d) }

// UnsealedCID is the CID Lotus uses for comm_d.
func UnsealedCID(d c1.Domain) (cid.Cid, error) { return encode(CodecUnsealed, HashSha254, d) }

func decode(c cid.Cid, codec, mh uint64, what string) (c1.Domain, error) {
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

func encode(codec, mh uint64, d c1.Domain) (cid.Cid, error) {
	h, err := multihash.Encode(d[:], mh)
	if err != nil {
		return cid.Undef, fmt.Errorf("encoding commitment multihash 0x%x: %w", mh, err)
	}
	return cid.NewCidV1(codec, h), nil
}
