// Change points: DetectChanges finds the points where a series of nightly results
// shifts, as MongoDB's performance CI and Apache Otava (formerly Hunter)
// do: E-divisive means candidates (Matteson and James, "A Nonparametric
// Approach for Multiple Change Point Analysis of Multivariate Data", 2014)
// judged by Student's t-test, in Hunter's split-and-merge scheme (Fleming
// et al., "Hunter: Using Change Point Detection to Hunt for Performance
// Regressions", ICPE 2023).
//
// # The algorithm, as Otava implements it
//
// Split: windows of ChangeOptions.Window points, stepping by half a window (or
// to the last change point found in the window). In each window the
// divisive search repeats: every interval between the change points found
// so far offers its best candidate, the split τ (with an end κ) that
// maximises
//
//	Q(τ, κ) = 2/(m+n) Σ|X_i-Y_j| - 2m/((m+n)(n-1)) Σ_{i<k}|X_i-X_k| - 2n/((m+n)(m-1)) Σ_{j<k}|Y_j-Y_k|
//
// with X the interval's points before τ (n of them) and Y those from τ to
// κ (m); the best candidate of all intervals is kept if a two-sided
// Student's t-test of the points left and right of it within its interval
// gives p <= the first-pass level (10 × MaxP below 0.05), and the search
// of the window stops at the first candidate that fails. Those are weak
// change points. Merge: each weak point is re-tested over the whole series
// between its neighbours; the weakest (the largest p) is dropped while its
// p exceeds MaxP, or, once all pass, the one of least relative change
// while it is at most MinMagnitude; the neighbours of a dropped point are
// re-tested. The t-test is Otava's: Student's pooled-variance test fed
// each side's population standard deviation (numpy's default), p = 1 for
// two points in all.
//
// The reference test runs this code and Otava's (with numpy and scipy,
// computed once; the outputs are in testdata) on the same series and
// expects the same change points and p-values.
//
// # Why it is written here
//
// No maintained Go implementation exists (pgregory.net/changepoint is
// ED-PELT, a different detector, unmaintained since 2022); the algorithm
// is a few hundred lines over a distance matrix, and the Q values of a
// window are computed in O(w²) from prefix sums, so 1,000 runs cost
// milliseconds per series.

package stats

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/mathx"
)

// ChangeOptions set the detector. The zero value is not usable; start from
// DefaultChangeOptions.
type ChangeOptions struct {
	// Window is the split step's window length in points (Otava: 50).
	Window int `json:"window"`
	// MaxP is the significance a change point must reach (Otava: 0.001).
	MaxP float64 `json:"max_p"`
	// MinMagnitude is the smallest relative change of the means kept
	// (0.02 for 2 %; Otava: 0).
	MinMagnitude float64 `json:"min_magnitude"`
	// MinSegment is the fewest points each side of a change point must
	// hold (to its neighbours); the merge step drops a point with fewer
	// first. 0 is Otava, which lets one outlying point at either end of a
	// short series be a change point.
	MinSegment int `json:"min_segment"`
}

// ChangePoint is one change point: the series shifts from Index on.
type ChangePoint struct {
	// Index is the first point of the new level.
	Index int `json:"index"`
	// QHat is the E-divisive statistic the point was found with (in the
	// window where it was found).
	QHat float64 `json:"qhat"`
	// P is the two-sided t-test of the points before and after it, each
	// side reaching to the neighbouring change point.
	P float64 `json:"p_value"`
	// MeanBefore, MeanAfter and the population standard deviations
	// StdBefore and StdAfter describe the two sides.
	MeanBefore float64 `json:"mean_before"`
	MeanAfter  float64 `json:"mean_after"`
	StdBefore  float64 `json:"std_before"`
	StdAfter   float64 `json:"std_after"`
}

// ChangePct is the change of the mean in percent of the mean before it
// (0 when that mean is 0), Otava's forward_change_percent.
func (p ChangePoint) ChangePct() float64 {
	if p.MeanBefore == 0 {
		return 0
	}
	return 100 * (p.MeanAfter/p.MeanBefore - 1)
}

// magnitude is Otava's change_magnitude: the larger of the forward and
// backward relative changes, in absolute value.
func (p ChangePoint) magnitude() float64 {
	f, b := 0.0, 0.0
	if p.MeanBefore != 0 {
		f = p.MeanAfter/p.MeanBefore - 1
	}
	if p.MeanAfter != 0 {
		b = p.MeanBefore/p.MeanAfter - 1
	}
	return math.Max(math.Abs(f), math.Abs(b))
}

// DetectChanges returns the change points of series in index order. The values
// must be finite; fill gaps before (Otava carries the last value forward).
func DetectChanges(series []float64, opt ChangeOptions) []ChangePoint {
	if opt.Window < 2 {
		opt.Window = 2
	}
	first := opt.MaxP
	switch {
	case opt.MaxP < 0.05:
		first = opt.MaxP * 10
	case opt.MaxP < 0.5:
		first = opt.MaxP * 2
	}
	weak := split(series, opt.Window, first)
	return merge(weak, series, opt.MaxP, opt.MinMagnitude, opt.MinSegment)
}

// interval is [start, stop) of a series.
type interval struct{ start, stop int }

// intervals are the stretches between sorted change points over [0, n).
func intervals(cps []ChangePoint, n int) []interval {
	out := make([]interval, 0, len(cps)+1)
	prev := 0
	for _, c := range cps {
		if c.Index != prev {
			out = append(out, interval{prev, c.Index})
		}
		prev = c.Index
	}
	if prev != n {
		out = append(out, interval{prev, n})
	}
	return out
}

// test fills a candidate's t-test from the intervals around it: the one
// it splits, or (a point already among them) the two it separates.
func test(idx int, qhat float64, series []float64, ivs []interval) ChangePoint {
	var left, right interval
	found := false
	for i, iv := range ivs {
		if iv.stop == idx && i+1 < len(ivs) {
			left, right, found = iv, ivs[i+1], true
			break
		}
		if iv.start < idx && idx < iv.stop {
			left, right, found = interval{iv.start, idx}, interval{idx, iv.stop}, true
			break
		}
	}
	p := ChangePoint{Index: idx, QHat: qhat, P: 1}
	if !found {
		return p
	}
	l, r := series[left.start:left.stop], series[right.start:right.stop]
	p.MeanBefore, p.StdBefore = meanStd(l)
	p.MeanAfter, p.StdAfter = meanStd(r)
	p.P = tTest(p.MeanBefore, p.StdBefore, len(l), p.MeanAfter, p.StdAfter, len(r))
	return p
}

// meanStd is the mean and the population standard deviation (0 for one
// value), as numpy's mean and std.
func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)))
}

// tTest is scipy's ttest_ind_from_stats (equal variances, two-sided) on
// the figures Otava passes it; p = 1 for two points in all. A zero
// variance with different means is p = 0; with equal means, 1 (scipy's
// NaN, which Otava's comparisons treat as not significant).
func tTest(m1, s1 float64, n1 int, m2, s2 float64, n2 int) float64 {
	if n1+n2 <= 2 {
		return 1
	}
	df := float64(n1 + n2 - 2)
	v := (float64(n1-1)*s1*s1 + float64(n2-1)*s2*s2) / df
	denom := math.Sqrt(v * (1/float64(n1) + 1/float64(n2)))
	if denom == 0 {
		if m1 == m2 {
			return 1
		}
		return 0
	}
	t := (m1 - m2) / denom
	return mathx.BetaInc(df/(df+t*t), df/2, 0.5)
}

// split is Hunter's split step: the weak change points of every window,
// each then tested over the whole series.
func split(series []float64, window int, maxP float64) []ChangePoint {
	n := len(series)
	step := window / 2
	var cps []ChangePoint
	for start := 0; start < n; {
		end := min(start+window, n)
		found := detectWindow(series[start:end], maxP)
		last := 0
		for _, c := range found {
			c.Index += start
			last = c.Index
			if !slices.ContainsFunc(cps, func(p ChangePoint) bool { return p.Index == c.Index }) {
				cps = append(cps, c)
			}
		}
		start = max(last, start+step)
	}
	slices.SortFunc(cps, func(a, b ChangePoint) int { return a.Index - b.Index })
	ivs := intervals(cps, n)
	for i, c := range cps {
		cps[i] = test(c.Index, c.QHat, series, ivs)
	}
	return cps
}

// detectWindow is the divisive search of one window, with t-test
// significance: it stops at the first best candidate that fails.
func detectWindow(w []float64, maxP float64) []ChangePoint {
	q := newQCalc(w)
	var cps []ChangePoint
	for {
		ivs := intervals(cps, len(w))
		best, bestQ, ok := -1, 0.0, false
		for _, iv := range ivs {
			if iv.stop-iv.start < 2 {
				continue
			}
			idx, qv := q.best(iv.start, iv.stop)
			if !ok || qv > bestQ {
				best, bestQ, ok = idx, qv, true
			}
		}
		if !ok {
			return cps
		}
		c := test(best, bestQ, w, ivs)
		if !(c.P <= maxP) {
			return cps
		}
		cps = append(cps, c)
		slices.SortFunc(cps, func(a, b ChangePoint) int { return a.Index - b.Index })
	}
}

// merge is Hunter's merge step.
func merge(cps []ChangePoint, series []float64, maxP, minMagnitude float64, minSegment int) []ChangePoint {
	for len(cps) > 0 {
		weakest := 0
		for i, c := range cps {
			if c.P > cps[weakest].P {
				weakest = i
			}
		}
		if short := shortSide(cps, len(series), minSegment); short >= 0 {
			weakest = short
		} else if cps[weakest].P < maxP {
			weakest = 0
			for i, c := range cps {
				if c.magnitude() < cps[weakest].magnitude() {
					weakest = i
				}
			}
			if cps[weakest].magnitude() > minMagnitude {
				return cps
			}
		}
		cps = slices.Delete(cps, weakest, weakest+1)
		ivs := intervals(cps, len(series))
		for _, i := range []int{weakest, weakest + 1} {
			if i >= 0 && i < len(cps) {
				cps[i] = test(cps[i].Index, cps[i].QHat, series, ivs)
			}
		}
	}
	return cps
}

// shortSide is the first change point with fewer than minSegment points
// on a side, or -1.
func shortSide(cps []ChangePoint, n, minSegment int) int {
	for i, c := range cps {
		lo, hi := 0, n
		if i > 0 {
			lo = cps[i-1].Index
		}
		if i+1 < len(cps) {
			hi = cps[i+1].Index
		}
		if c.Index-lo < minSegment || hi-c.Index < minSegment {
			return i
		}
	}
	return -1
}

// qCalc computes E-divisive Q values over one window from a column
// prefix sum of its distance matrix: pre[j][t] = Σ_{i<t} |w_i - w_j|.
type qCalc struct {
	w   []float64
	pre [][]float64
}

func newQCalc(w []float64) *qCalc {
	n := len(w)
	pre := make([][]float64, n)
	for j := range n {
		row := make([]float64, n+1)
		for i := range n {
			row[i+1] = row[i] + math.Abs(w[i]-w[j])
		}
		pre[j] = row
	}
	return &qCalc{w: w, pre: pre}
}

// colSum is Σ_{i=a}^{b-1} |w_i - w_j|.
func (q *qCalc) colSum(j, a, b int) float64 { return q.pre[j][b] - q.pre[j][a] }

// best returns the τ in (start, stop) of the largest Q(τ, κ) over
// start < τ < κ <= stop, taking the first in (τ, κ) order on ties as
// numpy's argmax does, and that Q.
func (q *qCalc) best(start, stop int) (int, float64) {
	// within[t] = Σ_{start<=i<k<t} D(i,k): the within-X sums for X = [start, t).
	size := stop - start
	within := make([]float64, size+1)
	for t := start + 2; t <= stop; t++ {
		within[t-start] = within[t-1-start] + q.colSum(t-1, start, t-1)
	}
	bestTau, bestQ := -1, math.Inf(-1)
	// For each τ, grow κ: cross = Σ_{i∈[start,τ), j∈[τ,κ)} D(i,j);
	// wy = Σ_{τ<=j<k<κ} D(j,k).
	for tau := start + 1; tau < stop; tau++ {
		n := float64(tau - start)
		wx := within[tau-start]
		var cross, wy float64
		for kappa := tau + 1; kappa <= stop; kappa++ {
			j := kappa - 1
			cross += q.colSum(j, start, tau)
			wy += q.colSum(j, tau, j)
			m := float64(kappa - tau)
			v := 2 / (m + n) * cross
			if n > 1 {
				v -= 2 * m / ((m + n) * (n - 1)) * wx
			}
			if m > 1 {
				v -= 2 * n / ((m + n) * (m - 1)) * wy
			}
			if v > bestQ {
				bestTau, bestQ = tau, v
			}
		}
	}
	return bestTau, bestQ
}
