package stats

import (
	"fmt"
	"math"
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
	// Warnings say what the figures cannot be trusted for.
	Warnings []string `json:"warnings,omitempty"`
}

// CompareSamples compares the base and new (cur) samples of one metric.
// Either side may be empty (the comparison then holds what it can and
// Judge reports "~" for lack of samples). A value that is NaN, ±Inf or
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
	c := Comparison{NBase: len(base), NCur: len(cur), P: 1}
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
	c.Shift = shiftSorted(bs, cs, tieSum, ShiftConfidence)
	if c.MedianBase != 0 {
		c.ShiftPct = finite(100 * c.Shift.Estimate / math.Abs(c.MedianBase))
	}
	return c, nil
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

// DefaultOptions returns the gate's defaults for a latency in
// milliseconds: alpha 0.05 after Holm's correction, a 10 % threshold, a
// 5 ms floor and at least 4 samples a side.
func DefaultOptions() Options {
	return Options{Alpha: 0.05, Threshold: 0.10, Floor: 5, MinSamples: 4, Correction: Holm}
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

// Change is the outcome of one judged comparison.
type Change string

// The outcomes, in benchstat's words.
const (
	// Same ("~") means no significant change, for the reason given.
	Same        Change = "~"
	Regression  Change = "regression"
	Improvement Change = "improvement"
)

// Verdict is a judged Comparison.
type Verdict struct {
	Comparison
	// AdjustedP is P after the family's correction; 1 when the
	// comparison was left out of the family for lack of samples.
	AdjustedP float64 `json:"adjusted_p"`
	// Significant tells whether AdjustedP <= Alpha.
	Significant bool   `json:"significant"`
	Change      Change `json:"change"`
	// Reason says why, with the numbers, in one line.
	Reason string `json:"reason"`
}

// Judge decides each comparison of one family: the comparisons one gate
// decision covers together, such as the per-prompt TTFT comparisons of one
// (provider, model, thinking level) group. Comparisons with fewer than
// MinSamples on a side are "~" ("need >= 4 samples") and left out of the
// family; the others' p-values are corrected together (Holm by default)
// and a comparison is a regression or improvement only when it is
// significant after correction AND its Hodges-Lehmann shift is beyond
// Threshold of the base median AND beyond Floor. Verdicts come back in the
// order of cs.
func Judge(cs []Comparison, opt Options) ([]Verdict, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	out := make([]Verdict, len(cs))
	var family []int
	var ps []float64
	for i, c := range cs {
		out[i] = Verdict{Comparison: c, AdjustedP: 1, Change: Same}
		if c.NBase < opt.MinSamples || c.NCur < opt.MinSamples || c.Test == "" {
			out[i].Reason = fmt.Sprintf("need >= %d samples (base %d, new %d)", opt.MinSamples, c.NBase, c.NCur)
			continue
		}
		family = append(family, i)
		ps = append(ps, c.P)
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
	}
	return out, nil
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
		if why := cannotReach(v.NBase, v.NCur, m, opt); why != "" {
			v.Reason += "; " + why
		}
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

// cannotReach explains when samples this small cannot be significant at
// all: the smallest exact two-sided p-value, 2/C(n1+n2, n1), is above
// alpha, or, under Holm, above alpha/m (Holm's adjusted p-values are at
// least m times the smallest raw one).
func cannotReach(n1, n2, m int, opt Options) string {
	if n1 >= exactLimit || n2 >= exactLimit {
		return ""
	}
	minP := math.Min(1, 2*math.Exp(-lchoose(n1+n2, n1)))
	switch {
	case minP > opt.Alpha:
		return fmt.Sprintf("n=%d+%d cannot reach p <= %g (smallest possible p %.3g)", n1, n2, opt.Alpha, minP)
	case opt.Correction == Holm && float64(m)*minP > opt.Alpha:
		return fmt.Sprintf("n=%d+%d cannot reach p <= %g after Holm over %d comparisons (smallest possible p %.3g)", n1, n2, opt.Alpha, m, minP)
	}
	return ""
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
