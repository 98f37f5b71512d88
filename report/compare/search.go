package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"bench/internal/record/slo"
	"bench/report/stats"
)

// MetricSLOLimit is the SLO search's limit (load.search) as a capacity
// metric (Finding.Metric, --require-judged).
const MetricSLOLimit = "slo_limit"

// Why a limit was not judged.
const (
	WhySearchOneRun  = "search in one run only"
	WhySearchChanged = "search changed"
	WhyNoLimit       = "no limit"
	WhySearchStages  = "slo search"
)

// LimitChange compares two runs' SLO-search limits. A search's stages are
// at levels each run chose for itself, so they are not compared stage by
// stage: the limit is. It is a regression when the new run failed
// decisively at a level the base run proved it held: a new stage whose
// attainment interval lies wholly below the attainment asked, at or below
// a base stage whose interval's lower bound reached it (each stage's
// verdict is the search's own, at its confidence); an improvement the
// other way round; ~ otherwise (the brackets overlap, or no failure was
// decisive). Not judged when one run did not search, the searches or the
// slo: blocks differ, or a run found no limit.
type LimitChange struct {
	Mode string `json:"mode"`
	// BaseLimit and NewLimit are each run's limit, BaseBracket and
	// NewBracket the brackets (as summary.json's slo_search).
	BaseLimit   *float64    `json:"base_limit"`
	NewLimit    *float64    `json:"new_limit"`
	BaseBracket [2]*float64 `json:"base_bracket"`
	NewBracket  [2]*float64 `json:"new_bracket"`
	Change      string      `json:"change"`
	NotJudged   string      `json:"not_judged,omitempty"`
	Reason      string      `json:"reason"`
}

// searchSpec is a provider entry's search in one run.
type searchSpec struct {
	search  *slo.Search
	streams int
	raw     []byte
}

// searches reads each provider entry's load.search from the run's
// config.json; a block that does not read is a warning and no search.
func (r *runData) searches() map[string]searchSpec {
	if r.cfg == nil {
		return nil
	}
	out := map[string]searchSpec{}
	for i, p := range r.cfg.Providers {
		if p.Load == nil {
			continue
		}
		raw := bytes.TrimSpace(p.Load.Search)
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var s slo.Search
		if err := json.Unmarshal(raw, &s); err != nil {
			r.warnings = append(r.warnings, fmt.Sprintf("%s: providers[%d].load.search: %v; its SLO limit is not judged", r.dir, i, err))
			continue
		}
		s.Defaults()
		canon, _ := json.Marshal(s)
		out[p.Name] = searchSpec{search: &s, streams: p.Load.Concurrency, raw: canon}
	}
	return out
}

// searchSide is one run's search of a group: its stages as the search
// reads them, and what it found.
type searchSide struct {
	spec  searchSpec
	done  []slo.Outcome
	limit slo.Limit
}

// searchOf reads a group's search stages from one run (nil when its
// provider did not search in that run).
func searchOf(spec searchSpec, ok bool, list []*stageSide) *searchSide {
	if !ok {
		return nil
	}
	s := &searchSide{spec: spec}
	for _, st := range list {
		if !slo.IsSearchStage(st.name) || st.level == nil || st.sent == 0 {
			continue
		}
		o := slo.Outcome{Stage: st.name, Level: *st.level, Probe: st.name == slo.StageProbe, Tally: slo.Tally{Sent: st.sent, Good: st.good}}
		if st.throughput != nil {
			o.Throughput = *st.throughput
		}
		s.done = append(s.done, o)
	}
	s.limit = spec.search.Evaluate(s.done, spec.streams)
	return s
}

// judgeLimit compares a group's two searches (see LimitChange).
func (c *comparison) judgeLimit(g *Group, b, n *searchSide, sameSLO bool) *LimitChange {
	lc := &LimitChange{}
	for _, side := range []struct {
		s       *searchSide
		limit   **float64
		bracket *[2]*float64
	}{{b, &lc.BaseLimit, &lc.BaseBracket}, {n, &lc.NewLimit, &lc.NewBracket}} {
		if side.s == nil {
			continue
		}
		lc.Mode = side.s.spec.search.Mode()
		l := side.s.limit
		if l.Bracket[0] > 0 {
			*side.limit, side.bracket[0] = ptrTo(l.Bracket[0]), ptrTo(l.Bracket[0])
		}
		if l.Bracket[1] > 0 {
			side.bracket[1] = ptrTo(l.Bracket[1])
		}
	}
	notJudged := func(why, reason string) *LimitChange {
		lc.Change, lc.NotJudged, lc.Reason = string(stats.NotJudged), why, reason
		return lc
	}
	switch {
	case b == nil || n == nil:
		return notJudged(WhySearchOneRun, "only one run searched for the SLO's limit")
	case !bytes.Equal(b.spec.raw, n.spec.raw):
		return notJudged(WhySearchChanged, fmt.Sprintf("the runs searched differently (%s vs %s)", b.spec.raw, n.spec.raw))
	case !sameSLO:
		return notJudged(WhySLOChanged, "the runs' slo: blocks differ: their limits are of different targets")
	case !b.limit.Found || !n.limit.Found:
		return notJudged(WhyNoLimit, fmt.Sprintf("a run's search found no limit (base: %s; new: %s)", b.limit.End, n.limit.End))
	}
	sr := n.spec.search
	// decisive reports a level where one side failed decisively at or below
	// a level the other passed.
	decisive := func(failed, held *searchSide) (float64, float64, bool) {
		for _, f := range failed.done {
			if f.Probe {
				continue
			}
			_, _, hi := sr.Judge(f.Tally)
			if hi >= sr.Attainment {
				continue
			}
			for _, p := range held.done {
				if pass, _, _ := sr.Judge(p.Tally); pass && !p.Probe && p.Level >= f.Level {
					return f.Level, p.Level, true
				}
			}
		}
		return 0, 0, false
	}
	unit := func(v float64) string { return levelText(lc.Mode, v) }
	if fl, pl, ok := decisive(n, b); ok {
		lc.Change, lc.Reason = string(stats.Regression), fmt.Sprintf("limit %s -> %s: the new run failed at %s (its attainment interval wholly below %g %%), where the base run held up to %s",
			unit(b.limit.Level), unit(n.limit.Level), unit(fl), 100*sr.Attainment, unit(pl))
		c.addFinding(Finding{Category: CapacityCat, Scope: "group", Provider: g.Provider, Model: g.Model, ThinkingLevel: g.ThinkingLevel,
			Metric: MetricSLOLimit, Message: fmt.Sprintf("%s SLO limit %s", g.Label(), lc.Reason)})
		return lc
	}
	if fl, pl, ok := decisive(b, n); ok {
		lc.Change, lc.Reason = string(stats.Improvement), fmt.Sprintf("limit %s -> %s: the base run failed at %s (its attainment interval wholly below %g %%), where the new run holds up to %s",
			unit(b.limit.Level), unit(n.limit.Level), unit(fl), 100*sr.Attainment, unit(pl))
		return lc
	}
	lc.Change = string(stats.Same)
	lc.Reason = fmt.Sprintf("limit %s -> %s: no stage of one run failed decisively where the other held", unit(b.limit.Level), unit(n.limit.Level))
	if math.Abs(n.limit.Level/b.limit.Level-1) <= sr.Tolerance {
		lc.Reason = fmt.Sprintf("limit %s -> %s: within the search's tolerance", unit(b.limit.Level), unit(n.limit.Level))
	}
	return lc
}

func levelText(mode string, v float64) string {
	if mode == slo.ModeConcurrency {
		return fmt.Sprintf("%g streams", v)
	}
	return fmt.Sprintf("%.4g/s", v)
}
