package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"bench/internal/record/results"
	"bench/internal/record/slo"
	"bench/report"
	"bench/report/stats"
)

// Capacity metrics (the words of --require-judged, and Finding.Metric).
const (
	MetricThroughput = "request_throughput"
	MetricGoodput    = "goodput"
	MetricSaturation = "saturation"
)

// CapacityMetrics lists the capacity metrics in display order.
var CapacityMetrics = []string{MetricThroughput, MetricGoodput, MetricSaturation, MetricSLOLimit}

// CapacityWindows is how many equal windows of a stage's span give its
// throughput samples: each window's answered requests per second.
const CapacityWindows = 8

// Why a capacity comparison was not judged (besides stats' reasons and
// machine load).
const (
	WhyOneRun       = "stage in one run only"
	WhyNoSLO        = "no slo"
	WhySLOChanged   = "slo changed"
	WhySweepChanged = "sweep changed"
	WhyNoSaturation = "no saturation point"
	WhyUnjudgedSpan = "stages between not judged"
)

// Capacity is a group's load sweep judged stage by stage: each stage run
// in both (same name: same mode and level) has its throughput and goodput
// compared, and the sweep its saturation point (docs/load.md).
type Capacity struct {
	Stages     []*StageCapacity `json:"stages"`
	Saturation SaturationChange `json:"saturation"`
	// Limit compares the groups' SLO-search limits (load.search), whose
	// stages are left out of Stages.
	Limit *LimitChange `json:"slo_limit,omitempty"`
}

// StageCapacity is one load stage of a group in both runs.
type StageCapacity struct {
	Stage string   `json:"stage"`
	Mode  string   `json:"mode"`
	Level *float64 `json:"level"`
	// BaseThroughput and NewThroughput are the stage's answered requests
	// per second over its span, as summary.json's request_throughput.
	BaseThroughput *float64 `json:"base_request_throughput"`
	NewThroughput  *float64 `json:"new_request_throughput"`
	// Throughput judges the stage's answered requests per second in
	// CapacityWindows equal windows of its span on each side: the
	// latency statistics (Mann-Whitney U, Hodges-Lehmann shift, the
	// family's correction, the threshold), higher is better.
	Throughput *stats.Verdict `json:"request_throughput"`
	// Goodput compares the share of sent requests that met every
	// per-request SLO, as the pass rate is compared (Fisher, Holm).
	Goodput RateTest `json:"goodput"`
}

// SaturationChange compares where each run's sweep stopped scaling
// (report.FindSaturation's rule on each run's stages).
type SaturationChange struct {
	Base      *string  `json:"base"`
	New       *string  `json:"new"`
	BaseLevel *float64 `json:"base_level"`
	NewLevel  *float64 `json:"new_level"`
	// Change is "~", "regression", "improvement" or "not_judged". The
	// point moving is a change only when a stage between the two points
	// changed its throughput or goodput significantly the same way: the
	// point itself is one figure a run, with no test of its own.
	Change    string `json:"change"`
	NotJudged string `json:"not_judged,omitempty"`
	Reason    string `json:"reason"`
}

// loadCell is what capacity needs of one cell of a load stage.
type loadCell struct {
	stage, mode    uint32
	level          float64
	hasLevel       bool
	start, end     int64 // µs since the epoch
	due            float64
	hasDue         bool
	sent, answered bool
	good           bool
}

// addLoad keeps a load stage's cell (not the warm-up's); a later record of
// the key replaces it, as add does.
func (r *runData) addLoad(k cellKey, rec *results.Record) {
	if rec.Stage == "" || rec.Stage == "warmup" {
		return
	}
	if r.load == nil {
		r.load = map[cellKey]*loadCell{}
	}
	t := r.tab
	lc := &loadCell{stage: t.id(rec.Stage), mode: t.id(rec.StageMode), start: rec.StageStartUS, end: rec.EndedAtUS,
		sent: report.Sent(rec), answered: rec.AvailabilityStatus == results.StatusOK && rec.Success}
	if rec.StageLevel != nil {
		lc.level, lc.hasLevel = *rec.StageLevel, true
	}
	if rec.ScheduledAtMS != nil {
		lc.due, lc.hasDue = *rec.ScheduledAtMS, true
	}
	if r.slo != nil && lc.sent {
		lc.good = report.MeetsSLO(r.slo, rec)
	}
	r.load[k] = lc
}

// stageSide is one stage of a group in one run.
type stageSide struct {
	name, mode     string
	level          *float64
	start, lastEnd int64
	firstDue       float64
	lastDue        float64
	sent, answered int
	good           int
	ends           []int64 // the answered cells' ends
	throughput     *float64
	offered        *float64
	firstDueSet    bool
}

// stages gathers a run's load cells by group and stage, in first-seen
// order.
func (r *runData) stages() map[groupKey][]*stageSide {
	out := map[groupKey][]*stageSide{}
	byName := map[groupKey]map[uint32]*stageSide{}
	keys := make([]cellKey, 0, len(r.load))
	for k := range r.load {
		keys = append(keys, k)
	}
	// Map order is random: order the cells by their line so that stages
	// come in the order they ran.
	sort.Slice(keys, func(a, b int) bool { return r.cells[r.index[keys[a]]].line < r.cells[r.index[keys[b]]].line })
	for _, k := range keys {
		lc := r.load[k]
		gk := groupOf(k)
		if byName[gk] == nil {
			byName[gk] = map[uint32]*stageSide{}
		}
		s := byName[gk][lc.stage]
		if s == nil {
			s = &stageSide{name: r.tab.str(lc.stage), mode: r.tab.str(lc.mode)}
			byName[gk][lc.stage] = s
			out[gk] = append(out[gk], s)
		}
		if lc.hasLevel && s.level == nil {
			s.level = ptrTo(lc.level)
		}
		if !lc.sent {
			continue
		}
		s.sent++
		if lc.start > 0 && (s.start == 0 || lc.start < s.start) {
			s.start = lc.start
		}
		s.lastEnd = max(s.lastEnd, lc.end)
		if lc.hasDue {
			if !s.firstDueSet || lc.due < s.firstDue {
				s.firstDue = lc.due
			}
			s.firstDueSet = true
			s.lastDue = math.Max(s.lastDue, lc.due)
		}
		if lc.good {
			s.good++
		}
		if lc.answered {
			s.answered++
			s.ends = append(s.ends, lc.end)
		}
	}
	for _, list := range out {
		for _, s := range list {
			if s.start > 0 && s.lastEnd > s.start {
				s.throughput = ptrTo(float64(s.answered) / (float64(s.lastEnd-s.start) / 1e6))
			}
			if s.mode == "rate" && s.sent > 1 && s.lastDue > s.firstDue {
				s.offered = ptrTo(float64(s.sent-1) / ((s.lastDue - s.firstDue) / 1000))
			}
		}
	}
	return out
}

// windows are the stage's throughput samples: answered requests per
// second in each of CapacityWindows equal windows from the stage's start
// to its last cell's end, or in as many windows as the stage sent cells
// when it sent fewer (so that a stage of 3 requests gives 3 samples, too
// few to judge, as 3 latencies would); nil when it has no span.
func (s *stageSide) windows() []float64 {
	if s == nil || s.start <= 0 || s.lastEnd <= s.start {
		return nil
	}
	k := min(CapacityWindows, s.sent)
	span := float64(s.lastEnd - s.start)
	counts := make([]float64, k)
	for _, e := range s.ends {
		i := int(float64(e-s.start) / span * float64(k))
		counts[min(max(i, 0), k-1)]++
	}
	w := span / float64(k) / 1e6
	for i := range counts {
		counts[i] /= w
	}
	return counts
}

// saturation is report.FindSaturation over a run's stages.
func saturationOf(list []*stageSide) *report.Saturation {
	var st []*report.Stage
	for _, s := range list {
		st = append(st, &report.Stage{Stage: s.name, Mode: s.mode, Level: s.level, RequestThroughput: s.throughput, OfferedRate: s.offered})
	}
	return report.FindSaturation(st)
}

// capacity judges each group's load stages (see Capacity). Throughput is
// one family over every group and stage, judged at Alpha/2 like a
// latency metric; goodput another, Fisher-tested and Holm-adjusted at
// Alpha/2 like the pass rate. The saturation point follows from them.
func (c *comparison) capacity() error {
	base, cur := c.base.stages(), c.cur.stages()
	sameSLO := c.base.slo != nil && c.cur.slo != nil && sloEqual(c.base.cfg.SLO, c.cur.cfg.SLO)
	bsearch, nsearch := c.base.searches(), c.cur.searches()
	searched := func(g *Group) bool {
		_, b := bsearch[g.Provider]
		_, n := nsearch[g.Provider]
		return b || n
	}
	type pair struct {
		g    *Group
		sc   *StageCapacity
		b, n *stageSide
	}
	var pairs []pair
	var cs []stats.Comparison
	var judgedAt []int
	for _, g := range c.res.Groups {
		bl, nl := base[g.key], cur[g.key]
		if len(bl) == 0 && len(nl) == 0 {
			continue
		}
		g.Capacity = &Capacity{}
		seen := map[string]bool{}
		for _, list := range [][]*stageSide{nl, bl} {
			for _, s := range list {
				if seen[s.name] || (slo.IsSearchStage(s.name) && searched(g)) {
					// A search's stages are at levels each run chose: its
					// limit is judged instead (judgeLimit).
					continue
				}
				seen[s.name] = true
				sc := &StageCapacity{Stage: s.name, Mode: s.mode, Level: s.level}
				p := pair{g: g, sc: sc, b: find(bl, s.name), n: find(nl, s.name)}
				if p.b != nil {
					sc.BaseThroughput = roundPtr(p.b.throughput)
				}
				if p.n != nil {
					sc.NewThroughput = roundPtr(p.n.throughput)
				}
				g.Capacity.Stages = append(g.Capacity.Stages, sc)
				pairs = append(pairs, p)
			}
		}
		slices.SortStableFunc(g.Capacity.Stages, func(a, b *StageCapacity) int {
			if a.Mode != b.Mode {
				return cmpStr(a.Mode, b.Mode)
			}
			return cmpLevel(a.Level, b.Level)
		})
	}
	for i, p := range pairs {
		if p.b == nil || p.n == nil {
			v := &stats.Verdict{Change: stats.NotJudged, NotJudged: WhyOneRun, AdjustedP: 1,
				Reason: fmt.Sprintf("stage %s ran in the %s run only", p.sc.Stage, map[bool]string{true: "base", false: "new"}[p.n == nil])}
			p.sc.Throughput = v
			p.sc.Goodput = RateTest{PValue: 1, AdjustedP: 1, Change: string(stats.NotJudged), NotJudged: WhyOneRun}
			continue
		}
		cmp, err := stats.CompareSamples(p.b.windows(), p.n.windows())
		if err != nil {
			return fmt.Errorf("capacity %s of %s stage %s: %w", MetricThroughput, p.g.Label(), p.sc.Stage, err)
		}
		cs = append(cs, cmp)
		judgedAt = append(judgedAt, i)
	}
	vs, err := stats.Judge(cs, stats.Options{Alpha: c.categoryAlpha() / 2, Threshold: c.opt.LatencyThreshold, MinSamples: c.opt.MinSamples,
		Correction: c.opt.Correction, HigherIsBetter: true})
	if err != nil {
		return err
	}
	for j, i := range judgedAt {
		p := pairs[i]
		v := vs[j]
		p.sc.Throughput = &v
		if v.Change == stats.Regression {
			c.addFinding(Finding{Category: CapacityCat, Scope: "stage", Provider: p.g.Provider, Model: p.g.Model, ThinkingLevel: p.g.ThinkingLevel,
				Stage: p.sc.Stage, Metric: MetricThroughput, Message: fmt.Sprintf("%s stage %s %s: %s",
					p.g.Label(), p.sc.Stage, figure("answered requests/s", &v), v.Reason)})
		}
	}
	// Goodput: Fisher over the sent cells of each stage both runs ran,
	// Holm over the family.
	var ps []float64
	var tested []pair
	for _, p := range pairs {
		if p.b == nil || p.n == nil {
			continue
		}
		t := &p.sc.Goodput
		*t = RateTest{BaseCount: p.b.good, BaseN: p.b.sent, NewCount: p.n.good, NewN: p.n.sent, PValue: 1, AdjustedP: 1, Change: string(stats.Same), Test: TestFisher}
		t.Base, t.New = ratio(t.BaseCount, t.BaseN), ratio(t.NewCount, t.NewN)
		switch {
		case c.base.slo == nil && c.cur.slo == nil:
			t.Change, t.NotJudged, t.Base, t.New = string(stats.NotJudged), WhyNoSLO, nil, nil
			continue
		case !sameSLO:
			t.Change, t.NotJudged = string(stats.NotJudged), WhySLOChanged
			continue
		case t.BaseN == 0 || t.NewN == 0:
			t.Change, t.NotJudged = string(stats.NotJudged), stats.WhyNoSamples
			continue
		}
		pv, err := stats.FisherExact(t.BaseCount, t.BaseN-t.BaseCount, t.NewCount, t.NewN-t.NewCount)
		if err != nil {
			return err
		}
		t.PValue = pv
		ps = append(ps, pv)
		tested = append(tested, p)
	}
	adj := stats.AdjustHolm(ps)
	for i, p := range tested {
		t := &p.sc.Goodput
		t.AdjustedP = adj[i]
		t.Significant = adj[i] <= c.categoryAlpha()/2
		if !t.Significant || *t.New == *t.Base {
			continue
		}
		if *t.New < *t.Base {
			t.Change = string(stats.Regression)
			c.addFinding(Finding{Category: CapacityCat, Scope: "stage", Provider: p.g.Provider, Model: p.g.Model, ThinkingLevel: p.g.ThinkingLevel,
				Stage: p.sc.Stage, Metric: MetricGoodput, Message: fmt.Sprintf("%s stage %s goodput %s -> %s (Fisher p=%.3g, Holm-adjusted over %d stages %.3g)",
					p.g.Label(), p.sc.Stage, rateText(t.BaseCount, t.BaseN), rateText(t.NewCount, t.NewN), t.PValue, len(tested), t.AdjustedP)})
		} else {
			t.Change = string(stats.Improvement)
		}
	}
	for _, g := range c.res.Groups {
		if g.Capacity == nil {
			continue
		}
		if searched(g) {
			bs, bok := bsearch[g.Provider]
			ns, nok := nsearch[g.Provider]
			g.Capacity.Limit = c.judgeLimit(g, searchOf(bs, bok, base[g.key]), searchOf(ns, nok, cur[g.key]), sameSLO)
			sc := &g.Capacity.Saturation
			sc.Change, sc.NotJudged, sc.Reason = string(stats.NotJudged), WhySearchStages, "an SLO search's stages are no sweep: its limit is judged instead"
			continue
		}
		c.judgeSaturation(g, base[g.key], cur[g.key])
	}
	return nil
}

// judgeSaturation compares the group's saturation points (see
// SaturationChange).
func (c *comparison) judgeSaturation(g *Group, bl, nl []*stageSide) {
	sc := &g.Capacity.Saturation
	bs, ns := saturationOf(bl), saturationOf(nl)
	notJudged := func(why, reason string) {
		sc.Change, sc.NotJudged, sc.Reason = string(stats.NotJudged), why, reason
	}
	if bs != nil && bs.Reached {
		sc.Base, sc.BaseLevel = &bs.Stage, ptrTo(bs.Level)
	}
	if ns != nil && ns.Reached {
		sc.New, sc.NewLevel = &ns.Stage, ptrTo(ns.Level)
	}
	if !sameLevels(bl, nl) {
		notJudged(WhySweepChanged, "the runs' sweeps have different stages")
		return
	}
	if bs == nil || ns == nil {
		notJudged(WhyNoSaturation, "a sweep needs two stages or more for a saturation point")
		return
	}
	if !bs.Reached && !ns.Reached {
		sc.Change, sc.Reason = string(stats.Same), "neither sweep saturated: every level scaled in both runs"
		return
	}
	top := math.Inf(1) // a sweep that never saturated saturates beyond its last level
	bl0, nl0 := top, top
	if bs.Reached {
		bl0 = bs.Level
	}
	if ns.Reached {
		nl0 = ns.Level
	}
	if bl0 == nl0 {
		sc.Change, sc.Reason = string(stats.Same), fmt.Sprintf("saturation at %s in both runs", bs.Stage)
		return
	}
	lo, hi := math.Min(bl0, nl0), math.Max(bl0, nl0)
	worse := nl0 < bl0
	want := stats.Improvement
	if worse {
		want = stats.Regression
	}
	judged, moved := 0, ""
	for _, s := range g.Capacity.Stages {
		if s.Level == nil || *s.Level <= lo || *s.Level > hi {
			continue
		}
		if s.Throughput != nil && s.Throughput.Judged() {
			judged++
			if s.Throughput.Change == want && moved == "" {
				moved = fmt.Sprintf("stage %s throughput %s", s.Stage, s.Throughput.Change)
			}
		}
		if s.Goodput.Change != string(stats.NotJudged) {
			judged++
			if s.Goodput.Change == string(want) && moved == "" {
				moved = fmt.Sprintf("stage %s goodput %s", s.Stage, s.Goodput.Change)
			}
		}
	}
	from, to := levelName(bs), levelName(ns)
	switch {
	case moved != "":
		sc.Change, sc.Reason = string(want), fmt.Sprintf("saturation %s -> %s; %s", from, to, moved)
		if worse {
			c.addFinding(Finding{Category: CapacityCat, Scope: "group", Provider: g.Provider, Model: g.Model, ThinkingLevel: g.ThinkingLevel,
				Metric: MetricSaturation, Message: fmt.Sprintf("%s saturation point %s -> %s (%s)", g.Label(), from, to, moved)})
		}
	case judged == 0:
		notJudged(WhyUnjudgedSpan, fmt.Sprintf("saturation %s -> %s, but no stage between the two was judged", from, to))
	default:
		sc.Change, sc.Reason = string(stats.Same), fmt.Sprintf("saturation %s -> %s, but no stage between the two changed significantly", from, to)
	}
}

func levelName(s *report.Saturation) string {
	if !s.Reached {
		return "beyond " + s.Stage
	}
	return s.Stage
}

// sameLevels says both runs' sweeps ran the same stages.
func sameLevels(a, b []*stageSide) bool {
	if len(a) != len(b) {
		return false
	}
	names := map[string]bool{}
	for _, s := range a {
		names[s.name] = true
	}
	for _, s := range b {
		if !names[s.name] {
			return false
		}
	}
	return true
}

func find(list []*stageSide, name string) *stageSide {
	for _, s := range list {
		if s.name == name {
			return s
		}
	}
	return nil
}

// sloEqual says two config.json slo blocks set the same targets.
func sloEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func roundPtr(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return ptrTo(math.Round(*v*100) / 100)
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpLevel(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	case *a < *b:
		return -1
	case *a > *b:
		return 1
	}
	return 0
}

// capacityLines describe a group's capacity comparisons, one line a stage
// and one for the saturation point, for the text, compare.md and
// compare.html alike.
func capacityLines(g *Group) []capLine {
	if g.Capacity == nil {
		return nil
	}
	var out []capLine
	for _, s := range g.Capacity.Stages {
		ch := s.Throughput.Change
		if ch == stats.Same || ch == stats.NotJudged {
			ch = stats.Change(s.Goodput.Change)
		}
		out = append(out, capLine{fmt.Sprintf("stage %s: %s; goodput %s", s.Stage, figure(MetricThroughput, s.Throughput), goodputText(&s.Goodput)), ch})
	}
	sat := g.Capacity.Saturation
	word := sat.Change
	if sat.Change == string(stats.NotJudged) {
		word = "not judged (" + sat.NotJudged + ")"
	}
	if l := g.Capacity.Limit; l != nil {
		word := l.Change
		if l.Change == string(stats.NotJudged) {
			word = "not judged (" + l.NotJudged + ")"
		}
		return append(out, capLine{fmt.Sprintf("SLO limit %s -> %s: %s: %s", limitText(l.Mode, l.BaseLimit), limitText(l.Mode, l.NewLimit), word, l.Reason), stats.Change(l.Change)})
	}
	out = append(out, capLine{fmt.Sprintf("saturation %s -> %s: %s: %s", orDash(deref(sat.Base)), orDash(deref(sat.New)), word, sat.Reason), stats.Change(sat.Change)})
	return out
}

// capLine is one line of capacityLines and the change it shows.
type capLine struct {
	text   string
	change stats.Change
}

func goodputText(t *RateTest) string {
	if t.Change == string(stats.NotJudged) {
		return "not judged (" + t.NotJudged + ")"
	}
	return fmt.Sprintf("%s -> %s (Fisher p=%s, Holm %s) %s", rateText(t.BaseCount, t.BaseN), rateText(t.NewCount, t.NewN), pFigure(t.PValue), pFigure(t.AdjustedP), t.Change)
}

func limitText(mode string, v *float64) string {
	if v == nil {
		return "–"
	}
	return levelText(mode, *v)
}

// hasStages says the run has load stages (besides a warm-up): capacity
// is then a statistical category of the compare.
func (r *runData) hasStages() bool { return len(r.load) > 0 }
