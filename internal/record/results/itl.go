package results

import (
	"math"
	"slices"
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

// ITLMerge merges cells' histograms: the gaps of a group or a stage. The
// counts are by bucket in one slice from the lowest bucket seen (a
// group's gaps span a few hundred buckets: a map of them cost bench report
// a hash per bucket of every line, issue 31), buckets far from the others
// (a malformed histogram's) in a map.
type ITLMerge struct {
	lo    int64   // the bucket of dense[0]
	dense []int64 // counts of buckets lo, lo+1, ...
	far   map[int64]int64
	n     int64
}

const (
	// maxDenseBucket bounds the buckets counted in dense (a gap's bucket
	// of an hour is about 1,100), maxDenseSpan the slice's length.
	maxDenseBucket = 1 << 16
	maxDenseSpan   = 1 << 13
)

// Add adds a cell's gaps; a malformed histogram is ignored.
func (m *ITLMerge) Add(it *ITL) {
	if it == nil || len(it.Hist)%2 != 0 {
		return
	}
	for i := 0; i < len(it.Hist); i += 2 {
		if c := it.Hist[i+1]; c > 0 {
			m.add(it.Hist[i], c)
			m.n += c
		}
	}
}

func (m *ITLMerge) add(k, c int64) {
	if k >= 0 && k < maxDenseBucket {
		switch hi := m.lo + int64(len(m.dense)); {
		case len(m.dense) == 0:
			m.lo, m.dense = k, append(m.dense, c)
			return
		case k >= m.lo && k < hi:
			m.dense[k-m.lo] += c
			return
		case k >= hi && k-m.lo < maxDenseSpan:
			m.dense = append(m.dense, make([]int64, k-hi+1)...)
			m.dense[k-m.lo] += c
			return
		case k < m.lo && hi-k <= maxDenseSpan:
			grown := make([]int64, hi-k, max(hi-k, int64(cap(m.dense))))
			copy(grown[m.lo-k:], m.dense)
			m.lo, m.dense = k, grown
			m.dense[0] += c
			return
		}
	}
	if m.far == nil {
		m.far = map[int64]int64{}
	}
	m.far[k] += c
}

// each calls fn with every bucket that has gaps and its count, buckets
// ascending, until fn says stop.
func (m *ITLMerge) each(fn func(k, c int64) bool) {
	far := make([]int64, 0, len(m.far))
	for k := range m.far {
		far = append(far, k)
	}
	slices.Sort(far)
	i := 0
	for j, c := range m.dense {
		k := m.lo + int64(j)
		for ; i < len(far) && far[i] < k; i++ {
			if !fn(far[i], m.far[far[i]]) {
				return
			}
		}
		if i < len(far) && far[i] == k {
			c += m.far[k]
			i++
		}
		if c > 0 && !fn(k, c) {
			return
		}
	}
	for ; i < len(far); i++ {
		if !fn(far[i], m.far[far[i]]) {
			return
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
	rank := max(int64(math.Ceil(p*float64(m.n))), 1)
	var seen, at, last int64
	found := false
	m.each(func(k, c int64) bool {
		last = k
		if seen += c; seen >= rank {
			at, found = k, true
			return false
		}
		return true
	})
	if !found {
		at = last
	}
	return ITLValue(at)
}

// Mean is the gaps' mean (ms) from the bucket values, within ITLRelErr.
func (m *ITLMerge) Mean() float64 {
	if m.n == 0 {
		return math.NaN()
	}
	var sum float64
	m.each(func(k, c int64) bool {
		sum += ITLValue(k) * float64(c)
		return true
	})
	return sum / float64(m.n)
}
