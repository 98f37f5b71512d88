package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// MaxAbs is the largest magnitude a sample value may have. Beyond it the
// difference of two values could overflow to ±Inf and poison a
// Hodges-Lehmann estimate; no latency or throughput comes near it.
const MaxAbs = 1e300

// ErrEmpty reports a sample with no values where a test needs at least one.
var ErrEmpty = errors.New("empty sample")

// ValueError reports a sample value that cannot be used: NaN, ±Inf, or
// beyond ±MaxAbs. Sample names the argument ("base", "cur", "x", "y") and
// Index its position, so the caller can point at the record.
type ValueError struct {
	Sample string
	Index  int
	Value  float64
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%s[%d] = %v: values must be finite and within ±%g", e.Sample, e.Index, e.Value, MaxAbs)
}

// check rejects a value the statistics cannot rank or subtract.
func check(name string, xs []float64) error {
	for i, v := range xs {
		if math.IsNaN(v) || v > MaxAbs || v < -MaxAbs {
			return &ValueError{Sample: name, Index: i, Value: v}
		}
	}
	return nil
}

// checkNonEmpty is check plus a named ErrEmpty for an empty sample.
func checkNonEmpty(name string, xs []float64) error {
	if len(xs) == 0 {
		return fmt.Errorf("%s: %w", name, ErrEmpty)
	}
	return check(name, xs)
}

// sortedCopy returns xs sorted ascending without touching the caller's slice.
func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// Median returns the sample median: the middle value, or the mean of the
// two middle values for an even count (R's median). It returns NaN for an
// empty sample or one that holds a NaN, the only results that say "no
// median"; callers that encode results use Comparison, which never holds
// NaN. xs is not modified.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	for _, v := range xs {
		if math.IsNaN(v) {
			return math.NaN()
		}
	}
	return sortedMedian(sortedCopy(xs))
}

// sortedMedian is Median of an already sorted, NaN-free, non-empty slice.
func sortedMedian(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return mid(s[n/2-1], s[n/2])
}

// mid is (a+b)/2 written so that it cannot overflow; for normal numbers it
// rounds exactly as (a+b)/2 does, since halving is exact.
func mid(a, b float64) float64 {
	if a == b {
		return a
	}
	return a/2 + b/2
}

// RobustSD is 1.4826 times the median absolute deviation of xs from their
// median: the standard deviation for normal data, unmoved by a few
// outliers (one odd night among ten). 0 for fewer than two values. xs is
// not modified.
func RobustSD(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := Median(xs)
	dev := make([]float64, len(xs))
	for i, v := range xs {
		dev[i] = math.Abs(v - m)
	}
	return 1.4826 * Median(dev)
}
