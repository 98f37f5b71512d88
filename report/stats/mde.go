package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Power is the power a minimum detectable effect is stated at.
const Power = 0.8

// MDE is what a judged "~" could have seen: the smallest change, in
// percent of the base median and in the regression's direction (a rise,
// or a drop when HigherIsBetter), that a comparison of these sizes and
// this spread would flag as a regression with probability Power when
// its p-value faces bar (the family's first Holm bar, Alpha/m: the
// strictest any member faces). A regression needs significance and an
// estimate beyond the threshold and the floor: three hurdles, each
// cleared with probability 1 - (1 - Power)/2 so that all are cleared
// together with probability at least Power (the union bound). On the
// log scale, with SE the comparison's ShiftSE (from an upper bound on
// the spread, see upperSD), q Student's t quantile for its degrees of
// freedom and h = 1 - (1 - Power)/2:
//
//	(q(1 - bar/2) + q(h)) SE                 significance
//	log(1 + Threshold) + q(h) SE             the estimate beyond the threshold
//	log(1 + Floor/|MedianBase|) + q(h) SE    and beyond the floor
//
// and MDE is the largest. SE rests on the rank tests' asymptotic
// efficiency (3/π against normal data), t quantiles stand in for normal
// ones at small n, and the promise (detected at least 80 % of the time at
// the stated effect) is checked on drawn samples by TestMDEIsDetected;
// the figure errs on the large side. 0 when the comparison has no
// spread figure.
func MDE(c Comparison, bar float64, opt Options) float64 {
	if c.ShiftSE <= 0 || !(bar > 0 && bar < 1) {
		return 0
	}
	df := float64(c.NBase + c.NCur - 2)
	if c.Pairs > 0 {
		df = float64(c.Pairs - 1)
	}
	df = max(df, 1)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	qh := t.Quantile(1 - (1-Power)/2)
	se := c.ShiftSE
	need := (t.Quantile(1-bar/2) + qh) * se
	need = max(need, math.Log1p(opt.Threshold)+qh*se)
	if opt.Floor > 0 && c.MedianBase != 0 {
		need = max(need, math.Log1p(opt.Floor/math.Abs(c.MedianBase))+qh*se)
	}
	if opt.HigherIsBetter {
		return finite(100 * -math.Expm1(-need)) // a drop by this share
	}
	return finite(100 * math.Expm1(need))
}

// rankSE is the standard error of a Hodges-Lehmann estimate on the log
// scale for a spread sigma and an effective size: π σ²/(3 n) is the
// asymptotic variance of the estimate against normal data (the rank
// tests' efficiency of 3/π), with n the pairs for a paired comparison
// and n1 n2/(n1+n2) for two samples.
func rankSE(sigma, n float64) float64 {
	if n <= 0 || sigma <= 0 {
		return 0
	}
	return sigma * math.Sqrt(math.Pi/(3*n))
}

// spreadConfidence is the level of the upper bound on the spread an MDE
// is computed from: a spread estimated from few samples is as often too
// low as too high, and an MDE from one too low would promise more than
// the test can see.
const spreadConfidence = 0.75

// upperSD is an upper bound, at spreadConfidence, on the standard
// deviation of normal data whose sum of squared deviations from their
// mean is ss over df degrees of freedom: sqrt(ss / χ²(1 - level; df)).
func upperSD(ss, df float64) float64 {
	if df < 1 || ss <= 0 {
		return 0
	}
	q := distuv.ChiSquared{K: df}.Quantile(1 - spreadConfidence)
	return math.Sqrt(ss / q)
}

// sumSquares is the sum of squared deviations of xs from their mean.
func sumSquares(xs []float64) float64 {
	var m float64
	for _, v := range xs {
		m += v / float64(len(xs))
	}
	var ss float64
	for _, v := range xs {
		ss += (v - m) * (v - m)
	}
	return ss
}

// pooledSD is the upper bound (upperSD) on the spread of two samples of
// log values, pooled over their n1 + n2 - 2 degrees of freedom.
func pooledSD(a, b []float64) float64 {
	return upperSD(sumSquares(a)+sumSquares(b), float64(len(a)+len(b)-2))
}
