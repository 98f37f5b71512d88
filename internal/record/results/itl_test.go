package results

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// A group's ITL percentiles from merged histograms are within ITLRelErr
// of the exact percentiles (nearest rank) of all the cells' gaps.
func TestITLMergeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var all []time.Duration
	var m ITLMerge
	for cell := 0; cell < 200; cell++ {
		var gaps []time.Duration
		for range 1 + rng.IntN(300) {
			var g time.Duration
			switch rng.IntN(10) {
			case 0:
				g = 0 // deltas of one read
			default:
				g = time.Duration(rng.ExpFloat64() * float64(5*time.Millisecond))
			}
			gaps = append(gaps, g)
		}
		all = append(all, gaps...)
		m.Add(NewITL(slices.Clone(gaps)))
	}
	slices.Sort(all)
	if m.N() != int64(len(all)) {
		t.Fatalf("merged %d gaps of %d", m.N(), len(all))
	}
	for _, p := range []float64{0.05, 0.5, 0.9, 0.95, 0.99, 0.999, 1} {
		exact := float64(all[max(int(math.Ceil(p*float64(len(all))))-1, 0)]) / 1e6
		got := m.Quantile(p)
		// Gaps under a microsecond are 0 in the histogram.
		if exact < 0.001 {
			if got != 0 {
				t.Errorf("p%g = %g, want 0", p*100, got)
			}
			continue
		}
		if math.Abs(got-exact) > ITLRelErr*exact+1e-9 {
			t.Errorf("p%g = %.6f ms, exact %.6f ms: off by more than %g", p*100, got, exact, ITLRelErr)
		}
	}
}

// A cell's own percentiles are exact, and its histogram holds every gap.
func TestNewITL(t *testing.T) {
	it := NewITL([]time.Duration{4 * time.Millisecond, 0, 2 * time.Millisecond, 6 * time.Millisecond, 5 * time.Millisecond})
	if it.N != 5 || it.P50 != 4 || it.Max != 6 || math.Abs(it.P95-5.8) > 1e-9 {
		t.Errorf("itl = %+v", it)
	}
	var n int64
	for i := 1; i < len(it.Hist); i += 2 {
		n += it.Hist[i]
	}
	if n != 5 || it.Hist[0] != 0 || it.Hist[1] != 1 {
		t.Errorf("hist = %v", it.Hist)
	}
	if NewITL(nil) != nil {
		t.Error("no gaps gave an ITL")
	}
}

// The merge by slice gives what a map of every bucket gives (keys in
// order), with buckets far apart, below the first seen, negative or past
// any gap (a malformed file's) mixed in.
func TestITLMergeLikeAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		var m ITLMerge
		ref := map[int64]int64{}
		var n int64
		for range 1 + rng.IntN(20) {
			var hist []int64
			base := int64(300 + rng.IntN(800))
			for range rng.IntN(40) {
				k := base + int64(rng.IntN(200)) - 100
				switch rng.IntN(40) {
				case 0:
					k = -int64(rng.IntN(5)) - 1
				case 1:
					k = maxDenseBucket + int64(rng.IntN(1e6))
				case 2:
					k = int64(rng.IntN(maxDenseBucket))
				case 3:
					k = math.MaxInt64 - int64(rng.IntN(3))
				}
				c := int64(rng.IntN(5)) - 1 // none, negative and zero counts are not gaps
				hist = append(hist, k, c)
				if c > 0 {
					ref[k] += c
					n += c
				}
			}
			m.Add(&ITL{Hist: hist})
		}
		if m.N() != n {
			t.Fatalf("round %d: %d gaps, want %d", round, m.N(), n)
		}
		keys := make([]int64, 0, len(ref))
		for k := range ref {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, p := range []float64{0, 0.01, 0.25, 0.5, 0.9, 0.99, 1} {
			want := math.NaN()
			if n > 0 {
				rank, seen := max(int64(math.Ceil(p*float64(n))), 1), int64(0)
				for _, k := range keys {
					if seen += ref[k]; seen >= rank {
						want = ITLValue(k)
						break
					}
				}
			}
			if got := m.Quantile(p); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("round %d: p%g = %g, want %g", round, p, got, want)
			}
		}
		var sum float64
		for _, k := range keys {
			sum += ITLValue(k) * float64(ref[k])
		}
		if want, got := sum/float64(n), m.Mean(); n > 0 && got != want {
			t.Fatalf("round %d: mean %g, want %g", round, got, want)
		}
	}
}
