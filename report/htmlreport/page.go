package htmlreport

import (
	"sort"

	"bench/report"
)

// newPage builds the script's data: the plotted groups (v.Groups, the
// first in ranking order), the matrix over them and the prompts they ran
// flattened with its texts interned, the distributions and the timeline.
// Its size is bounded by report.MaxPlotted and MaxPlotPrompts, whatever
// the run's groups × prompts.
func newPage(d *Data, v report.MatrixView) page {
	s := d.Summary
	ranked := v.Groups
	p := page{RunID: s.RunID, CellWidth: cellWidth, Groups: make([]pageGroup, len(ranked)), Prompts: make([]pagePrompt, len(v.Prompts))}
	for i, g := range ranked {
		p.Groups[i] = pageGroup{Label: g.Label(), Tier: "unclassified"}
		if g.Tier != nil {
			p.Groups[i].Tier = g.Tier.Tier
		}
	}
	for i, pr := range v.Prompts {
		p.Prompts[i] = pagePrompt{ID: pr.ID, Name: pr.Name}
	}

	strs := map[string]int{}
	intern := func(t string) int {
		if t == "" {
			return -1
		}
		if i, ok := strs[t]; ok {
			return i
		}
		strs[t] = len(p.Strings)
		p.Strings = append(p.Strings, t)
		return strs[t]
	}
	p.Cells = make([]int, 0, len(ranked)*len(v.Prompts)*cellWidth)
	for _, gi := range v.Index {
		var m *report.Cells
		if gi < len(s.Matrix) {
			m = s.Matrix[gi]
		}
		for _, pr := range v.Prompts {
			c := m.Get(pr.ID)
			if c == nil {
				p.Cells = append(p.Cells, 0, 0, 0, 0, 0, -1, -1, 0)
				continue
			}
			p.Cells = append(p.Cells, c.Total, c.Success, c.Judged, c.Passed, c.NotRun, intern(topWhy(c.Why)), intern(c.Detail), c.CheckErrors)
		}
	}

	type metric struct {
		key, title, unit string
		higher           bool
		dist             func(*GroupData) Dist
		stats            func(*report.Group) report.Stats
	}
	for _, m := range []metric{
		{"ttft", "Time to first token", "ms", false, func(g *GroupData) Dist { return g.TTFT }, func(g *report.Group) report.Stats { return g.TTFTMS }},
		{"e2e", "End-to-end latency", "ms", false, func(g *GroupData) Dist { return g.E2E }, func(g *report.Group) report.Stats { return g.LatencyMS }},
		{"tps", "Tokens per second", "tok/s", true, func(g *GroupData) Dist { return g.TokensPerS }, func(g *report.Group) report.Stats { return g.TokensPerS }},
	} {
		pm := pageMetric{Key: m.key, Title: m.title, Unit: m.unit, HigherIsBetter: m.higher}
		for i, g := range ranked {
			st := m.stats(g)
			pm.Dists = append(pm.Dists, m.dist(d.Groups[v.Index[i]]))
			pm.Mean = append(pm.Mean, st.Mean)
			pm.Marks = append(pm.Marks, [3]*float64{st.P50, st.P95, st.P99})
		}
		p.Metrics = append(p.Metrics, pm)
	}
	p.Timeline = newTimeline(d.Timelines)
	for _, g := range ranked {
		if g.CostUSDTotal == nil || g.NCostKnown == 0 {
			continue
		}
		p.Cost = append(p.Cost, pageCost{Label: g.Label(), PerCell: *g.CostUSDTotal / float64(g.NCostKnown), Pass: g.ObjectivePassRate, Total: *g.CostUSDTotal})
	}
	return p
}

// topWhy is the most frequent reason, ties to the alphabetically first, as
// summary.md's matrix shows it.
func topWhy(why map[string]int) string {
	top, n := "", 0
	for w, k := range why {
		if k > n || (k == n && w < top) {
			top, n = w, k
		}
	}
	return top
}

// newTimeline merges the suites' samples onto one time axis, cut into at
// most MaxTimelinePoints buckets that each keep their series' highest
// reading. CPU and memory are the machine's, so suites share those series;
// server RSS gets one series per provider (each has its own server).
func newTimeline(tls []*Timeline) *pageTimeline {
	var t0, t1 int64
	n := 0
	for _, tl := range tls {
		for _, s := range tl.Samples {
			if n == 0 || s.TimeMS < t0 {
				t0 = s.TimeMS
			}
			if n == 0 || s.TimeMS > t1 {
				t1 = s.TimeMS
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	width := int64(1)
	if span := t1 - t0 + 1; span > MaxTimelinePoints {
		width = (span + MaxTimelinePoints - 1) / MaxTimelinePoints
	}

	type series struct {
		label, scale string
		vals         map[int64]float64
	}
	cpu := &series{label: "CPU (machine)", scale: "pct", vals: map[int64]float64{}}
	mem := &series{label: "memory used (machine)", scale: "bytes", vals: map[int64]float64{}}
	rssBy := map[string]*series{}
	var providers []string
	buckets := map[int64]bool{}
	put := func(s *series, b int64, v float64) {
		if old, ok := s.vals[b]; !ok || v > old {
			s.vals[b] = v
		}
	}
	tl := &pageTimeline{BucketMS: width}
	for _, t := range tls {
		if len(t.Samples) == 0 {
			continue
		}
		rs := rssBy[t.Provider]
		for _, s := range t.Samples {
			b := (s.TimeMS - t0) / width
			buckets[b] = true
			if s.CPUPercent != nil {
				put(cpu, b, *s.CPUPercent)
			}
			if s.MemUsed != nil {
				put(mem, b, float64(*s.MemUsed))
			}
			if s.ServerRSS != nil {
				if rs == nil {
					rs = &series{label: "server RSS (" + t.Provider + ")", scale: "bytes", vals: map[int64]float64{}}
					rssBy[t.Provider] = rs
					providers = append(providers, t.Provider)
				}
				put(rs, b, float64(*s.ServerRSS))
			}
		}
		first, last := t.Samples[0].TimeMS, t.Samples[len(t.Samples)-1].TimeMS
		tl.Suites = append(tl.Suites, pageSuite{Label: t.Label(), Start: float64(first) / 1000, End: float64(last) / 1000})
	}
	order := make([]int64, 0, len(buckets))
	for b := range buckets {
		order = append(order, b)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	// Where nothing was sampled (between suites, or during a remote
	// provider's suite) the lines must break rather than draw a slope
	// across: a bucket with every series null goes just after the last
	// reading before such a gap.
	gap := max(3*typicalInterval(tls), 2*width)
	var points []int64 // bucket per point; -1 marks a gap
	for i, b := range order {
		if i > 0 && (b-order[i-1])*width > gap {
			points = append(points, -1)
			tl.T = append(tl.T, float64(t0+order[i-1]*width+width)/1000)
		}
		points = append(points, b)
		tl.T = append(tl.T, float64(t0+b*width)/1000)
	}
	all := []*series{cpu, mem}
	sort.Strings(providers)
	for _, p := range providers {
		all = append(all, rssBy[p])
	}
	for _, s := range all {
		if len(s.vals) == 0 {
			continue
		}
		ps := pageSeries{Label: s.label, Scale: s.scale, Values: make([]*float64, len(points))}
		for i, b := range points {
			if v, ok := s.vals[b]; ok && b >= 0 {
				ps.Values[i] = &v
			}
		}
		tl.Series = append(tl.Series, ps)
	}
	sort.SliceStable(tl.Suites, func(i, j int) bool { return tl.Suites[i].Start < tl.Suites[j].Start })
	return tl
}

// typicalInterval is the median time between consecutive readings of a
// suite, over every suite: the sampler's period in practice.
func typicalInterval(tls []*Timeline) int64 {
	var d []int64
	for _, t := range tls {
		for i := 1; i < len(t.Samples); i++ {
			if dt := t.Samples[i].TimeMS - t.Samples[i-1].TimeMS; dt > 0 {
				d = append(d, dt)
			}
		}
	}
	if len(d) == 0 {
		return 1000
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}
