package stats

import (
	"math"
	"sync"
)

// exactLimit is R's bound for the exact U distribution: wilcox.test uses it
// when both samples have fewer than 50 values and no value is tied.
const exactLimit = 50

// Test names reported in UTest.Method and Comparison.Test.
const (
	MethodExact  = "Mann-Whitney U, exact"
	MethodNormal = "Mann-Whitney U, normal approximation with tie and continuity corrections"
)

// UTest is the result of a two-sided Mann-Whitney U (Wilcoxon rank-sum)
// test of x against y.
type UTest struct {
	// N1 and N2 are the sizes of x and y.
	N1 int `json:"n1"`
	N2 int `json:"n2"`
	// U counts the pairs with x > y, a tie counting one half: R's W
	// statistic for wilcox.test(x, y). N1*N2/2 means no shift either way.
	U float64 `json:"u"`
	// P is the two-sided p-value, in [0, 1].
	P float64 `json:"p"`
	// Exact tells whether P comes from the exact null distribution
	// (both sizes below 50, no ties) or the normal approximation.
	Exact bool `json:"exact"`
	// Method names the test, one of MethodExact and MethodNormal.
	Method string `json:"method"`
}

// uTestSorted is MannWhitney on sorted, checked, non-empty samples; it
// also returns the pooled tie sum, which the shift's interval needs.
func uTestSorted(xs, ys []float64) (UTest, float64) {
	n1, n2 := len(xs), len(ys)
	u, tieSum := rankU(xs, ys)
	r := UTest{N1: n1, N2: n2, U: u}
	nn := float64(n1) * float64(n2)
	if n1 < exactLimit && n2 < exactLimit && tieSum == 0 {
		// u is a whole number here. R: if W > n1*n2/2 the upper tail
		// P(U >= W), else the lower tail P(U <= W); doubled, capped at 1.
		// U is symmetric about n1*n2/2, so the upper tail is read as the
		// lower tail P(U <= n1*n2 - W), which keeps tiny p-values exact
		// instead of computing 1 - (1 - p).
		cdf := uDist(n1, n2)
		w := int(u)
		if u > nn/2 {
			w = n1*n2 - w
		}
		tail := cdf[w]
		r.P = math.Min(1, 2*tail)
		r.Exact = true
		r.Method = MethodExact
		return r, tieSum
	}
	r.Method = MethodNormal
	r.P = normalP(u, n1, n2, tieSum)
	return r, tieSum
}

// rankU returns the U statistic of xs against ys (ties counting one half,
// from mid-ranks of the pooled sample) and the tie sum Σ(t³-t) over the
// groups of equal values in the pooled sample.
func rankU(xs, ys []float64) (u, tieSum float64) {
	n1, n2 := len(xs), len(ys)
	var rankSum float64 // sum of the mid-ranks of xs in the pooled sample
	seen := 0           // values of the pooled sample already ranked
	i, j := 0, 0
	for i < n1 || j < n2 {
		var v float64
		switch {
		case i == n1:
			v = ys[j]
		case j == n2:
			v = xs[i]
		default:
			v = math.Min(xs[i], ys[j])
		}
		cx := 0
		for i < n1 && xs[i] == v {
			i++
			cx++
		}
		cy := 0
		for j < n2 && ys[j] == v {
			j++
			cy++
		}
		t := float64(cx + cy)
		// The group holds ranks seen+1 .. seen+t; its mid-rank is their mean.
		rankSum += float64(cx) * (float64(seen) + (t+1)/2)
		tieSum += t*t*t - t
		seen += cx + cy
	}
	return rankSum - float64(n1)*float64(n1+1)/2, tieSum
}

// uSigma is the standard deviation of U under the null hypothesis, with
// the tie correction.
func uSigma(n1, n2 int, tieSum float64) float64 {
	nn := float64(n1) * float64(n2)
	n := float64(n1 + n2)
	v := nn / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v)
}

// normalP is R's normal approximation of the two-sided p-value, with the
// tie correction in the variance and a continuity correction of one half
// towards the mean.
func normalP(u float64, n1, n2 int, tieSum float64) float64 {
	return continuityP(u-float64(n1)*float64(n2)/2, uSigma(n1, n2, tieSum))
}

// continuityP is the two-sided normal p-value of a statistic dev away
// from its null mean with null standard deviation sigma, corrected for
// continuity by one half towards the mean (R's correct = TRUE). A sigma of
// 0 (every value the same) is no evidence of any shift: 1.
func continuityP(dev, sigma float64) float64 {
	if sigma == 0 {
		return 1
	}
	switch {
	case dev > 0:
		dev -= 0.5
	case dev < 0:
		dev += 0.5
	}
	// 2*min(Φ(z), 1-Φ(z)) = erfc(|z|/√2), accurate far into the tail.
	return math.Min(1, math.Erfc(math.Abs(dev/sigma)/math.Sqrt2))
}

// uTables holds the exact null CDF of U for every pair of sizes below
// exactLimit, built together on first use: about 750,000 float64s (6 MB)
// in a few milliseconds, since one pass of the recurrence yields every
// smaller pair on its way.
var uTables struct {
	once sync.Once
	cdf  [][][]float64 // cdf[m][n] for 1 <= m <= n < exactLimit
}

// uDist returns the exact null CDF of U for sizes n1 and n2 (both below
// exactLimit) without ties: cdf[u] = P(U <= u) for u in 0..n1*n2. The
// distribution is the same for (n1, n2) and (n2, n1). Callers must not
// modify the slice.
func uDist(n1, n2 int) []float64 {
	uTables.once.Do(func() { uTables.cdf = buildUDists(exactLimit - 1) })
	if n1 > n2 {
		n1, n2 = n2, n1
	}
	return uTables.cdf[n1][n2]
}

// buildUDists computes the exact null CDFs of U for all sizes 1 <= m <= n
// <= max by Mann and Whitney's (1947) recurrence on counts of
// arrangements: the largest of the m+n values is either an x, which then
// beats all n y's, or a y, which beats no x:
//
//	f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u),  f(m, 0, 0) = f(0, n, 0) = 1.
//
// Only additions of positive counts, so the float64 result is accurate to
// a few ulps even where the counts (up to C(98, 49) ≈ 2.5e28) exceed 2^53.
// Cost O(max⁴/4) additions: 1.4 M for 49.
func buildUDists(top int) [][][]float64 {
	// f[m] holds the counts for sizes (m, n) at the current column n; it
	// grows in place from length m*(n-1)+1 to m*n+1.
	f := make([][]float64, top+1)
	for m := range f {
		f[m] = make([]float64, 1, m*top+1)
		f[m][0] = 1
	}
	out := make([][][]float64, top+1)
	for m := range out {
		out[m] = make([][]float64, top+1)
	}
	for n := 1; n <= top; n++ {
		for m := 1; m <= top; m++ {
			old := len(f[m])
			f[m] = f[m][:m*n+1]
			clear(f[m][old:])
			for u, c := range f[m-1] { // already at column n
				f[m][u+n] += c
			}
			if m <= n {
				out[m][n] = cumulative(f[m])
			}
		}
	}
	return out
}

// cumulative turns counts into a CDF.
func cumulative(counts []float64) []float64 {
	var total float64
	for _, c := range counts {
		total += c
	}
	cdf := make([]float64, len(counts))
	var acc float64
	for u, c := range counts {
		acc += c
		cdf[u] = acc / total
	}
	cdf[len(cdf)-1] = 1
	return cdf
}
