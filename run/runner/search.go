package runner

import (
	"fmt"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/slo"
	"bench/run/plan"
)

// searched runs a suite's SLO search (load.search): its warm-up, then one
// stage at a time at the level the search chooses from the stages before
// (slo.Search.Next), until it ends; the planned stages it did not need are
// recorded as not run (search_done), naming why it ended, so the run keeps
// its shape and a resumed run does not send them. A resumed search reads
// its recorded stages back (Options.Recorded) and goes on from there. A
// stage in which stop_error_rate of the sent cells got no answer before
// any stage passed stops the search as it stops a sweep: a server that is
// down is not probed for eight stages. It returns false when the run
// stops starting cells.
func (r *sweep) searched(si int, w *serverWatch) bool {
	suite := r.o.Plan.Suites[si]
	byStage := map[*plan.Stage][]plan.Cell{}
	for _, c := range r.cells[si] {
		byStage[c.Stage] = append(byStage[c.Stage], c)
	}
	prior := r.recordedStages(suite, slo.IsSearchStage)
	sr := suite.Stages[0].Load.Search
	streams := suite.Stages[0].Load.Concurrency
	var done []slo.Outcome
	ended, failure := "", FailSearchDone
	passed := false
	for i := range suite.Stages {
		st := &suite.Stages[i]
		group := byStage[st]
		if r.stopping() {
			return false
		}
		if st.Warmup {
			if len(group) > 0 {
				if _, ok := r.stage(st, st.Level, group, w); !ok {
					return false
				}
			}
			continue
		}
		if ended != "" {
			for _, c := range group {
				if err := r.notRun(c, 0, failure, ended); err != nil {
					return false
				}
			}
			continue
		}
		was := prior[st.Name]
		next := sr.Next(done, streams)
		if next.End != "" && was.sent == 0 {
			ended = fmt.Sprintf("not sent: the SLO search had ended after %d stages: %s", len(done), next.Why)
			r.noteSearch(suite, sr, done, streams)
			for _, c := range group {
				if err := r.notRun(c, 0, failure, ended); err != nil {
					return false
				}
			}
			continue
		}
		level := next.Level
		if was.sent > 0 {
			level = was.level // a stage begun before the resume keeps its level
		}
		run := stageRun{tally: was.tally}
		if len(group) > 0 {
			var ok bool
			if run, ok = r.stage(st, level, group, w); !ok {
				return false
			}
			run.tally = merge(was.tally, run.tally)
		}
		o := slo.Outcome{Stage: st.Name, Level: level, Probe: st.Search == plan.SearchProbe, Tally: run.tally}
		if o.Probe {
			o.Throughput = run.rate()
			if len(group) == 0 {
				o.Throughput = was.throughput
			}
		}
		done = append(done, o)
		if ok, _, _ := sr.Judge(o.Tally); ok && !o.Probe {
			passed = true
		}
		if sent, miss := o.Tally.Sent, o.Tally.Unanswered; !passed && sent > 0 && float64(miss) >= st.Load.StopErrorRate*float64(sent) {
			ended, failure = fmt.Sprintf("not sent: the SLO search stopped after stage %s, where %d of %d cells got no answer before any stage passed (load.stop_error_rate %g)",
				st.Name, miss, sent, st.Load.StopErrorRate), FailSweepStopped
		}
	}
	if ended == "" || failure == FailSweepStopped {
		r.noteSearch(suite, sr, done, streams)
	}
	return true
}

// noteSearch says once, in the run's log, what the search found; a
// search that could not bracket its limit is a warning.
func (r *sweep) noteSearch(s plan.Suite, sr *slo.Search, done []slo.Outcome, streams int) {
	l := sr.Evaluate(done, streams)
	unit := " requests/s"
	if sr.Mode() == slo.ModeConcurrency {
		unit = " streams"
	}
	who := s.Provider + "/" + s.Model
	switch {
	case l.Found:
		fmt.Fprintf(r.o.Log, "bench: %s: SLO search: %g%s held, %g%s did not (%d stages, %s)\n", who, round3(l.Bracket[0]), unit, round3(l.Bracket[1]), unit, l.Stages, l.End)
	default:
		fmt.Fprintf(r.o.Log, "bench: warning: %s: the SLO search found no limit after %d stages: %s\n", who, l.Stages, l.Why)
	}
}

func round3(v float64) float64 {
	return float64(int64(v*1000+0.5)) / 1000
}

// merge adds two tallies of one stage (a resumed stage's halves).
func merge(a, b slo.Tally) slo.Tally {
	out := slo.Tally{Sent: a.Sent + b.Sent, Good: a.Good + b.Good, Unanswered: a.Unanswered + b.Unanswered}
	for _, m := range []map[string]int{a.Missed, b.Missed} {
		for k, v := range m {
			if out.Missed == nil {
				out.Missed = map[string]int{}
			}
			out.Missed[k] += v
		}
	}
	return out
}

// recordedStage is what an earlier invocation recorded of one search or
// auto-sweep stage: its level, its tally, and its rate (answered cells
// over its window).
type recordedStage struct {
	level      float64
	sent       int
	tally      slo.Tally
	throughput float64
	succeeded  int
	window     time.Duration
}

// rateWith is the stage's rate over both halves of a stage begun before
// a resume and finished after it: their answered cells over their
// windows (the gap between the two invocations is no one's).
func (w recordedStage) rateWith(run stageRun) float64 {
	return stageRun{succeeded: w.succeeded + run.succeeded, window: w.window + run.window}.rate()
}

// recordedStages reads back a resumed suite's search (or auto-sweep)
// stages, those whose names is says, from the records the session handed
// over (Options.Recorded).
func (r *sweep) recordedStages(s plan.Suite, is func(stage string) bool) map[string]recordedStage {
	out := map[string]recordedStage{}
	type span struct{ start, end int64 }
	spans := map[string]*span{}
	succeeded := map[string]int{}
	for _, rec := range r.o.Recorded {
		if rec.Provider != s.Provider || rec.Model != s.Model || !sameLevel(rec.ThinkingLevel, s.ThinkingLevel) || !is(rec.Stage) {
			continue
		}
		st := out[rec.Stage]
		if !results.Sent(rec) {
			continue
		}
		st.sent++
		if rec.StageLevel != nil {
			st.level = *rec.StageLevel
		}
		st.tally.Add(r.cfg.SLO, rec)
		out[rec.Stage] = st
		sp := spans[rec.Stage]
		if sp == nil {
			sp = &span{start: rec.StageStartUS}
			spans[rec.Stage] = sp
		}
		sp.start = min(sp.start, rec.StageStartUS)
		sp.end = max(sp.end, rec.EndedAtUS)
		if rec.AvailabilityStatus == results.StatusOK && rec.Success {
			succeeded[rec.Stage]++
		}
	}
	for name, sp := range spans {
		if st := out[name]; sp.end > sp.start && sp.start > 0 {
			st.succeeded, st.window = succeeded[name], time.Duration(sp.end-sp.start)*time.Microsecond
			st.throughput = stageRun{succeeded: st.succeeded, window: st.window}.rate()
			out[name] = st
		}
	}
	return out
}

func sameLevel(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
