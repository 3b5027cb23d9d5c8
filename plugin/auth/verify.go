package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/filecoin-project/go-jsonrpc/auth"

	"github.com/snarkd/snarkd/rpcapi"
)

// RemoteVerify asks another node (a connected lotus-miner's AuthVerify) about a token.
type RemoteVerify func(ctx context.Context, token string) ([]rpcapi.Permission, error)

// Verifier checks tokens against the daemon's own secret first and, when a miner is attached,
// against the miner's AuthVerify: a miner dials back with a token minted from its own secret.
// Remote answers are cached so a busy miner is asked once per token per TTL.
type Verifier struct {
	secret Secret
	ttl    time.Duration

	mu     sync.Mutex
	remote RemoteVerify
	cache  map[[32]byte]cached
}

type cached struct {
	perms   []rpcapi.Permission
	err     error
	expires time.Time
}

// maxCache bounds the remote-answer cache; it is flushed when full (tokens are few in practice).
const maxCache = 4096

// NewVerifier verifies with secret; ttl is how long a remote answer is trusted.
func NewVerifier(secret Secret, ttl time.Duration) *Verifier {
	return &Verifier{secret: secret, ttl: ttl, cache: map[[32]byte]cached{}}
}

// SetRemote installs (or, with nil, removes) the miner's AuthVerify and drops cached answers.
func (v *Verifier) SetRemote(r RemoteVerify) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.remote = r
	v.cache = map[[32]byte]cached{}
}

// Verify returns the permissions token grants.
func (v *Verifier) Verify(ctx context.Context, token string) ([]rpcapi.Permission, error) {
	perms, err := v.secret.Verify(token)
	if err == nil {
		return perms, nil
	}
	v.mu.Lock()
	remote := v.remote
	key := sha256.Sum256([]byte(token))
	c, ok := v.cache[key]
	v.mu.Unlock()
	if remote == nil {
		return nil, err
	}
	if ok && time.Now().Before(c.expires) {
		return c.perms, c.err
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rperms, rerr := remote(rctx, token)
	if rerr == nil {
		for _, p := range rperms {
			if _, ok := rpcapi.PermsUpTo(p); !ok {
				rerr = fmt.Errorf("miner granted unknown permission %q", p)
			}
		}
	}
	if rerr != nil {
		rerr = fmt.Errorf("%w (local: %v; miner AuthVerify: %v)", ErrInvalidToken, err, rerr)
		rperms = nil
	}
	// A transport failure must not be cached as a verdict on the token.
	if rerr == nil || !errors.Is(rctx.Err(), context.DeadlineExceeded) {
		v.mu.Lock()
		if len(v.cache) >= maxCache {
			v.cache = map[[32]byte]cached{}
		}
		v.cache[key] = cached{perms: rperms, err: rerr, expires: time.Now().Add(v.ttl)}
		v.mu.Unlock()
	}
	return rperms, rerr
}

// HasPerm reports whether the request context carries perm or a stronger one (or the
// defaults, without a token). Permissions are ordered read < write < sign < admin, so a token
// minted with ["admin"] alone, as lotus-miner's WorkerConnect does, may also read.
func HasPerm(ctx context.Context, perm rpcapi.Permission) bool {
	stronger := false
	for _, p := range rpcapi.AllPermissions {
		if p == perm {
			stronger = true
		}
		if stronger && auth.HasPerm(ctx, rpcapi.DefaultPerms, p) {
			return true
		}
	}
	return false
}

var (
	ctxType   = reflect.TypeOf((*context.Context)(nil)).Elem()
	errorType = reflect.TypeOf((*error)(nil)).Elem()
)

// Permissioned fills out (a pointer to a *Methods struct of rpcapi) with functions that check
// each field's perm tag before calling impl's method of the same name. Unlike go-jsonrpc's
// PermissionedProxy it refuses with the typed *rpcapi.ErrPermission, so clients can tell.
// It panics on a field without a valid perm tag or without a matching method: a programming
// error caught by the first test.
func Permissioned(impl interface{}, out interface{}) {
	rv := reflect.ValueOf(out).Elem()
	iv := reflect.ValueOf(impl)
	for i := 0; i < rv.NumField(); i++ {
		field := rv.Type().Field(i)
		need := rpcapi.Permission(field.Tag.Get("perm"))
		if _, ok := rpcapi.PermsUpTo(need); !ok {
			panic("bad perm tag on " + field.Name)
		}
		fn := iv.MethodByName(field.Name)
		if !fn.IsValid() {
			panic("no method " + field.Name + " on " + iv.Type().String())
		}
		ft := field.Type
		if ft.NumIn() == 0 || ft.In(0) != ctxType || ft.Out(ft.NumOut()-1) != errorType {
			panic("method " + field.Name + " must take ctx first and return error last")
		}
		name := field.Name
		rv.Field(i).Set(reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
			ctx := args[0].Interface().(context.Context)
			if HasPerm(ctx, need) {
				return fn.Call(args)
			}
			out := make([]reflect.Value, ft.NumOut())
			for k := 0; k < ft.NumOut()-1; k++ {
				out[k] = reflect.Zero(ft.Out(k))
			}
			var err error = &rpcapi.ErrPermission{Method: name, Need: need}
			out[ft.NumOut()-1] = reflect.ValueOf(&err).Elem()
			return out
		}))
	}
}
