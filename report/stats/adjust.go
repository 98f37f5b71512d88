package stats

import (
	"cmp"
	"math"
	"slices"
)

// AdjustHolm returns Holm's (1979) step-down adjusted p-values, as R's
// p.adjust(p, "holm"): rejecting every hypothesis whose adjusted p-value is
// below alpha keeps the family-wise error rate (the chance of any false
// alarm in the family) at most alpha, whatever the dependence between the
// tests. NaN entries are kept as NaN and not counted in the family, as R
// does with NA. p is not modified.
func AdjustHolm(p []float64) []float64 {
	out, idx := adjustSetup(p, false)
	n := float64(len(idx))
	running := math.Inf(-1)
	for i, j := range idx {
		running = math.Max(running, (n-float64(i))*p[j])
		out[j] = math.Min(1, running)
	}
	return out
}

// AdjustBH returns Benjamini and Hochberg's (1995) step-up adjusted
// p-values, as R's p.adjust(p, "BH"): rejecting every hypothesis whose
// adjusted p-value is below alpha keeps the false discovery rate (the
// expected share of false alarms among the flagged) at most alpha for
// independent or positively dependent tests. It flags more than Holm but
// gives no bound on the chance of a single false alarm. NaN entries are
// handled as in AdjustHolm.
func AdjustBH(p []float64) []float64 {
	out, idx := adjustSetup(p, true)
	n := float64(len(idx))
	running := math.Inf(1)
	for r, j := range idx {
		rank := n - float64(r) // rank from the smallest p-value
		running = math.Min(running, n/rank*p[j])
		out[j] = math.Min(1, running)
	}
	return out
}

// adjustSetup returns the output slice, NaN where p is NaN, and the
// indexes of the other entries ordered by p-value (ascending, or
// descending when desc), ties kept in input order as R's order() does.
func adjustSetup(p []float64, desc bool) (out []float64, idx []int) {
	out = make([]float64, len(p))
	for i, v := range p {
		if math.IsNaN(v) {
			out[i] = math.NaN()
			continue
		}
		idx = append(idx, i)
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if desc {
			return cmp.Compare(p[b], p[a])
		}
		return cmp.Compare(p[a], p[b])
	})
	return out, idx
}
