package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Shift is the Hodges-Lehmann estimate of how far cur lies from base
// (cur - base, in the samples' unit) with its confidence interval.
type Shift struct {
	// Estimate is the median of all pairwise differences cur[j] - base[i].
	Estimate float64 `json:"estimate"`
	// Lo and Hi bound the confidence interval; Lo <= Estimate <= Hi.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Confidence is the interval's coverage. In the exact case it is the
	// achieved level, at least the one requested unless the samples are
	// too small to reach it (3 and 3 values give at most 0.9, like R's
	// "requested conf.level not achievable"); in the normal approximation
	// it is the requested level.
	Confidence float64 `json:"confidence"`
	// Exact tells whether the interval's ends come from the exact U
	// distribution (both sizes below 50, no ties) or its normal
	// approximation.
	Exact bool `json:"exact"`
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

// shiftSorted is HodgesLehmann on sorted, checked, non-empty samples whose
// pooled tie sum is known.
func shiftSorted(bs, cs []float64, tieSum, confidence float64) Shift {
	n1, n2 := len(cs), len(bs)
	alpha := 1 - confidence
	var k int // 1-based rank of the lower end among the pairwise differences
	s := Shift{Confidence: confidence}
	if n1 < exactLimit && n2 < exactLimit && tieSum == 0 {
		// R: qu <- qwilcox(alpha/2, n.x, n.y), the smallest q with
		// P(U <= q) >= alpha/2; if 0, use 1. The interval is
		// [D(qu), D(n1*n2 + 1 - qu)] and misses with probability
		// 2 P(U <= qu-1).
		// R's qwilcox compares against p - 10 DBL_EPSILON, so that a
		// cumulative probability equal to alpha/2 up to rounding counts.
		cdf := uDist(n1, n2)
		k, _ = slices.BinarySearch(cdf, alpha/2-10*dblEpsilon)
		if k == 0 {
			k = 1
		}
		s.Confidence = 1 - 2*cdf[k-1]
		s.Exact = true
	} else {
		// The interval holds the shifts d that the continuity-corrected
		// normal test does not reject: with U(d) the number of
		// differences above d, |U(d) - n1 n2/2| - 1/2 <= z σ, whose lower
		// end is the difference of rank ceil(n1 n2/2 - z σ - 1/2).
		z := -normalQuantile(alpha / 2)
		mu := float64(n1) * float64(n2) / 2
		kf := math.Ceil(mu - z*uSigma(n1, n2, tieSum) - 0.5)
		if kf < 1 {
			// The widest interval, [min, max]: its coverage without ties
			// is 1 - 2/C(n1+n2, n1).
			k = 1
			s.Confidence = 1 - 2*math.Exp(-lchoose(n1+n2, n1))
		} else {
			k = int(kf)
		}
	}
	nn := n1 * n2
	d := newDiffs(cs, bs)
	if nn%2 == 1 {
		s.Estimate = d.kth(nn/2 + 1)
	} else {
		s.Estimate = mid(d.kth(nn/2), d.kth(nn/2+1))
	}
	s.Lo = d.kth(k)
	s.Hi = d.kth(nn + 1 - k)
	return s
}

// dblEpsilon is C's DBL_EPSILON, 2^-52.
const dblEpsilon = 0x1p-52

// normalQuantile is the standard normal quantile function Φ⁻¹(p).
func normalQuantile(p float64) float64 {
	return -math.Sqrt2 * math.Erfcinv(2*p)
}

// lchoose is log C(n, k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// smallPairs is how many pairwise differences are listed and sorted
// outright; beyond it the order statistics are selected (see kth).
// Sorting wins below it (measured by BenchmarkHodgesLehmann).
const smallPairs = 4096

// diffs gives order statistics of the pairwise differences x[i] - y[j] of
// two sorted samples.
type diffs struct {
	x, y   []float64
	sorted []float64 // all differences, sorted, when there are few
	rng    *rand.Rand
}

func newDiffs(x, y []float64) *diffs {
	d := &diffs{x: x, y: y}
	if len(x)*len(y) <= smallPairs {
		d.sorted = make([]float64, 0, len(x)*len(y))
		for _, xi := range x {
			for _, yj := range y {
				d.sorted = append(d.sorted, xi-yj)
			}
		}
		slices.Sort(d.sorted)
	}
	return d
}

// kth returns the k-th smallest (1-based) pairwise difference.
//
// For many pairs it runs Monahan's selection on the implicit sorted matrix
// M[i][c] = x[i] - y[len(y)-1-c], whose rows and columns ascend (rounding
// is monotone, so this holds in floating point too). Each row keeps an
// active window [lo[i], hi[i]) known to bracket the answer. Each round
// draws a random active entry p, counts the entries < p and <= p with two
// pointers in O(len(x)+len(y)), and keeps only the side that holds rank k,
// or returns p when it has rank k. Once few entries stay active they are
// listed and sorted. The seed is fixed, so the work done is reproducible;
// the result never depends on it.
func (d *diffs) kth(k int) float64 {
	if d.sorted != nil {
		return d.sorted[k-1]
	}
	if d.rng == nil {
		d.rng = rand.New(rand.NewPCG(0x62656e6368, 0x7374617473))
	}
	x, y := d.x, d.y
	nx, ny := len(x), len(y)
	at := func(i, c int) float64 { return x[i] - y[ny-1-c] }
	lo := make([]int, nx)
	hi := make([]int, nx)
	for i := range hi {
		hi[i] = ny
	}
	lt := make([]int, nx)
	le := make([]int, nx)
	below := 0 // entries known to be smaller than the answer: Σ lo[i]
	for {
		active := 0
		for i := range lo {
			active += hi[i] - lo[i]
		}
		if active <= 4*(nx+ny) {
			buf := make([]float64, 0, active)
			for i := range lo {
				for c := lo[i]; c < hi[i]; c++ {
					buf = append(buf, at(i, c))
				}
			}
			slices.Sort(buf)
			return buf[k-1-below]
		}
		// A uniformly random active entry as the pivot.
		r := d.rng.IntN(active)
		var p float64
		for i := range lo {
			w := hi[i] - lo[i]
			if r < w {
				p = at(i, lo[i]+r)
				break
			}
			r -= w
		}
		// lt[i] (le[i]) is the number of entries of row i that are < p
		// (<= p). Both fall as i rises, since the columns ascend.
		nlt, nle := 0, 0
		c1, c2 := ny, ny
		for i := 0; i < nx; i++ {
			for c1 > 0 && at(i, c1-1) >= p {
				c1--
			}
			for c2 > 0 && at(i, c2-1) > p {
				c2--
			}
			lt[i], le[i] = c1, c2
			nlt += c1
			nle += c2
		}
		switch {
		case k <= nlt: // the answer is < p
			for i := range hi {
				hi[i] = min(hi[i], lt[i])
			}
		case k > nle: // the answer is > p
			below = 0
			for i := range lo {
				lo[i] = max(lo[i], le[i])
				below += lo[i]
			}
		default:
			return p
		}
	}
}
