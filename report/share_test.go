package report

import "testing"

// TestSharedFigures checks the shared figures are the ones computed apart:
// a one-cell group's percentiles are one number, distinct values stay
// distinct, and the small-n interval table is Wilson's interval.
func TestSharedFigures(t *testing.T) {
	one := stats([]float64{42.5})
	if one.P50 != one.P95 || one.P95 != one.P99 || one.P99 != one.Mean || *one.Mean != 42.5 {
		t.Errorf("one value: %v %v %v %v, want one shared 42.5", one.P50, one.P95, one.P99, one.Mean)
	}
	two := stats([]int32{10, 30})
	if *two.P50 != 20 || *two.P95 != 29 || *two.P99 != 29.8 || *two.Mean != 20 || two.P50 != two.Mean || two.P50 == two.P95 {
		t.Errorf("10, 30: p50 %v p95 %v p99 %v mean %v", *two.P50, *two.P95, *two.P99, *two.Mean)
	}
	if *rate(3, 3) != 1 || *rate(0, 3) != 0 || *rate(1, 4) != 0.25 || rate(1, 0) != nil {
		t.Error("rate: wrong value")
	}
	for n := 1; n < 12; n++ {
		for k := 0; k <= n; k++ {
			if got, want := *ci(k, n), newCI(k, n); got != want {
				t.Errorf("ci(%d, %d) = %v, want %v", k, n, got, want)
			}
		}
	}
	if ci(0, 0) != nil {
		t.Error("ci(0, 0) not nil")
	}
}
