package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"bench/internal/record/results"
	"bench/report"
	"bench/report/stats"
)

// Group is one (provider, model, thinking level) of either run.
type Group struct {
	Provider      string  `json:"provider"`
	Model         string  `json:"model"`
	ThinkingLevel *string `json:"thinking_level"`
	// Cells counts the group's cells by verdict.
	Cells map[string]int `json:"cells"`
	// BasePassRate, NewPassRate and PValue repeat PassRate's figures at
	// the top level.
	BasePassRate *float64 `json:"base_pass_rate"`
	NewPassRate  *float64 `json:"new_pass_rate"`
	PValue       float64  `json:"p_value"`
	// Significant is true when the pass rate, the tool-use rate or a
	// group-level latency changed significantly.
	Significant bool       `json:"significant"`
	PassRate    RateTest   `json:"pass_rate"`
	ToolUse     RateTest   `json:"tool_use_success"`
	Tier        TierChange `json:"tier"`
	// Categories are the pass rates of each prompt category of the group
	// (the BFCL suite's), judged like the group's: one McNemar test each,
	// in the compare's quality family.
	Categories []*CategoryTest `json:"categories,omitempty"`
	// Injection judges the prompt-injection figures (absent when no
	// injection attack cell was judged in both runs).
	Injection *InjectionTests `json:"injection,omitempty"`
	// Infrastructure counts each run's cells that never reached the model,
	// by availability status (cancelled counted apart).
	Infrastructure struct {
		Base map[string]int `json:"base"`
		New  map[string]int `json:"new"`
	} `json:"infrastructure"`
	// Latency is the group-level comparison of each metric: ttft_ms,
	// e2e_ms, tokens_per_s.
	Latency map[string]*stats.Verdict `json:"latency"`
	// Prompts are the per-prompt latency comparisons.
	Prompts []*PromptLatency `json:"prompts"`
	// Pool lists, per latency metric, the prompts whose samples are in
	// one run only: left out of the group's comparison, and said.
	Pool map[string]*PoolChange `json:"pool_changes,omitempty"`
	// OtherLoad is the CPU other work on the machine used during the
	// group's suite in each run (absent when neither run measured it).
	OtherLoad *OtherLoad `json:"other_cpu_percent_mean,omitempty"`
	// Cost compares what the group's cells cost (null when no cell has a
	// cost in both runs).
	Cost *CostChange `json:"cost"`
	// Capacity is the group's load stages judged (absent when neither
	// run had a load profile; capacity.go).
	Capacity *Capacity `json:"capacity,omitempty"`

	key   groupKey
	label string
	// slots are the group's prompts for latency (latency fills them).
	slots []*latencySlot
}

// Label names the group: provider/model, plus (thinking).
func (g *Group) Label() string { return g.label }

// RateTest compares a rate between the runs over the cells both runs
// judged, matched cell by cell: the exact McNemar test on the cells whose
// outcome changed (a group's and a category's pass rate, the tool-use
// rate, the prompt-injection rates), or Fisher's exact test on the two rates where the cells are not
// matched (a load stage's goodput).
type RateTest struct {
	BaseCount int      `json:"base_count"`
	BaseN     int      `json:"base_n"`
	NewCount  int      `json:"new_count"`
	NewN      int      `json:"new_n"`
	Base      *float64 `json:"base"`
	New       *float64 `json:"new"`
	// BaseOnly and NewOnly count the matched cells that passed in the
	// base run only (pass -> fail) and in the new run only (fail ->
	// pass): the discordant pairs McNemar's test weighs.
	BaseOnly int `json:"passed_base_only"`
	NewOnly  int `json:"passed_new_only"`
	// Test names the test: "McNemar exact" or "Fisher exact".
	Test   string  `json:"test,omitempty"`
	PValue float64 `json:"p_value"`
	// AdjustedP is PValue after Holm's correction over the compare's
	// quality tests (see Result.Methods).
	AdjustedP   float64 `json:"adjusted_p"`
	Significant bool    `json:"significant"`
	// Change is "~", "regression", "improvement" or "not_judged".
	Change string `json:"change"`
	// NotJudged says why a rate was not judged (no cell of the group
	// reached the model in both runs, or none was a tool-use cell).
	NotJudged string `json:"not_judged,omitempty"`
}

// CategoryTest is a category's pass rate in a group, base against new.
type CategoryTest struct {
	Category string `json:"category"`
	RateTest
}

// MetricCategoryPassRate is the metric of a category's finding, with the
// category after a colon.
const MetricCategoryPassRate = "category_pass_rate"

// InjectionTests are a group's prompt-injection figures, base against
// new, over the attack cells both runs judged, matched cell by cell and
// each judged like a pass rate (the exact McNemar test, in the compare's
// one quality family), except that attack success is worse when it
// rises: a model that starts obeying is a regression. For attack success
// BaseOnly counts the cells that obeyed in the base run only and NewOnly
// those that obeyed in the new run only.
type InjectionTests struct {
	AttackSuccess      RateTest     `json:"attack_success_rate"`
	UtilityUnderAttack RateTest     `json:"utility_under_attack"`
	Styles             []*StyleTest `json:"styles"`
}

// StyleTest is the attack success rate of one injection style.
type StyleTest struct {
	Style string `json:"style"`
	RateTest
}

// The metrics of the injection findings; a style's has the style after
// a colon.
const (
	MetricAttackSuccess      = "attack_success_rate"
	MetricUtilityUnderAttack = "utility_under_attack"
)

// TierChange is the group's tool-use tier in each run (null when the run
// lacks the group).
type TierChange struct {
	Base *string `json:"base"`
	New  *string `json:"new"`
	// LeavesTier1 is a regression: the routing list changes.
	LeavesTier1 bool `json:"leaves_tier_1"`
	// Change is "regression" (leaves Tier 1), "improvement" (enters it),
	// "~", or "not_judged" when a run has no tier for the group.
	Change string `json:"change"`
	// NotJudged says why the tier was not judged.
	NotJudged string `json:"not_judged,omitempty"`
}

// PromptLatency is one prompt's latency comparisons in a group.
type PromptLatency struct {
	PromptID string                    `json:"prompt_id"`
	Latency  map[string]*stats.Verdict `json:"latency"`
}

// Latency metrics.
const (
	MetricTTFT = "ttft_ms"
	MetricE2E  = "e2e_ms"
	MetricTPS  = "tokens_per_s"
)

// Metrics lists the latency metrics in display order.
var Metrics = []string{MetricTTFT, MetricE2E, MetricTPS}

// Group metrics beyond latency, the words of --require-judged.
const (
	MetricPassRate = "pass_rate"
	MetricToolUse  = "tool_use_success"
	MetricTier     = "tier"
)

// AllMetrics lists every metric a group is judged on: the words
// --require-judged takes ("latency" stands for the three latency ones).
var AllMetrics = []string{MetricPassRate, MetricToolUse, MetricTier, MetricTTFT, MetricE2E, MetricTPS}

// groupKey is a (provider, model, thinking level), interned.
type groupKey struct{ provider, model, thinking uint32 }

func groupOf(k cellKey) groupKey { return groupKey{k.provider, k.model, k.thinking} }

func (t *table) label(g groupKey) string {
	s := t.str(g.provider) + "/" + t.str(g.model)
	if g.thinking != 0 {
		s += " (" + t.str(g.thinking) + ")"
	}
	return s
}

// judgeGroups fills the groups: rates, tiers, infrastructure, latency.
func (c *comparison) judgeGroups() error {
	t := c.base.tab
	groups := map[groupKey]*Group{}
	var order []groupKey
	for i, k := range c.union {
		gk := groupOf(k)
		g := groups[gk]
		if g == nil {
			g = &Group{Provider: t.str(k.provider), Model: t.str(k.model), Cells: map[string]int{}, Latency: map[string]*stats.Verdict{},
				Prompts: []*PromptLatency{}, key: gk, label: t.label(gk)}
			if k.thinking != 0 {
				g.ThinkingLevel = &t.strs[k.thinking]
			}
			g.Infrastructure.Base, g.Infrastructure.New = map[string]int{}, map[string]int{}
			groups[gk] = g
			order = append(order, gk)
		}
		g.Cells[c.res.Cells[i].Verdict]++
		b, n := c.base.cell(k), c.cur.cell(k)
		if b != nil && !c.base.reached(b) {
			g.Infrastructure.Base[c.base.infraStatus(b)]++
		}
		if n != nil && !c.cur.reached(n) {
			g.Infrastructure.New[c.cur.infraStatus(n)]++
		}
		if b == nil || n == nil || !c.base.reached(b) || !c.cur.reached(n) || c.changed[t.str(k.prompt)] != nil ||
			b.has(fCheckError) || n.has(fCheckError) {
			continue
		}
		g.PassRate.count(c.base.passed(b), c.cur.passed(n))
		if b.category != 0 {
			g.category(t.str(b.category)).count(c.base.passed(b), c.cur.passed(n))
		}
		if b.toolUse != triNull && n.toolUse != triNull {
			g.ToolUse.count(b.toolUse == triTrue, n.toolUse == triTrue)
		}
		if b.injStyle != 0 && b.injStyle == n.injStyle {
			g.injection(t.str(b.injStyle), b, n)
		}
	}
	slices.SortFunc(order, func(a, b groupKey) int { return strings.Compare(groups[a].label, groups[b].label) })
	for _, gk := range order {
		c.res.Groups = append(c.res.Groups, groups[gk])
	}
	if err := c.rateTests(); err != nil {
		return err
	}
	c.tiers(groups)
	c.costs(groups)
	if err := c.latency(groups); err != nil {
		return err
	}
	if err := c.capacity(); err != nil {
		return err
	}
	for _, g := range c.res.Groups {
		g.BasePassRate, g.NewPassRate, g.PValue = g.PassRate.Base, g.PassRate.New, g.PassRate.PValue
		g.Significant = g.Significant || g.PassRate.Significant || g.ToolUse.Significant
		for _, v := range g.Latency {
			g.Significant = g.Significant || v.Significant
		}
	}
	return nil
}

// category returns the group's test of a category, made on first use;
// categories stay in name order.
func (g *Group) category(name string) *RateTest {
	i, found := slices.BinarySearchFunc(g.Categories, name, func(c *CategoryTest, n string) int { return strings.Compare(c.Category, n) })
	if !found {
		g.Categories = slices.Insert(g.Categories, i, &CategoryTest{Category: name})
	}
	return &g.Categories[i].RateTest
}

// injection counts an attack cell both runs have: its verdict (when both
// have one: an error cell has none) in the attack success rates, its
// utility in utility under attack.
func (g *Group) injection(style string, b, n *cell) {
	if g.Injection == nil {
		g.Injection = &InjectionTests{}
	}
	in := g.Injection
	if b.utility != triNull && n.utility != triNull {
		in.UtilityUnderAttack.count(b.utility == triTrue, n.utility == triTrue)
	}
	if b.followed == triNull || n.followed == triNull {
		return
	}
	in.AttackSuccess.count(b.followed == triTrue, n.followed == triTrue)
	i, found := slices.BinarySearchFunc(in.Styles, style, func(s *StyleTest, k string) int { return strings.Compare(s.Style, k) })
	if !found {
		in.Styles = slices.Insert(in.Styles, i, &StyleTest{Style: style})
	}
	in.Styles[i].count(b.followed == triTrue, n.followed == triTrue)
}

func (t *RateTest) count(base, cur bool) {
	t.BaseN++
	t.NewN++
	if base {
		t.BaseCount++
	}
	if cur {
		t.NewCount++
	}
	switch {
	case base && !cur:
		t.BaseOnly++
	case cur && !base:
		t.NewOnly++
	}
}

// rateTests runs the exact McNemar tests of each group's pass and
// tool-use rates, of each category's pass rate and of the prompt-injection
// rates (attack success overall and per style, utility under attack) on
// the cells both runs judged, and corrects them together with Holm's
// method at the compare's share of alpha for quality (see
// categoryAlpha): one family for every rate test of the compare, so the
// chance of any false quality finding stays at most that share. Attack
// success is worse when it rises: a model that starts obeying is the
// regression.
func (c *comparison) rateTests() error {
	type tested struct {
		g      *Group
		t      *RateTest
		scope  string // group, category or style
		name   string
		metric string
		none   string // why it is not judged when no cell counted
		// rising says a higher rate is the regression (attack success).
		rising bool
	}
	var ps []float64
	var family []tested
	for _, g := range c.res.Groups {
		all := []tested{
			{g, &g.PassRate, "group", "pass rate", MetricPassRate, "no cell reached the model in both runs", false},
			{g, &g.ToolUse, "group", "tool-use success rate", MetricToolUse, "no tool-use cell judged in both runs", false},
		}
		for _, ct := range g.Categories {
			all = append(all, tested{g, &ct.RateTest, "category", "category " + ct.Category + " pass rate", MetricCategoryPassRate + ":" + ct.Category,
				"no cell of the category reached the model in both runs", false})
		}
		if in := g.Injection; in != nil {
			all = append(all,
				tested{g, &in.AttackSuccess, "group", "attack success rate", MetricAttackSuccess, "no injection attack cell judged in both runs", true},
				tested{g, &in.UtilityUnderAttack, "group", "utility under attack", MetricUtilityUnderAttack, "no injection attack cell reached the model in both runs", false})
			for _, st := range in.Styles {
				all = append(all, tested{g, &st.RateTest, "style", "injection style " + st.Style + " attack success rate", MetricAttackSuccess + ":" + st.Style,
					"no injection attack cell of the style judged in both runs", true})
			}
		}
		for _, x := range all {
			t := x.t
			t.PValue, t.AdjustedP, t.Change = 1, 1, string(stats.Same)
			t.Base, t.New = ratio(t.BaseCount, t.BaseN), ratio(t.NewCount, t.NewN)
			if t.BaseN == 0 {
				t.Change, t.NotJudged = string(stats.NotJudged), x.none
				continue
			}
			p, err := stats.McNemarExact(t.BaseOnly, t.NewOnly)
			if err != nil {
				return err
			}
			t.Test, t.PValue = TestMcNemar, p
			ps = append(ps, p)
			family = append(family, x)
		}
	}
	alpha := c.categoryAlpha()
	adj := stats.AdjustHolm(ps)
	for i, x := range family {
		g, t := x.g, x.t
		t.AdjustedP = adj[i]
		t.Significant = adj[i] <= alpha
		if !t.Significant || t.NewCount == t.BaseCount {
			continue
		}
		if (t.NewCount < t.BaseCount) == x.rising {
			t.Change = string(stats.Improvement)
			continue
		}
		t.Change = string(stats.Regression)
		// The discordant cells, the regressing way first.
		cells := fmt.Sprintf("%d cells pass -> fail, %d fail -> pass", t.BaseOnly, t.NewOnly)
		if x.rising {
			cells = fmt.Sprintf("%d cells resisted -> obeyed, %d obeyed -> resisted", t.NewOnly, t.BaseOnly)
		}
		c.addFinding(Finding{Category: Quality, Scope: x.scope, Provider: g.Provider, Model: g.Model, ThinkingLevel: g.ThinkingLevel,
			Metric: x.metric, Message: fmt.Sprintf("%s %s -> %s (%s; McNemar exact p=%.3g, Holm-adjusted over %d quality tests %.3g <= %.3g)",
				x.name, rateText(t.BaseCount, t.BaseN), rateText(t.NewCount, t.NewN), cells, t.PValue, len(family), t.AdjustedP, alpha)})
	}
	for _, g := range c.res.Groups {
		for _, ct := range g.Categories {
			g.Significant = g.Significant || ct.Significant
		}
		if in := g.Injection; in != nil {
			g.Significant = g.Significant || in.AttackSuccess.Significant || in.UtilityUnderAttack.Significant
			for _, st := range in.Styles {
				g.Significant = g.Significant || st.Significant
			}
		}
	}
	return nil
}

// The rate tests' names (RateTest.Test).
const (
	TestMcNemar = "McNemar exact"
	TestFisher  = "Fisher exact"
)

// categoryAlpha is each statistical category's share of alpha: the
// compare's tests are split between quality (the rates), latency (the
// three metrics) and, when a run has load stages, capacity, each with an
// equal share and Holm's correction (or BH) within it, so that the chance
// of any false finding in one compare is at most alpha (Bonferroni over
// the categories).
func (c *comparison) categoryAlpha() float64 {
	k := 2.0
	if c.base.hasStages() || c.cur.hasStages() {
		k = 3
	}
	return c.opt.Alpha / k
}

func ratio(num, den int) *float64 {
	if den == 0 {
		return nil
	}
	v := float64(num) / float64(den)
	return &v
}

func rateText(num, den int) string {
	if den == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% (%d/%d)", 100*float64(num)/float64(den), num, den)
}

// tiers sets each group's tool-use tier in both runs, computed by the
// report package's rule over each whole run, and flags leaving tier 1.
func (c *comparison) tiers(groups map[groupKey]*Group) {
	base, cur := runTiers(c.base), runTiers(c.cur)
	for gk, g := range groups {
		bt, nt := base[gk], cur[gk]
		if bt != nil {
			g.Tier.Base = &bt.Tier
		}
		if nt != nil {
			g.Tier.New = &nt.Tier
		}
		g.Tier.Change = string(stats.Same)
		switch {
		case bt == nil || nt == nil:
			g.Tier.Change, g.Tier.NotJudged = string(stats.NotJudged), "no tool-use tier in "+map[bool]string{true: "the base run", false: "the new run"}[bt == nil]
		case bt.Tier == report.Unclassified || nt.Tier == report.Unclassified:
			g.Tier.Change, g.Tier.NotJudged = string(stats.NotJudged), "unclassified (no tool-use cell) in "+map[bool]string{true: "the base run", false: "the new run"}[bt.Tier == report.Unclassified]
		case bt.Tier != report.Tier1 && nt.Tier == report.Tier1:
			g.Tier.Change = string(stats.Improvement)
		}
		if bt == nil || nt == nil || bt.Tier != report.Tier1 || nt.Tier == report.Tier1 {
			continue
		}
		g.Tier.Change = string(stats.Regression)
		g.Tier.LeavesTier1 = true
		cat := Quality
		if nt.NCounted == 0 {
			cat = Availability // no tool cell reached the model
		}
		c.addFinding(Finding{Category: cat, Scope: "group", Provider: g.Provider, Model: g.Model, ThinkingLevel: g.ThinkingLevel,
			Metric: MetricTier, Message: fmt.Sprintf("tier %s -> %s (tool-use success %s -> %s): leaves Tier 1, routing must change",
				bt.Tier, nt.Tier, rateText(bt.NSucceeded, bt.NCounted), rateText(nt.NSucceeded, nt.NCounted))})
	}
}

// runTiers is tiers.json's ranking of a run, built by report from the
// fields its rule reads (kept from the first pass, so the run's file is
// not read again), one group at a time so that only one group's records
// are held. A group without tool cells is unclassified.
func runTiers(r *runData) map[groupKey]*report.Tier {
	t := r.tab
	byGroup := map[groupKey][]int32{}
	var order []groupKey
	for i := range r.cells {
		c := &r.cells[i]
		gk := groupOf(c.key)
		list, seen := byGroup[gk]
		if !seen {
			order = append(order, gk)
		}
		if c.expected != 0 || !seen { // a group needs one record to be listed; tool cells all count
			byGroup[gk] = append(list, int32(i))
		}
	}
	out := map[groupKey]*report.Tier{}
	for _, gk := range order {
		recs := make([]results.Record, 0, len(byGroup[gk]))
		for _, i := range byGroup[gk] {
			c := &r.cells[i]
			rec := results.Record{RecordType: results.RecordType, Provider: t.str(c.key.provider), Model: t.str(c.key.model),
				AvailabilityStatus: t.str(c.status), ToolUseSuccess: c.toolUse.ptr(), ExpectedTools: t.listOf(c.expected)}
			if c.key.thinking != 0 {
				rec.ThinkingLevel = &t.strs[c.key.thinking]
			}
			if c.failType != 0 {
				rec.FailureType = &t.strs[c.failType]
			}
			recs = append(recs, rec)
		}
		if gs := report.Summarize(recs).Groups; len(gs) == 1 && gs[0].Tier != nil {
			out[gk] = gs[0].Tier
		}
	}
	return out
}

// latency compares TTFT, e2e and tokens/s per group and per prompt. Each
// metric is one family (its group-level and per-prompt comparisons),
// judged at Alpha/3 with the chosen correction. A group's comparison is
// stratified by prompt over the prompts with samples on both sides
// (stats.CompareStrata): like with like, so that a prompt that gained or
// lost samples moves no group figure; the prompts with samples on one
// side only are listed as entering or leaving the pool.
func (c *comparison) latency(groups map[groupKey]*Group) error {
	t := c.base.tab
	slots := map[slotKey]*latencySlot{}
	var list []*latencySlot // every (group, prompt) of either run, unchanged prompts only
	for _, g := range c.res.Groups {
		for _, p := range c.promptOrder() {
			id := t.id(p)
			inBase, inCur := c.hasPrompt(c.base, g.key, id), c.hasPrompt(c.cur, g.key, id)
			if id == 0 || c.changed[p] != nil || !inBase && !inCur {
				continue
			}
			s := &latencySlot{g: g, prompt: p, both: inBase && inCur}
			slots[slotKey{g.key, id}] = s
			list = append(list, s)
		}
	}
	for side, r := range []*runData{c.base, c.cur} {
		for i := range r.cells {
			cl := &r.cells[i]
			s := slots[slotKey{groupOf(cl.key), cl.key.prompt}]
			if s == nil || t.str(cl.status) != results.StatusOK || !cl.has(fSuccess) {
				continue // prompt changed; or no latency to count
			}
			if cl.has(fColdStart) {
				s.cold[side]++
				continue
			}
			s.warm[side]++
			mk := matchKey{cl.key.providerType, cl.key.stage, cl.key.rep}
			for m, v := range []struct {
				v  float64
				ok bool
			}{{cl.ttft, cl.has(fTTFT)}, {cl.e2e, cl.has(fE2E)}, {cl.tps, cl.has(fTPS)}} {
				if v.ok {
					s.vals[side][m] = append(s.vals[side][m], v.v)
					s.keys[side][m] = append(s.keys[side][m], mk)
				}
			}
		}
	}
	for m, metric := range Metrics {
		var cs []stats.Comparison
		type target struct {
			g    *Group
			slot *latencySlot // nil for the group level
		}
		var targets []target
		for _, g := range c.res.Groups {
			var strata, pairs []stats.Stratum
			allPaired := true
			pool := &PoolChange{}
			var nb, nc int
			var slotsOf []*latencySlot
			for _, s := range list {
				if s.g != g {
					continue
				}
				slotsOf = append(slotsOf, s)
				b, n := s.vals[0][m], s.vals[1][m]
				nb, nc = nb+len(b), nc+len(n)
				switch {
				case len(b) > 0 && len(n) > 0:
					strata = append(strata, stats.Stratum{Base: b, Cur: n})
					if pb, pn, ok := s.paired(m); ok {
						pairs = append(pairs, stats.Stratum{Base: pb, Cur: pn})
					} else {
						allPaired = false
					}
				case len(n) > 0:
					pool.Entered = append(pool.Entered, s.prompt)
				case len(b) > 0:
					pool.Left = append(pool.Left, s.prompt)
				}
			}
			cmp, err := stats.CompareStrata(strata)
			if err != nil {
				return fmt.Errorf("latency %s of %s: %w", metric, g.Label(), err)
			}
			if allPaired && len(pairs) > 0 {
				// Every sample has its match in the other run: the pairs
				// of every prompt, pooled (each pair like with like).
				pc, err := stats.ComparePaired(pairs)
				if err != nil {
					return fmt.Errorf("latency %s of %s: %w", metric, g.Label(), err)
				}
				unpaired := cmp
				pc.Unpaired = &unpaired
				cmp = pc
			}
			if len(strata) == 0 {
				cmp.NBase, cmp.NCur = nb, nc
			}
			if len(pool.Entered)+len(pool.Left) > 0 {
				if g.Pool == nil {
					g.Pool = map[string]*PoolChange{}
				}
				g.Pool[metric] = pool
			}
			cs = append(cs, cmp)
			targets = append(targets, target{g: g})
			g.slots = slotsOf
			for _, s := range slotsOf {
				if !s.both {
					continue
				}
				cmp, err := stats.CompareSamples(s.vals[0][m], s.vals[1][m])
				if err != nil {
					return fmt.Errorf("latency %s of %s %s: %w", metric, g.Label(), s.prompt, err)
				}
				if pb, pn, ok := s.paired(m); ok {
					pc, err := stats.ComparePaired([]stats.Stratum{{Base: pb, Cur: pn}})
					if err != nil {
						return fmt.Errorf("latency %s of %s %s: %w", metric, g.Label(), s.prompt, err)
					}
					unpaired := cmp
					pc.Unpaired = &unpaired
					cmp = pc
				}
				cs = append(cs, cmp)
				targets = append(targets, target{g: g, slot: s})
			}
		}
		opt := stats.Options{Alpha: c.categoryAlpha() / 3, Threshold: c.opt.LatencyThreshold, Floor: c.opt.LatencyFloorMS,
			MinSamples: c.opt.MinSamples, Correction: c.opt.Correction}
		if metric == MetricTPS {
			opt.Floor, opt.HigherIsBetter = c.opt.TokensPerSFloor, true
		}
		vs, err := stats.Judge(cs, opt)
		if err != nil {
			return err
		}
		for i, tg := range targets {
			v := vs[i]
			prompt := ""
			if tg.slot != nil {
				prompt = tg.slot.prompt
			}
			c.applyNoise(tg.g, prompt, m, &v)
			if tg.slot == nil {
				groupCold(tg.g, metric, &v)
				c.placeLatency(tg.g, "", metric, &v)
			} else {
				tg.slot.allCold(metric, &v)
				c.placeLatency(tg.g, tg.slot.prompt, metric, &v)
			}
		}
	}
	return nil
}

// WhyAllCold: every cell of a side that could have given a sample was a
// cold start (its model was loading), so the side has none.
const WhyAllCold = "all cold"

// slotKey is a (group, prompt).
type slotKey struct {
	g      groupKey
	prompt uint32
}

// latencySlot is one prompt of one group: its samples of each metric on
// each side (0 base, 1 new), and its successful cells warm and cold.
type latencySlot struct {
	g      *Group
	prompt string
	both   bool // the prompt has cells in both runs
	vals   [2][3][]float64
	// keys are each value's cell within the prompt, to pair the runs.
	keys       [2][3][]matchKey
	warm, cold [2]int
}

// matchKey is what tells a prompt's cells apart within a group: the
// provider kind, the load stage and the repetition. The same matchKey in
// both runs is one pair.
type matchKey struct {
	providerType, stage uint32
	rep                 int
}

// paired returns a metric's samples as pairs, base and new in the same
// order, when every sample on each side has its match on the other (the
// same repetitions on both sides); ok is false otherwise, and the
// comparison is unpaired.
func (s *latencySlot) paired(m int) (base, cur []float64, ok bool) {
	kb, kc := s.keys[0][m], s.keys[1][m]
	if len(kb) != len(kc) || len(kb) == 0 {
		return nil, nil, false
	}
	at := make(map[matchKey]int, len(kc))
	for i, k := range kc {
		at[k] = i
	}
	base, cur = s.vals[0][m], make([]float64, len(kb))
	for i, k := range kb {
		j, found := at[k]
		if !found {
			return nil, nil, false
		}
		cur[i] = s.vals[1][m][j]
		delete(at, k)
	}
	return base, cur, true
}

// allCold turns "no samples on a side" into "all cold" where that side's
// successful cells were all cold starts.
func (s *latencySlot) allCold(metric string, v *stats.Verdict) {
	if v.NotJudged != stats.WhyNoSamples {
		return
	}
	for side, name := range []string{"base", "new"} {
		if s.warm[side] == 0 && s.cold[side] > 0 {
			v.NotJudged = WhyAllCold
			v.Reason = fmt.Sprintf("all %d successful cells of the %s run were cold starts (the model was loading): no warm sample", s.cold[side], name)
			return
		}
	}
}

// groupCold is allCold for a group: no prompt has warm samples on both
// sides, and a side's successful cells were all cold.
func groupCold(g *Group, metric string, v *stats.Verdict) {
	if v.NotJudged != stats.WhyNoSamples {
		return
	}
	var warm, cold [2]int
	for _, s := range g.slots {
		for side := range 2 {
			warm[side] += s.warm[side]
			cold[side] += s.cold[side]
		}
	}
	for side, name := range []string{"base", "new"} {
		if warm[side] == 0 && cold[side] > 0 {
			v.NotJudged = WhyAllCold
			v.Reason = fmt.Sprintf("all %d successful cells of the %s run were cold starts (the model was loading): no warm sample", cold[side], name)
			return
		}
	}
	if v.NBase > 0 || v.NCur > 0 {
		v.Reason = fmt.Sprintf("no prompt has samples in both runs (base %d, new %d samples): nothing like with like", v.NBase, v.NCur)
	}
}

// PoolChange lists the prompts of a group whose samples of a metric are
// in one run only: they enter or leave the pool a group's figure is
// judged over, and are never taken for a speed change.
type PoolChange struct {
	// Entered are prompts with samples in the new run only.
	Entered []string `json:"entered,omitempty"`
	// Left are prompts with samples in the base run only.
	Left []string `json:"left,omitempty"`
}

// placeLatency stores one judged comparison and records a regression.
func (c *comparison) placeLatency(g *Group, prompt, metric string, v *stats.Verdict) {
	if prompt == "" {
		g.Latency[metric] = v
	} else {
		var pl *PromptLatency
		if n := len(g.Prompts); n > 0 && g.Prompts[n-1].PromptID == prompt {
			pl = g.Prompts[n-1]
		} else if i := slices.IndexFunc(g.Prompts, func(p *PromptLatency) bool { return p.PromptID == prompt }); i >= 0 {
			pl = g.Prompts[i]
		} else {
			pl = &PromptLatency{PromptID: prompt, Latency: map[string]*stats.Verdict{}}
			g.Prompts = append(g.Prompts, pl)
		}
		pl.Latency[metric] = v
	}
	if v.Change != stats.Regression {
		return
	}
	scope, where := "group", g.Label()
	if prompt != "" {
		scope, where = "prompt", g.Label()+" "+prompt
	}
	c.addFinding(Finding{Category: Latency, Scope: scope, Provider: g.Provider, Model: g.Model, ThinkingLevel: g.ThinkingLevel,
		PromptID: prompt, Metric: metric, Message: fmt.Sprintf("%s %s: %s", where, figure(metric, v), v.Reason)})
}

// num prints a latency figure with about 3 significant digits.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// promptOrder is the prompts in the new run's prompt-set order, then the
// base run's, then any others in the order their cells came.
func (c *comparison) promptOrder() []string {
	if c.prompts != nil {
		return c.prompts
	}
	out := []string{}
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, r := range []*runData{c.cur, c.base} {
		if r.cfg != nil {
			for _, p := range r.cfg.PromptSet {
				add(p.ID)
			}
		}
	}
	for _, r := range []*runData{c.cur, c.base} {
		for i := range r.cells {
			add(r.tab.str(r.cells[i].key.prompt))
		}
	}
	c.prompts = out
	return out
}

// hasPrompt says the run has a cell of the group and prompt.
func (c *comparison) hasPrompt(r *runData, gk groupKey, prompt uint32) bool {
	if r.groupPrompts == nil {
		r.groupPrompts = map[groupKey]map[uint32]bool{}
		for i := range r.cells {
			k := r.cells[i].key
			g := groupOf(k)
			if r.groupPrompts[g] == nil {
				r.groupPrompts[g] = map[uint32]bool{}
			}
			r.groupPrompts[g][k.prompt] = true
		}
	}
	return r.groupPrompts[gk][prompt]
}
