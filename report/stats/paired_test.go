package stats

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// The paired example of R's ?wilcox.test (Hollander and Wolfe, 1973, p. 29
// f.): Hamilton depression scale factor IV of nine patients at the first
// (x) and second (y) visit after a tranquilizer. R prints V = 40 and, for
// alternative = "greater", p-value = 0.01953; the two-sided p-value is
// twice that, 0.0390625 (10 of the 512 sign patterns reach V >= 40).
var (
	hwPairedX = []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	hwPairedY = []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
)

func TestSignedRankReference(t *testing.T) {
	d := make([]float64, len(hwPairedX))
	for i := range d {
		d[i] = hwPairedX[i] - hwPairedY[i]
	}
	slices.Sort(d)
	sr := signedRank(d)
	if sr.v != 40 || !sr.exact || math.Abs(sr.p-0.0390625) > 1e-12 {
		t.Errorf("V = %v, p = %v, exact %v; R: V = 40, p = 0.0390625 (two-sided)", sr.v, sr.p, sr.exact)
	}
	if got := SmallestSignedRankP(9); got != 2.0/512 {
		t.Errorf("smallest p for 9 pairs %v, want 2/512", got)
	}
}

// bruteSignedRank enumerates the 2^n sign patterns of the ranks 1..n
// (no ties, no zeros): the exact two-sided p-value of V.
func bruteSignedRank(n int, v float64) float64 {
	total := float64(n * (n + 1) / 2)
	var le, ge int
	for mask := uint(0); mask < 1<<n; mask++ {
		s := 0
		for m := mask; m != 0; m &= m - 1 {
			s += bits.TrailingZeros(m) + 1
		}
		if float64(s) <= v {
			le++
		}
		if float64(s) >= v {
			ge++
		}
	}
	tail := float64(min(le, ge)) / float64(uint(1)<<n)
	_ = total
	return math.Min(1, 2*tail)
}

func TestSignedRankMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 7))
	for trial := 0; trial < 200; trial++ {
		n := 1 + r.IntN(14)
		d := make([]float64, n)
		for i := range d {
			d[i] = r.NormFloat64() + 0.3
		}
		slices.Sort(d)
		sr := signedRank(d)
		if want := bruteSignedRank(n, sr.v); !sr.exact || math.Abs(sr.p-want) > 1e-12 {
			t.Fatalf("n=%d V=%v: p %v (exact %v), enumeration %v", n, sr.v, sr.p, sr.exact, want)
		}
	}
}

// With ties or 50 pairs or more the normal approximation runs; for 60
// untied pairs its p-value is near the exact one (a permutation count
// is out of reach, so the exact tail comes from the table's recurrence,
// checked above against every sign pattern, extended to 60).
func TestSignedRankNormalNearExact(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 8))
	n := 60
	cdf := signedRankCDFs(n)[n]
	for trial := 0; trial < 20; trial++ {
		d := make([]float64, n)
		for i := range d {
			d[i] = r.NormFloat64() + 0.25
		}
		slices.Sort(d)
		sr := signedRank(d)
		v := int(sr.v)
		tail := cdf[v]
		if float64(v) > float64(n*(n+1))/4 {
			tail = cdf[n*(n+1)/2-v]
		}
		exact := math.Min(1, 2*tail)
		if sr.exact || math.Abs(sr.p-exact) > 0.003+0.03*exact {
			t.Errorf("V=%d: normal p %v, exact %v", v, sr.p, exact)
		}
	}
	// Ties take the normal branch with R's tie correction.
	tied := []float64{-2, -1, 1, 1, 1, 2, 2, 3, 3, 3}
	if sr := signedRank(tied); sr.exact || sr.tieSum != 60+24+24 || sr.method != MethodSignedRankNormal {
		t.Errorf("tied: %+v", sr)
	}
}

// bruteWalsh lists and sorts the Walsh averages.
func bruteWalsh(d []float64) []float64 {
	var w []float64
	for i := range d {
		for j := i; j < len(d); j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	slices.Sort(w)
	return w
}

func TestWalshKthMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 9))
	for trial := 0; trial < 300; trial++ {
		n := 1 + r.IntN(40)
		d := make([]float64, n)
		for i := range d {
			d[i] = math.Round(10*r.NormFloat64()) / 4 // ties too
		}
		slices.Sort(d)
		want := bruteWalsh(d)
		w := walsh{d: d}
		for _, k := range []int{1, len(want), 1 + r.IntN(len(want)), (len(want) + 1) / 2} {
			if got := w.kth(k); got != want[k-1] {
				t.Fatalf("n=%d k=%d: %v, brute force %v (d %v)", n, k, got, want[k-1], d)
			}
		}
	}
}

// The exact interval's ends are R's order statistics and its achieved
// confidence the exact one; on drawn pairs with a known centre it covers
// the truth at least that often.
func TestPairedShiftCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 10))
	covered, trials := 0, 2000
	for trial := 0; trial < trials; trial++ {
		n := 6 + r.IntN(20)
		base, cur := make([]float64, n), make([]float64, n)
		for i := range base {
			base[i] = 100 * math.Exp(0.2*r.NormFloat64())
			cur[i] = 1.2 * 100 * math.Exp(0.2*r.NormFloat64())
		}
		c, err := ComparePaired([]Stratum{{Base: base, Cur: cur}})
		if err != nil {
			t.Fatal(err)
		}
		if c.Shift.Confidence < 0.95 || c.Shift.Lo > c.Shift.Estimate || c.Shift.Hi < c.Shift.Estimate || c.Pairs != n {
			t.Fatalf("n=%d: %+v", n, c)
		}
		// The true log ratio is log(1.2): on the figures' scale the
		// ratio 0.2 of MedianBase.
		lo, hi := math.Log1p(c.Shift.Lo/c.MedianBase), math.Log1p(c.Shift.Hi/c.MedianBase)
		if lo <= math.Log(1.2) && math.Log(1.2) <= hi {
			covered++
		}
	}
	if rate := float64(covered) / float64(trials); rate < 0.94 {
		t.Errorf("95 %% interval covered the true ratio in %.3f of %d trials", rate, trials)
	}
}

func TestComparePairedInput(t *testing.T) {
	if _, err := ComparePaired([]Stratum{{Base: []float64{1, 2}, Cur: []float64{1}}}); err == nil {
		t.Error("unequal pairs accepted")
	}
	if _, err := ComparePaired([]Stratum{{Base: []float64{1, math.NaN()}, Cur: []float64{1, 2}}}); err == nil {
		t.Error("NaN accepted")
	}
	c, err := ComparePaired([]Stratum{{Base: []float64{5, 5, 5, 5}, Cur: []float64{5, 5, 5, 5}}})
	if err != nil || c.P != 1 || c.Shift.Estimate != 0 || c.Pairs != 4 {
		t.Errorf("equal pairs: %+v %v", c, err)
	}
	c, _ = ComparePaired(nil)
	if c.P != 1 || c.NBase != 0 || c.Test != "" {
		t.Errorf("no pairs: %+v", c)
	}
}

// The exact McNemar test is binom.test(b, b + c): R gives
// binom.test(2, 12)$p.value = 0.03857422 (158/4096), binom.test(0, 6) =
// 0.03125, binom.test(5, 9) = 1; checked here against the binomial sum.
func TestMcNemarExactReference(t *testing.T) {
	for _, c := range []struct {
		b, c int
		want float64
	}{{2, 10, 158.0 / 4096}, {0, 6, 0.03125}, {5, 4, 1}, {4, 4, 1}, {0, 0, 1}, {10, 2, 158.0 / 4096}, {0, 30, 2 * math.Ldexp(1, -30)}} {
		got, err := McNemarExact(c.b, c.c)
		if err != nil || math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("McNemar(%d, %d) = %v, want %v (%v)", c.b, c.c, got, c.want, err)
		}
	}
	// Against the binomial sum for every split of up to 40 pairs.
	for n := 1; n <= 40; n++ {
		for b := 0; b <= n; b++ {
			k := min(b, n-b)
			tail := 0.0
			for i := 0; i <= k; i++ {
				tail += math.Exp(lchoose(n, i) - float64(n)*math.Ln2)
			}
			want := math.Min(1, 2*tail)
			if 2*b == n {
				want = 1
			}
			if got, _ := McNemarExact(b, n-b); math.Abs(got-want) > 1e-9*want {
				t.Fatalf("McNemar(%d, %d) = %v, binomial sum %v", b, n-b, got, want)
			}
		}
	}
	if _, err := McNemarExact(-1, 2); err == nil {
		t.Error("negative count accepted")
	}
}
