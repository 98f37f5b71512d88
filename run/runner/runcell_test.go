package runner

import (
	"context"

	"bench/config"
	"bench/internal/record/results"
	"bench/providers"
	"bench/run/plan"
)

// runCell runs one cell to completion and returns its record; it never
// fails.
func runCell(parent context.Context, cfg *config.Config, clock Clock, prov providers.Provider, c plan.Cell, traceParent string) *results.Record {
	rec, _ := runCellTimed(parent, cfg, clock, prov, c, traceParent)
	return rec
}
