package compare

import (
	"fmt"

	"bench/report"
	"bench/report/stats"
)

// CostChange is a group's cost base -> new, over the cells that have a
// cost (cost_usd) in both runs, so that a cell priced in one run only
// does not move it.
type CostChange struct {
	// N is how many cells have a cost in both runs.
	N int `json:"n"`
	// BaseTotal and NewTotal sum those cells' costs; BasePerCell and
	// NewPerCell are their means.
	BaseTotal   float64 `json:"base_usd_total"`
	NewTotal    float64 `json:"new_usd_total"`
	BasePerCell float64 `json:"base_usd_per_cell"`
	NewPerCell  float64 `json:"new_usd_per_cell"`
	// BasePerPassed and NewPerPassed divide each run's total by its cells
	// (of those) that passed; null when none did.
	BasePerPassed *float64 `json:"base_usd_per_passed_cell"`
	NewPerPassed  *float64 `json:"new_usd_per_passed_cell"`
	// DeltaPct is the change of the mean cost of a cell, in percent (null
	// when the base cost nothing).
	DeltaPct *float64 `json:"delta_pct"`
	// Change is "regression" when the mean rose beyond the cost
	// threshold, "improvement" when it fell beyond it, "~" otherwise.
	Change string `json:"change"`
}

// costs compares each group's cost, and makes a cost finding of a rise
// beyond the threshold (gating only with --fail-on cost).
func (c *comparison) costs(groups map[groupKey]*Group) {
	type acc struct {
		n                 int
		base, cur         float64
		basePass, curPass int
	}
	accs := map[groupKey]*acc{}
	for _, k := range c.union {
		b, n := c.base.cell(k), c.cur.cell(k)
		if b == nil || n == nil || !b.has(fCost) || !n.has(fCost) {
			continue
		}
		a := accs[groupOf(k)]
		if a == nil {
			a = &acc{}
			accs[groupOf(k)] = a
		}
		a.n++
		a.base += b.cost
		a.cur += n.cost
		if c.base.reached(b) && c.base.passed(b) {
			a.basePass++
		}
		if c.cur.reached(n) && c.cur.passed(n) {
			a.curPass++
		}
	}
	for _, g := range c.res.Groups {
		a := accs[g.key]
		if a == nil {
			continue
		}
		cc := &CostChange{N: a.n, BaseTotal: round9(a.base), NewTotal: round9(a.cur),
			BasePerCell: round9(a.base / float64(a.n)), NewPerCell: round9(a.cur / float64(a.n)), Change: string(stats.Same)}
		if a.basePass > 0 {
			cc.BasePerPassed = ptrTo(round9(a.base / float64(a.basePass)))
		}
		if a.curPass > 0 {
			cc.NewPerPassed = ptrTo(round9(a.cur / float64(a.curPass)))
		}
		if a.base > 0 {
			d := 100 * (a.cur - a.base) / a.base
			cc.DeltaPct = &d
			switch {
			case a.cur > a.base*(1+c.opt.CostThreshold):
				cc.Change = string(stats.Regression)
				c.addFinding(Finding{Category: Cost, Scope: "group", Provider: g.Provider, Model: g.Model, ThinkingLevel: g.ThinkingLevel,
					Metric: "cost_usd", Message: fmt.Sprintf("mean cost of a cell %s -> %s (%+.1f%%, beyond the %.0f%% cost threshold) over %s priced in both runs",
						usd(cc.BasePerCell), usd(cc.NewPerCell), d, 100*c.opt.CostThreshold, plural(a.n, "cell", "cells"))})
			case a.cur < a.base*(1-c.opt.CostThreshold):
				cc.Change = string(stats.Improvement)
			}
		}
		g.Cost = cc
	}
}

func usd(v float64) string { return report.FormatUSD(&v) }

// round9 keeps ten significant digits of a sum of small products.
func round9(v float64) float64 { return *report.RoundUSD(v) }

// costText is a group's cost base -> new for the tables.
func costText(cc *CostChange) string {
	if cc == nil {
		return "-"
	}
	s := usd(cc.BasePerCell) + " -> " + usd(cc.NewPerCell) + "/cell"
	if cc.DeltaPct != nil {
		s += fmt.Sprintf(" %+.0f%%", *cc.DeltaPct)
	}
	switch cc.Change {
	case string(stats.Regression):
		s += " UP"
	case string(stats.Improvement):
		s += " down"
	}
	return s
}

// anyCost says some group has a cost in both runs: the tables show the
// cost column only then.
func anyCost(r *Result) bool {
	for _, g := range r.Groups {
		if g.Cost != nil {
			return true
		}
	}
	return false
}
