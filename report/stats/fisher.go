package stats

import (
	"fmt"
	"math"
)

// fisherRelErr is R's tolerance for "no more likely than the observed
// table": fisher.test keeps tables whose probability is at most the
// observed one times 1 + 1e-7, so that tables of equal probability count
// even when rounding makes them differ in the last bits.
const fisherRelErr = 1 + 1e-7

// FisherExact returns the two-sided p-value of Fisher's exact test on the
// 2x2 table
//
//	a b
//	c d
//
// (for bench: rows base and new, columns pass and fail). With the margins
// fixed, the p-value is the sum of the probabilities of every table no
// more likely than the observed one, R's convention
// (fisher.test(matrix(c(a, c, b, d), 2))$p.value). A table with an empty
// row or column gives 1. Counts must not be negative.
func FisherExact(a, b, c, d int) (float64, error) {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return 0, fmt.Errorf("fisher table [[%d %d] [%d %d]]: counts must not be negative", a, b, c, d)
	}
	m := a + c // first column
	n := b + d // second column
	k := a + b // first row
	lo := max(0, k-n)
	hi := min(k, m)
	if lo == hi {
		return 1, nil
	}
	// Hypergeometric log-probabilities of a over its support; the common
	// term log C(m+n, k) cancels when normalising.
	logp := make([]float64, hi-lo+1)
	top := math.Inf(-1)
	for s := lo; s <= hi; s++ {
		v := lchoose(m, s) + lchoose(n, k-s)
		logp[s-lo] = v
		top = math.Max(top, v)
	}
	var total float64
	for i, v := range logp {
		logp[i] = math.Exp(v - top)
		total += logp[i]
	}
	limit := logp[a-lo] * fisherRelErr
	var p float64
	for _, v := range logp {
		if v <= limit {
			p += v
		}
	}
	return math.Min(1, p/total), nil
}
