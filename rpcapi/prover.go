// Package rpcapi holds snarkd's JSON-RPC contracts: the interfaces served under /rpc/v0, their
// go-jsonrpc proxy structs, wire types and client constructors. No daemon code lives here.
package rpcapi

import (
	"context"
	"net/http"

	"github.com/filecoin-project/go-jsonrpc"
)

// ProverNamespace is the JSON-RPC namespace of the native API ("Prover.Version", ...).
const ProverNamespace = "Prover"

// Prover is snarkd's native proving API.
type Prover interface {
	// Version reports the daemon's build, API version and proving backend.
	Version(ctx context.Context) (VersionInfo, error) //perm:read
}

// VersionInfo answers Prover.Version.
type VersionInfo struct {
	// Version is the daemon build, e.g. "v0.1.0 (go1.26.8)".
	Version string
	// APIVersion is the semantic version of this API; clients check the major part.
	APIVersion string
	// Backend is the proving backend in use: "cpu" or "cuda".
	Backend string
}

// ProverStruct is the go-jsonrpc client proxy for Prover.
type ProverStruct struct {
	Internal struct {
		Version func(ctx context.Context) (VersionInfo, error) `perm:"read"`
	}
}

// Version calls Prover.Version.
func (s *ProverStruct) Version(ctx context.Context) (VersionInfo, error) {
	return s.Internal.Version(ctx)
}

var _ Prover = (*ProverStruct)(nil)

// NewProverClient connects to a daemon's native API at addr (http://host:port/rpc/v0 or ws://…).
func NewProverClient(ctx context.Context, addr string, header http.Header) (Prover, jsonrpc.ClientCloser, error) {
	var c ProverStruct
	closer, err := jsonrpc.NewMergeClient(ctx, addr, ProverNamespace, []interface{}{&c.Internal}, header)
	if err != nil {
		return nil, nil, err
	}
	return &c, closer, nil
}
