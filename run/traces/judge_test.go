package traces

import (
	"os"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/run/plan"
)

// A cell's llm_judge is a span of its own, after the cell, in the suite:
// the traceparent its requests carried names it, and it says the judge's
// verdict as one assertion; a judge that gave none is an error.
func TestJudgeSpan(t *testing.T) {
	cfg := testConfig(t)
	judged := retried()
	judged.Judge = &results.Judge{Verdict: "fail", Reason: "rude (private: never in a trace)", Provider: "grader", Model: "judge-m",
		InputTokens: ptr(400), OutputTokens: ptr(20), StartedAtMS: judged.EndedAtMS + 5, LatencyMS: 1500,
		Samples: []results.JudgeSample{{Verdict: "fail", Reason: "rude"}}}
	broken := retried()
	broken.Repetition = 2
	broken.Judge = &results.Judge{Verdict: "error", Reason: "not a verdict", Provider: "grader", Model: "judge-m",
		StartedAtMS: judged.EndedAtMS + 10, LatencyMS: 30, Samples: []results.JudgeSample{{Verdict: "error", Error: "garbage"}}}
	tr, spans := runTrace(t, t.TempDir(), cfg, Options{}, judged, broken)
	j := one(t, spans, "judge T1 #1")
	suite := one(t, spans, "suite oo/scripted")
	if j.Kind != KindAssertionCheck || j.ParentSpanID != suite.SpanID || j.DurationMS != 1500 || j.Status != StatusError || j.Error.Type != "assertion_failed" {
		t.Errorf("judge span = %+v", j)
	}
	for k, want := range map[string]any{"gen_ai.request.model": "judge-m", "bench.judge.provider": "grader", "assertions.total": 1.0,
		"assertions.failed": 1.0, "gen_ai.usage.input_tokens": 400.0, "bench.judge.samples": 1.0} {
		if j.Attributes[k] != want {
			t.Errorf("judge %s = %v, want %v", k, j.Attributes[k], want)
		}
	}
	cell := one(t, spans, "cell T1 #1")
	if !at(t, j.StartTime).After(at(t, cell.EndTime)) || at(t, suite.EndTime).Before(at(t, j.EndTime)) {
		t.Errorf("judge %s–%s, cell ends %s, suite ends %s", j.StartTime, j.EndTime, cell.EndTime, suite.EndTime)
	}
	pc := plan.Cell{Provider: &cfg.Providers[0], Model: "scripted", Prompt: &cfg.PromptSet[0], Repetition: 1}
	if want := "00-" + j.TraceID + "-" + j.SpanID + "-01"; tr.JudgeTraceParent(pc) != want {
		t.Errorf("judge traceparent %s, want the judge span's %s", tr.JudgeTraceParent(pc), want)
	}
	if e := one(t, spans, "judge T1 #2"); e.Status != StatusError || e.Error.Type != "judge_error" || e.Attributes["assertions.total"] != 0.0 {
		t.Errorf("judge error span = %+v", e)
	}
	b, err := os.ReadFile(tr.Path())
	if err != nil || strings.Contains(string(b), "rude") || strings.Contains(string(b), "not a verdict") {
		t.Errorf("the judge's reason is in the trace (%v)", err)
	}
}
