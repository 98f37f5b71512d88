package report

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints a short plain-text table of the groups, best first, for
// the end of `bench run`: the rank (=N when tied: see Places), provider,
// model, thinking; the cells passed (of the group's total), the pass rate
// with passed/judged and its 95 % interval, failed checks, errors (check
// errors among them) and not run, counted as bench run's progress line
// counts them (Tally), so a column's sum is the progress line's figure;
// TTFT p50, e2e p50 with its 95 % interval (a ranking figure), tokens/s
// p50, the tool-use tier and the routing verdict (recommended only for the
// groups in
// recommended_for_subagent_routing); and the cost and cost per passed cell
// when some group has a cost. At most MaxTableRows groups are listed, the
// rest counted; a line says what a tie means, and where the tool-use tier
// is defined.
func WriteTable(w io.Writer, s *Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cost := AnyCost(s)
	head := "#\tPROVIDER\tMODEL\tTHINKING\tPASSED\tPASS RATE (PASSED/JUDGED, 95% CI)\tFAILED CHECKS\tERRORS\tNOT RUN\tTTFT P50\tE2E P50 (95% CI)\tTOK/S\tTOOL-USE TIER\tROUTING"
	if cost {
		head += "\tCOST\tPER PASS"
	}
	fmt.Fprintln(tw, head)
	gs := ranked(s)
	places := Places(gs[:min(len(gs), MaxTableRows)])
	for i, g := range gs {
		if i == MaxTableRows {
			break
		}
		t := g.Tally()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s",
			places[i].Label(), g.Provider, g.Model, level(g.ThinkingLevel), t.Passed, g.NTotal, passText(g), t.FailedChecks, t.Errors, t.NotRun,
			msStr(g.TTFTMS.P50), medianText(g.LatencyMS), num(g.TokensPerS.P50), tierName(g.Tier), RoutingMark(g.Tier))
		if cost {
			fmt.Fprintf(tw, "\t%s\t%s", FormatUSD(g.CostUSDTotal), FormatUSD(g.CostPerPassedCell))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	var notes []string
	if more := len(gs) - min(len(gs), MaxTableRows) + s.dropped; more > 0 {
		notes = append(notes, fmt.Sprintf("… and %d more groups; summary.json lists every one.", more))
	}
	if n := TiedNote(places); n != "" {
		notes = append(notes, n)
	}
	if len(gs) > 0 {
		notes = append(notes, "TOOL-USE TIER: the share of tool-use cells that called the expected tools (Tier 1 >= 80 %, Tier 2 >= 50 %); summary.md's \"Tool-use tiers and routing\" and tiers.json define it.")
	}
	// Why a Tier-1 group of those listed is not routed to, in one line each.
	for _, g := range gs[:min(len(gs), MaxTableRows)] {
		if t := g.Tier; t != nil && t.Tier == Tier1 && !t.Recommended {
			notes = append(notes, fmt.Sprintf("%s: not recommended for routing: %s", g.Label(), t.RoutingNote))
		}
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return fmt.Errorf("write table: %w", err)
		}
	}
	return nil
}

// Tally is what became of a group's cells, each in exactly one count, as
// bench run's progress line counts them.
type Tally struct {
	// Passed answered and passed its check or had none; FailedChecks
	// answered and failed it.
	Passed, FailedChecks int
	// Errors are errors, timeouts, empty answers and cancellations, and
	// the answers an external check gave no verdict on (n_check_error: a
	// judge or command validator that failed is never a pass); NotRun the
	// cells skipped as unavailable, rate-limited or refused for auth.
	Errors, NotRun int
}

// Tally counts the group's cells as the progress line does.
func (g *Group) Tally() Tally {
	notRun := g.NSkippedUnavailable + g.NRateLimited + g.NAuthError
	return Tally{
		Passed:       g.NSuccess - g.NFailedCheck - g.NCheckError,
		FailedChecks: g.NFailedCheck,
		Errors:       g.NTotal - notRun - g.NSuccess + g.NCheckError,
		NotRun:       notRun,
	}
}
