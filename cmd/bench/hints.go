package main

import (
	"slices"
	"strings"

	"bench/config"
	"bench/providers"
	"bench/results"
)

// unreachable returns one line telling the user what to start, export,
// install or pull when no cell reached a model, or "" when any did. Each
// provider's kind words its own advice.
func unreachable(cfg *config.Config, p *progress) string {
	if p.recorded == 0 || p.byStatus[results.StatusSkippedUnavailable] != p.recorded {
		return ""
	}
	absent := true
	var hints []string
	for i := range cfg.Providers {
		pr := &cfg.Providers[i]
		kind, ok := providers.Lookup(pr.Type)
		if !ok {
			continue
		}
		for typ, models := range p.skipped[pr.Name] {
			models = slices.Compact(slices.Sorted(slices.Values(models)))
			h, gone := kind.Hint(pr, typ, models)
			absent = absent && gone
			hints = append(hints, h)
		}
	}
	slices.Sort(hints)
	hints = slices.Compact(hints)
	what := "no model answered"
	if absent {
		what = "no provider was reachable"
	}
	return "bench: " + what + ", nothing was measured: " + strings.Join(hints, "; ") + " (or try scripts/demo.sh)"
}
