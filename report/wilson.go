package report

import (
	"math"

	"bench/internal/record/slo"
)

// z95 is the standard normal quantile for a two-sided 95 % interval,
// qnorm(0.975).
const z95 = 1.959963984540054

// Wilson is the 95 % Wilson score interval of k successes in n trials
// (R's prop.test(k, n, correct = FALSE)$conf.int; slo.WilsonZ at z 1.96).
// n must be positive.
func Wilson(k, n int) (lo, hi float64) { return wilson(float64(k), float64(n)) }

// wilson is Wilson over real counts: how an interval would look with the
// same rate and more cells (settle).
func wilson(k, n float64) (lo, hi float64) { return slo.WilsonZ(k, n, z95) }

// CI is a 95 % interval as written to summary.json and tiers.json: [lo, hi]
// rounded outward to 4 decimals, so a written interval never looks
// narrower than the one the verdicts were taken on.
type CI [2]float64

// ci is the written interval of k out of n, nil when n is 0.
func ci(k, n int) *CI {
	if n <= 0 {
		return nil
	}
	if n < len(smallCIs) && k >= 0 && k <= n {
		return &smallCIs[n][k]
	}
	c := newCI(k, n)
	return &c
}

// newCI is the written interval of k out of n, n > 0.
func newCI(k, n int) CI {
	lo, hi := Wilson(k, n)
	return CI{math.Floor(lo*1e4) / 1e4, math.Ceil(hi*1e4) / 1e4}
}

// smallCIs are the intervals of k out of n for n below 8, made once and
// shared: a run of very many groups of a cell or a few (100,000 in the
// report benchmark) then holds eight of them, not one a group for each
// interval. Nothing writes an interval through its pointer.
var smallCIs = func() (t [8][]CI) {
	for n := 1; n < len(t); n++ {
		t[n] = make([]CI, n+1)
		for k := range t[n] {
			t[n][k] = newCI(k, n)
		}
	}
	return t
}()

// Confidence of a tier: firm when the tool-use success interval lies
// inside the tier's band, borderline when it reaches another tier.
const (
	Firm       = "firm"
	Borderline = "borderline"
)

// band is a tier's range of tool-use success: [lo, hi), hi inclusive for
// Tier 1.
func band(tier string) (lo, hi float64) {
	switch tier {
	case Tier1:
		return Tier1Min, 1
	case Tier2:
		return Tier2Min, Tier1Min
	}
	return 0, Tier2Min
}

// inside says whether the interval of k out of n lies inside the tier's
// band (the verdict on the unrounded bounds).
func inside(tier string, k, n float64) bool {
	lo, hi := wilson(k, n)
	blo, bhi := band(tier)
	if tier == Tier1 {
		return lo >= blo
	}
	if tier == Tier3 {
		return hi < bhi
	}
	return lo >= blo && hi < bhi
}

// maxSettle bounds the search for repetitions that would settle a
// borderline tier.
const maxSettle = 1000

// settle is about how many more repetitions would make a borderline tier
// firm if the rate stayed as it is: with reps repetitions giving n cells,
// each one more adds n/reps cells. 0 when it is firm already; -1 when no
// number up to maxSettle does (a rate on or next to a band's edge).
func settle(tier string, k, n, reps int) int {
	if n == 0 || reps < 1 {
		return -1
	}
	if inside(tier, float64(k), float64(n)) {
		return 0
	}
	p := float64(k) / float64(n)
	blo, bhi := band(tier)
	if p < blo || (p >= bhi && tier != Tier1) || p == blo && tier != Tier3 {
		return -1 // the rate itself sits on an edge: more cells cannot help
	}
	per := float64(n) / float64(reps)
	for more := 1; more <= maxSettle; more++ {
		m := per * float64(reps+more)
		if inside(tier, p*m, m) {
			return more
		}
	}
	return -1
}
