package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// ShiftConfidence is the level of the shift interval CompareSamples reports.
const ShiftConfidence = 0.95

// Comparison is what two samples of one metric (say the TTFT of one prompt
// in the base run and in the new run) say before any decision: sizes,
// medians, the raw Mann-Whitney p-value and the Hodges-Lehmann shift. It
// never holds NaN or ±Inf, so it encodes to JSON as is.
type Comparison struct {
	NBase      int     `json:"n_base"`
	NCur       int     `json:"n_cur"`
	MedianBase float64 `json:"median_base"`
	MedianCur  float64 `json:"median_cur"`
	// DeltaPct is 100 * (MedianCur/MedianBase - 1), the figure benchstat
	// prints; 0 with a warning when MedianBase is 0.
	DeltaPct float64 `json:"delta_pct"`
	// P is the raw two-sided p-value of the U test; 1 when no test ran
	// (a side without samples).
	P float64 `json:"p_value"`
	// Test names the test run (MethodExact or MethodNormal), or is empty
	// when none ran.
	Test string `json:"test,omitempty"`
	// Shift is the Hodges-Lehmann estimate of cur - base with its
	// ShiftConfidence interval; zero when no test ran.
	Shift Shift `json:"shift"`
	// ShiftPct is Shift.Estimate as a percentage of |MedianBase|; the
	// relative threshold of Judge applies to it. 0 when MedianBase is 0.
	ShiftPct float64 `json:"shift_pct"`
	// Strata is how many strata (prompts) a stratified comparison
	// (CompareStrata) combined; 0 for a plain two-sample comparison.
	Strata int `json:"strata,omitempty"`
	// Pairs is how many matched pairs a paired comparison (ComparePaired)
	// tested; 0 for an unpaired one.
	Pairs int `json:"pairs,omitempty"`
	// ShiftSE is the standard error of the shift estimate on the log
	// scale (a ratio), from an upper bound on the spread of what the test
	// ranks: the pairs' log ratios for a paired comparison, each side's
	// log values otherwise (combined over the strata). MDE reads it; 0
	// when unknown.
	ShiftSE float64 `json:"shift_se_log,omitempty"`
	// Unpaired is the unpaired comparison of the same samples, which
	// Judge uses in place of a paired one whose pairs are too few to pass
	// the family's bar (a rule on sizes only). Not encoded.
	Unpaired *Comparison `json:"-"`
	// SmallestP is the smallest p-value samples of these sizes can give
	// at all (2/C(n1+n2, n1) for the exact test); 0 when not bounded
	// (large samples). Judge leaves a comparison whose SmallestP cannot
	// pass its family's bar unjudged: its "~" would say nothing.
	SmallestP float64 `json:"smallest_p"`
	// Warnings say what the figures cannot be trusted for.
	Warnings []string `json:"warnings,omitempty"`
}

// CompareSamples compares the base and new (cur) samples of one metric.
// Either side may be empty (the comparison then holds what it can and
// Judge reports it not judged). A value that is NaN, ±Inf or
// beyond ±MaxAbs is an error naming the side and index. The slices are not
// modified. Cost: one sort of each side, plus the shift's order statistics
// (see the package comment).
func CompareSamples(base, cur []float64) (Comparison, error) {
	if err := check("base", base); err != nil {
		return Comparison{}, err
	}
	if err := check("cur", cur); err != nil {
		return Comparison{}, err
	}
	c := Comparison{NBase: len(base), NCur: len(cur), P: 1, SmallestP: 1}
	bs, cs := sortedCopy(base), sortedCopy(cur)
	if len(bs) > 0 {
		c.MedianBase = sortedMedian(bs)
	}
	if len(cs) > 0 {
		c.MedianCur = sortedMedian(cs)
	}
	switch {
	case len(bs) == 0 || len(cs) == 0:
		c.Warnings = append(c.Warnings, "no test: a side has no samples")
		return c, nil
	case c.MedianBase == 0:
		c.Warnings = append(c.Warnings, "base median is 0: percentages undefined")
	default:
		c.DeltaPct = finite(100 * (c.MedianCur/c.MedianBase - 1))
	}
	u, tieSum := uTestSorted(cs, bs)
	c.P, c.Test = u.P, u.Method
	c.SmallestP = smallestP(c, nil)
	c.Shift = shiftSorted(bs, cs, tieSum, ShiftConfidence)
	c.ShiftSE = logSE(bs, cs)
	if c.MedianBase != 0 {
		c.ShiftPct = finite(100 * c.Shift.Estimate / math.Abs(c.MedianBase))
	}
	return c, nil
}

// logSE is the standard error of a two-sample shift on the log scale
// from the samples' spreads (see MDE).
func logSE(bs, cs []float64) float64 {
	lb, lc := make([]float64, len(bs)), make([]float64, len(cs))
	for i, v := range bs {
		lb[i] = math.Log(math.Max(v, LogFloor))
	}
	for i, v := range cs {
		lc[i] = math.Log(math.Max(v, LogFloor))
	}
	n1, n2 := float64(len(bs)), float64(len(cs))
	return rankSE(pooledSD(lb, lc), n1*n2/(n1+n2))
}

// finite maps an overflowed ratio (a base median near zero) to the largest
// float, keeping Comparison JSON-safe.
func finite(v float64) float64 {
	switch {
	case math.IsInf(v, 1):
		return math.MaxFloat64
	case math.IsInf(v, -1):
		return -math.MaxFloat64
	}
	return v
}

// Correction names how Judge controls false alarms over a family.
type Correction string

// The corrections Judge knows.
const (
	// Holm bounds the chance of any false alarm in the family by Alpha
	// (family-wise error rate): the right default for a gate that fails a
	// nightly job.
	Holm Correction = "holm"
	// BH bounds the expected share of false alarms among the flagged
	// comparisons (false discovery rate): more sensitive, but a family of
	// many unchanged prompts will now and then raise one.
	BH Correction = "bh"
	// NoCorrection judges every raw p-value against Alpha alone.
	NoCorrection Correction = "none"
)

// Options set how Judge decides.
type Options struct {
	// Alpha is the significance level after correction (0.05).
	Alpha float64 `json:"alpha"`
	// Threshold is the smallest relative shift that counts, as a fraction
	// of the base median (0.10 for 10 %).
	Threshold float64 `json:"threshold"`
	// Floor is the smallest absolute shift that counts, in the samples'
	// unit (5 for milliseconds), so that noise on a fast server never
	// fails the gate. Set it per metric: tokens/s needs its own.
	Floor float64 `json:"floor"`
	// MinSamples is the fewest samples a side needs to be judged (4).
	MinSamples int `json:"min_samples"`
	// HigherIsBetter flips the direction, for throughput (tokens/s):
	// a drop is then the regression.
	HigherIsBetter bool `json:"higher_is_better"`
	// Correction is the false-alarm control over the family (Holm).
	Correction Correction `json:"correction"`
}

// Validate reports the first unusable option, naming it.
func (o Options) Validate() error {
	switch {
	case !(o.Alpha > 0 && o.Alpha < 1):
		return fmt.Errorf("alpha %v: must be strictly between 0 and 1", o.Alpha)
	case !(o.Threshold >= 0) || math.IsInf(o.Threshold, 0):
		return fmt.Errorf("threshold %v: must be a finite fraction >= 0 (0.10 for 10%%)", o.Threshold)
	case !(o.Floor >= 0) || math.IsInf(o.Floor, 0):
		return fmt.Errorf("floor %v: must be finite and >= 0", o.Floor)
	case o.MinSamples < 1:
		return fmt.Errorf("min samples %d: must be at least 1", o.MinSamples)
	}
	switch o.Correction {
	case Holm, BH, NoCorrection:
	default:
		return fmt.Errorf("correction %q: must be %q, %q or %q", o.Correction, Holm, BH, NoCorrection)
	}
	return nil
}

// Change is the outcome of one comparison.
type Change string

// The outcomes, in benchstat's words, and the one benchstat leaves
// implicit.
const (
	// Same ("~") means judged, and no significant change, for the reason
	// given.
	Same        Change = "~"
	Regression  Change = "regression"
	Improvement Change = "improvement"
	// NotJudged means the data could not say either way; Verdict.NotJudged
	// says why. It is never a "no change".
	NotJudged Change = "not_judged"
)

// Why a comparison was not judged (Verdict.NotJudged). Callers add their
// own (compare: "all cold", "machine load").
const (
	// WhyNoSamples: a side has no sample at all.
	WhyNoSamples = "no samples on a side"
	// WhyFewSamples: fewer than MinSamples on a side, or so few that no
	// outcome could be significant in the family.
	WhyFewSamples = "too few samples"
)

// Verdict is a judged Comparison.
type Verdict struct {
	Comparison
	// AdjustedP is P after the family's correction; 1 when the
	// comparison was left out of the family (not judged).
	AdjustedP float64 `json:"adjusted_p"`
	// Significant tells whether AdjustedP <= Alpha.
	Significant bool   `json:"significant"`
	Change      Change `json:"change"`
	// NotJudged says why, in a few words, when Change is NotJudged
	// (WhyNoSamples, WhyFewSamples, or the caller's).
	NotJudged string `json:"not_judged,omitempty"`
	// Reason says why, with the numbers, in one line.
	Reason string `json:"reason"`
	// MDEPct is, for a "~", the smallest change (in percent of the base
	// median, in the regression's direction) this comparison would have
	// flagged with 80 % power at its n, spread and family bar: what it
	// could have seen (see MDE). 0 otherwise.
	MDEPct float64 `json:"mde_pct,omitempty"`
	// Noise is the night-to-night spread of the compared figure over
	// earlier runs of the same setup, when the caller knows it (bench
	// compare --history); nil otherwise.
	Noise *Noise `json:"night_noise,omitempty"`
}

// Noise is a figure's night-to-night spread: Pct is the band (in percent
// of the figure) a change between two unchanged nights stays inside,
// over Nights earlier nights; Within says the comparison's shift lay
// inside it, and the change was taken for weather ("~").
type Noise struct {
	Pct    float64 `json:"pct"`
	Nights int     `json:"nights"`
	Within bool    `json:"within"`
}

// Judged says whether the comparison was judged: "~", a regression or an
// improvement.
func (v *Verdict) Judged() bool { return v.Change != NotJudged }

// Judge decides each comparison of one family: the comparisons one gate
// decision covers together, such as the per-prompt TTFT comparisons of one
// (provider, model, thinking level) group. A comparison with no sample on
// a side, fewer than MinSamples, or sizes whose smallest possible p-value
// (Comparison.SmallestP) cannot pass the family's bar (under Holm,
// Alpha/m for a family of m; Alpha otherwise) is NotJudged with the
// reason, and left out of the family; leaving one out lowers m, so the
// rule runs until the family no longer changes, which depends on the
// sizes only, never on the data, and keeps the family-wise bound (see
// reachable). The
// others' p-values are corrected together (Holm by default) and a
// comparison is a regression or improvement only when it is significant
// after correction AND its Hodges-Lehmann shift is beyond Threshold of
// the base median AND beyond Floor; "~" otherwise. Verdicts come back in
// the order of cs.
func Judge(cs []Comparison, opt Options) ([]Verdict, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	out := make([]Verdict, len(cs))
	var family []int
	for i, c := range cs {
		out[i] = Verdict{Comparison: c, AdjustedP: 1, Change: Same}
		switch {
		case c.NBase == 0 || c.NCur == 0 || c.Test == "":
			out[i].notJudged(WhyNoSamples, fmt.Sprintf("no samples on a side (base %d, new %d)", c.NBase, c.NCur))
		case c.NBase < opt.MinSamples || c.NCur < opt.MinSamples:
			out[i].notJudged(WhyFewSamples, fmt.Sprintf("need >= %d samples a side (base %d, new %d)", opt.MinSamples, c.NBase, c.NCur))
		default:
			family = append(family, i)
		}
	}
	family = reachable(out, family, opt)
	// A paired comparison whose pairs cannot pass the family's first bar
	// gives way to its unpaired one (sizes only, so the bound holds).
	bar := opt.Alpha
	if opt.Correction == Holm && len(family) > 0 {
		bar /= float64(len(family))
	}
	for _, i := range family {
		if u := out[i].Unpaired; u != nil && out[i].SmallestP > bar {
			out[i].Comparison = *u
			out[i].Warnings = append(out[i].Warnings, fmt.Sprintf("%d pairs cannot reach p <= %.3g (smallest possible p %.3g): judged unpaired",
				cs[i].Pairs, bar, cs[i].SmallestP))
		}
		out[i].Unpaired = nil
	}
	ps := make([]float64, len(family))
	for f, i := range family {
		ps[f] = out[i].P
	}
	var adj []float64
	switch opt.Correction {
	case Holm:
		adj = AdjustHolm(ps)
	case BH:
		adj = AdjustBH(ps)
	default:
		adj = ps
	}
	for f, i := range family {
		judgeOne(&out[i], adj[f], len(family), opt)
		if out[i].Change == Same {
			out[i].MDEPct = MDE(out[i].Comparison, bar, opt)
		}
	}
	for i := range out {
		out[i].Unpaired = nil
	}
	return out, nil
}

// reachable keeps the comparisons of the family that can be significant
// in it and marks the others not judged. Under Holm a family of m judges
// its smallest p-value against Alpha/m, so the family is the m
// comparisons of smallest SmallestP for the largest m whose m-th
// smallest is at most Alpha/m: every one of them can pass, and adding any
// other would make the bar one of them cannot. Other corrections let a
// comparison pass at Alpha.
func reachable(out []Verdict, family []int, opt Options) []int {
	byMin := slices.Clone(family)
	slices.SortStableFunc(byMin, func(a, b int) int { return cmp.Compare(out[a].reachP(), out[b].reachP()) })
	m := len(byMin)
	if opt.Correction == Holm {
		for m > 0 && out[byMin[m-1]].reachP() > opt.Alpha/float64(m) {
			m--
		}
	} else {
		for m > 0 && out[byMin[m-1]].reachP() > opt.Alpha {
			m--
		}
	}
	keep := map[int]bool{}
	for _, i := range byMin[:m] {
		keep[i] = true
	}
	bar, size := opt.Alpha, m
	if opt.Correction == Holm && m > 0 {
		bar = opt.Alpha / float64(m)
	}
	if m == 0 {
		size = len(family)
		if opt.Correction == Holm && size > 0 {
			bar = opt.Alpha / float64(size)
		}
	}
	kept := family[:0:0]
	for _, i := range family {
		if keep[i] {
			kept = append(kept, i)
			continue
		}
		out[i].notJudged(WhyFewSamples, unreachable(out[i].Comparison, out[i].reachP(), bar, size, opt))
	}
	return kept
}

// reachP is the smallest p-value the comparison, or the unpaired one it
// can give way to, can reach.
func (v *Verdict) reachP() float64 {
	if v.Unpaired != nil {
		return min(v.SmallestP, v.Unpaired.SmallestP)
	}
	return v.SmallestP
}

func (v *Verdict) notJudged(why, reason string) {
	v.Change, v.NotJudged, v.Reason = NotJudged, why, reason
}

// unreachable says why sizes this small cannot be significant.
func unreachable(c Comparison, smallest, bar float64, m int, opt Options) string {
	sizes := fmt.Sprintf("n=%d+%d", c.NBase, c.NCur)
	if c.Strata > 1 {
		sizes += fmt.Sprintf(" over %d prompts", c.Strata)
	}
	if opt.Correction == Holm && m > 1 {
		return fmt.Sprintf("%s cannot reach p <= %.3g after Holm over %d comparisons (smallest possible p %.3g)", sizes, bar, m, smallest)
	}
	return fmt.Sprintf("%s cannot reach p <= %.3g (smallest possible p %.3g)", sizes, bar, smallest)
}

// judgeOne fills v's decision given its corrected p-value and the number
// of comparisons in its family.
func judgeOne(v *Verdict, adj float64, m int, opt Options) {
	v.AdjustedP = adj
	v.Significant = adj <= opt.Alpha
	pText := fmt.Sprintf("p=%.3g", v.P)
	if opt.Correction != NoCorrection && m > 1 {
		pText += fmt.Sprintf(" (%s-adjusted over %d: %.3g)", correctionName(opt.Correction), m, adj)
	}
	if !v.Significant {
		v.Reason = fmt.Sprintf("not significant: %s > alpha %g", pText, opt.Alpha)
		return
	}
	est := v.Shift.Estimate
	worse := est > 0
	if opt.HigherIsBetter {
		worse = est < 0
	}
	shift := fmt.Sprintf("shift %s (%s%%, %g%% CI %s to %s)",
		signed(est), signed(v.ShiftPct), math.Round(v.Shift.Confidence*1000)/10,
		signed(v.Shift.Lo), signed(v.Shift.Hi))
	switch {
	case est == 0:
		v.Reason = fmt.Sprintf("significant (%s) but the shift estimate is 0", pText)
		return
	case v.MedianBase != 0 && math.Abs(est) <= opt.Threshold*math.Abs(v.MedianBase):
		v.Reason = fmt.Sprintf("%s within the %g%% threshold; %s", shift, 100*opt.Threshold, pText)
		return
	case math.Abs(est) <= opt.Floor:
		v.Reason = fmt.Sprintf("%s within the floor of %g; %s", shift, opt.Floor, pText)
		return
	}
	if worse {
		v.Change = Regression
	} else {
		v.Change = Improvement
	}
	v.Reason = fmt.Sprintf("%s; %s", shift, pText)
}

func correctionName(c Correction) string {
	if c == BH {
		return "BH"
	}
	return "Holm"
}

// signed formats v with an explicit sign and about 4 significant digits,
// without an exponent for the magnitudes latencies have.
func signed(v float64) string {
	if a := math.Abs(v); a >= 1e4 && a < 1e15 {
		return fmt.Sprintf("%+.0f", v)
	}
	return fmt.Sprintf("%+.4g", v)
}
