package sha254

import (
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"strings"
)

// commDPrefix is CIDv1 ‖ codec fil-commitment-unsealed (0xf101) ‖ multihash
// sha2-256-trunc254-padded (0x1012) ‖ length 32, as varints.
const commDPrefix = "0181e203922020"

// CommDFromCID decodes a base32 ("b…") piece/data commitment CID and returns
// the 32-byte sha254 root it carries.
func CommDFromCID(cid string) ([32]byte, error) {
	var out [32]byte
	if !strings.HasPrefix(cid, "b") {
		return out, fmt.Errorf("sha254: CID %q is not base32 multibase", cid)
	}
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(cid[1:]))
	if err != nil {
		return out, fmt.Errorf("sha254: decoding CID %q: %w", cid, err)
	}
	if len(raw) != len(commDPrefix)/2+32 || hex.EncodeToString(raw[:len(raw)-32]) != commDPrefix {
		return out, fmt.Errorf("sha254: CID %q is not a fil-commitment-unsealed sha2-256-trunc254-padded CID", cid)
	}
	copy(out[:], raw[len(raw)-32:])
	return out, nil
}
