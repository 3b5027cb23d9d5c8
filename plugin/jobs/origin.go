package jobs

import (
	"context"

	"github.com/snarkd/snarkd/rpcapi"
)

type originKey struct{}

// WithOrigin marks ctx as a submission through front door o made in the daemon's process (the
// cuzk service calls the native API in process). The native API's Submit reads it with
// OriginOf to apply that front door's request-ID rules (RedoesDone). A JSON-RPC caller cannot
// set a context value, so what reaches /rpc/v0 always submits as native.
func WithOrigin(ctx context.Context, o rpcapi.JobOrigin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginOf is the front door WithOrigin marked ctx with, or def when it has none.
func OriginOf(ctx context.Context, def rpcapi.JobOrigin) rpcapi.JobOrigin {
	if o, ok := ctx.Value(originKey{}).(rpcapi.JobOrigin); ok && o != "" {
		return o
	}
	return def
}

// RedoesDone reports whether a submission through front door o may take the request ID of a
// job that is done, when its content differs: a new job proves the new content and the done
// one is superseded (it stays readable by its job ID until Jobs.Retention prunes it).
//
// Only the cuzk API does: Curio's request IDs name the sector, not the inputs
// ("porep-<miner>-<sector>", "snap-<miner>-<sector>"), and Curio's own cuzk daemon proves every
// submission again, so a sector redone with a new seed or other deals must not be refused for
// Jobs.Retention. Native and Lotus clients keep the stricter rule: a request ID names one
// content for as long as its done job is retained, so a client bug that reuses an ID is
// refused rather than silently proving something else.
func RedoesDone(o rpcapi.JobOrigin) bool { return o == rpcapi.OriginCuzk }
