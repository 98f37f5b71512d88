package compare

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"bench/internal/record/agentsnap"
	"bench/internal/record/results"
)

// Every rule of the cell verdicts, one pair of cells each.
func TestCellVerdicts(t *testing.T) {
	memCall := call("get_memory_usage", `{"unit":"MB"}`)
	tool := withCalls([]string{"get_memory_usage"}, memCall)
	cases := []struct {
		name      string
		prompt    string
		base, cur []func(*results.Record)
		verdict   string
		category  string
		agentsnap string
		paths     []string // the changes' paths, in order
		reason    string   // a substring of the reasons
	}{
		{name: "identical", prompt: "P0", verdict: Match, agentsnap: agentsnap.AgentsnapPassed, paths: []string{}},
		{name: "output drift, still passes", prompt: "P0", cur: mods(withOutput("another answer")),
			verdict: Drift, category: DriftCat, agentsnap: agentsnap.AgentsnapOutputDrift, paths: []string{"output"}, reason: "output"},
		{name: "pass to fail", prompt: "P0", cur: mods(withOutput("wrong"), failing(`want "answer P0"`)),
			verdict: Regression, category: Quality, agentsnap: agentsnap.AgentsnapOutputDrift, paths: []string{"pass", "why", "output"}, reason: "pass -> fail"},
		{name: "fail to pass", prompt: "P0", base: mods(withOutput("wrong"), failing("x")),
			verdict: Improvement, agentsnap: agentsnap.AgentsnapOutputDrift, paths: []string{"pass", "output"}, reason: "fail -> pass"},
		{name: "expected tool call lost", prompt: "P1", base: mods(tool), cur: mods(withCalls([]string{"get_memory_usage"}), withOutput("about 2 GB")),
			verdict: Regression, category: Quality, agentsnap: agentsnap.AgentsnapToolsChanged,
			paths: []string{"pass", "why", "expected_tools", "tools[].name"}, reason: "expected tool call lost: get_memory_usage"},
		{name: "tool calls reordered on a tool prompt", prompt: "P1",
			base:    mods(withCalls([]string{"get_memory_usage"}, memCall, call("df", `{}`))),
			cur:     mods(withCalls([]string{"get_memory_usage"}, call("df", `{}`), memCall)),
			verdict: Regression, category: Quality, agentsnap: agentsnap.AgentsnapToolsReordered, paths: []string{"tools[].order"}, reason: "tool calls reordered"},
		{name: "extra tool call on a tool prompt", prompt: "P1", base: mods(tool),
			cur:     mods(withCalls([]string{"get_memory_usage"}, memCall, call("rm", `{}`))),
			verdict: Regression, category: Quality, agentsnap: agentsnap.AgentsnapToolsChanged, paths: []string{"tools[].name"}, reason: "tool calls changed"},
		{name: "tool arguments changed, still passes", prompt: "P1", base: mods(tool),
			cur:     mods(withCalls([]string{"get_memory_usage"}, call("get_memory_usage", `{"unit":"GB"}`))),
			verdict: Drift, category: DriftCat, agentsnap: agentsnap.AgentsnapToolsChanged, paths: []string{"tools[0].args"}, reason: "tools[].args"},
		{name: "argument key order is no change", prompt: "P1",
			base:    mods(withCalls([]string{"get_memory_usage"}, call("get_memory_usage", `{"a":1,"b":2}`))),
			cur:     mods(withCalls([]string{"get_memory_usage"}, call("get_memory_usage", `{"b":2,"a":1.0}`))),
			verdict: Match, agentsnap: agentsnap.AgentsnapPassed, paths: []string{}},
		{name: "a command in prose changed on a prompt without tools", prompt: "P0",
			base:    mods(withOutput("answer P0"), withCalls(nil, results.ToolCall{Name: "free", Arguments: json.RawMessage(`{"command":"free -h"}`), Source: results.SourceText})),
			cur:     mods(withOutput("answer P0"), withCalls(nil, results.ToolCall{Name: "top", Arguments: json.RawMessage(`{"command":"top"}`), Source: results.SourceText})),
			verdict: Drift, category: DriftCat, agentsnap: agentsnap.AgentsnapToolsChanged, paths: []string{"tools[].name"}},
		{name: "new error", prompt: "P0", cur: mods(status(results.StatusError, results.FailTimeout, "no complete answer within run.timeout")),
			verdict: Regression, category: Quality, agentsnap: agentsnap.AgentsnapRegression, paths: []string{"pass", "why", "error"}, reason: "new error"},
		{name: "empty answer", prompt: "P0", cur: mods(status(results.StatusOK, results.FailEmptyResponse, "no text and no tool call")),
			verdict: Regression, category: Quality, agentsnap: agentsnap.AgentsnapRegression, paths: []string{"pass", "why", "error"}},
		{name: "failure text changed, failing in both", prompt: "P0",
			base:    mods(status(results.StatusError, results.FailTimeout, "no complete answer within run.timeout")),
			cur:     mods(status(results.StatusError, results.FailStreamTruncated, "the stream ended early")),
			verdict: Drift, category: DriftCat, agentsnap: agentsnap.AgentsnapPassed, paths: []string{"error"}},
		{name: "ok to unavailable", prompt: "P0", cur: mods(status(results.StatusSkippedUnavailable, results.FailConnectionRefused, "connection refused")),
			verdict: Regression, category: Availability, paths: []string{"availability_status", "failure_type"}, reason: "did not reach the model"},
		{name: "ok to cancelled", prompt: "P0", cur: mods(status(results.StatusError, results.FailCancelled, "run aborted")),
			verdict: Regression, category: Availability, paths: []string{"availability_status", "failure_type"}},
		{name: "ok to rate limited", prompt: "P0", cur: mods(status(results.StatusRateLimited, results.FailHTTP429, "slow down")),
			verdict: Regression, category: Availability, paths: []string{"availability_status", "failure_type"}},
		{name: "unavailable in both", prompt: "P0",
			base:    mods(status(results.StatusSkippedUnavailable, results.FailConnectionRefused, "refused")),
			cur:     mods(status(results.StatusSkippedUnavailable, results.FailConnectionRefused, "refused")),
			verdict: Unavailable, paths: []string{}, reason: "neither run"},
		{name: "back from unavailable", prompt: "P0", base: mods(status(results.StatusAuthError, "http_401", "bad key")),
			verdict: Unavailable, paths: []string{"availability_status", "failure_type"}, reason: "base run did not reach"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			base := writeRun(t, dir, runSpec{id: "base", recs: []*results.Record{rec(c.prompt, 0, c.base...)}})
			cur := writeRun(t, dir, runSpec{id: "new", recs: []*results.Record{rec(c.prompt, 0, c.cur...)}})
			res, err := Compare(base, cur, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			got := cellOf(t, res, c.prompt, 0)
			if got.Verdict != c.verdict || got.Category != c.category || got.Agentsnap != c.agentsnap {
				t.Errorf("verdict %s/%s agentsnap %q, want %s/%s %q; reasons %v changes %s", got.Verdict, got.Category, got.Agentsnap,
					c.verdict, c.category, c.agentsnap, got.Reasons, mustJSON(got.Changes))
			}
			if p := paths(got.Changes); !slices.Equal(p, c.paths) {
				t.Errorf("change paths %v, want %v: %s", p, c.paths, mustJSON(got.Changes))
			}
			if !strings.Contains(strings.Join(got.Reasons, "; "), c.reason) {
				t.Errorf("reasons %q lack %q", got.Reasons, c.reason)
			}
			wantGate := c.category == Quality || c.category == Availability
			if res.Regressed() != wantGate {
				t.Errorf("gate verdict %s, want regression=%v", res.Verdict, wantGate)
			}
		})
	}
}

func mods(m ...func(*results.Record)) []func(*results.Record) { return m }

// mustJSON encodes v compactly, as compare.json holds it (no HTML escaping).
func mustJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

// The changes carry the values: pass from true to false, the violation,
// and the output before and after.
func TestRegressionChangeValues(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, runSpec{id: "base", recs: []*results.Record{rec("P0", 0)}})
	cur := writeRun(t, dir, runSpec{id: "new", recs: []*results.Record{rec("P0", 0, withOutput("<b>wrong</b>"), failing(`want "answer P0"`))}})
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"path":"pass","from":true,"to":false},{"path":"why","from":null,"to":"want \"answer P0\""},{"path":"output","from":"answer P0","to":"<b>wrong</b>"}]`
	if got := mustJSON(cellOf(t, res, "P0", 0).Changes); got != want {
		t.Errorf("changes\n%s\nwant\n%s", got, want)
	}
}

// A prompt whose text, system prompt, tools or validator changed is
// reported with what changed, its cells not judged (even when they fail
// now), and cells in one run only are missing or new.
func TestChangedMissingNew(t *testing.T) {
	dir := t.TempDir()
	changedPrompts := defaultPrompts()
	changedPrompts[0].Validator = json.RawMessage(`{"type":"exact","value":"another"}`)
	changedPrompts[1].System = "Use the tool, please."
	base := writeRun(t, dir, runSpec{id: "base", recs: []*results.Record{rec("P0", 0), rec("P1", 0), rec("P2", 0), rec("P2", 1)}})
	cur := writeRun(t, dir, runSpec{id: "new", prompts: changedPrompts,
		recs: []*results.Record{rec("P0", 0, failing("x")), rec("P1", 0), rec("P2", 0), rec("P2", 2)}})
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		prompt  string
		rep     int
		verdict string
	}{{"P0", 0, Changed}, {"P1", 0, Changed}, {"P2", 0, Match}, {"P2", 1, Missing}, {"P2", 2, New}} {
		if got := cellOf(t, res, w.prompt, w.rep); got.Verdict != w.verdict {
			t.Errorf("%s rep %d: %s, want %s", w.prompt, w.rep, got.Verdict, w.verdict)
		}
	}
	if got := paths(cellOf(t, res, "P0", 0).Changes); !slices.Equal(got, []string{"prompt.validator"}) {
		t.Errorf("P0 changes %v", got)
	}
	if len(res.ChangedPrompts) != 2 || res.ChangedPrompts[1].PromptID != "P1" || res.ChangedPrompts[1].Changes[0].Path != "prompt.system" {
		t.Errorf("changed prompts %s", mustJSON(res.ChangedPrompts))
	}
	if res.Regressed() {
		t.Errorf("changed, missing and new cells failed the gate: %s", mustJSON(res.Findings))
	}
	if res.Counts[Changed] != 2 || res.Counts[Missing] != 1 || res.Counts[New] != 1 || res.Counts[Match] != 1 {
		t.Errorf("counts %v", res.Counts)
	}
}

// --fail-on decides which categories fail the gate; regressions of the
// others are still listed as findings, drift only when it gates.
func TestFailOn(t *testing.T) {
	dir := t.TempDir()
	base := writeRun(t, dir, runSpec{id: "base", recs: []*results.Record{rec("P0", 0), rec("P0", 1)}})
	cur := writeRun(t, dir, runSpec{id: "new", recs: []*results.Record{
		rec("P0", 0, withOutput("drifted")),
		rec("P0", 1, status(results.StatusSkippedUnavailable, results.FailConnectionRefused, "refused")),
	}})
	for _, c := range []struct {
		failOn []string
		want   bool
	}{
		{[]string{Quality, Latency, Availability}, true},
		{[]string{Quality, Latency}, false}, // --allow-unavailable
		{[]string{DriftCat}, true},
		{[]string{Quality}, false},
	} {
		opt := DefaultOptions()
		opt.FailOn = c.failOn
		res, err := Compare(base, cur, opt)
		if err != nil {
			t.Fatal(err)
		}
		wantFindings := 1 // the availability regression; the drift only when it gates
		if slices.Contains(c.failOn, DriftCat) {
			wantFindings = 2
		}
		if res.Regressed() != c.want || len(res.Findings) != wantFindings {
			t.Errorf("fail-on %v: verdict %s, %d findings %s", c.failOn, res.Verdict, len(res.Findings), mustJSON(res.Findings))
		}
	}
	opt := DefaultOptions()
	opt.FailOn = []string{"speed"}
	if _, err := Compare(base, cur, opt); err == nil || !strings.Contains(err.Error(), `fail-on "speed"`) {
		t.Errorf("unknown category: %v", err)
	}
}

// An agentic cell's snapshot tools are every turn's calls, with the result
// hash of what bench answered: a changed result is drift, a changed call
// sequence a regression.
func TestAgenticCells(t *testing.T) {
	turns := func(answers ...string) func(*results.Record) {
		return func(r *results.Record) {
			r.ExpectedTools = []string{"get_weather"}
			r.ToolUseSuccess = ptr(true)
			r.TurnDetails = nil
			r.Turns = 0
			for i, res := range answers {
				r.TurnDetails = append(r.TurnDetails, resultsTurn(i, res))
				r.Turns++
			}
			r.Turns++
		}
	}
	dir := t.TempDir()
	base := writeRun(t, dir, runSpec{id: "base", recs: []*results.Record{rec("P1", 0, turns("18 C")), rec("P1", 1, turns("18 C"))}})
	cur := writeRun(t, dir, runSpec{id: "new", recs: []*results.Record{rec("P1", 0, turns("19 C")), rec("P1", 1, turns("18 C", "18 C"))}})
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if c := cellOf(t, res, "P1", 0); c.Verdict != Drift || !slices.Equal(paths(c.Changes), []string{"tools[0].result_hash"}) {
		t.Errorf("changed result: %s %s", c.Verdict, mustJSON(c.Changes))
	}
	if c := cellOf(t, res, "P1", 1); c.Verdict != Regression || c.Agentsnap != agentsnap.AgentsnapToolsChanged {
		t.Errorf("an extra call: %s %s %s", c.Verdict, c.Agentsnap, mustJSON(c.Changes))
	}
}

func resultsTurn(i int, result string) results.Turn {
	return results.Turn{StartMS: float64(i), EndMS: float64(i) + 5, Calls: []results.TurnCall{{
		ID: "call_" + result, Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`),
		Result: result, ResultHash: agentsnap.ResultHash(result), Rule: 0}}}
}
