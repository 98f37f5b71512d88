package report

import (
	"math"
	"testing"
)

// The Wilson bounds against a reference computed apart from this code: the
// roots of (n + z²)p² − (2k + z²)p + k²/n = 0 (the interval R's
// prop.test(k, n, correct = FALSE) gives), solved in Python's decimal
// arithmetic at 50 digits with z = 1.959963984540054, the double of
// qnorm(0.975):
//
//	a = n + z*z; b = -(2*k + z*z); c = k*k/n
//	lo, hi = (-b - sqrt(b*b - 4*a*c)) / (2*a), (-b + sqrt(b*b - 4*a*c)) / (2*a)
func TestWilsonReference(t *testing.T) {
	ref := []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 1, 0.000000000000000, 0.793450685622763},
		{1, 1, 0.206549314377237, 1.000000000000000},
		{0, 10, 0.000000000000000, 0.277532799862889},
		{10, 10, 0.722467200137111, 1.000000000000000},
		{27, 33, 0.656117683653301, 0.913892317910593},
		{26, 33, 0.622483550078493, 0.893239784669792},
		{9, 11, 0.523019438039156, 0.948632310253915},
		{13, 13, 0.771904627645802, 1.000000000000000},
		{16, 16, 0.806392319465564, 1.000000000000000},
		{5, 7, 0.358934451832619, 0.917781075995943},
		{1, 2, 0.094531205734231, 0.905468794265769},
		{50, 100, 0.403831530365996, 0.596168469634004},
		{80, 100, 0.711170834406841, 0.866633066668967},
		{400, 500, 0.762710894694826, 0.832714501028243},
		{3, 200, 0.005114237793258, 0.043165728792690},
	}
	for _, r := range ref {
		lo, hi := Wilson(r.k, r.n)
		if math.Abs(lo-r.lo) > 1e-9 || math.Abs(hi-r.hi) > 1e-9 {
			t.Errorf("Wilson(%d, %d) = [%.15f, %.15f], want [%.15f, %.15f]", r.k, r.n, lo, hi, r.lo, r.hi)
		}
		// The written form rounds outward to 4 decimals.
		c := ci(r.k, r.n)
		if c[0] > r.lo || c[0] < r.lo-1e-4 || c[1] < r.hi || c[1] > r.hi+1e-4 {
			t.Errorf("ci(%d, %d) = %v, not [%v, %v] rounded outward", r.k, r.n, *c, r.lo, r.hi)
		}
	}
	if ci(0, 0) != nil {
		t.Error("no cells, no interval")
	}
}

// A tier is firm when its interval lies inside the tier's band; a
// borderline one says how many more repetitions at the same rate would
// settle it (the counts computed by the same search over the reference
// bounds above, in Python's decimal arithmetic).
func TestTierConfidence(t *testing.T) {
	cases := []struct {
		tier       string
		k, n, reps int
		firm       bool
		more       int
	}{
		{Tier1, 27, 33, 3, false, 167}, // the 81.8 %: [65.6 %, 91.4 %]
		{Tier1, 9, 11, 1, false, 169},
		{Tier1, 13, 13, 1, false, 1}, // even 13 of 13 is not firm
		{Tier1, 16, 16, 1, true, 0},  // 16 of 16 is
		{Tier1, 11, 13, 1, false, 22},
		{Tier1, 33, 39, 3, false, 20},
		{Tier2, 20, 30, 3, false, 1},
		{Tier2, 7, 10, 1, false, 6},
		{Tier3, 10, 40, 2, true, 0},
		{Tier3, 4, 10, 1, false, 9},
		{Tier1, 80, 100, 1, false, -1}, // exactly 80 %: no number of repetitions settles it
		{Tier2, 5, 10, 1, false, -1},   // exactly 50 %
	}
	for _, c := range cases {
		if got := inside(c.tier, float64(c.k), float64(c.n)); got != c.firm {
			t.Errorf("%s %d/%d: firm %v, want %v", c.tier, c.k, c.n, got, c.firm)
		}
		if got := settle(c.tier, c.k, c.n, c.reps); got != c.more {
			t.Errorf("%s %d/%d over %d repetitions: %d more to settle, want %d", c.tier, c.k, c.n, c.reps, got, c.more)
		}
	}
}
