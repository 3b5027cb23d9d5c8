package auth

import (
	"testing"

	"github.com/snarkd/snarkd/rpcapi"
)

// FuzzVerify feeds arbitrary tokens to the verifier: it must never panic, and whatever it
// accepts must be a token the secret signed.
func FuzzVerify(f *testing.F) {
	s := Secret([]byte("0123456789abcdef0123456789abcdef"))
	good, _ := s.NewToken([]rpcapi.Permission{"read", "write"})
	for _, seed := range []string{good, "", ".", "..", "a.b.c", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9..", good + "x",
		"eyJhbGciOiJub25lIn0.eyJBbGxvdyI6WyJhZG1pbiJdfQ."} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		perms, err := s.Verify(tok)
		if err != nil {
			return
		}
		// Accepted: re-signing the same payload must give the same token.
		again, err := s.NewToken(perms)
		if err != nil {
			t.Fatalf("accepted token with unmintable perms %v", perms)
		}
		if _, err := s.Verify(again); err != nil {
			t.Fatal(err)
		}
	})
}
