package sha254

import (
	"fmt"
	"strings"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
)

// CommDFromCID decodes a base32 ("b…") piece/data commitment CID (fil-commitment-unsealed,
// sha2-256-trunc254-padded) and returns the 32-byte sha254 root it carries. go-cid and
// go-multihash read the CID, as go-fil-commcid does; filecoin/commcid is not used because
// gadgets sit below filecoin.
func CommDFromCID(s string) ([32]byte, error) {
	var out [32]byte
	if !strings.HasPrefix(s, "b") {
		return out, fmt.Errorf("sha254: CID %q is not base32 multibase", s)
	}
	// The base32 digits are read case-insensitively, as before go-cid did the decoding;
	// multibase "b" itself is the lower-case alphabet.
	c, err := cid.Decode("b" + strings.ToLower(s[1:]))
	if err != nil {
		return out, fmt.Errorf("sha254: decoding CID %q: %w", s, err)
	}
	h, err := multihash.Decode(c.Hash())
	if err != nil {
		return out, fmt.Errorf("sha254: decoding CID %q: %w", s, err)
	}
	if c.Version() != 1 || c.Type() != cid.FilCommitmentUnsealed || h.Code != multihash.SHA2_256_TRUNC254_PADDED || len(h.Digest) != len(out) {
		return out, fmt.Errorf("sha254: CID %q is not a fil-commitment-unsealed sha2-256-trunc254-padded CID", s)
	}
	copy(out[:], h.Digest)
	return out, nil
}
