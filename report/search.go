package report

import (
	"fmt"
	"math"
	"strings"

	"bench/internal/record/slo"
)

// SLOSearch is what a group's SLO search (load.search) found, read from its
// stages by the rule the run searched with (slo.Search): the highest level
// proven to hold the slo: block at the attainment, the bracket it lies in,
// every stage's attainment with its Wilson interval and n, and the stage
// that failed first with the targets it missed.
type SLOSearch struct {
	// Mode is rate (requests/s) or concurrency (streams).
	Mode       string  `json:"mode"`
	Attainment float64 `json:"attainment"`
	Confidence float64 `json:"confidence"`
	Tolerance  float64 `json:"tolerance"`
	// Found says a stage passed below one that failed; Limit is the
	// highest level that passed below the lowest that failed (null when
	// none passed); Bracket is [Limit, the lowest failing level], a side
	// null when no stage gave it.
	Found   bool        `json:"found"`
	Limit   *float64    `json:"limit"`
	Bracket [2]*float64 `json:"bracket"`
	// Converged says the bracket is within the tolerance; End why the
	// search stopped (converged, max_stages, never_failed,
	// failed_at_bottom, probe_failed, unfinished) and Reason in words.
	Converged bool   `json:"converged"`
	End       string `json:"end"`
	Reason    string `json:"reason"`
	// StagesUsed counts the stages run (the probe included) of MaxStages.
	StagesUsed int            `json:"stages_used"`
	MaxStages  int            `json:"max_stages"`
	Stages     []*SearchStage `json:"stages"`
	// FirstFailed is the first stage, in the order they ran, that failed,
	// with the targets it missed (null when none failed).
	FirstFailed *SearchFailure `json:"first_failed"`
}

// SearchStage is one stage of a search: its level, its sent requests (N),
// those within every per-request target (Good), the attainment and its
// Wilson interval at the search's confidence, and the verdict on the
// interval's lower bound.
type SearchStage struct {
	Stage      string   `json:"stage"`
	Level      float64  `json:"level"`
	Probe      bool     `json:"probe,omitempty"`
	N          int      `json:"n"`
	Good       int      `json:"good"`
	Attainment *float64 `json:"attainment"`
	CI         *CI      `json:"ci"`
	Passed     bool     `json:"passed"`
	// Unanswered counts the requests that got no answer; Missed, by
	// metric, the answered ones over its per-request limit.
	Unanswered int            `json:"unanswered"`
	Missed     map[string]int `json:"missed,omitempty"`
	// RequestThroughput is the stage's answered requests per second (the
	// probe's starts a rate: auto search).
	RequestThroughput *float64 `json:"request_throughput"`
}

// Verdict is the stage's verdict in a word: probe, pass or fail.
func (st *SearchStage) Verdict() string {
	switch {
	case st.Probe:
		return "probe"
	case st.Passed:
		return "pass"
	}
	return "fail"
}

// MissedText lists what the stage's requests missed: by target (in the
// slo: block's order) and those without an answer.
func (st *SearchStage) MissedText() string {
	var missed []string
	for _, m := range slo.SLOMetrics {
		if n := st.Missed[m]; n > 0 {
			missed = append(missed, fmt.Sprintf("%s %d", m, n))
		}
	}
	if st.Unanswered > 0 {
		missed = append(missed, fmt.Sprintf("no answer %d", st.Unanswered))
	}
	return strings.Join(missed, ", ")
}

// SearchFailure is the first stage that failed and why: each target it
// missed, with how many of its requests missed it.
type SearchFailure struct {
	Stage   string   `json:"stage"`
	Level   float64  `json:"level"`
	Targets []string `json:"targets"`
}

// searchSpec is a provider entry's search as config.json records it, and
// the probe's streams.
type searchSpec struct {
	search  *slo.Search
	streams int
}

// readSearches reads each provider entry's load.search from the run's
// config.json (none when the file or the blocks are missing).
func readSearches(runDir string) (map[string]searchSpec, error) {
	type load struct {
		Concurrency int         `json:"concurrency"`
		Search      *slo.Search `json:"search"`
	}
	var doc struct {
		Load      *load `json:"load"`
		Providers []struct {
			Name string `json:"name"`
			Load *load  `json:"load"`
		} `json:"providers"`
	}
	if err := readConfig(runDir, "load.search", &doc); err != nil {
		return nil, err
	}
	out := map[string]searchSpec{}
	for _, p := range doc.Providers {
		l := p.Load
		if l == nil {
			l = doc.Load
		}
		if l != nil && l.Search != nil {
			l.Search.Defaults()
			out[p.Name] = searchSpec{search: l.Search, streams: l.Concurrency}
		}
	}
	return out, nil
}

// attachSearches gives each group of a searching provider its SLOSearch.
func attachSearches(s *Summary, specs map[string]searchSpec, sl *slo.SLO) {
	if len(specs) == 0 || sl == nil {
		return
	}
	for _, g := range s.Groups {
		if sp, ok := specs[g.Provider]; ok && len(g.Stages) > 0 {
			g.SLOSearch = newSearch(sp, g.Stages, sl)
			// The search's stages are no sweep of levels in order (a
			// probe, then levels up and down): its limit replaces the
			// saturation point.
			g.Saturation = nil
		}
	}
}

// newSearch reads a search's result from the group's stages, in the
// order they ran.
func newSearch(sp searchSpec, stages []*Stage, sl *slo.SLO) *SLOSearch {
	sr := sp.search
	out := &SLOSearch{Mode: sr.Mode(), Attainment: sr.Attainment, Confidence: sr.Confidence, Tolerance: sr.Tolerance, MaxStages: sr.MaxStages, Stages: []*SearchStage{}}
	var done []slo.Outcome
	for _, st := range stages {
		if st.Warmup || !slo.IsSearchStage(st.Stage) || st.tally.Sent == 0 || st.Level == nil {
			continue
		}
		o := slo.Outcome{Stage: st.Stage, Level: *st.Level, Probe: st.Stage == slo.StageProbe, Tally: st.tally}
		if st.RequestThroughput != nil {
			o.Throughput = *st.RequestThroughput
		}
		done = append(done, o)
		pass, lo, hi := sr.Judge(o.Tally)
		ss := &SearchStage{Stage: st.Stage, Level: o.Level, Probe: o.Probe, N: o.Tally.Sent, Good: o.Tally.Good,
			Attainment: rate(o.Tally.Good, o.Tally.Sent), CI: &CI{math.Floor(lo*1e4) / 1e4, math.Ceil(hi*1e4) / 1e4},
			Passed: pass && !o.Probe, Unanswered: o.Tally.Unanswered, Missed: o.Tally.Missed, RequestThroughput: st.RequestThroughput}
		out.Stages = append(out.Stages, ss)
	}
	l := sr.Evaluate(done, sp.streams)
	out.Found, out.Converged, out.End, out.Reason, out.StagesUsed = l.Found, l.Converged, l.End, l.Why, l.Stages
	if l.Bracket[0] > 0 {
		out.Limit, out.Bracket[0] = round(l.Level), round(l.Bracket[0])
	}
	if l.Bracket[1] > 0 {
		out.Bracket[1] = round(l.Bracket[1])
	}
	if l.FirstFailed >= 0 {
		o := done[l.FirstFailed]
		out.FirstFailed = &SearchFailure{Stage: o.Stage, Level: o.Level, Targets: missedTargets(sr, sl, o.Tally)}
	}
	return out
}

// missedTargets says why a stage failed: each per-request target it
// missed and by how many requests, the requests without an answer, and
// the attainment against the one asked.
func missedTargets(sr *slo.Search, sl *slo.SLO, t slo.Tally) []string {
	var out []string
	sl.Each(func(metric string, tg *slo.Target) {
		if tg.PerRequest == nil || t.Missed[metric] == 0 {
			return
		}
		out = append(out, fmt.Sprintf("%s ≤ %g: %d of %d requests over", metric, *tg.PerRequest, t.Missed[metric], t.Sent))
	})
	if t.Unanswered > 0 {
		out = append(out, fmt.Sprintf("%d of %d requests got no answer", t.Unanswered, t.Sent))
	}
	_, lo, hi := sr.Judge(t)
	out = append(out, fmt.Sprintf("attainment %s [%.1f, %.1f] %%, lower bound below %g %%", pctText(t.Good, t.Sent), 100*lo, 100*hi, 100*sr.Attainment))
	return out
}

func pctText(k, n int) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %% (%d/%d)", 100*float64(k)/float64(n), k, n)
}

// SearchLevel writes a search's level with its unit.
func SearchLevel(mode string, v float64) string {
	if mode == slo.ModeConcurrency {
		return fmt.Sprintf("%g streams", v)
	}
	return fmt.Sprintf("%.4g requests/s", v)
}

// writeSearch is summary.md's lines for a group's search: the limit and
// its bracket, the stages with their attainment, and the first failure.
func writeSearch(b *strings.Builder, ss *SLOSearch) {
	if ss == nil {
		return
	}
	b.WriteString("**SLO search** ")
	fmt.Fprintf(b, "(%s, attainment ≥ %g %% on the lower bound of a %g %% Wilson interval, tolerance %g %%): ", ss.Mode, 100*ss.Attainment, 100*ss.Confidence, 100*ss.Tolerance)
	switch {
	case ss.Found:
		fmt.Fprintf(b, "limit **%s**, bracket [%s, %s]", SearchLevel(ss.Mode, *ss.Limit), trimFloat(*ss.Bracket[0]), trimFloat(*ss.Bracket[1]))
	case ss.Limit != nil:
		fmt.Fprintf(b, "no failing stage: the SLO held up to %s", SearchLevel(ss.Mode, *ss.Limit))
	case ss.Bracket[1] != nil:
		fmt.Fprintf(b, "no passing stage: the SLO failed down to %s", SearchLevel(ss.Mode, *ss.Bracket[1]))
	default:
		b.WriteString("no limit")
	}
	fmt.Fprintf(b, "; %d of %d stages; %s: %s.\n\n", ss.StagesUsed, ss.MaxStages, ss.End, md(ss.Reason))
	b.WriteString("| stage | level | n | met | attainment | interval | verdict | missed |\n|---|--:|--:|--:|--:|--:|---|---|\n")
	for _, st := range ss.Stages {
		fmt.Fprintf(b, "| %s | %s | %d | %d | %s | [%.1f, %.1f] %% | %s | %s |\n", md(st.Stage), trimFloat(st.Level), st.N, st.Good, pct(st.Attainment),
			100*st.CI[0], 100*st.CI[1], st.Verdict(), orDash(st.MissedText()))
	}
	b.WriteString("\n")
	if f := ss.FirstFailed; f != nil {
		fmt.Fprintf(b, "First failed: %s at %s: %s.\n\n", md(f.Stage), SearchLevel(ss.Mode, f.Level), md(strings.Join(f.Targets, "; ")))
	}
}

func trimFloat(v float64) string { return fmt.Sprintf("%.4g", v) }

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
