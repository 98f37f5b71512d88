package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// McNemarExact returns the two-sided p-value of the exact McNemar test on
// matched pass/fail outcomes: of the pairs whose outcome differs, b went
// one way (pass in the base run, fail in the new) and c the other. Under
// the null hypothesis that neither way is more likely, b is binomial
// (b+c, 1/2), and the p-value is twice the smaller tail, capped at 1: R's
// binom.test(b, b + c)$p.value, the exact form of mcnemar.test. The pairs
// whose outcome is the same carry no information on the change and do
// not enter, which is where the power over an unpaired test of the two
// rates comes from: a prompt every model passes (or fails) in both runs
// adds nothing to the noise. b = c = 0 gives 1. The binomial tail is
// gonum's (distuv.Binomial). Counts must not be negative.
func McNemarExact(b, c int) (float64, error) {
	if b < 0 || c < 0 {
		return 0, fmt.Errorf("mcnemar discordant pairs %d and %d: counts must not be negative", b, c)
	}
	n := b + c
	if n == 0 || b == c {
		return 1, nil
	}
	tail := distuv.Binomial{N: float64(n), P: 0.5}.CDF(float64(min(b, c)))
	return math.Min(1, 2*tail), nil
}
