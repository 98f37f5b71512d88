package history

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"bench/report/stats"
)

// Build reads the run directories (FindRuns' list) and builds the history:
// series, change points, the gate. An error is only for unusable options;
// unreadable runs are warnings.
func Build(dirs []string, opt Options, now time.Time) (*History, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	h := &History{GeneratedAt: now.UTC(), Options: opt, Verdict: VerdictOK, MinRuns: opt.MinRuns(), Runs: []Run{}, Warnings: []string{},
		Series: []*Series{}, ChangePoints: []*ChangePoint{}, Failing: []*ChangePoint{}, Methods: methods(opt)}
	reads := readRuns(dirs)
	runs := orderRuns(reads)
	for _, r := range reads {
		h.Warnings = append(h.Warnings, r.warnings...)
	}
	for _, r := range runs {
		h.Runs = append(h.Runs, r.run)
	}
	h.Warnings = append(h.Warnings, suiteChanges(runs)...)
	// One series per group and metric, groups in order of first sight.
	var order []groupKey
	seen := map[groupKey]bool{}
	for _, r := range runs {
		for _, k := range r.order {
			if !seen[k] {
				seen[k] = true
				order = append(order, k)
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].label() < order[j].label() })
	for _, k := range order {
		for _, m := range Metrics {
			s := &Series{Provider: k.provider, Model: k.model, Metric: m, Unit: metricInfo[m].unit,
				HigherIsBetter: metricInfo[m].higherIsBetter, Points: []SeriesPoint{}, ChangePoints: []*ChangePoint{}, key: k}
			if k.thinking != "" {
				s.ThinkingLevel = &k.thinking
			}
			for _, r := range runs {
				if v, ok := r.figures[k][m]; ok {
					s.Points = append(s.Points, SeriesPoint{Run: r.run.Index, Value: v})
				}
			}
			if len(s.Points) == 0 {
				continue
			}
			h.Longest = max(h.Longest, len(s.Points))
			s.TooShort = len(s.Points) < h.MinRuns
			h.detect(s, runs)
			h.Series = append(h.Series, s)
		}
	}
	slices.SortStableFunc(h.ChangePoints, func(a, b *ChangePoint) int { return b.Run - a.Run })
	fail := expand(opt.FailOnChange)
	for _, c := range h.ChangePoints {
		if c.Direction == Regression && slices.Contains(fail, c.Metric) && c.RunsAgo < opt.Since && c.Cause == "" {
			c.FailsGate = true
			h.Failing = append(h.Failing, c)
			h.Verdict = VerdictChange
		}
	}
	if len(fail) > 0 && h.Verdict == VerdictOK {
		judged := false
		for _, s := range h.Series {
			judged = judged || (slices.Contains(fail, s.Metric) && !s.TooShort)
		}
		if !judged {
			h.Verdict = VerdictNotJudged
		}
	}
	if short := h.shortSeries(); short > 0 {
		h.Warnings = append(h.Warnings, fmt.Sprintf("too few runs for a change point in %d of %d series: a change point needs %d runs (--min-runs %d on each side), the longest series has %d",
			short, len(h.Series), h.MinRuns, opt.Detector.MinSegment, h.Longest))
	}
	return h, nil
}

// shortSeries counts the series too short for any change point.
func (h *History) shortSeries() int {
	n := 0
	for _, s := range h.Series {
		if s.TooShort {
			n++
		}
	}
	return n
}

// detect finds a series' change points and ties each to its run.
func (h *History) detect(s *Series, runs []*runRead) {
	vals := make([]float64, len(s.Points))
	for i, p := range s.Points {
		vals[i] = p.Value
	}
	last := len(runs) - 1
	for _, p := range stats.DetectChanges(vals, h.Options.Detector) {
		at := s.Points[p.Index].Run
		prev := s.Points[p.Index-1].Run
		r := runs[at].run
		c := &ChangePoint{Provider: s.Provider, Model: s.Model, ThinkingLevel: s.ThinkingLevel, Metric: s.Metric,
			Run: at, RunID: r.ID, Dir: r.Dir, StartedAt: r.StartedAt, RunsAgo: last - at,
			Before: p.MeanBefore, After: p.MeanAfter, ChangePct: p.ChangePct(), P: p.P, Direction: Improvement,
			Setup: setupChanges(runs[prev], runs[at], s.key)}
		if worse := p.MeanAfter > p.MeanBefore; worse != s.HigherIsBetter {
			c.Direction = Regression
		}
		for _, sc := range c.Setup {
			if slices.Contains(measures[s.Metric], sc.What) {
				c.Cause = CauseSetup // bench measured otherwise: not the model
			}
		}
		s.ChangePoints = append(s.ChangePoints, c)
		h.ChangePoints = append(h.ChangePoints, c)
	}
}

// measures are, per metric, the setup changes that change what bench
// measures rather than the model: a change point at such a change is the
// setup's (Cause), and fails no gate. Every metric's timing depends on the
// concurrency and the run settings (timeouts, the load profile); a pass
// rate on the checks too.
var measures = func() map[string][]string {
	m := map[string][]string{}
	for _, metric := range Metrics {
		m[metric] = []string{SetupConcurrency, SetupRunSettings}
	}
	for _, metric := range Aliases["quality"] {
		m[metric] = append(m[metric], SetupChecks)
	}
	return m
}()

// setupChanges lists what differs in the group's setup between two runs.
func setupChanges(a, b *runRead, k groupKey) []SetupChange {
	out := []SetupChange{}
	sa, sb := a.run.setup[k], b.run.setup[k]
	for _, what := range []string{"model digest", "server version", "CLI version", "bench version"} {
		if sa[what] != sb[what] {
			out = append(out, SetupChange{What: what, From: sa[what], To: sb[what]})
		}
	}
	// config.json's settings, when both runs have one.
	for _, what := range []string{SetupConcurrency, SetupRunSettings, SetupChecks} {
		if sa[what] == "" || sb[what] == "" || sa[what] == sb[what] {
			continue
		}
		c := SetupChange{What: what, From: sa[what], To: sb[what]}
		if what == SetupChecks {
			c.To += " (" + changedChecks(a.run.checks, b.run.checks) + ")"
		}
		out = append(out, c)
	}
	if !slices.Equal(a.run.prompts, b.run.prompts) {
		out = append(out, SetupChange{What: "prompt suite", From: strings.Join(a.run.prompts, ","), To: strings.Join(b.run.prompts, ",")})
	}
	return out
}

// changedChecks names the prompts whose checks differ between two runs.
func changedChecks(a, b map[string]string) string {
	var ids []string
	for id, f := range b {
		if g, ok := a[id]; ok && g != f {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		return "prompts added or removed"
	}
	return "changed: " + strings.Join(ids, ", ")
}

// suiteChanges warns where a run's prompt suite differs from the run
// before: its figures are over other prompts.
func suiteChanges(runs []*runRead) []string {
	var out []string
	for i := 1; i < len(runs); i++ {
		a, b := runs[i-1].run.prompts, runs[i].run.prompts
		if a == nil || b == nil || slices.Equal(a, b) {
			continue
		}
		var added, removed []string
		for _, p := range b {
			if !slices.Contains(a, p) {
				added = append(added, p)
			}
		}
		for _, p := range a {
			if !slices.Contains(b, p) {
				removed = append(removed, p)
			}
		}
		out = append(out, fmt.Sprintf("%s: another prompt suite than %s's (added %s; removed %s): its figures are over other prompts",
			runs[i].run.Dir, runs[i-1].run.ID, orNone(added), orNone(removed)))
	}
	return out
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// expand turns --fail-on-change's words into metrics.
func expand(names []string) []string {
	var out []string
	for _, n := range names {
		if a, ok := Aliases[n]; ok {
			out = append(out, a...)
		} else {
			out = append(out, n)
		}
	}
	return out
}

// Validate reports the first unusable option.
func (o Options) Validate() error {
	for _, n := range o.FailOnChange {
		if _, ok := Aliases[n]; !ok && !slices.Contains(Metrics, n) {
			return fmt.Errorf("--fail-on-change %q: must be latency, quality or one of %s", n, strings.Join(Metrics, ", "))
		}
	}
	switch d := o.Detector; {
	case o.Since < 1:
		return fmt.Errorf("--since %d: must be at least 1 (the latest run)", o.Since)
	case d.Window < 4:
		return fmt.Errorf("window %d: must be at least 4 runs", d.Window)
	case !(d.MaxP > 0 && d.MaxP < 1):
		return fmt.Errorf("max p %v: must be strictly between 0 and 1", d.MaxP)
	case !(d.MinMagnitude >= 0):
		return fmt.Errorf("min change %v: must be >= 0", d.MinMagnitude)
	case d.MinSegment < 0:
		return fmt.Errorf("--min-runs %d: must be >= 0", d.MinSegment)
	}
	return nil
}

// methods documents the rules in history.json.
func methods(opt Options) map[string]string {
	return map[string]string{
		"series": "per (provider, model, thinking level) group, from each run's summary.json (objective_pass_rate, ttft_ms, latency_ms " +
			"and tokens_per_s p50 and p95, cost_usd: cost_usd_total over n_cost_known, when priced) and tiers.json (tool_use_success_rate); a run without the figure leaves a gap",
		"change_points": fmt.Sprintf("E-divisive means candidates judged by Student's t-test in Hunter's split and merge (as Apache Otava): "+
			"windows of %d runs, p <= %g, a change of the means of at least %g%%, at least %d runs on each side; each tied to the run where the new level starts and "+
			"to what changed in its setup since the run before (model digest, server version, CLI version, bench version, prompt suite)",
			opt.Detector.Window, opt.Detector.MaxP, 100*opt.Detector.MinMagnitude, opt.Detector.MinSegment),
		"gate": fmt.Sprintf("a regression change point (worse: lower rates or tokens/s, higher latency or cost) of --fail-on-change %s "+
			"in the last %d runs fails the gate (exit 3); a history in which no series of those metrics has the %d runs a change point needs "+
			"is not judged (verdict not_judged, exit 7: NOT JUDGED, never ok)", strings.Join(opt.FailOnChange, ","), opt.Since, opt.MinRuns()),
	}
}
