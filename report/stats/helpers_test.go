package stats

import "fmt"

// Test-only entry points: the gate and history call the statistics
// through their own options and estimators; the reference and oracle
// tests check these against R and Otava.

// DefaultChangeOptions are Otava's defaults: a window of 50, p <= 0.001, no
// smallest magnitude.
func DefaultChangeOptions() ChangeOptions { return ChangeOptions{Window: 50, MaxP: 0.001} }

// DefaultOptions returns the gate's defaults for a latency in
// milliseconds: alpha 0.05 after Holm's correction, a 10 % threshold, a
// 5 ms floor and at least 4 samples a side.
func DefaultOptions() Options {
	return Options{Alpha: 0.05, Threshold: 0.10, Floor: 5, MinSamples: 4, Correction: Holm}
}

// HodgesLehmann estimates the location shift of cur relative to base and
// its two-sided confidence interval at the given level (0.95 for 95 %), as
// wilcox.test(cur, base, conf.int = TRUE) does in R; see the package
// comment for the normal approximation used beyond the exact case, and for
// the exact selection used when there are too many pairs to list.
func HodgesLehmann(base, cur []float64, confidence float64) (Shift, error) {
	if !(confidence > 0 && confidence < 1) {
		return Shift{}, fmt.Errorf("confidence %v: must be strictly between 0 and 1", confidence)
	}
	if err := checkNonEmpty("base", base); err != nil {
		return Shift{}, err
	}
	if err := checkNonEmpty("cur", cur); err != nil {
		return Shift{}, err
	}
	bs, cs := sortedCopy(base), sortedCopy(cur)
	_, tieSum := rankU(cs, bs)
	return shiftSorted(bs, cs, tieSum, confidence), nil
}

// MannWhitney runs a two-sided Mann-Whitney U test of the null hypothesis
// that x and y come from the same distribution. It follows R's
// wilcox.test(x, y) exactly (see the package comment) and costs one sort of
// each sample, plus, once per pair of sizes below 50, building the exact
// null distribution.
//
// Samples where every value is the same have no rank information; the
// test then reports P = 1 (R reports NaN). An empty sample or a value that
// is NaN, ±Inf or beyond ±MaxAbs is an error. x and y are not modified.
func MannWhitney(x, y []float64) (UTest, error) {
	if err := checkNonEmpty("x", x); err != nil {
		return UTest{}, err
	}
	if err := checkNonEmpty("y", y); err != nil {
		return UTest{}, err
	}
	r, _ := uTestSorted(sortedCopy(x), sortedCopy(y))
	return r, nil
}
