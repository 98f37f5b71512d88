package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	moremath "github.com/aclements/go-moremath/stats"
)

// These tests check the hand-written parts against independent
// computations: the U test against go-moremath's, which benchstat
// (golang.org/x/perf/benchmath) runs, and the shift against brute force
// over all pairwise differences.

func randSample(r *rand.Rand, n int, shift float64, quantum float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		v := math.Exp(r.NormFloat64()*0.3+4) + shift
		if quantum > 0 {
			v = math.Round(v/quantum) * quantum
		}
		xs[i] = v
	}
	return xs
}

func TestUDistMatchesMoremath(t *testing.T) {
	for _, n := range [][2]int{{1, 1}, {1, 7}, {3, 3}, {4, 4}, {5, 10}, {10, 5}, {12, 9}, {20, 20}, {7, 31}} {
		cdf := uDist(n[0], n[1])
		d := moremath.UDist{N1: n[0], N2: n[1]}
		if len(cdf) != n[0]*n[1]+1 {
			t.Fatalf("%v: %d entries", n, len(cdf))
		}
		for u := range cdf {
			if want := d.CDF(float64(u)); !near(cdf[u], want, 1e-10) {
				t.Errorf("%v: P(U <= %d) = %.17g, go-moremath %.17g", n, u, cdf[u], want)
			}
		}
	}
}

func TestMannWhitneyMatchesMoremath(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	sizes := []int{1, 2, 3, 4, 5, 7, 10, 16, 25, 30, 49, 51, 80, 200}
	checked := 0
	for _, n1 := range sizes {
		for _, n2 := range sizes {
			// go-moremath's exact limit is inclusive (<= 50), R's and ours
			// exclusive (< 50); the sizes above avoid exactly 50.
			for _, quantum := range []float64{0, 5} {
				x := randSample(r, n1, 0, quantum)
				y := randSample(r, n2, 3, quantum)
				got, err := MannWhitney(x, y)
				if err != nil {
					t.Fatal(err)
				}
				want, err := moremath.MannWhitneyUTest(x, y, moremath.LocationDiffers)
				if err == moremath.ErrSamplesEqual {
					if got.P != 1 {
						t.Errorf("%d+%d all equal: p = %v, want 1", n1, n2, got.P)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if got.U != want.U {
					t.Errorf("%d+%d q%v: U = %v, go-moremath %v", n1, n2, quantum, got.U, want.U)
				}
				// With ties go-moremath computes the exact conditional
				// distribution up to 25 values; R and we use the normal
				// approximation. Elsewhere both must agree.
				if got.Exact || n1 > 25 || n2 > 25 {
					checked++
					if !near(got.P, want.P, 1e-9) {
						t.Errorf("%d+%d q%v: p = %.17g, go-moremath %.17g (exact %v)", n1, n2, quantum, got.P, want.P, got.Exact)
					}
				}
			}
		}
	}
	if checked < 200 {
		t.Errorf("only %d p-values compared", checked)
	}
}

// bruteShift lists every pairwise difference.
func bruteShift(base, cur []float64) []float64 {
	var d []float64
	for _, c := range cur {
		for _, b := range base {
			d = append(d, c-b)
		}
	}
	slices.Sort(d)
	return d
}

func TestKthMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, tc := range []struct {
		n1, n2  int
		quantum float64
	}{
		{100, 80, 0}, {80, 100, 0}, {70, 70, 1}, {300, 20, 0}, {20, 300, 0.5}, {90, 90, 10}, {65, 65, 1000},
	} {
		x := randSample(r, tc.n1, 0, tc.quantum)
		y := randSample(r, tc.n2, 0, tc.quantum)
		slices.Sort(x)
		slices.Sort(y)
		want := bruteShift(y, x)
		if len(want) <= smallPairs {
			t.Fatalf("%d pairs do not exercise the selection", len(want))
		}
		d := newDiffs(x, y)
		if d.all != nil {
			t.Fatal("selection path not taken")
		}
		step := max(1, len(want)/997)
		for k := 1; k <= len(want); k += step {
			if got := d.kth(k); got != want[k-1] {
				t.Fatalf("%+v: kth(%d) = %v, want %v", tc, k, got, want[k-1])
			}
		}
		for _, k := range []int{1, 2, len(want) / 2, len(want)/2 + 1, len(want) - 1, len(want)} {
			if got := d.kth(k); got != want[k-1] {
				t.Fatalf("%+v: kth(%d) = %v, want %v", tc, k, got, want[k-1])
			}
		}
	}
}

func TestHodgesLehmannBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial := 0; trial < 300; trial++ {
		n1, n2 := 1+r.IntN(90), 1+r.IntN(90)
		quantum := []float64{0, 1, 20}[trial%3]
		base := randSample(r, n1, 0, quantum)
		cur := randSample(r, n2, r.Float64()*20-10, quantum)
		s, err := HodgesLehmann(base, cur, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		d := bruteShift(base, cur)
		nn := len(d)
		want := d[nn/2]
		if nn%2 == 0 {
			want = (d[nn/2-1] + d[nn/2]) / 2
		}
		if !near(s.Estimate, want, 1e-12) {
			t.Fatalf("%d+%d: estimate %v, brute force %v", n1, n2, s.Estimate, want)
		}
		if !(s.Lo <= s.Estimate && s.Estimate <= s.Hi) || !slices.Contains(d, s.Lo) || !slices.Contains(d, s.Hi) {
			t.Fatalf("%d+%d: interval [%v, %v] around %v not made of pairwise differences", n1, n2, s.Lo, s.Hi, s.Estimate)
		}
		// The interval is symmetric in rank: D(k) and D(nn+1-k).
		k := slices.Index(d, s.Lo) + 1
		hiIdx := nn - k
		if d[hiIdx] != s.Hi {
			// Ties among differences can put the same value at several
			// ranks; accept any rank holding it.
			lastHi := slices.Index(d, s.Hi)
			if lastHi < 0 || d[hiIdx] != s.Hi && !(lastHi <= hiIdx) {
				t.Fatalf("%d+%d: ends at ranks %d and %d of %d", n1, n2, k, lastHi+1, nn)
			}
		}
	}
}

// An exact interval for continuous data covers the true shift with at
// least the stated probability; here it is checked by simulation.
func TestHodgesLehmannCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	const trials = 5000
	const shift = 7.5
	for _, n := range []int{5, 10, 30, 60} {
		covered := 0
		for i := 0; i < trials; i++ {
			base := randSample(r, n, 0, 0)
			cur := randSample(r, n, shift, 0)
			s, _ := HodgesLehmann(base, cur, 0.95)
			if s.Lo <= shift && shift <= s.Hi {
				covered++
			}
		}
		rate := float64(covered) / trials
		t.Logf("n=%d: 95%% interval covered the true shift in %.1f%% of %d trials", n, 100*rate, trials)
		// Binomial standard error at 0.95 over 5000 trials is 0.3 %;
		// allow three.
		if rate < 0.941 {
			t.Errorf("n=%d: coverage %.3f, want about 0.95 or more", n, rate)
		}
	}
}
