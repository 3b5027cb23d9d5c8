package jobs

import (
	"context"
	"time"

	"github.com/snarkd/snarkd/rpcapi"
)

// RunInfo identifies the job a Runner proves: the GPU scheduler names its partitions by job ID
// (Status, logs) and serves older jobs first.
type RunInfo struct {
	ID        rpcapi.JobID
	Submitted time.Time
}

type runInfoKey struct{}

// WithRunInfo returns ctx carrying info.
func WithRunInfo(ctx context.Context, info RunInfo) context.Context {
	return context.WithValue(ctx, runInfoKey{}, info)
}

// RunInfoFrom returns the job a Runner's context belongs to.
func RunInfoFrom(ctx context.Context) (RunInfo, bool) {
	info, ok := ctx.Value(runInfoKey{}).(RunInfo)
	return info, ok
}
