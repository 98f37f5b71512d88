package stats

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// Test names of the paired comparison (Comparison.Test).
const (
	MethodSignedRankExact  = "Wilcoxon signed-rank on matched pairs, exact"
	MethodSignedRankNormal = "Wilcoxon signed-rank on matched pairs, normal approximation with tie and continuity corrections"
)

// ComparePaired compares matched samples: in each stratum (a prompt),
// Base[i] and Cur[i] are one pair (the same repetition of the same cell
// key in the two runs). The test is Wilcoxon's signed-rank test on the
// pairs' log ratios log(cur/base) pooled over the strata, as R's
// wilcox.test(log(cur), log(base), paired = TRUE): exact below 50 pairs
// with no zero and no tie among the |differences|, else the normal
// approximation with R's tie and continuity corrections. Each pair is
// like with like, so pooling the pairs of several prompts compares no
// mixes: a prompt with more pairs weighs more, never a prompt's level.
//
// The shift is the Hodges-Lehmann estimate of the common log ratio (the
// median of the Walsh averages of the log ratios) with the interval that
// inverts the same test (R's conf.int in the exact case; the order
// statistics of the normal approximation otherwise); ShiftPct is
// 100 (exp(estimate) - 1) and Shift holds it as that ratio of
// MedianBase, as CompareStrata does. MedianBase and MedianCur are the
// medians over the strata of each stratum's median (one stratum: its
// medians). ShiftSE is the estimate's standard error, from the spread of
// the log ratios: what MDE reads.
//
// A stratum whose Base and Cur differ in length, or is empty, is an
// error: the caller pairs the samples. The cost is one sort of the pairs
// and a bisection of about a hundred O(n) passes for each of the three
// order statistics: no Walsh average is listed.
func ComparePaired(strata []Stratum) (Comparison, error) {
	c := Comparison{P: 1, SmallestP: 1}
	var d []float64
	var medB, medC []float64
	for i, s := range strata {
		if len(s.Base) != len(s.Cur) {
			return Comparison{}, fmt.Errorf("stratum %d: %d base and %d new values: pairs need one of each", i, len(s.Base), len(s.Cur))
		}
		if err := checkNonEmpty(fmt.Sprintf("stratum %d base", i), s.Base); err != nil {
			return Comparison{}, err
		}
		if err := checkNonEmpty(fmt.Sprintf("stratum %d cur", i), s.Cur); err != nil {
			return Comparison{}, err
		}
		for j := range s.Base {
			d = append(d, math.Log(math.Max(s.Cur[j], LogFloor))-math.Log(math.Max(s.Base[j], LogFloor)))
		}
		medB = append(medB, Median(s.Base))
		medC = append(medC, Median(s.Cur))
	}
	if len(d) == 0 {
		c.Warnings = append(c.Warnings, "no test: no pairs")
		return c, nil
	}
	c.NBase, c.NCur, c.Pairs, c.Strata = len(d), len(d), len(d), len(strata)
	c.MedianBase, c.MedianCur = Median(medB), Median(medC)
	if c.MedianBase == 0 {
		c.Warnings = append(c.Warnings, "base median is 0: percentages undefined")
	} else {
		c.DeltaPct = finite(100 * (c.MedianCur/c.MedianBase - 1))
	}
	slices.Sort(d)
	sr := signedRank(d)
	c.P, c.Test = sr.p, sr.method
	c.SmallestP = SmallestSignedRankP(len(d))
	c.ShiftSE = rankSE(upperSD(sumSquares(d), float64(len(d)-1)), float64(len(d)))
	est, lo, hi, conf := walshShift(d, rankAll(d), ShiftConfidence)
	c.ShiftPct = finite(100 * math.Expm1(est))
	scale := math.Abs(c.MedianBase)
	c.Shift = Shift{Estimate: finite(scale * math.Expm1(est)), Lo: finite(scale * math.Expm1(lo)), Hi: finite(scale * math.Expm1(hi)),
		Confidence: conf, Exact: sr.exact}
	return c, nil
}

// signedRankTest is the signed-rank statistic of sorted differences and
// what its interval needs.
type signedRankTest struct {
	v      float64 // R's V: the sum of the ranks of |d| over the positive d
	n      int     // differences that are not zero
	tieSum float64 // Σ(t³ - t) over the groups of equal |d|
	exact  bool
	p      float64
	method string
}

// signedRank is R's wilcox.test(d) (mu = 0, two-sided, correct = TRUE)
// on sorted differences: zeros dropped; exact when fewer than 50 remain
// and no |d| is tied; the normal approximation otherwise.
func signedRank(sorted []float64) signedRankTest { return rankSigned(sorted, false) }

// rankAll ranks every difference, zeros too (one tie group at 0, as
// Pratt's method does): what the shift estimate and its interval are
// read from. R drops the zeros there as well, which overstates a change
// that hit some of the pairs: 64 unchanged pairs and 32 four times
// slower give a shift of +300 % without the zeros, +100 % with them.
func rankAll(sorted []float64) signedRankTest { return rankSigned(sorted, true) }

func rankSigned(sorted []float64, keepZeros bool) signedRankTest {
	abs := make([]float64, 0, len(sorted))
	pos := make([]bool, 0, len(sorted))
	for _, v := range sorted {
		if v != 0 || keepZeros {
			abs = append(abs, math.Abs(v))
			pos = append(pos, v > 0)
		}
	}
	idx := make([]int, len(abs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case abs[a] < abs[b]:
			return -1
		case abs[a] > abs[b]:
			return 1
		}
		return 0
	})
	t := signedRankTest{n: len(abs), p: 1}
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && abs[idx[j]] == abs[idx[i]] {
			j++
		}
		mid := float64(i+j+1) / 2 // mid-rank of ranks i+1..j
		for k := i; k < j; k++ {
			if pos[idx[k]] {
				t.v += mid
			}
		}
		g := float64(j - i)
		t.tieSum += g*g*g - g
		i = j
	}
	n := t.n
	if n == 0 {
		t.method = MethodSignedRankNormal
		return t // every pair equal: no evidence of any shift
	}
	zeros := 0
	for _, v := range sorted {
		zeros += b2int(v == 0)
	}
	if n < exactLimit && t.tieSum == 0 && zeros == 0 {
		cdf := signedRankDist(n)
		half := float64(n) * float64(n+1) / 4
		var tail float64
		if t.v > half {
			// P(V >= v) = P(V <= N - v), V symmetric about N/2.
			tail = cdf[n*(n+1)/2-int(t.v)]
		} else {
			tail = cdf[int(t.v)]
		}
		t.p = math.Min(1, 2*tail)
		t.exact, t.method = true, MethodSignedRankExact
		return t
	}
	t.method = MethodSignedRankNormal
	t.p = t.pAt(t.v)
	return t
}

// sigma is the null standard deviation of V with R's tie correction.
func (t signedRankTest) sigma() float64 {
	n := float64(t.n)
	v := n*(n+1)*(2*n+1)/24 - t.tieSum/48
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v)
}

// pAt is the normal approximation's two-sided p-value of a value of V,
// with the continuity correction of one half towards the mean.
func (t signedRankTest) pAt(v float64) float64 {
	return continuityP(v-float64(t.n)*float64(t.n+1)/4, t.sigma())
}

// SmallestSignedRankP is the smallest two-sided p-value the exact
// signed-rank test can give n pairs: 2/2^n, every difference of one sign.
// Above the exact range it is 0 (no bound worth stating).
func SmallestSignedRankP(n int) float64 {
	if n <= 0 {
		return 1
	}
	if n >= exactLimit {
		return 0
	}
	return math.Min(1, math.Ldexp(2, -n))
}

// signedRankTables holds the exact null CDF of V for every n below
// exactLimit, built together on first use (about 21,000 float64s): one
// pass of the recurrence that adds rank k to every subset of 1..k-1.
var signedRankTables struct {
	once sync.Once
	cdf  [][]float64
}

// signedRankDist returns P(V <= v) for v in 0..n(n+1)/2, n below
// exactLimit. The counts (at most 2^49) are whole numbers below 2^53:
// exact in float64. Callers must not modify the slice.
func signedRankDist(n int) []float64 {
	signedRankTables.once.Do(func() { signedRankTables.cdf = signedRankCDFs(exactLimit - 1) })
	return signedRankTables.cdf[n]
}

// signedRankCDFs are the exact null CDFs of V for n = 1..top: the counts
// of the subsets of 1..n by their sum, rank k added to every subset of
// 1..k-1 in turn.
func signedRankCDFs(top int) [][]float64 {
	out := make([][]float64, top+1)
	counts := []float64{1} // subsets of nothing: the empty sum
	for k := 1; k <= top; k++ {
		next := make([]float64, len(counts)+k)
		copy(next, counts)
		for v, c := range counts {
			next[v+k] += c
		}
		counts = next
		out[k] = cumulative(counts)
	}
	return out
}

// walshShift is the Hodges-Lehmann estimate of the centre of sorted
// differences, zeros kept (the median of the n(n+1)/2 Walsh averages),
// with its interval: exact order statistics from the null distribution
// of V when t (rankAll's) is exact, else the continuity-corrected normal
// approximation's.
func walshShift(d []float64, t signedRankTest, confidence float64) (est, lo, hi, conf float64) {
	n := len(d)
	total := n * (n + 1) / 2
	w := walsh{d: d}
	if total%2 == 1 {
		est = w.kth(total/2 + 1)
	} else {
		est = mid(w.kth(total/2), w.kth(total/2+1))
	}
	alpha := 1 - confidence
	conf = confidence
	var k int
	if t.exact {
		// R: qu <- qsignrank(alpha/2, n); if (qu == 0) qu <- 1;
		// the interval is [W(qu), W(N + 1 - qu)], missing with
		// probability 2 P(V <= qu - 1).
		cdf := signedRankDist(n)
		k, _ = slices.BinarySearch(cdf, alpha/2-10*dblEpsilon)
		if k == 0 {
			k = 1
		}
		conf = 1 - 2*cdf[k-1]
	} else {
		z := -normalQuantile(alpha / 2)
		kf := math.Ceil(float64(total)/2 - z*t.sigma() - 0.5)
		if kf < 1 {
			kf = 1
			conf = 1 - SmallestSignedRankP(n)
		}
		k = int(kf)
	}
	k = min(k, total)
	lo, hi = w.kth(k), w.kth(total+1-k)
	return est, math.Min(lo, est), math.Max(hi, est), conf
}

// walsh is the implicit sorted list of Walsh averages (d[i]+d[j])/2,
// i <= j, of sorted differences.
type walsh struct{ d []float64 }

// atMost counts the Walsh averages at most t, in O(n): for each i, the
// j >= i with d[i] + d[j] <= 2t, the bound on j moving down as i moves up.
func (w walsh) atMost(t float64) int {
	n := len(w.d)
	cnt := 0
	j := n - 1
	for i := 0; i < n; i++ {
		for j >= 0 && w.d[i]+w.d[j] > 2*t {
			j--
		}
		if j < i {
			break
		}
		cnt += j - i + 1
	}
	return cnt
}

// smallestAbove is the smallest Walsh average above t, in O(n).
func (w walsh) smallestAbove(t float64) float64 {
	n := len(w.d)
	best := math.Inf(1)
	j := n - 1
	// For each i, the smallest j >= i with d[i] + d[j] > 2t; as i moves
	// up that j moves down.
	for i := 0; i < n; i++ {
		for j-1 >= i && w.d[i]+w.d[j-1] > 2*t {
			j--
		}
		if j < i {
			j = i
		}
		if w.d[i]+w.d[j] > 2*t {
			best = math.Min(best, mid(w.d[i], w.d[j]))
		}
	}
	return best
}

// kth is the k-th smallest Walsh average (1-based): a bisection on the
// value down to the spacing of floats, then snapped to the average it
// converged on, so the result is one of the averages exactly.
func (w walsh) kth(k int) float64 {
	n := len(w.d)
	lo, hi := w.d[0], w.d[n-1] // every average lies in [d0, d(n-1)]
	if w.atMost(lo) >= k {
		return lo
	}
	for range 200 {
		m := lo + (hi-lo)/2
		if m <= lo || m >= hi {
			break
		}
		if w.atMost(m) >= k {
			hi = m
		} else {
			lo = m
		}
	}
	// atMost(lo) < k <= atMost(hi): the k-th average is the smallest one
	// above lo.
	return w.smallestAbove(lo)
}

func b2int(b bool) int {
	if b {
		return 1
	}
	return 0
}
