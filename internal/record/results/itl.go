package results

import (
	"math"
	"slices"
	"sort"
	"time"
)

// ITL is a cell's inter-token latency: the gaps between its output
// deltas, summarised (exact percentiles of the cell's own gaps, in ms)
// and kept whole in a compact form (Hist) from which a group's or a
// stage's percentiles are computed by merging cells, within ITLRelErr.
type ITL struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
	// Hist is every gap in a logarithmic histogram, as pairs of bucket and
	// count, buckets ascending: bucket 0 holds the gaps under a
	// microsecond (deltas that came in one read), bucket k ≥ 1 the gaps g
	// (µs) with ITLGamma^(k-2) < g ≤ ITLGamma^(k-1).
	Hist []int64 `json:"hist"`
}

// The ITL histogram's buckets: each spans a factor ITLGamma, so a
// bucket's midpoint (ITLValue) is within ITLRelErr of every gap in it
// (DDSketch's mapping). Gaps are counted in microseconds.
const (
	ITLRelErr = 0.01
	ITLGamma  = (1 + ITLRelErr) / (1 - ITLRelErr)
)

var logGamma = math.Log(ITLGamma)

// ITLBucket is the histogram bucket of a gap.
func ITLBucket(d time.Duration) int64 {
	us := float64(d) / float64(time.Microsecond)
	if us < 1 {
		return 0
	}
	return 1 + int64(math.Ceil(math.Log(us)/logGamma-1e-9))
}

// ITLValue is the value (ms) a bucket stands for: 0 for bucket 0, the
// midpoint that is within ITLRelErr of its gaps otherwise.
func ITLValue(k int64) float64 {
	if k <= 0 {
		return 0
	}
	return 2 * math.Pow(ITLGamma, float64(k-1)) / (ITLGamma + 1) / 1000
}

// NewITL summarises gaps (sorted in place); nil when there are none.
func NewITL(gaps []time.Duration) *ITL {
	if len(gaps) == 0 {
		return nil
	}
	slices.Sort(gaps)
	q := func(p float64) float64 {
		h := float64(len(gaps)-1) * p
		lo := int(math.Floor(h))
		v := float64(gaps[lo])
		if lo < len(gaps)-1 {
			v += (h - float64(lo)) * float64(gaps[lo+1]-gaps[lo])
		}
		return math.Round(v/1e3) / 1e3 // ms, to the µs
	}
	it := &ITL{N: len(gaps), P50: q(0.5), P95: q(0.95), P99: q(0.99), Max: q(1)}
	for _, g := range gaps {
		k := ITLBucket(g)
		if n := len(it.Hist); n > 0 && it.Hist[n-2] == k {
			it.Hist[n-1]++
			continue
		}
		it.Hist = append(it.Hist, k, 1)
	}
	return it
}

// ITLMerge merges cells' histograms: the gaps of a group or a stage.
type ITLMerge struct {
	counts map[int64]int64
	n      int64
}

// Add adds a cell's gaps; a malformed histogram is ignored.
func (m *ITLMerge) Add(it *ITL) {
	if it == nil || len(it.Hist)%2 != 0 {
		return
	}
	if m.counts == nil {
		m.counts = map[int64]int64{}
	}
	for i := 0; i < len(it.Hist); i += 2 {
		if c := it.Hist[i+1]; c > 0 {
			m.counts[it.Hist[i]] += c
			m.n += c
		}
	}
}

// N is how many gaps were added.
func (m *ITLMerge) N() int64 { return m.n }

// Quantile is the gap at nearest rank ceil(p·n) (ms), within ITLRelErr;
// NaN when there are none.
func (m *ITLMerge) Quantile(p float64) float64 {
	if m.n == 0 {
		return math.NaN()
	}
	keys := make([]int64, 0, len(m.counts))
	for k := range m.counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	rank := max(int64(math.Ceil(p*float64(m.n))), 1)
	var seen int64
	for _, k := range keys {
		seen += m.counts[k]
		if seen >= rank {
			return ITLValue(k)
		}
	}
	return ITLValue(keys[len(keys)-1])
}

// Mean is the gaps' mean (ms) from the bucket values, within ITLRelErr.
func (m *ITLMerge) Mean() float64 {
	if m.n == 0 {
		return math.NaN()
	}
	var sum float64
	for k, c := range m.counts {
		sum += ITLValue(k) * float64(c)
	}
	return sum / float64(m.n)
}
