package slo

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// WilsonZ is the Wilson score interval of k successes in n trials at the
// normal quantile z (1.96 for 95 %, two-sided): the p whose score test
// does not reject, the roots of
//
//	(n + z²) p² − (2k + z²) p + k²/n = 0
//
// which stay inside [0, 1] and never collapse to a point at 0 or n
// successes, unlike the normal approximation. Counts may be real (how an
// interval would look with the same rate and more trials); n must be
// positive. The reports' tier intervals and the SLO search's attainment
// intervals are both this one.
func WilsonZ(k, n, z float64) (lo, hi float64) {
	p := k / n
	z2 := z * z
	den := 1 + z2/n
	center := (p + z2/(2*n)) / den
	half := z / den * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	lo, hi = center-half, center+half
	// At k = 0 or k = n one bound is exactly 0 or 1; rounding must not
	// push it past.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return max(lo, 0), min(hi, 1)
}

// ZFor is the normal quantile of a two-sided interval at confidence c
// (0.95 gives 1.96).
func ZFor(c float64) float64 { return distuv.UnitNormal.Quantile(1 - (1-c)/2) }
