package session

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"bench/config"
	"bench/internal/format"
	"bench/internal/record/results"
	"bench/report"
	"bench/run/plan"
	"bench/run/runner"
)

// The budget (run.max_cost_usd, --max-cost): the projection bench run
// --dry-run prints and a run is checked against before it starts, and the
// runner's Budget the sweep spends from (run/runner/budget.go).

// projectionLines say what the plan is projected to cost, per provider
// entry and in all, with the assumptions; spent is what a resumed run's
// records already cost.
func projectionLines(cfg *config.Config, pl *plan.Plan, spent float64) []string {
	pr := plan.NewProjector(cfg).Plan(pl)
	var parts []string
	priced := false
	for _, e := range pr.Entries {
		part := e.Provider + " "
		if e.Cells > 0 || e.Warmups > 0 {
			priced = true
			part += usd(e.USD)
			if e.Warmups > 0 {
				part += fmt.Sprintf(" (%s + %s)", format.Plural(e.Cells, "cell"), format.Plural(e.Warmups, "warm-up"))
			}
			if len(e.Unpriced) > 0 {
				part += " and"
			}
		}
		if len(e.Unpriced) > 0 {
			part += " unpriced " + strings.Join(e.Unpriced, ", ")
		}
		parts = append(parts, part)
	}
	if !priced {
		return []string{"  projected cost: unknown, no model of the plan has a price (a pricing: block, answers.md#cost)"}
	}
	total := "  projected cost: " + strings.Join(parts, "; ") + "; in all " + usd(pr.USD)
	if pr.Unpriced {
		total += ", the unpriced models not counted"
	}
	if spent > 0 {
		total += fmt.Sprintf(", after the %s the run's records already cost", usd(spent))
	}
	if b := cfg.Run.MaxCostUSD; b != nil {
		total += fmt.Sprintf(" (budget %s)", usd(*b))
	}
	lines := []string{total, "  assumed: " + plan.ProjectionAssumptions}
	if len(pr.Uncapped) > 0 {
		lines = append(lines, "  no output cap (max_tokens) for "+strings.Join(pr.Uncapped, ", ")+": each answer counted at 4096 tokens")
	}
	return lines
}

func usd(v float64) string { return report.FormatUSD(&v) }

// overBudget says why the run may not start: its projection, after what
// is spent, passes run.max_cost_usd ("" when it does not, or there is no
// budget).
func overBudget(cfg *config.Config, pl *plan.Plan, spent float64) string {
	b := cfg.Run.MaxCostUSD
	if b == nil {
		return ""
	}
	pr := plan.NewProjector(cfg).Plan(pl)
	if spent+pr.USD <= *b {
		return ""
	}
	return fmt.Sprintf("the run is projected to cost %s (%s of it already spent), more than run.max_cost_usd %s; "+
		"--allow-over-budget starts it anyway (the sweep stops at the budget: exit 6), --max-cost raises it, --dry-run shows the projection",
		usd(spent+pr.USD), usd(spent), usd(*b))
}

// runBudget is the runner's budget, nil without one.
func runBudget(cfg *config.Config, spent float64) *runner.Budget {
	if cfg.Run.MaxCostUSD == nil {
		return nil
	}
	return &runner.Budget{MaxUSD: *cfg.Run.MaxCostUSD, Spent: spent, Projector: plan.NewProjector(cfg)}
}

// spender is what a record of an earlier invocation cost against the
// budget (runner.Spent, its cell's projection when its cost is unknown);
// nil without a budget.
func spender(cfg *config.Config, pl *plan.Plan) func(*results.Record) float64 {
	if cfg.Run.MaxCostUSD == nil {
		return nil
	}
	pj := plan.NewProjector(cfg)
	projected := map[results.Key]float64{}
	for _, c := range pl.Cells {
		projected[c.Key()], _ = pj.Cell(c)
	}
	return func(r *results.Record) float64 { return runner.Spent(r, projected[r.Key()]) }
}

// resumeBudget is the --max-cost a run the budget stopped needs to finish:
// what it spent and what its cells left are projected at, rounded up to
// the cent.
func resumeBudget(cfg *config.Config, pl *plan.Plan, spent float64, done map[results.Key]bool) string {
	left := plan.NewProjector(cfg).Plan(pl.Without(done)).USD
	cents := int64((spent+left)*100) + 1
	return strconv.FormatFloat(float64(cents)/100, 'f', 2, 64)
}

// writeBudgetEnd says how the budget stopped the run and how to finish it.
func writeBudgetEnd(w io.Writer, s *session, out *runner.Outcome) {
	spent := s.tally.spentUSD()
	fmt.Fprintf(w, "bench: %s: %s of run.max_cost_usd %s spent; %d/%d cells recorded, %d not run (skipped_unavailable/%s) in %s\n",
		out.EndReason, usd(spent), usd(*s.cfg.Run.MaxCostUSD), out.Recorded, out.Planned, s.tally.notRun, runner.FailBudgetExhausted, s.dir.Path)
	fmt.Fprintf(w, "bench: to run them: %s\n", resumeCommand(s.o.prog(), s.o.Args, s.cfg.Run.ID, resumeBudget(s.cfg, s.plan, spent, s.tally.doneKeys())))
}
