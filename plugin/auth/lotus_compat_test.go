package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/filecoin-project/go-jsonrpc/auth"

	"github.com/snarkd/snarkd/rpcapi"
)

// The library Lotus signs with, github.com/gbrlsnchs/jwt/v3, is not available to this module
// (the Go module proxy refuses it), so its method is restated here from its documented
// format and checked against snarkd in both directions: jwt.Sign(&payload, jwt.NewHS(key))
// marshals the header {alg, cty, kid, typ} (omitempty, alg "HS256", typ "JWT"), then the
// payload, joins both base64url (unpadded) with '.', and appends the HMAC-SHA256 of that
// string; jwt.Verify checks "alg" against HS256 and the MAC before decoding the payload.

// lotusJwtPayload has the shape of Lotus's api.JwtPayload (and Curio's).
type lotusJwtPayload struct {
	Allow []auth.Permission
}

// gbrlsnchsHeader has the fields and tags of gbrlsnchs/jwt/v3's Header, in its order.
type gbrlsnchsHeader struct {
	Algorithm   string `json:"alg,omitempty"`
	ContentType string `json:"cty,omitempty"`
	KeyID       string `json:"kid,omitempty"`
	Type        string `json:"typ,omitempty"`
}

func lotusSign(t *testing.T, p lotusJwtPayload, key []byte) string {
	t.Helper()
	hd, err := json.Marshal(gbrlsnchsHeader{Algorithm: "HS256", Type: "JWT"})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := json.Marshal(&p)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	msg := enc.EncodeToString(hd) + "." + enc.EncodeToString(pl)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msg))
	return msg + "." + enc.EncodeToString(mac.Sum(nil))
}

func lotusVerify(token string, key []byte) (lotusJwtPayload, error) {
	var p lotusJwtPayload
	i := strings.IndexByte(token, '.')
	if i < 0 {
		return p, fmt.Errorf("malformed")
	}
	j := strings.IndexByte(token[i+1:], '.')
	if j < 0 {
		return p, fmt.Errorf("malformed")
	}
	j += i + 1
	enc := base64.RawURLEncoding
	hb, err := enc.DecodeString(token[:i])
	if err != nil {
		return p, err
	}
	var hd gbrlsnchsHeader
	if err := json.Unmarshal(hb, &hd); err != nil {
		return p, err
	}
	if hd.Algorithm != "HS256" {
		return p, fmt.Errorf("alg %q", hd.Algorithm)
	}
	sig, err := enc.DecodeString(token[j+1:])
	if err != nil {
		return p, err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(token[:j]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return p, fmt.Errorf("signature mismatch")
	}
	pb, err := enc.DecodeString(token[i+1 : j])
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(pb, &p)
}

// TestLotusTokensInterchange: a token minted the way lotus-miner's AuthNew mints it verifies in
// snarkd with the same permissions, snarkd mints byte for byte the same token for the same key
// and permissions, and snarkd's tokens verify the way Lotus verifies them.
func TestLotusTokensInterchange(t *testing.T) {
	key := []byte("lotus-miner auth-jwt-private key")
	for _, perms := range [][]auth.Permission{
		{"read"},
		{"read", "write"},
		{"read", "write", "sign", "admin"},
		{"admin"},
		{},
	} {
		lotusTok := lotusSign(t, lotusJwtPayload{Allow: perms}, key)
		got, err := Secret(key).Verify(lotusTok)
		if err != nil {
			t.Fatalf("%v: Lotus token refused: %v", perms, err)
		}
		if len(got) != len(perms) {
			t.Fatalf("%v: Lotus token grants %v", perms, got)
		}
		ours := make([]rpcapi.Permission, len(perms))
		for i, p := range perms {
			ours[i] = rpcapi.Permission(p)
			if got[i] != ours[i] {
				t.Fatalf("%v: Lotus token grants %v", perms, got)
			}
		}
		tok, err := Secret(key).NewToken(ours)
		if err != nil {
			t.Fatal(err)
		}
		if tok != lotusTok {
			t.Errorf("%v: snarkd token\n%s\nLotus token\n%s", perms, tok, lotusTok)
		}
		p, err := lotusVerify(tok, key)
		if err != nil || !reflect.DeepEqual(p.Allow, perms) {
			t.Errorf("%v: Lotus verifies snarkd's token as %v, %v", perms, p.Allow, err)
		}
		if _, err := lotusVerify(tok, []byte("another key")); err == nil {
			t.Errorf("%v: the check accepts a token under the wrong key", perms)
		}
	}
}
