package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// One stratum is the plain two-sample comparison.
func TestCompareStrataOne(t *testing.T) {
	b, c := around(100, 0.1, 8), around(130, 0.1, 9)
	got, err := CompareStrata([]Stratum{{b, c}})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := CompareSamples(b, c)
	want.Strata = 1
	if got.P != want.P || got.Shift != want.Shift || got.Test != MethodExact || got.Strata != 1 {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// vanElterenRef is the textbook form, written apart from the package's:
// within each stratum the pooled values are ranked (mid-ranks for ties),
// W_i is the rank sum of cur, and V = Σ W_i/(n_i+1) has mean
// Σ m_i/2 and variance Σ m_i k_i (n_i+1 - Σ(t³-t)/(n_i(n_i-1))) / (12 (n_i+1)²).
func vanElterenRef(strata []Stratum) (v, mean, variance float64) {
	for _, s := range strata {
		type obs struct {
			x   float64
			cur bool
		}
		var pool []obs
		for _, x := range s.Base {
			pool = append(pool, obs{x, false})
		}
		for _, x := range s.Cur {
			pool = append(pool, obs{x, true})
		}
		sort.Slice(pool, func(i, j int) bool { return pool[i].x < pool[j].x })
		n := float64(len(pool))
		m, k := float64(len(s.Cur)), float64(len(s.Base))
		var w, ties float64
		for i := 0; i < len(pool); {
			j := i
			for j < len(pool) && pool[j].x == pool[i].x {
				j++
			}
			rank := float64(i+1+j) / 2
			for q := i; q < j; q++ {
				if pool[q].cur {
					w += rank
				}
			}
			tt := float64(j - i)
			ties += tt*tt*tt - tt
			i = j
		}
		v += w / (n + 1)
		mean += m / 2
		variance += m * k * (n + 1 - ties/(n*(n-1))) / 12 / ((n + 1) * (n + 1))
	}
	return
}

// The statistic and its p-value against the textbook rank-sum form, on
// strata of mixed sizes, with and without ties.
func TestVanElterenReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for trial := range 200 {
		strata := make([]Stratum, 2+r.IntN(6))
		for i := range strata {
			med := 20 * math.Pow(100, r.Float64())
			draw := func(n int, f float64) []float64 {
				xs := make([]float64, n)
				for j := range xs {
					xs[j] = med * f * math.Exp(0.3*r.NormFloat64())
					if trial%2 == 0 {
						xs[j] = math.Round(xs[j]) // ties
					}
				}
				return xs
			}
			strata[i] = Stratum{draw(1+r.IntN(8), 1), draw(1+r.IntN(8), 1.1)}
		}
		c, err := CompareStrata(strata)
		if err != nil {
			t.Fatal(err)
		}
		v, mean, variance := vanElterenRef(strata)
		// U = W - m(m+1)/2, so V differs from Σ w_i U_i by a constant
		// that the mean carries too: compare the centred values.
		corr := 0.0
		for _, s := range strata {
			corr = math.Max(corr, 0.5/float64(len(s.Base)+len(s.Cur)+1))
		}
		want := 1.0
		if variance > 0 {
			if z := math.Abs(v-mean) - corr; z > 0 {
				want = math.Erfc(z / math.Sqrt(variance) / math.Sqrt2)
			}
		}
		if math.Abs(c.P-want) > 1e-12 {
			t.Fatalf("trial %d: p %v, textbook form %v", trial, c.P, want)
		}
		if c.Test != MethodVanElteren || c.Strata != len(strata) {
			t.Fatalf("test %q strata %d", c.Test, c.Strata)
		}
	}
}

// The normal approximation with its continuity correction against the
// exact permutation distribution (every split within each stratum
// enumerated), on small strata of equal and of mixed sizes: the
// approximate p-value stays close, and on the conservative side where
// the exact one is small.
func TestVanElterenExactPermutation(t *testing.T) {
	cases := [][]Stratum{
		{{[]float64{1, 2}, []float64{3, 4}}, {[]float64{10, 11}, []float64{12, 13}}, {[]float64{5, 7}, []float64{6, 8}}},
		{{[]float64{1}, []float64{2}}, {[]float64{3}, []float64{4}}, {[]float64{5}, []float64{6}}, {[]float64{7}, []float64{8}}, {[]float64{9}, []float64{10}}},
		{{[]float64{1, 2, 3}, []float64{4, 5}}, {[]float64{10}, []float64{12, 13, 14}}, {[]float64{5, 9}, []float64{6}}},
		{{[]float64{4, 1, 2}, []float64{3, 5, 6}}, {[]float64{2, 3}, []float64{1, 4}}},
	}
	for ci, strata := range cases {
		c, _ := CompareStrata(strata)
		exact := exactStratifiedP(strata)
		t.Logf("case %d: approximate p %.4f, exact permutation p %.4f", ci, c.P, exact)
		if math.Abs(c.P-exact) > 0.1 || exact <= 0.1 && c.P > exact+0.05 {
			t.Errorf("case %d: approximate p %.4f far from the exact %.4f", ci, c.P, exact)
		}
		if exact <= 0.1 && c.P < exact*0.9 {
			t.Errorf("case %d: approximate p %.4f below the exact %.4f: anticonservative", ci, c.P, exact)
		}
	}
	// Five prompts of one sample a side, all slower: the sign test's
	// exact p is 2/32 = 0.0625; the continuity correction keeps the
	// approximation near it (0.0736), where without it it would be 0.025.
	c, _ := CompareStrata(cases[1])
	if math.Abs(c.P-0.0736) > 0.001 {
		t.Errorf("5 prompts, 1+1, all slower: p %.4f, want 0.0736", c.P)
	}
	if math.Abs(c.SmallestP-c.P) > 1e-12 {
		t.Errorf("smallest p %v: the most extreme outcome has p %v", c.SmallestP, c.P)
	}
}

// exactStratifiedP enumerates every assignment of each stratum's pooled
// values to base and cur (sizes kept) and returns the share whose
// weighted statistic is at least as far from its mean as the observed.
func exactStratifiedP(strata []Stratum) float64 {
	type split struct{ v float64 }
	var dists [][]float64 // per stratum: weighted U of every split
	obs, mean := 0.0, 0.0
	for _, s := range strata {
		pool := append(append([]float64{}, s.Base...), s.Cur...)
		n, m := len(pool), len(s.Cur)
		w := 1 / float64(n+1)
		u := func(cur []bool) float64 {
			var x float64
			for i := range pool {
				for j := range pool {
					if cur[i] && !cur[j] {
						switch {
						case pool[i] > pool[j]:
							x++
						case pool[i] == pool[j]:
							x += 0.5
						}
					}
				}
			}
			return w * x
		}
		var vals []float64
		for mask := 0; mask < 1<<n; mask++ {
			cur := make([]bool, n)
			cnt := 0
			for i := range n {
				if mask&(1<<i) != 0 {
					cur[i] = true
					cnt++
				}
			}
			if cnt == m {
				vals = append(vals, u(cur))
			}
		}
		dists = append(dists, vals)
		cur := make([]bool, n)
		for i := len(s.Base); i < n; i++ {
			cur[i] = true
		}
		obs += u(cur)
		mean += w * float64(m*len(s.Base)) / 2
	}
	// Convolve by enumeration (the cases are small).
	sums := []float64{0}
	for _, d := range dists {
		var next []float64
		for _, a := range sums {
			for _, b := range d {
				next = append(next, a+b)
			}
		}
		sums = next
	}
	far := 0
	for _, s := range sums {
		if math.Abs(s-mean) >= math.Abs(obs-mean)-1e-9 {
			far++
		}
	}
	return float64(far) / float64(len(sums))
}

// The stratified shift against a brute-force weighted median of every
// within-stratum pairwise log difference, and a common shift recovered
// whatever the strata's sizes and medians.
func TestStratifiedShift(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	for trial := range 100 {
		strata := make([]Stratum, 2+r.IntN(5))
		type pair struct{ d, w float64 }
		var pairs []pair
		for i := range strata {
			med := 20 * math.Pow(200, r.Float64())
			draw := func(n int, f float64) []float64 {
				xs := make([]float64, n)
				for j := range xs {
					xs[j] = med * f * math.Exp(0.2*r.NormFloat64())
				}
				return xs
			}
			s := Stratum{draw(1+r.IntN(9), 1), draw(1+r.IntN(9), 1.3)}
			strata[i] = s
			w := 1 / float64(len(s.Base)+len(s.Cur)+1)
			for _, b := range s.Base {
				for _, c := range s.Cur {
					pairs = append(pairs, pair{math.Log(c) - math.Log(b), w})
				}
			}
		}
		sort.Slice(pairs, func(i, j int) bool { return pairs[i].d < pairs[j].d })
		var total float64
		for _, p := range pairs {
			total += p.w
		}
		// Weighted median: the first pair reaching half the weight, and
		// the first passing it; their middle.
		var acc float64
		lo, hi := math.NaN(), math.NaN()
		for _, p := range pairs {
			acc += p.w
			if math.IsNaN(lo) && acc >= total/2-1e-9 {
				lo = p.d
			}
			if math.IsNaN(hi) && acc > total/2+1e-9 {
				hi = p.d
			}
		}
		want := (lo + hi) / 2
		c, err := CompareStrata(strata)
		if err != nil {
			t.Fatal(err)
		}
		got := math.Log1p(c.ShiftPct / 100)
		if math.Abs(got-want) > 1e-9 {
			t.Fatalf("trial %d: log shift %v, brute force %v", trial, got, want)
		}
		if !(c.Shift.Lo <= c.Shift.Estimate && c.Shift.Estimate <= c.Shift.Hi) {
			t.Fatalf("trial %d: interval %+v does not hold the estimate", trial, c.Shift)
		}
	}
}

// A 30 % slower server on every prompt: strata of different sizes and
// medians 20 ms to 4 s; the estimate finds 30 % and the interval holds it
// in about 95 % of trials.
func TestStratifiedShiftCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 4))
	const trials = 400
	covered := 0
	var ests []float64
	for range trials {
		var strata []Stratum
		for range 6 {
			m := latencyModel{median: 20 * math.Pow(200, r.Float64()), sigma: 0.15}
			strata = append(strata, Stratum{m.draw(r, 3+r.IntN(6), 1), m.draw(r, 3+r.IntN(6), 1.3)})
		}
		c, err := CompareStrata(strata)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := c.Shift.Lo/c.MedianBase, c.Shift.Hi/c.MedianBase
		if lo <= 0.3 && 0.3 <= hi {
			covered++
		}
		ests = append(ests, c.ShiftPct)
	}
	rate := float64(covered) / trials
	med := Median(ests)
	t.Logf("30%% common shift over 6 prompts: median estimate %+.1f%%, the 95%% interval covers it in %.3f of %d trials", med, rate, trials)
	if math.Abs(med-30) > 3 {
		t.Errorf("median estimate %+.1f%%, want about +30%%", med)
	}
	if rate < 0.92 {
		t.Errorf("coverage %.3f, want about 0.95", rate)
	}
}

// The stratified test holds its level where the pooled test does not:
// prompts of very different speeds, each unchanged, but with a different
// number of samples on each side (a long prompt gained samples it lacked
// before). Pooling every sample calls that a change; the stratified test
// does not.
func TestStrataMixChangeLevel(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	const trials = 1000
	var strat, pooled int
	for range trials {
		fast := latencyModel{median: 100, sigma: 0.2}
		slow := latencyModel{median: 1000, sigma: 0.2}
		strata := []Stratum{
			{fast.draw(r, 8, 1), fast.draw(r, 2, 1)},
			{slow.draw(r, 2, 1), slow.draw(r, 8, 1)},
		}
		c, _ := CompareStrata(strata)
		if c.P <= 0.05 {
			strat++
		}
		var b, n []float64
		for _, s := range strata {
			b = append(b, s.Base...)
			n = append(n, s.Cur...)
		}
		p, _ := CompareSamples(b, n)
		if p.P <= 0.05 {
			pooled++
		}
	}
	sr, pr := float64(strat)/trials, float64(pooled)/trials
	t.Logf("mix change, nothing slower: stratified test significant in %.3f, pooled test in %.3f of %d", sr, pr, trials)
	if sr > 0.05+0.014 { // two standard errors of slack
		t.Errorf("stratified false-alarm rate %.3f > 0.05", sr)
	}
	if pr < 0.5 {
		t.Errorf("pooled test significant in only %.3f: the case does not show the mix effect", pr)
	}
}

// Bad input is refused with the stratum named.
func TestCompareStrataBadInput(t *testing.T) {
	if _, err := CompareStrata([]Stratum{{[]float64{1}, []float64{2}}, {nil, []float64{2}}}); err == nil {
		t.Error("an empty side was accepted")
	}
	if _, err := CompareStrata([]Stratum{{[]float64{1}, []float64{2}}, {[]float64{math.NaN()}, []float64{2}}}); err == nil {
		t.Error("NaN was accepted")
	}
	c, err := CompareStrata([]Stratum{{[]float64{0, 0, 0}, []float64{0, 1, 0}}, {[]float64{5, 5}, []float64{5, 5}}})
	if err != nil || math.IsNaN(c.ShiftPct) || math.IsInf(c.ShiftPct, 0) {
		t.Errorf("zeros: %+v %v", c, err)
	}
}
