package stats

import (
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
	// "requested conf.level not achievable"; 1 and 1 give 0); in the
	// normal approximation it is the requested level, unless the widest
	// interval falls short of it.
	Confidence float64 `json:"confidence"`
	// Exact tells whether the interval's ends come from the exact U
	// distribution (both sizes below 50, no ties) or its normal
	// approximation.
	Exact bool `json:"exact"`
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
		m := d.kth(nn / 2)
		s.Estimate = mid(m, d.next(nn/2, m))
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

// smallPairs is how many pairwise differences are listed outright, with
// each order statistic then found by quickselect; beyond it they are
// selected without listing them (see kth). Tuned with
// BenchmarkHodgesLehmann.
const smallPairs = 1024

// diffs gives order statistics of the pairwise differences x[i] - y[j] of
// two sorted samples.
type diffs struct {
	x, y []float64
	all  []float64 // every difference, when there are few
	rng  *rand.Rand
	// Scratch space of kth, reused across calls.
	lo, hi, ltA, leA, ltB, leB, picks []int
	vals, buf                         []float64
}

func newDiffs(x, y []float64) *diffs {
	d := &diffs{x: x, y: y, rng: rand.New(rand.NewPCG(0x62656e6368, 0x7374617473))}
	if len(x)*len(y) <= smallPairs {
		d.all = make([]float64, 0, len(x)*len(y))
		for _, xi := range x {
			for _, yj := range y {
				d.all = append(d.all, xi-yj)
			}
		}
	}
	return d
}

// nthElement reorders a so that a[k] holds the value a sorted a would
// hold there, smaller or equal values before it and larger or equal
// after (C++'s nth_element). Quickselect with a random pivot and a
// three-way partition, so ties cost nothing extra: expected O(len(a)).
func nthElement(a []float64, k int, rng *rand.Rand) {
	lo, hi := 0, len(a)
	for hi-lo > 12 {
		p := a[lo+rng.IntN(hi-lo)]
		// [lo, lt) < p, [lt, i) == p, [gt, hi) > p.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch v := a[i]; {
			case v < p:
				a[lt], a[i] = v, a[lt]
				lt++
				i++
			case v > p:
				gt--
				a[i], a[gt] = a[gt], v
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return
		}
	}
	slices.Sort(a[lo:hi])
}

// kth returns the k-th smallest (1-based) pairwise difference.
//
// For many pairs it selects on the implicit matrix M[i][c] = x[i] -
// y[len(y)-1-c], whose rows and columns ascend (rounding is monotone, so
// this holds in floating point too), after Monahan (1984). Each row keeps
// an active window [lo[i], hi[i]) known to bracket the answer. Each round
// draws a sample of random active entries and takes two of them, just
// below and just above the answer's expected place in the sample, as
// pivots; it counts the entries < and <= each pivot with two pointers in
// O(len(x)+len(y)) and keeps only the windows' part that holds rank k, or
// returns a pivot of rank k. With high probability a round keeps a small
// share of the active entries (4/sqrt(sample size)); once few remain they
// are listed and quickselected.
// The seed is fixed, so the work done is reproducible; the result never
// depends on it.
func (d *diffs) kth(k int) float64 {
	if d.all != nil {
		nthElement(d.all, k-1, d.rng)
		return d.all[k-1]
	}
	x, y := d.x, d.y
	nx, ny := len(x), len(y)
	at := func(i, c int) float64 { return x[i] - y[ny-1-c] }
	// A round costs one counting pass, O(nx+ny), plus sorting the sample;
	// a sample of (nx+ny)/16 keeps the sort well below the pass while a
	// round keeps only about 4/sqrt(size) of the active entries: the
	// answer's place in the sample has a standard deviation of at most
	// sqrt(size)/2, and the slack is four of them.
	size := min(16384, max(64, (nx+ny)/16))
	slack := int(2 * math.Sqrt(float64(size)))
	if d.lo == nil {
		d.lo, d.hi = make([]int, nx), make([]int, nx)
		d.ltA, d.leA = make([]int, nx), make([]int, nx)
		d.ltB, d.leB = make([]int, nx), make([]int, nx)
		d.picks, d.vals = make([]int, size), make([]float64, size)
	}
	lo, hi := d.lo, d.hi
	ltA, leA, ltB, leB := d.ltA, d.leA, d.ltB, d.leB
	picks, vals := d.picks, d.vals
	clear(lo)
	for i := range hi {
		hi[i] = ny
	}
	below := 0 // entries known to be smaller than the answer: Σ lo[i]
	for {
		active := 0
		for i := range lo {
			active += hi[i] - lo[i]
		}
		if active <= max(nx+ny, smallPairs) {
			buf := d.buf[:0]
			for i := range lo {
				for c := lo[i]; c < hi[i]; c++ {
					buf = append(buf, at(i, c))
				}
			}
			d.buf = buf
			nthElement(buf, k-1-below, d.rng)
			return buf[k-1-below]
		}
		// A sorted random sample of active entries.
		for j := range picks {
			picks[j] = d.rng.IntN(active)
		}
		slices.Sort(picks)
		j, seen := 0, 0
		for i := 0; i < nx && j < len(picks); i++ {
			w := hi[i] - lo[i]
			for j < len(picks) && picks[j] < seen+w {
				vals[j] = at(i, lo[i]+picks[j]-seen)
				j++
			}
			seen += w
		}
		slices.Sort(vals)
		// The answer is the (k-below)-th of the active entries; bracket
		// its place in the sample.
		pos := float64(k-below) / float64(active) * float64(size)
		a := max(0, int(pos)-slack)
		b := min(size-1, int(pos)+slack)
		pa, pb := vals[a], vals[b]
		nltA, nleA, nltB, nleB := d.count2(pa, pb, ltA, leA, ltB, leB)
		switch {
		case k <= nltA: // below both pivots
			for i := range hi {
				hi[i] = min(hi[i], ltA[i])
			}
		case k <= nleA:
			return pa
		case k <= nltB: // between the pivots: the usual case
			below = 0
			for i := range lo {
				lo[i] = max(lo[i], leA[i])
				hi[i] = min(hi[i], ltB[i])
				below += lo[i]
			}
		case k <= nleB:
			return pb
		default: // above both pivots
			below = 0
			for i := range lo {
				lo[i] = max(lo[i], leB[i])
				below += lo[i]
			}
		}
	}
}

// count2 sets ltA[i] (leA[i]) to the number of entries of row i that are
// < pa (<= pa), and ltB, leB likewise for pb, and returns their totals.
// All four fall as i rises, since the columns ascend, so one sweep with
// four pointers does it in O(len(x)+len(y)).
func (d *diffs) count2(pa, pb float64, ltA, leA, ltB, leB []int) (nltA, nleA, nltB, nleB int) {
	x, y := d.x, d.y
	ny := len(y)
	c1, c2, c3, c4 := ny, ny, ny, ny
	for i, xi := range x {
		// Entry c of row i is xi - y[ny-1-c]; column c-1 is y[ny-c].
		for c1 > 0 && xi-y[ny-c1] >= pa {
			c1--
		}
		for c2 > 0 && xi-y[ny-c2] > pa {
			c2--
		}
		for c3 > 0 && xi-y[ny-c3] >= pb {
			c3--
		}
		for c4 > 0 && xi-y[ny-c4] > pb {
			c4--
		}
		ltA[i], leA[i], ltB[i], leB[i] = c1, c2, c3, c4
		nltA += c1
		nleA += c2
		nltB += c3
		nleB += c4
	}
	return
}

// next returns the (k+1)-th smallest difference given v, the k-th: v
// again if more than k differences are <= v, else the smallest difference
// above v, which is the first entry > v of some row. O(len(x)+len(y)).
func (d *diffs) next(k int, v float64) float64 {
	if d.all != nil {
		return d.kth(k + 1)
	}
	x, y := d.x, d.y
	nx, ny := len(x), len(y)
	lt, le := make([]int, nx), make([]int, nx)
	_, nle, _, _ := d.count2(v, v, lt, le, lt, le)
	if nle > k {
		return v
	}
	best := math.Inf(1)
	for i, c := range le {
		if c < ny {
			best = math.Min(best, x[i]-y[ny-1-c])
		}
	}
	return best
}
