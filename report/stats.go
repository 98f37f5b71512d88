package report

import (
	"encoding/binary"
	"math"
	"slices"

	"bench/internal/tape"

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
// that does not: then all as 8. Past spillAt values, an estimator given
// a spill tape moves them there (see spill) and holds a chunk's worth:
// its figures read them back, one estimator at a time.
type exact struct {
	ints []int32
	xs   []float64

	sp      *spill
	spilled []tape.Ref // the chunks on sp's tape; nil before the values go there
	buf     []float64  // the values since the last chunk
	whole   bool       // every value put on the tape was whole: they come back as ints
}

// spill is an aggregator's tape for its estimators' values (internal/tape:
// a few MB in memory, then an unlinked temporary file). A million cells'
// dozen figures (a load stage's besides the group's) were 60 to 120 MB of
// heap while results.jsonl was read, most of bench report's peak (issue
// 31); on the tape, each estimator holds one chunk of them.
type spill struct {
	tape    tape.Tape
	scratch []byte
	// err is the first failure to read the values back: the summary's
	// figures are then not to be written (LoadEach returns it).
	err error
}

// spillAt is how many values an estimator holds before it spills,
// spillChunk how many go to the tape at a time (vars for a test).
var spillAt, spillChunk = 1 << 13, 1 << 11

// newExact is an estimator whose values go to sp past spillAt (sp nil:
// never).
func newExact(sp *spill) *exact { return &exact{sp: sp} }

func (e *exact) Add(v float64) {
	if e.spilled != nil {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		e.whole = e.whole && v == math.Trunc(v) && math.Abs(v) <= math.MaxInt32
		if e.buf = append(e.buf, v); len(e.buf) == spillChunk {
			e.flush()
		}
		return
	}
	e.add(v)
	if e.sp != nil && len(e.ints)+len(e.xs) >= spillAt {
		// The values so far go to the tape, as they were added.
		e.spilled, e.whole = []tape.Ref{}, e.xs == nil
		e.buf = make([]float64, 0, spillChunk)
		for _, n := range e.ints {
			e.buf = append(e.buf, float64(n))
			if len(e.buf) == spillChunk {
				e.flush()
			}
		}
		for _, x := range e.xs {
			e.buf = append(e.buf, x)
			if len(e.buf) == spillChunk {
				e.flush()
			}
		}
		e.ints, e.xs = nil, nil
	}
}

func (e *exact) flush() {
	if len(e.buf) == 0 {
		return
	}
	p := e.sp.scratch[:0]
	for _, x := range e.buf {
		p = binary.LittleEndian.AppendUint64(p, math.Float64bits(x))
	}
	e.sp.scratch = p
	e.spilled = append(e.spilled, e.sp.tape.Put(p))
	e.buf = e.buf[:0]
}

// load brings spilled values back into ints or xs, in the order they were
// added (so they sort, and sum, as if they had never left).
func (e *exact) load() {
	if e.spilled == nil {
		return
	}
	var xs []float64
	for _, ref := range e.spilled {
		p, err := e.sp.tape.Get(ref)
		if err != nil {
			if e.sp.err == nil {
				e.sp.err = err
			}
			break
		}
		for ; len(p) >= 8; p = p[8:] {
			xs = append(xs, math.Float64frombits(binary.LittleEndian.Uint64(p)))
		}
	}
	xs = append(xs, e.buf...)
	e.spilled, e.buf, e.sp = nil, nil, nil
	if e.whole {
		e.ints = make([]int32, len(xs))
		for i, x := range xs {
			e.ints[i] = int32(x)
		}
		return
	}
	if xs == nil {
		xs = []float64{}
	}
	e.xs = xs
}

func (e *exact) add(v float64) {
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
	e.load()
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
	e.load()
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
	e.load()
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
