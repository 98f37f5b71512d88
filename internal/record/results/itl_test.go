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
