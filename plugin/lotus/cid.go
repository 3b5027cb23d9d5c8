package lotus

import (
	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
)

func decodeDigest(c cid.Cid) ([]byte, error) {
	dec, err := multihash.Decode(c.Hash())
	if err != nil {
		return nil, err
	}
	return dec.Digest, nil
}
