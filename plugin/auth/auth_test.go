package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/filecoin-project/go-jsonrpc/auth"

	"github.com/snarkd/snarkd/rpcapi"
)

func TestTokenFormatMatchesLotus(t *testing.T) {
	s := Secret([]byte("0123456789abcdef0123456789abcdef"))
	tok, err := s.NewToken([]rpcapi.Permission{"read", "write", "sign", "admin"})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q", tok)
	}
	// Every lotus token starts with this header (gbrlsnchs/jwt HS256).
	if parts[0] != "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" {
		t.Fatalf("header %s", parts[0])
	}
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if string(body) != `{"Allow":["read","write","sign","admin"]}` {
		t.Fatalf("payload %s", body)
	}
	perms, err := s.Verify(tok)
	if err != nil || len(perms) != 4 {
		t.Fatalf("verify: %v %v", perms, err)
	}
}

// The vector was computed independently (Python hmac/hashlib) over Lotus's header and payload.
func TestVerifyKnownVector(t *testing.T) {
	s := Secret([]byte("secret"))
	const tok = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJBbGxvdyI6WyJyZWFkIl19.CC2OF6_Tm_HGv6bGV1H8pkHUVv_h-PGUqaX9BIV3Xqc"
	perms, err := s.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(perms, []rpcapi.Permission{"read"}) {
		t.Fatal(perms)
	}
}

func TestVerifyRejects(t *testing.T) {
	s := Secret([]byte("0123456789abcdef0123456789abcdef"))
	other := Secret([]byte("fedcba9876543210fedcba9876543210"))
	good, _ := s.NewToken([]rpcapi.Permission{"admin"})
	forged, _ := other.NewToken([]rpcapi.Permission{"admin"})
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"Allow":["admin","root"]}`)) + "." + parts[2]
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	for name, tok := range map[string]string{
		"other secret": forged, "tampered payload": tampered, "alg none": none,
		"garbage": "not-a-token", "empty": "", "two parts": "a.b",
	} {
		if _, err := s.Verify(tok); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := s.NewToken([]rpcapi.Permission{"root"}); err == nil {
		t.Error("minted an unknown permission")
	}
}

func TestSecretPersists(t *testing.T) {
	repo := t.TempDir()
	a, err := LoadOrCreateSecret(repo)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadOrCreateSecret(repo)
	if err != nil || string(a) != string(b) {
		t.Fatalf("secret changed: %v", err)
	}
	fi, err := os.Stat(filepath.Join(repo, SecretFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v %v", fi, err)
	}
	if err := os.WriteFile(filepath.Join(repo, SecretFile), []byte(`{"Type":"bls","PrivateKey":"AAAA"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateSecret(repo); err == nil || !strings.Contains(err.Error(), "jwt-hmac-secret") {
		t.Fatalf("bad key file accepted: %v", err)
	}
}

func TestVerifierRemoteAndCache(t *testing.T) {
	local := Secret([]byte("0123456789abcdef0123456789abcdef"))
	miner := Secret([]byte("minerminerminerminerminerminer!!"))
	v := NewVerifier(local, time.Hour)
	minerTok, _ := miner.NewToken([]rpcapi.Permission{"read", "write", "sign", "admin"})
	ctx := context.Background()
	if _, err := v.Verify(ctx, minerTok); err == nil {
		t.Fatal("miner token accepted without a miner")
	}
	var calls atomic.Int32
	v.SetRemote(func(ctx context.Context, tok string) ([]rpcapi.Permission, error) {
		calls.Add(1)
		return miner.Verify(tok)
	})
	for i := 0; i < 3; i++ {
		perms, err := v.Verify(ctx, minerTok)
		if err != nil || len(perms) != 4 {
			t.Fatalf("miner token: %v %v", perms, err)
		}
	}
	bad, _ := Secret([]byte("nobodynobodynobodynobodynobody!!")).NewToken([]rpcapi.Permission{"admin"})
	for i := 0; i < 2; i++ {
		if _, err := v.Verify(ctx, bad); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("forged token: %v", err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("miner asked %d times, want 2 (answers cached)", n)
	}
	localTok, _ := local.NewToken([]rpcapi.Permission{"read"})
	if _, err := v.Verify(ctx, localTok); err != nil || calls.Load() != 2 {
		t.Fatalf("local token: %v (calls %d)", err, calls.Load())
	}
}

type impl struct{}

func (impl) Read(context.Context) (int, error) { return 1, nil }
func (impl) Write(context.Context, int) error  { return nil }

type methods struct {
	Read  func(context.Context) (int, error) `perm:"read"`
	Write func(context.Context, int) error   `perm:"write"`
}

func TestPermissioned(t *testing.T) {
	var m methods
	Permissioned(impl{}, &m)
	anon := context.Background()
	if n, err := m.Read(anon); err != nil || n != 1 {
		t.Fatalf("read without token: %v %v", n, err)
	}
	err := m.Write(anon, 1)
	var perr *rpcapi.ErrPermission
	if !errors.As(err, &perr) || perr.Method != "Write" || perr.Need != "write" {
		t.Fatalf("write without token: %v", err)
	}
	if err.Error() != "missing permission to invoke 'Write' (need 'write')" {
		t.Fatal(err)
	}
	readOnly := auth.WithPerm(anon, []rpcapi.Permission{"read"})
	if err := m.Write(readOnly, 1); !errors.As(err, &perr) {
		t.Fatalf("read token wrote: %v", err)
	}
	if err := m.Write(auth.WithPerm(anon, []rpcapi.Permission{"read", "write"}), 1); err != nil {
		t.Fatal(err)
	}
	// A stronger permission implies the weaker ones (lotus-miner mints ["admin"] alone).
	adminOnly := auth.WithPerm(anon, []rpcapi.Permission{"admin"})
	if err := m.Write(adminOnly, 1); err != nil {
		t.Fatalf("admin-only token: %v", err)
	}
	if _, err := m.Read(adminOnly); err != nil {
		t.Fatalf("admin-only token read: %v", err)
	}
	if _, err := m.Read(auth.WithPerm(anon, []rpcapi.Permission{})); err == nil {
		t.Fatal("token with no permissions read")
	}
}
