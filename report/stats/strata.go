package stats

import (
	"fmt"
	"math"
)

// MethodVanElteren names the stratified test CompareStrata runs when a
// comparison has more than one stratum.
const MethodVanElteren = "van Elteren stratified rank-sum, normal approximation with tie and continuity corrections"

// LogFloor is the smallest value CompareStrata takes the logarithm of:
// a latency of 0 ms (or a rate of 0 tokens/s) counts as half a unit, so
// that a ratio stays finite. The floors of Judge, in the samples' unit,
// keep such tiny values from ever deciding a verdict.
const LogFloor = 0.5

// Stratum is one stratum's samples of a metric in each run: one prompt's
// TTFTs, say, in the base run and in the new one.
type Stratum struct {
	Base, Cur []float64
}

// CompareStrata compares base and cur like with like: within each stratum
// (a prompt) only, never across them, so a stratum that has more samples
// on one side (a long prompt that gained a rate) cannot pass for a speed
// change. Strata with no sample on a side carry no comparison and must
// be left out by the caller, who knows why they lack one; CompareStrata
// refuses them. One stratum is CompareSamples itself.
//
// The figures, for several strata:
//
//   - P is van Elteren's test (the stratified Wilcoxon rank-sum test,
//     Lehmann, Nonparametrics, 1975, section 3.3): the sum over strata of
//     each stratum's U statistic weighted by 1/(n_i+1), n_i the stratum's
//     size, against its null mean and variance (with each stratum's tie
//     correction), and a continuity correction of half the largest step
//     one stratum's U can make (1/(2(n_i+1)) for the smallest stratum):
//     exact in its step when the strata have one size, conservative
//     otherwise. The weights make it the locally most powerful rank test
//     of one shift common to every stratum.
//   - Shift is the stratified Hodges-Lehmann estimate of that common
//     shift on the log scale, the ratio cur/base: the weighted median of
//     every within-stratum pairwise difference log(cur) - log(base), each
//     weighted as its stratum's U is, with the interval that inverts the
//     same test. ShiftPct is 100 (exp(estimate) - 1); Shift holds it in
//     the samples' unit, as that ratio of MedianBase, so that Judge's
//     threshold and floor read it as they read one comparison's.
//   - MedianBase and MedianCur are the medians over the strata of each
//     stratum's median (every prompt weighs the same, whatever its number
//     of samples), and DeltaPct is their change.
//
// The cost is one sort of each stratum and a bisection of about a hundred
// passes over the samples, O(N log N): no pairwise difference is listed.
func CompareStrata(strata []Stratum) (Comparison, error) {
	for i, s := range strata {
		if err := checkNonEmpty(fmt.Sprintf("stratum %d base", i), s.Base); err != nil {
			return Comparison{}, err
		}
		if err := checkNonEmpty(fmt.Sprintf("stratum %d cur", i), s.Cur); err != nil {
			return Comparison{}, err
		}
	}
	switch len(strata) {
	case 0:
		c, err := CompareSamples(nil, nil)
		return c, err
	case 1:
		c, err := CompareSamples(strata[0].Base, strata[0].Cur)
		c.Strata = 1
		return c, err
	}
	c := Comparison{P: 1, Test: MethodVanElteren, Strata: len(strata)}
	ls := make([]logStratum, len(strata))
	sizes := make([][2]int, len(strata))
	var medB, medC []float64
	for i, s := range strata {
		sizes[i] = [2]int{len(s.Base), len(s.Cur)}
		bs, cs := sortedCopy(s.Base), sortedCopy(s.Cur)
		c.NBase += len(bs)
		c.NCur += len(cs)
		medB = append(medB, sortedMedian(bs))
		medC = append(medC, sortedMedian(cs))
		ls[i] = newLogStratum(bs, cs)
	}
	c.MedianBase, c.MedianCur = Median(medB), Median(medC)
	if c.MedianBase == 0 {
		c.Warnings = append(c.Warnings, "base median is 0: percentages undefined")
	} else {
		c.DeltaPct = finite(100 * (c.MedianCur/c.MedianBase - 1))
	}
	ve := vanElteren(ls)
	c.P, c.SmallestP = ve.p, smallestP(c, sizes)
	c.ShiftSE = strataSE(ls)
	est, lo, hi := ve.shift(ls, ShiftConfidence)
	c.ShiftPct = finite(100 * math.Expm1(est))
	scale := math.Abs(c.MedianBase)
	c.Shift = Shift{Estimate: finite(scale * math.Expm1(est)), Lo: finite(scale * math.Expm1(lo)), Hi: finite(scale * math.Expm1(hi)),
		Confidence: ShiftConfidence}
	return c, nil
}

// strataSE is the standard error of a common log shift estimated over
// strata: the inverse-variance combination of each stratum's (see MDE);
// strata without spread are left out, 0 when none has any.
func strataSE(ls []logStratum) float64 {
	var precision float64
	for i := range ls {
		n1, n2 := float64(len(ls[i].b)), float64(len(ls[i].c))
		if se := rankSE(pooledSD(ls[i].b, ls[i].c), n1*n2/(n1+n2)); se > 0 {
			precision += 1 / (se * se)
		}
	}
	if precision == 0 {
		return 0
	}
	return 1 / math.Sqrt(precision)
}

// logStratum is one stratum on the log scale, sorted, with its weight.
type logStratum struct {
	b, c []float64
	w    float64 // 1/(n+1)
}

func newLogStratum(bs, cs []float64) logStratum {
	l := logStratum{b: make([]float64, len(bs)), c: make([]float64, len(cs)), w: 1 / float64(len(bs)+len(cs)+1)}
	for i, v := range bs {
		l.b[i] = math.Log(math.Max(v, LogFloor))
	}
	for i, v := range cs {
		l.c[i] = math.Log(math.Max(v, LogFloor))
	}
	return l
}

// atMost counts the pairs with c[j] - b[i] <= d, and those with
// c[j] - b[i] < d, in O(len(b)+len(c)).
func (l *logStratum) atMost(d float64) (le, lt float64) {
	// For each c[j], the b[i] >= c[j] - d; c ascending moves the bound up.
	nb := len(l.b)
	i, k := 0, 0 // b[:i] < c[j]-d, b[:k] <= c[j]-d
	for _, cv := range l.c {
		bound := cv - d
		for i < nb && l.b[i] < bound {
			i++
		}
		for k < nb && l.b[k] <= bound {
			k++
		}
		le += float64(nb - i) // b >= bound: c - b <= d
		lt += float64(nb - k) // b > bound: c - b < d
	}
	return le, lt
}

// vanElterenTest is the stratified statistic's null moments and p-value.
type vanElterenTest struct {
	mean, sd, corr, v, p float64
}

func vanElteren(ls []logStratum) vanElterenTest {
	var t vanElterenTest
	for i := range ls {
		l := &ls[i]
		u, tieSum := rankU(l.c, l.b) // U of cur: pairs cur > base, ties one half
		m, k := len(l.c), len(l.b)
		t.v += l.w * u
		t.mean += l.w * float64(m) * float64(k) / 2
		s := uSigma(m, k, tieSum) * l.w
		t.sd += s * s
		t.corr = math.Max(t.corr, l.w/2)
	}
	t.sd = math.Sqrt(t.sd)
	t.p = t.pAt(t.v)
	return t
}

// pAt is the two-sided p-value of a statistic value.
func (t vanElterenTest) pAt(v float64) float64 {
	if t.sd == 0 {
		return 1 // every stratum's values are all the same
	}
	z := math.Abs(v-t.mean) - t.corr
	if z <= 0 {
		return 1
	}
	return math.Min(1, math.Erfc(z/t.sd/math.Sqrt2))
}

// smallestP is the p-value of the most extreme outcome the strata's sizes
// allow (every cur above every base in each stratum): below it no data
// can go, which tells a comparison that could never be significant.
func smallestPStrata(sizes [][2]int) float64 {
	var t vanElterenTest
	v := 0.0
	for _, s := range sizes {
		k, m := s[0], s[1]
		w := 1 / float64(k+m+1)
		v += w * float64(m) * float64(k)
		t.mean += w * float64(m) * float64(k) / 2
		sd := uSigma(m, k, 0) * w
		t.sd += sd * sd
		t.corr = math.Max(t.corr, w/2)
	}
	t.sd = math.Sqrt(t.sd)
	return t.pAt(v)
}

// shift is the stratified Hodges-Lehmann estimate of the common log shift
// and its interval: with F(d) the weight of the pairwise differences at
// most d (each pair weighing its stratum's w, W in all), the estimate is
// the weighted median (the middle of the smallest d with F(d) >= W/2 and
// the smallest with F(d) > W/2), and the interval holds the shifts the
// test does not reject: from the smallest d with F(d) >= T to the
// smallest d whose weight above it is below T, T = W/2 - z sd - corr
// (for one stratum of unit weight, the order statistics of
// HodgesLehmann's normal approximation).
func (t vanElterenTest) shift(ls []logStratum, confidence float64) (est, lo, hi float64) {
	var total float64
	dmin, dmax := math.Inf(1), math.Inf(-1)
	for i := range ls {
		l := &ls[i]
		total += l.w * float64(len(l.b)) * float64(len(l.c))
		dmin = math.Min(dmin, l.c[0]-l.b[len(l.b)-1])
		dmax = math.Max(dmax, l.c[len(l.c)-1]-l.b[0])
	}
	// F(d) = weight of pairs <= d; G(d) = weight of pairs < d.
	weights := func(d float64) (le, lt float64) {
		for i := range ls {
			a, b := ls[i].atMost(d)
			le += ls[i].w * a
			lt += ls[i].w * b
		}
		return le, lt
	}
	// smallest d in [dmin, dmax] with ok(d), ok monotone; bisection down
	// to the spacing of floats, then snapped to the pair difference it
	// converged on.
	first := func(ok func(d float64) bool) float64 {
		if ok(dmin) {
			return dmin
		}
		a, b := dmin, dmax // !ok(a), ok(b)
		for range 200 {
			m := a + (b-a)/2
			if m <= a || m >= b {
				break
			}
			if ok(m) {
				b = m
			} else {
				a = m
			}
		}
		return b
	}
	// Weights are sums of a few fractions: compare with a tolerance.
	eps := 1e-9 * math.Max(1, total)
	half := total / 2
	a := first(func(d float64) bool { le, _ := weights(d); return le >= half-eps })
	b := first(func(d float64) bool { le, _ := weights(d); return le > half+eps })
	est = (a + b) / 2
	z := -normalQuantile((1 - confidence) / 2)
	tq := half - z*t.sd - t.corr
	if tq <= eps {
		return est, dmin, dmax
	}
	lo = first(func(d float64) bool { le, _ := weights(d); return le >= tq-eps })
	// Weight above d below tq: total - F(d) < tq.
	hi = first(func(d float64) bool { le, _ := weights(d); return total-le < tq-eps })
	return est, math.Min(lo, est), math.Max(hi, est)
}

// smallestP is the smallest two-sided p-value a comparison of these sizes
// can reach: the exact test's 2/C(n1+n2, n1) for one stratum below 50 a
// side, van Elteren's extreme for several, 0 (no bound worth stating)
// for large samples. A comparison whose smallest p cannot pass its
// family's bar cannot be judged, whatever the data.
func smallestP(c Comparison, sizes [][2]int) float64 {
	if len(sizes) > 1 {
		return smallestPStrata(sizes)
	}
	if c.NBase >= exactLimit || c.NCur >= exactLimit {
		return 0
	}
	return SmallestExactP(c.NBase, c.NCur)
}

// SmallestExactP is the smallest two-sided p-value the exact U test can
// give samples of n1 and n2 values: 2/C(n1+n2, n1), every value of one
// side above every value of the other.
func SmallestExactP(n1, n2 int) float64 {
	return math.Min(1, 2*math.Exp(-lchoose(n1+n2, n1)))
}
