package report

import (
	"math"
	"slices"

	mstats "github.com/aclements/go-moremath/stats"
)

// Stats are the distribution figures of one metric in a group. A field is
// null when the group has no value of the metric.
type Stats struct {
	P50  *float64 `json:"p50"`
	P95  *float64 `json:"p95"`
	P99  *float64 `json:"p99"`
	Mean *float64 `json:"mean"`
	// P50CI is the median's 95 % distribution-free interval (two order
	// statistics, go-moremath's QuantileCI, as benchstat's); absent where
	// not computed, null-free: a sample too small for a bounded interval
	// (fewer than 6 values) has none. The ranking shows it for e2e.
	P50CI *CI `json:"p50_ci,omitempty"`
}

// estimator collects values and summarises them; behind an interface so the
// percentile method can change without touching the aggregation.
type estimator interface {
	Add(v float64)
	Stats() Stats
	// Dist is the plotted distribution; called after Stats.
	Dist() Dist
	// Quantile is the p-quantile as Stats computes it; NaN without values.
	Quantile(p float64) float64
}

// exact keeps every value and computes exact percentiles. Whole values
// that fit (the millisecond figures) are held as 4 bytes, until the first
// that does not: then all as 8. A million cells' three figures hold 16 MB.
type exact struct {
	ints []int32
	xs   []float64
}

func (e *exact) Add(v float64) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
	case e.xs == nil && v == math.Trunc(v) && math.Abs(v) <= math.MaxInt32:
		e.ints = append(e.ints, int32(v))
	default:
		if e.xs == nil {
			e.xs = make([]float64, len(e.ints), max(len(e.ints)+1, 8))
			for i, n := range e.ints {
				e.xs[i] = float64(n)
			}
			e.ints = nil
		}
		e.xs = append(e.xs, v)
	}
}

func (e *exact) Quantile(p float64) float64 {
	if e.xs != nil {
		if len(e.xs) == 0 {
			return math.NaN()
		}
		slices.Sort(e.xs)
		return percentile(e.xs, p)
	}
	if len(e.ints) == 0 {
		return math.NaN()
	}
	slices.Sort(e.ints)
	return percentile(e.ints, p)
}

// medianCI is the median's 95 % interval from two order statistics of
// the sorted values (mstats.QuantileCI, the binomial rule benchstat
// uses); nil when the sample is too small for both ends to be bounded.
func (e *exact) medianCI() *CI {
	n := len(e.ints)
	at := func(k int) float64 { return float64(e.ints[k]) }
	if e.xs != nil {
		n = len(e.xs)
		slices.Sort(e.xs)
		at = func(k int) float64 { return e.xs[k] }
	} else {
		slices.Sort(e.ints)
	}
	if n == 0 {
		return nil
	}
	r := mstats.QuantileCI(n, 0.5, 0.95)
	if r.LoOrder < 1 || r.HiOrder > n {
		return nil
	}
	return &CI{at(r.LoOrder - 1), at(r.HiOrder - 1)}
}

// stats is Stats of e, the figures of no value when e is nil.
func (e *exact) stats() Stats {
	if e == nil {
		return Stats{}
	}
	return e.Stats()
}

func (e *exact) Stats() Stats {
	if e.xs != nil {
		return stats(e.xs)
	}
	return stats(e.ints)
}

func stats[T int32 | float64](xs []T) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += float64(x)
	}
	st := Stats{P50: round(percentile(xs, 0.50))}
	st.P95 = same(st.P50, round(percentile(xs, 0.95)))
	st.P99 = same(st.P95, same(st.P50, round(percentile(xs, 0.99))))
	st.Mean = same(st.P99, same(st.P95, same(st.P50, round(sum/float64(len(xs))))))
	return st
}

// same is prev when it holds v's value, else v: a group of one cell (or of
// equal values) then holds one number for its four figures, not four
// allocations (9 of them saved a group over its three timing figures, 7 MB
// on a run of 100,000 one-cell groups). Report figures are never written
// through their pointers, so sharing one is safe.
func same(prev, v *float64) *float64 {
	if prev != nil && v != nil && *prev == *v {
		return prev
	}
	return v
}

// Dist is a metric's distribution in one group, for plots: how many values,
// and the quantiles at 0, 1, ..., 100 % computed as the Stats' percentiles
// are (Hyndman-Fan type 7, rounded to three decimals), so Q[50], Q[95] and
// Q[99] are the Stats' p50, p95 and p99. Q is nil when N is 0.
type Dist struct {
	N int       `json:"n"`
	Q []float64 `json:"q"`
}

// Dist is the Dist of e's values, which Stats has sorted.
func (e *exact) Dist() Dist {
	if e.xs != nil {
		return dist(e.xs)
	}
	return dist(e.ints)
}

func dist[T int32 | float64](xs []T) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	q := make([]float64, 101)
	for i := range q {
		q[i] = *round(percentile(xs, float64(i)/100))
	}
	return Dist{N: len(xs), Q: q}
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
func percentile[T int32 | float64](xs []T, p float64) float64 {
	h := float64(len(xs)-1) * p
	lo := int(math.Floor(h))
	if lo >= len(xs)-1 {
		return float64(xs[len(xs)-1])
	}
	return float64(xs[lo]) + (h-float64(lo))*(float64(xs[lo+1])-float64(xs[lo]))
}

// round keeps three decimals, so reports do not show float noise such as
// 48.00000000000001.
func round(v float64) *float64 {
	r := math.Round(v*1000) / 1000
	return &r
}

// rate is num/den, null when den is 0.
func rate(num, den int) *float64 {
	switch {
	case den == 0:
		return nil
	case num == den:
		return &rateOne
	case num == 0:
		return &rateZero
	}
	return round(float64(num) / float64(den))
}

// rateOne and rateZero are the rates every group with all or none of its
// cells passing shares (most groups of a large run: 8 bytes and an
// allocation saved for each rate of each). Nothing writes a rate through
// its pointer.
var rateOne, rateZero = 1.0, 0.0
