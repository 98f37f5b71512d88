package compare

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"bench/report/stats"
)

// Judgement counts one metric's comparisons over every group (and, for
// latency, every prompt): how many were judged, and why the others were
// not.
type Judgement struct {
	Judged int `json:"judged"`
	// NotJudged counts the others by reason (too few samples, no samples
	// on a side, all cold, machine load, ...).
	NotJudged map[string]int `json:"not_judged"`
}

// Total is every comparison of the metric.
func (j *Judgement) Total() int {
	n := j.Judged
	for _, v := range j.NotJudged {
		n += v
	}
	return n
}

// judgement counts what was judged, per metric.
func judgement(groups []*Group) map[string]*Judgement {
	out := map[string]*Judgement{}
	for _, m := range AllMetrics {
		out[m] = &Judgement{NotJudged: map[string]int{}}
	}
	count := func(metric string, judged bool, why string) {
		j := out[metric]
		if judged {
			j.Judged++
		} else {
			j.NotJudged[why]++
		}
	}
	for _, g := range groups {
		if g.Capacity != nil {
			for _, m := range CapacityMetrics {
				// A group's search has a limit and no saturation point, a
				// sweep the other way round: each counts where it applies.
				if out[m] == nil && (m != MetricSLOLimit || g.Capacity.Limit != nil) && (m != MetricSaturation || g.Capacity.Limit == nil) {
					out[m] = &Judgement{NotJudged: map[string]int{}}
				}
			}
			for _, s := range g.Capacity.Stages {
				if s.Throughput != nil {
					count(MetricThroughput, s.Throughput.Judged(), s.Throughput.NotJudged)
				}
				count(MetricGoodput, s.Goodput.Change != string(stats.NotJudged), s.Goodput.NotJudged)
			}
			if l := g.Capacity.Limit; l != nil {
				count(MetricSLOLimit, l.Change != string(stats.NotJudged), l.NotJudged)
			} else {
				count(MetricSaturation, g.Capacity.Saturation.Change != string(stats.NotJudged), g.Capacity.Saturation.NotJudged)
			}
		}
		count(MetricPassRate, g.PassRate.Change != string(stats.NotJudged), g.PassRate.NotJudged)
		count(MetricToolUse, g.ToolUse.Change != string(stats.NotJudged), g.ToolUse.NotJudged)
		count(MetricTier, g.Tier.Change != string(stats.NotJudged), g.Tier.NotJudged)
		for _, m := range Metrics {
			if v := g.Latency[m]; v != nil {
				count(m, v.Judged(), v.NotJudged)
			}
			for _, p := range g.Prompts {
				if v := p.Latency[m]; v != nil {
					count(m, v.Judged(), v.NotJudged)
				}
			}
		}
	}
	return out
}

// judgedMetrics are AllMetrics, then the capacity metrics when a group
// had load stages, in display order.
func judgedMetrics(j map[string]*Judgement) []string {
	var out []string
	for _, m := range append(slices.Clone(AllMetrics), CapacityMetrics...) {
		if j[m] != nil {
			out = append(out, m)
		}
	}
	return out
}

// expandMetrics turns --require-judged's words into metrics.
func expandMetrics(names []string) []string {
	var out []string
	for _, n := range names {
		switch n {
		case Latency:
			out = append(out, Metrics...)
		case CapacityCat:
			out = append(out, CapacityMetrics...)
		default:
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// unjudged lists the required metrics judged nowhere.
func unjudged(j map[string]*Judgement, required []string) []string {
	var out []string
	for _, m := range expandMetrics(required) {
		if slices.Contains(CapacityMetrics, m) && slices.Contains(required, CapacityCat) && !slices.Contains(required, m) && (j[m] == nil || j[m].Total() == 0) && anyCapacity(j) {
			// "capacity": the capacity figures the runs had (a sweep has no
			// limit, a search no stages of its own nor a saturation point).
			continue
		}
		if j[m] == nil || j[m].Judged == 0 {
			out = append(out, m)
		}
	}
	return out
}

// anyCapacity says some capacity figure had a comparison.
func anyCapacity(j map[string]*Judgement) bool {
	for _, m := range CapacityMetrics {
		if j[m] != nil && j[m].Total() > 0 {
			return true
		}
	}
	return false
}

// notJudgedText sums up what was not judged, for the verdict line:
// "not judged: 45 of 60 comparisons (too few samples 40, all cold 5)".
func notJudgedText(r *Result) string {
	total, judged := 0, 0
	why := map[string]int{}
	for _, m := range judgedMetrics(r.Judgement) {
		j := r.Judgement[m]
		total += j.Total()
		judged += j.Judged
		for k, v := range j.NotJudged {
			why[k] += v
		}
	}
	if total == 0 {
		return "nothing to judge"
	}
	if judged == total {
		return fmt.Sprintf("all %d comparisons judged", total)
	}
	return fmt.Sprintf("not judged: %d of %d comparisons (%s)", total-judged, total, reasonCounts(why))
}

// reasonCounts is "too few samples 40, all cold 5", most first.
func reasonCounts(why map[string]int) string {
	keys := make([]string, 0, len(why))
	for k := range why {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if why[keys[a]] != why[keys[b]] {
			return why[keys[a]] > why[keys[b]]
		}
		return keys[a] < keys[b]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, why[k])
	}
	return strings.Join(parts, ", ")
}

// unit is a latency metric's unit.
func unit(metric string) string {
	switch metric {
	case MetricTPS:
		return "tok/s"
	case MetricThroughput:
		return "req/s"
	}
	return "ms"
}

// figure is a latency comparison as benchstat prints one:
// "ttft_ms 98 → 164 (+67 %, p=3e-11, n=32+32, 95 % CI +59…+70 ms) REGRESSION",
// or "tokens_per_s 165 → 163 (-1.2 %, p=0.77, n=32 pairs over 4 prompts,
// 95 % CI -7.2…+9.5 tok/s) ~, could detect ≥ 18 %", or the metric, "not
// judged" and the reason. One effect: the percentage is the shift
// estimate, and the new figure is the base median moved by it (effect),
// so its sign is the arrow's everywhere the change is printed.
func figure(metric string, v *stats.Verdict) string {
	if v == nil {
		return metric + " -"
	}
	if !v.Judged() {
		return fmt.Sprintf("%s not judged (%s): %s", metric, v.NotJudged, v.Reason)
	}
	sizes := fmt.Sprintf("n=%d+%d", v.NBase, v.NCur)
	if v.Pairs > 0 {
		sizes = fmt.Sprintf("n=%d pairs", v.Pairs)
	}
	if v.Strata > 1 {
		sizes += fmt.Sprintf(" over %d prompts", v.Strata)
	}
	base, cur := effect(v)
	return fmt.Sprintf("%s %s → %s (%s %%, p=%s, %s, %g %% CI %s…%s %s) %s", metric, num(base), num(cur),
		signedPct(v.ShiftPct), pFigure(v.P), sizes, math.Round(v.Shift.Confidence*1000)/10,
		signedNum(v.Shift.Lo), signedNum(v.Shift.Hi), unit(metric), changeMark(v))
}

// effect is a judged comparison's one change as base → new: the base
// median and the base median moved by the shift estimate. The raw
// medians of each run stay in compare.json (median_base, median_cur);
// printing the new run's median beside a shift estimated otherwise gave
// two figures for one change, and at times opposite signs.
func effect(v *stats.Verdict) (base, cur float64) {
	return v.MedianBase, v.MedianBase * (1 + v.ShiftPct/100)
}

// changeMark is "REGRESSION", "improvement", or "~" with what the
// comparison could have seen: "~, could detect ≥ 18 %".
func changeMark(v *stats.Verdict) string {
	switch v.Change {
	case stats.Regression:
		return "REGRESSION"
	case stats.Improvement:
		return "improvement"
	}
	mark := "~"
	if v.Noise != nil && v.Noise.Within {
		mark = fmt.Sprintf("~ (within night-to-night noise: ±%s %% over %d nights)", mdeText(v.Noise.Pct), v.Noise.Nights)
	}
	if v.MDEPct > 0 {
		mark += fmt.Sprintf(", could detect ≥ %s %%", mdeText(v.MDEPct))
	}
	return mark
}

// mdeText is a minimum detectable effect as people read it: 18, 4.5, 250.
func mdeText(pct float64) string {
	if pct >= 10 {
		return fmt.Sprintf("%.0f", math.Ceil(pct))
	}
	return fmt.Sprintf("%.1f", math.Ceil(pct*10)/10)
}

// signedPct is a percentage with its sign and no more digits than it
// needs: +67, -4.2, +0.31.
func signedPct(v float64) string {
	switch a := math.Abs(v); {
	case a >= 10:
		return fmt.Sprintf("%+.0f", v)
	case a >= 1:
		return fmt.Sprintf("%+.1f", v)
	}
	return fmt.Sprintf("%+.2f", v)
}

func signedNum(v float64) string {
	s := num(v)
	if v >= 0 {
		s = "+" + s
	}
	return s
}

// pFigure is a p-value in benchstat's style: 3e-11, 0.002, 0.43.
func pFigure(p float64) string {
	if p < 0.001 {
		return fmt.Sprintf("%.0e", p)
	}
	return fmt.Sprintf("%.2g", p)
}

// RepetitionsNeeded is the fewest repetitions with which one prompt's
// latency can be judged under opt in a compare of this many prompts and
// groups: each side then has that many samples, and even if every
// comparison of the metric's family is judged (every prompt of every
// group, and the groups), the smallest p-value that many can give passes
// the family's bar. With fewer, a prompt's latency is never judged (not
// judged: too few samples) and latency is judged per group only, across
// prompts.
func RepetitionsNeeded(prompts, groups int, opt Options) int {
	m := max(1, groups*(prompts+1))
	bar := opt.Alpha / 2 / 3 // latency's share of alpha, a third a metric
	if opt.Correction == stats.Holm {
		bar /= float64(m)
	}
	for r := max(1, opt.MinSamples); r < 50; r++ {
		if stats.SmallestExactP(r, r) <= bar {
			return r
		}
	}
	return 50
}

// RepetitionsNote is bench run's one warning when the config's
// repetitions are below RepetitionsNeeded with the default options; ""
// when they are enough.
func RepetitionsNote(reps, prompts, groups int) string {
	need := RepetitionsNeeded(prompts, groups, DefaultOptions())
	if reps >= need {
		return ""
	}
	return fmt.Sprintf("repetitions %d: bench compare judges one prompt's latency from %d samples a side or more (%s × %s, latency's alpha 0.025 after Holm); "+
		"with fewer it judges latency per group only, across prompts. For a nightly gate set run.repetitions: %d", reps, need, plural(prompts, "prompt", "prompts"), plural(groups, "group", "groups"), need)
}
