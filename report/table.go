package report

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints a short plain-text table of the groups, best first, for
// the end of `bench run`: provider, model, thinking, ok/total, pass rate,
// TTFT p50, e2e p50, tokens/s p50, tool-use tier and the routing verdict
// (recommended only for the groups in recommended_for_subagent_routing);
// and the cost and cost per passed cell when some group has a cost.
func WriteTable(w io.Writer, s *Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cost := AnyCost(s)
	head := "PROVIDER\tMODEL\tTHINKING\tOK/TOTAL\tPASS\tTTFT P50\tE2E P50\tTOK/S\tTIER\tROUTING"
	if cost {
		head += "\tCOST\tPER PASS"
	}
	fmt.Fprintln(tw, head)
	for _, g := range ranked(s) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s",
			g.Provider, g.Model, level(g.ThinkingLevel), g.NOK, g.NTotal, pct(g.ObjectivePassRate),
			msStr(g.TTFTMS.P50), msStr(g.LatencyMS.P50), num(g.TokensPerS.P50), tierName(g.Tier), RoutingMark(g.Tier))
		if cost {
			fmt.Fprintf(tw, "\t%s\t%s", FormatUSD(g.CostUSDTotal), FormatUSD(g.CostPerPassedCell))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	// Why a Tier-1 group is not routed to, in one line each.
	for _, g := range ranked(s) {
		if t := g.Tier; t != nil && t.Tier == Tier1 && !t.Recommended {
			if _, err := fmt.Fprintf(w, "%s: not recommended for routing: %s\n", g.Label(), t.RoutingNote); err != nil {
				return fmt.Errorf("write table: %w", err)
			}
		}
	}
	return nil
}
