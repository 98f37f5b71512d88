package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"bench/internal/record/results"
	"bench/report/stats"
)

// AssumedSpread is the latency spread a detection plan assumes without a
// baseline to measure it in: 20 % from one cell to the next of a prompt
// (the standard deviation of log latency), what a local model server on
// a machine doing little else shows in bench's own runs.
const AssumedSpread = 0.20

// maxDetectReps bounds the search for the repetitions a plan needs.
const maxDetectReps = 1000

// DetectPlan is what a config needs for bench compare to see a latency
// change of Effect (0.10 for 10 %) at 80 % power: repetitions for one
// prompt's change, and for a group's change across its prompts.
type DetectPlan struct {
	Effect float64
	// Spread is the standard deviation of log latency from one cell to
	// the next of a prompt; SpreadFrom says where it comes from (a
	// baseline run's median over its prompts, or the assumption).
	Spread     float64
	SpreadFrom string
	// PerPrompt and PerGroup are the repetitions needed (0: more than
	// maxDetectReps, or never: the effect is below the threshold).
	PerPrompt, PerGroup int
	Prompts, Groups     int
	Threshold           float64
	// Lower is the plan at half the effect as the threshold, when the
	// effect is not beyond the threshold asked for.
	Lower *DetectPlan
}

// PlanDetect works out the repetitions a compare of this many prompts
// and groups needs to detect effect at 80 % power under opt, with the
// spread measured in baseline (a run directory; "" assumes
// AssumedSpread). The rule is the one a "~" states its minimum
// detectable effect by (stats.MDE): each repetition a pair, the pairs'
// log ratios with √2 times the cells' spread, the family's first Holm bar
// (latency's share of alpha, a third for the metric, over every prompt
// of every group and the groups), the threshold and the power. An effect
// at or below the latency threshold is never a regression, whatever the
// repetitions (0).
func PlanDetect(effect float64, prompts, groups int, baseline string, opt Options) (DetectPlan, error) {
	if err := opt.Validate(); err != nil {
		return DetectPlan{}, err
	}
	if !(effect > 0) || math.IsInf(effect, 0) {
		return DetectPlan{}, fmt.Errorf("detect %v: want a positive percentage such as 10%%", effect)
	}
	d := DetectPlan{Effect: effect, Spread: AssumedSpread, Prompts: max(prompts, 1), Groups: max(groups, 1), Threshold: opt.LatencyThreshold,
		SpreadFrom: fmt.Sprintf("assumed %.0f %% (no baseline to measure it in)", 100*AssumedSpread)}
	if baseline != "" {
		r, err := loadRun(baseline, newTable())
		if err != nil {
			return DetectPlan{}, err
		}
		if sp, n := runSpread(r); n > 0 {
			d.Spread = sp
			d.SpreadFrom = fmt.Sprintf("%.1f %%, the median over %d prompts of the baseline %s", 100*sp, n, baseline)
		} else {
			d.SpreadFrom += fmt.Sprintf("; the baseline %s has no prompt with 4 warm latencies", baseline)
		}
	}
	if effect <= opt.LatencyThreshold {
		lower := opt
		lower.LatencyThreshold = effect / 2
		l, err := planAt(d, lower)
		if err != nil {
			return DetectPlan{}, err
		}
		d.Lower = &l
		return d, nil
	}
	return planAt(d, opt)
}

// planAt fills the repetitions of d under opt.
func planAt(d DetectPlan, opt Options) (DetectPlan, error) {
	effect := d.Effect
	d.Threshold = opt.LatencyThreshold
	m := d.Groups * (d.Prompts + 1)
	bar := opt.Alpha / 2 / 3
	if opt.Correction == stats.Holm {
		bar /= float64(m)
	}
	so := stats.Options{Alpha: bar, Threshold: opt.LatencyThreshold, Correction: opt.Correction, MinSamples: opt.MinSamples}
	need := func(pairs int) bool {
		c := stats.Comparison{NBase: pairs, NCur: pairs, Pairs: pairs, MedianBase: 1,
			ShiftSE: d.Spread * math.Sqrt2 * math.Sqrt(math.Pi/(3*float64(pairs)))}
		return stats.MDE(c, bar, so) <= 100*effect
	}
	for r := max(opt.MinSamples, 2); r <= maxDetectReps; r++ {
		if d.PerPrompt == 0 && need(r) && stats.SmallestExactP(r, r) <= bar {
			d.PerPrompt = r
		}
		if d.PerGroup == 0 && need(r*d.Prompts) {
			d.PerGroup = r
		}
		if d.PerPrompt > 0 && d.PerGroup > 0 {
			break
		}
	}
	return d, nil
}

// runSpread is the median over a run's (group, prompt) of the standard
// deviation of log e2e latency of the warm successful cells (those with
// 4 or more), robust (1.4826 MAD), and how many it is the median of.
func runSpread(r *runData) (float64, int) {
	t := r.tab
	vals := map[noiseKey][]float64{}
	for i := range r.cells {
		cl := &r.cells[i]
		if t.str(cl.status) != results.StatusOK || !cl.has(fSuccess) || cl.has(fColdStart) || !cl.has(fE2E) {
			continue
		}
		k := noiseKey{t.label(groupOf(cl.key)), t.str(cl.key.prompt), 1}
		vals[k] = append(vals[k], math.Log(math.Max(cl.e2e, stats.LogFloor)))
	}
	var sds []float64
	for _, vs := range vals {
		if len(vs) >= 4 {
			sds = append(sds, stats.RobustSD(vs))
		}
	}
	if len(sds) == 0 {
		return 0, 0
	}
	slices.Sort(sds)
	return stats.Median(sds), len(sds)
}

// Text is the plan in one line for bench run --dry-run and bench init.
func (d DetectPlan) Text() string {
	reps := func(r int) string {
		if r == 0 {
			return fmt.Sprintf("more than %d repetitions", maxDetectReps)
		}
		return plural(r, "repetition", "repetitions")
	}
	if d.Effect <= d.Threshold {
		s := fmt.Sprintf("to detect a %.0f %% latency change: never at bench compare's %.0f %% threshold, which a shift must exceed", 100*d.Effect, 100*d.Threshold)
		if d.Lower != nil {
			s += fmt.Sprintf("; with --latency-threshold %.0f%%: %s", 100*d.Lower.Threshold, strings.TrimPrefix(d.Lower.Text(), fmt.Sprintf("to detect a %.0f %% latency change ", 100*d.Effect)))
		}
		return s
	}
	return fmt.Sprintf("to detect a %.0f %% latency change at 80 %% power (%s × %s, cell-to-cell spread %s): per prompt %s; per group, across its %s, %s",
		100*d.Effect, plural(d.Prompts, "prompt", "prompts"), plural(d.Groups, "group", "groups"), d.SpreadFrom,
		reps(d.PerPrompt), plural(d.Prompts, "prompt", "prompts"), reps(d.PerGroup))
}
