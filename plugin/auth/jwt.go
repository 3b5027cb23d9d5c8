// Package auth mints and verifies Lotus-format API tokens: HS256 JWTs whose payload is
// {"Allow":[permissions]}, with no expiry, signed by a secret kept in the repo in Lotus's
// keystore format (so a miner's secret can be shared by copying its key file).
//
// HS256 is done here with crypto/hmac rather than with github.com/gbrlsnchs/jwt/v3, the
// library Lotus signs with, because that module cannot be fetched by this build;
// lotus_compat_test.go holds the two to the same bytes.
package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/snarkd/snarkd/rpcapi"
)

// SecretFile is the repo file holding the HMAC secret, named as Lotus's keystore names the key
// "auth-jwt-private" (base32), so a lotus-miner key file can be copied in as is.
const SecretFile = "keystore/MF2XI2BNNJ3XILLQOJUXMYLUMU"

// keyInfo is Lotus's keystore entry format.
type keyInfo struct {
	Type       string
	PrivateKey []byte
}

const keyType = "jwt-hmac-secret"

// header is what gbrlsnchs/jwt writes for HS256, the library Lotus signs with.
var header = b64([]byte(`{"alg":"HS256","typ":"JWT"}`))

type payload struct {
	Allow []rpcapi.Permission
}

// ErrInvalidToken is returned for every token that does not verify; the reason is wrapped.
var ErrInvalidToken = errors.New("invalid API token")

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Secret is an HS256 key.
type Secret []byte

// LoadOrCreateSecret reads <repo>/keystore/… or creates it with 32 random bytes.
func LoadOrCreateSecret(repo string) (Secret, error) {
	path := filepath.Join(repo, SecretFile)
	data, err := os.ReadFile(path)
	if err == nil {
		var ki keyInfo
		if err := json.Unmarshal(data, &ki); err != nil {
			return nil, fmt.Errorf("reading JWT secret %s: %w", path, err)
		}
		if ki.Type != keyType || len(ki.PrivateKey) < 16 {
			return nil, fmt.Errorf("JWT secret %s: want Type %q and at least 16 key bytes", path, keyType)
		}
		return Secret(ki.PrivateKey), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading JWT secret: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating JWT secret: %w", err)
	}
	data, err = json.Marshal(keyInfo{Type: keyType, PrivateKey: key})
	if err != nil {
		return nil, fmt.Errorf("encoding JWT secret: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating keystore: %w", err)
	}
	// Create exclusively so two processes starting at once cannot end up with different keys.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return LoadOrCreateSecret(repo)
	}
	if err != nil {
		return nil, fmt.Errorf("writing JWT secret: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing JWT secret: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("writing JWT secret: %w", err)
	}
	return Secret(key), nil
}

// NewToken signs a token allowing perms, byte-compatible with lotus `AuthNew`.
func (s Secret) NewToken(perms []rpcapi.Permission) (string, error) {
	for _, p := range perms {
		if _, ok := rpcapi.PermsUpTo(p); !ok {
			return "", fmt.Errorf("unknown permission %q", p)
		}
	}
	body, err := json.Marshal(payload{Allow: perms})
	if err != nil {
		return "", fmt.Errorf("encoding token payload: %w", err)
	}
	signing := header + "." + b64(body)
	return signing + "." + b64(s.sign(signing)), nil
}

func (s Secret) sign(msg string) []byte {
	m := hmac.New(sha256.New, s)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// Verify checks the token's signature and returns the permissions it allows.
func (s Secret) Verify(token string) ([]rpcapi.Permission, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: not a JWT", ErrInvalidToken)
	}
	hdr, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrInvalidToken, err)
	}
	var h struct{ Alg, Typ string }
	if err := json.Unmarshal(hdr, &h); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrInvalidToken, err)
	}
	if h.Alg != "HS256" {
		return nil, fmt.Errorf("%w: algorithm %q, want HS256", ErrInvalidToken, h.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, fmt.Errorf("%w: signature: %w", ErrInvalidToken, err)
	}
	if !hmac.Equal(sig, s.sign(parts[0]+"."+parts[1])) {
		return nil, fmt.Errorf("%w: signature mismatch", ErrInvalidToken)
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("%w: payload: %w", ErrInvalidToken, err)
	}
	var p payload
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: payload: %w", ErrInvalidToken, err)
	}
	for _, perm := range p.Allow {
		if _, ok := rpcapi.PermsUpTo(perm); !ok {
			return nil, fmt.Errorf("%w: unknown permission %q", ErrInvalidToken, perm)
		}
	}
	return p.Allow, nil
}
