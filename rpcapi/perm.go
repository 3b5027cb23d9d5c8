package rpcapi

import "github.com/filecoin-project/go-jsonrpc/auth"

// Permission is a Lotus API permission carried in a JWT's "Allow" list.
type Permission = auth.Permission

// The permissions, as Lotus names them.
const (
	PermRead  Permission = "read"
	PermWrite Permission = "write"
	PermSign  Permission = "sign"
	PermAdmin Permission = "admin"
)

// AllPermissions lists every permission, weakest first.
var AllPermissions = []Permission{PermRead, PermWrite, PermSign, PermAdmin}

// DefaultPerms are granted to a request without a token: reading only, as in Lotus.
var DefaultPerms = []Permission{PermRead}

// PermsUpTo returns p and every weaker permission, the list a token for p carries
// (as `lotus auth create-token --perm p` does).
func PermsUpTo(p Permission) ([]Permission, bool) {
	for i, q := range AllPermissions {
		if q == p {
			return append([]Permission(nil), AllPermissions[:i+1]...), true
		}
	}
	return nil, false
}
