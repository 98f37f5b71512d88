package report

import (
	"math"
	"sort"
)

// Stats are the distribution figures of one metric in a group. A field is
// null when the group has no value of the metric.
type Stats struct {
	P50  *float64 `json:"p50"`
	P95  *float64 `json:"p95"`
	P99  *float64 `json:"p99"`
	Mean *float64 `json:"mean"`
}

// estimator collects values and summarises them; behind an interface so the
// percentile method can change without touching the aggregation.
type estimator interface {
	Add(v float64)
	Stats() Stats
}

// exact keeps every value (8 bytes each: 100,000 cells are 800 KB) and
// computes exact percentiles.
type exact struct{ xs []float64 }

func (e *exact) Add(v float64) {
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		e.xs = append(e.xs, v)
	}
}

func (e *exact) Stats() Stats {
	if len(e.xs) == 0 {
		return Stats{}
	}
	sort.Float64s(e.xs)
	sum := 0.0
	for _, x := range e.xs {
		sum += x
	}
	return Stats{
		P50:  round(percentile(e.xs, 0.50)),
		P95:  round(percentile(e.xs, 0.95)),
		P99:  round(percentile(e.xs, 0.99)),
		Mean: round(sum / float64(len(e.xs))),
	}
}

// percentile returns the p-quantile (0 <= p <= 1) of the sorted, non-empty
// xs by linear interpolation between closest ranks: with h = (n-1)·p and
// lo = floor(h),
//
//	q = x[lo] + (h - lo)·(x[lo+1] - x[lo])
//
// (Hyndman & Fan type 7: numpy's default, Excel's PERCENTILE.INC). So the
// p50 of an even count is the mean of the two middle values, and p99 of few
// values lies between the two largest rather than being the largest.
func percentile(xs []float64, p float64) float64 {
	h := float64(len(xs)-1) * p
	lo := int(math.Floor(h))
	if lo >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}

// round keeps three decimals, so reports do not show float noise such as
// 48.00000000000001.
func round(v float64) *float64 {
	r := math.Round(v*1000) / 1000
	return &r
}

// rate is num/den, null when den is 0.
func rate(num, den int) *float64 {
	if den == 0 {
		return nil
	}
	return round(float64(num) / float64(den))
}
