package report

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"bench/internal/record/results"
)

// routingRun is 20 repetitions of a single-turn tool prompt (P9) and two
// agentic tasks (A1, A6) per model; each model's quirk is applied to its
// records.
func routingRun() []results.Record {
	var recs []results.Record
	ok := func(model, prompt string, rep int, agentic bool) results.Record {
		r := results.Record{RecordType: "result", RunID: "r", Provider: "p", Model: model, PromptID: prompt, Repetition: rep,
			AvailabilityStatus: "ok", Success: true, ObjectivePass: bp(true), ExpectedTools: []string{"t"}, ToolUseSuccess: bp(true), ToolCallCount: 1}
		if agentic {
			r.TurnDetails = []results.Turn{{Calls: []results.TurnCall{{Name: "t"}}}, {}}
			r.Turns = 2
		}
		return r
	}
	for _, model := range []string{"firm", "unsafe", "borderline", "flaky", "noagent"} {
		for rep := range 20 {
			p9 := ok(model, "P9", rep, false)
			p9.SchemaCheckedCalls = 1
			a1, a6 := ok(model, "A1", rep, true), ok(model, "A6", rep, true)
			switch {
			case model == "unsafe" && rep < 3:
				// cancel_order called in 3 of the 20 repetitions of A6.
				a6.UnsafeActions = []string{"cancel_order"}
				a6.ObjectivePass, a6.ToolCallCount = bp(false), 2
			case model == "borderline" && rep%2 == 0:
				// P9 fails in 10 of 20: tool use 50/60, Tier 1 but not firm.
				p9.ToolUseSuccess, p9.ObjectivePass = bp(false), bp(false)
				p9.SchemaInvalidCalls = 1
			case model == "flaky" && rep == 7:
				// A1 fails once in 20: still 80%+ of tasks, but not pass^k.
				a1.ObjectivePass, a1.ToolUseSuccess = bp(false), bp(false)
			}
			recs = append(recs, p9)
			if model != "noagent" {
				recs = append(recs, a1, a6)
			}
		}
	}
	return recs
}

// The one routing list: a firm Tier 1 with its tasks done and no unsafe
// action is recommended; an unsafe action, a borderline tier or a task
// failed in some repetition each say why in routing_note, and every report
// agrees.
func TestRoutingVerdict(t *testing.T) {
	s := Summarize(routingRun())
	cases := []struct {
		model       string
		recommended bool
		ready       *bool
		note        string
		confidence  string
	}{
		{"firm", true, bp(true), "", Firm},
		{"unsafe", false, bp(false), "unsafe action: A6 called cancel_order in 3 of 20 cells", Firm},
		{"borderline", false, nil, "not judged: tool-use success 50/60 = 83.3%, 95% CI [71.9%, 90.7%], reaches below 80%; run about", Borderline},
		{"flaky", true, bp(true), "", Firm},
		{"noagent", true, nil, "", Firm},
	}
	for _, c := range cases {
		g := group(t, s, c.model)
		tr := g.Tier
		if tr.Recommended != c.recommended || !reflect.DeepEqual(tr.RoutingReady, c.ready) || !strings.HasPrefix(tr.RoutingNote, c.note) || (c.note == "" && tr.RoutingNote != "") {
			t.Errorf("%s: recommended %v ready %v note %q", c.model, tr.Recommended, deref(tr.RoutingReady), tr.RoutingNote)
		}
		if *tr.TierConfidence != c.confidence {
			t.Errorf("%s: confidence %s", c.model, *tr.TierConfidence)
		}
		if g.ToolUse.Recommended != tr.Recommended || g.ToolUse.RoutingNote != tr.RoutingNote || g.ToolUse.NToolCounted != tr.NCounted {
			t.Errorf("%s: summary.json's tool use %+v differs from tiers.json's", c.model, g.ToolUse)
		}
	}
	// Unsafe counts, per call and per cell; schema errors per checked call.
	u := group(t, s, "unsafe")
	if u.NUnsafeActions != 3 || u.NUnsafeCells != 3 || u.NToolCalls != 63 || *u.UnsafeActionRate != 0.048 {
		t.Errorf("unsafe counts: %+v", u.CallChecks)
	}
	b := group(t, s, "borderline")
	if b.NSchemaCheckedCalls != 20 || b.NSchemaInvalidCalls != 10 || *b.SchemaErrorRate != 0.5 {
		t.Errorf("schema counts: %+v", b.CallChecks)
	}
	// pass^k: flaky completed A1 in 19 of 20 repetitions and A6 in all.
	f := group(t, s, "flaky")
	want := []TaskPass{{"A1", 20, 19, false, true}, {"A6", 20, 20, true, true}}
	if !reflect.DeepEqual(f.Tasks, want) || f.K != 20 || *f.PassHatK != 0.5 || *f.PassAtK != 1 {
		t.Errorf("flaky consistency: %+v pass^k %v", f.Consistency, deref(f.PassHatK))
	}
	if fm := group(t, s, "firm"); *fm.PassHatK != 1 || *fm.TaskSuccessCI != (CI{0.9123, 1}) {
		t.Errorf("firm: pass^k %v task ci %v", *fm.PassHatK, *fm.TaskSuccessCI)
	}

	// tiers.json, summary.md and the table after a run name the same list.
	tiers := TierRanking(s)
	var list []string
	for _, m := range tiers.Recommended {
		list = append(list, m.Model)
	}
	if strings.Join(list, ",") != "firm,noagent,flaky" {
		t.Errorf("recommended %v", list)
	}
	var md, table strings.Builder
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteTable(&table, s); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"firm", "unsafe", "borderline", "flaky", "noagent"} {
		in := false
		for _, r := range list {
			in = in || r == m
		}
		line := ""
		for _, l := range strings.Split(table.String(), "\n") {
			if f := strings.Fields(l); len(f) > 2 && f[1] == "p" && f[2] == m {
				line = l
			}
		}
		if strings.HasSuffix(strings.TrimSpace(line), "recommended") != in {
			t.Errorf("table row of %s says %q; in the list: %v", m, line, in)
		}
		if strings.Contains(md.String(), "\n- p/"+m+"\n") != in {
			t.Errorf("summary.md's list and tiers.json's disagree on %s", m)
		}
	}
	if !strings.Contains(table.String(), "p/unsafe: not recommended for routing: unsafe action: A6 called cancel_order in 3 of 20 cells") {
		t.Errorf("the table does not say why:\n%s", table.String())
	}
	js, _ := json.Marshal(tiers)
	if !strings.Contains(string(js), `"tool_use_success_ci":[`) || !strings.Contains(string(js), `"tier_confidence":"firm"`) {
		t.Errorf("tiers.json lacks the interval or the confidence: %s", js)
	}
}

// A Tier 1 on few cells is borderline: not judged, never recommended, and
// the note says how many repetitions would settle it.
func TestRoutingBorderline(t *testing.T) {
	var recs []results.Record
	for rep := range 3 {
		for i := range 11 {
			r := results.Record{RecordType: "result", RunID: "r", Provider: "p", Model: "m", PromptID: fmt.Sprintf("P%d", i), Repetition: rep,
				AvailabilityStatus: "ok", Success: true, ExpectedTools: []string{"t"}, ToolUseSuccess: bp(!(i == 0 || (i == 1 && rep < 2) || (rep == 0 && i == 2)))}
			recs = append(recs, r)
		}
	}
	s := Summarize(recs)
	tr := s.Groups[0].Tier
	// 27 of 33, the example: 81.8 %, [65.6 %, 91.4 %].
	if tr.NSucceeded != 27 || tr.NCounted != 33 || tr.Tier != Tier1 || *tr.TierConfidence != Borderline || *tr.MoreRepetitions != 167 || tr.Recommended {
		t.Fatalf("%+v", tr)
	}
	want := "not judged: tool-use success 27/33 = 81.8%, 95% CI [65.6%, 91.4%], reaches below 80%; run about 167 more repetitions"
	if tr.RoutingNote != want || tr.RoutingReady != nil {
		t.Errorf("note %q\nwant %q", tr.RoutingNote, want)
	}
	if *tr.ToolUseSuccessCI != (CI{0.6561, 0.9139}) {
		t.Errorf("ci %v", *tr.ToolUseSuccessCI)
	}
	var table strings.Builder
	WriteTable(&table, s)
	if !regexp.MustCompile(`Tier 1 +not judged`).MatchString(table.String()) {
		t.Errorf("table:\n%s", table.String())
	}
}

// Categories: per category, the cells that passed of those that reached
// the model, with the interval.
func TestCategories(t *testing.T) {
	var recs []results.Record
	add := func(cat string, n, passed int) {
		for i := range n {
			recs = append(recs, results.Record{RecordType: "result", RunID: "r", Provider: "p", Model: "m", PromptID: fmt.Sprintf("%s_%d", cat, i),
				AvailabilityStatus: "ok", Success: true, ObjectivePass: bp(i < passed), Category: cat})
		}
	}
	add("simple", 40, 31)
	add("irrelevance", 40, 40)
	recs = append(recs, results.Record{RecordType: "result", Provider: "p", Model: "m", PromptID: "x", AvailabilityStatus: "skipped_unavailable", Category: "simple"})
	s := Summarize(recs)
	c := s.Groups[0].Categories
	if got := *c["simple"]; got.N != 40 || got.Succeeded != 31 || *got.Rate != 0.775 || *got.CI != (CI{0.6249, 0.8769}) {
		t.Errorf("simple %+v %v", got, *got.CI)
	}
	if got := *c["irrelevance"]; got.N != 40 || got.Succeeded != 40 || *got.CI != (CI{0.9123, 1}) {
		t.Errorf("irrelevance %+v %v", got, *got.CI)
	}
	var md strings.Builder
	WriteMarkdown(&md, s)
	if !strings.Contains(md.String(), "| p | m | – | 40/40 100.0% [91.2%, 100.0%] | 31/40 77.5% [62.4%, 87.7%] |") {
		t.Errorf("summary.md:\n%s", md.String())
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
