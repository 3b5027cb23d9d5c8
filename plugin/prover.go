package plugin

import (
	"context"

	"github.com/snarkd/snarkd/buildinfo"
	"github.com/snarkd/snarkd/rpcapi"
)

// ProverAPI implements rpcapi.Prover for the daemon.
type ProverAPI struct {
	// Backend is the proving backend the daemon resolved at start ("cpu" or "cuda").
	Backend string
}

var _ rpcapi.Prover = (*ProverAPI)(nil)

// Version reports the daemon build, API version and backend.
func (p *ProverAPI) Version(context.Context) (rpcapi.VersionInfo, error) {
	return rpcapi.VersionInfo{
		Version:    buildinfo.String(),
		APIVersion: buildinfo.APIVersion,
		Backend:    p.Backend,
	}, nil
}
