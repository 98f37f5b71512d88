package resources

import (
	"context"

	"bench/config"
	"bench/internal/record/rundir"
)

// takeServer measures the machine now. outDir is the run directory. It blocks for
// about 200 ms to measure CPU use.
func takeServer(ctx context.Context, outDir string, t config.Server) *rundir.Snapshot {
	srv, reason := findServer(ctx, t)
	return take(ctx, outDir, srv, reason)
}
