package report

import (
	"strings"
	"testing"

	"bench/internal/record/results"
)

// agentRec is an agentic record: its turns' calls given as flags, the last
// turn the final answer unless the loop stopped with calls pending.
type agentCall struct{ err, unknown, wrong, unanswered bool }

func agentRec(model, status string, success bool, pass *bool, expected bool, useOK bool, turns ...[]agentCall) results.Record {
	r := results.Record{RecordType: "result", RunID: "r", Provider: "p", Model: model, PromptID: "A1", AvailabilityStatus: status, Success: success, ObjectivePass: pass}
	if expected {
		r.ExpectedTools = []string{"t"}
		r.ToolUseSuccess = &useOK
	}
	for _, cs := range turns {
		var t results.Turn
		for _, c := range cs {
			t.Calls = append(t.Calls, results.TurnCall{Name: "t", IsError: c.err || c.unknown, Unknown: c.unknown, WrongArgs: c.wrong, Unanswered: c.unanswered})
		}
		r.TurnDetails = append(r.TurnDetails, t)
	}
	r.Turns = len(r.TurnDetails)
	return r
}

func bp(b bool) *bool { return &b }

func TestAgenticFigures(t *testing.T) {
	ok, bad := bp(true), bp(false)
	fail := []agentCall{{err: true}}
	good := []agentCall{{}}
	var recs []results.Record
	// "ready": 6 tasks, 5 completed (one after a failed call), one stopped
	// at max_turns with a wrong argument; tool use 4/5 → Tier 1.
	recs = append(recs,
		agentRec("ready", "ok", true, ok, true, true, good, nil),
		agentRec("ready", "ok", true, ok, true, true, good, good, nil),
		agentRec("ready", "ok", true, ok, true, true, fail, good, nil),
		agentRec("ready", "ok", true, ok, false, false, nil), // needs no tool: not a tier cell
		agentRec("ready", "ok", true, bad, true, false, []agentCall{{wrong: true}}, []agentCall{{unanswered: true}}),
		agentRec("ready", "ok", true, ok, true, true, good, nil),
		// never reached the model, or cancelled: not counted
		agentRec("ready", "skipped_unavailable", false, nil, true, false, []agentCall{}),
	)
	cancelled := agentRec("ready", "error", false, nil, true, false, []agentCall{})
	cancelled.FailureType = ptrS(results.FailCancelled)
	recs = append(recs, cancelled)
	// "ghost": all completed, but one call of an unknown tool (recovered).
	recs = append(recs,
		agentRec("ghost", "ok", true, ok, true, true, []agentCall{{unknown: true}}, good, nil),
		agentRec("ghost", "ok", true, ok, true, true, good, nil),
	)
	// "weak": Tier 1 on tool use, 3 of 5 tasks (a failure left unrecovered,
	// an error cell).
	recs = append(recs,
		agentRec("weak", "ok", true, ok, true, true, good, nil),
		agentRec("weak", "ok", true, ok, true, true, good, nil),
		agentRec("weak", "ok", true, ok, true, true, good, nil),
		agentRec("weak", "ok", true, bad, true, true, fail, nil),
		agentRec("weak", "error", false, nil, true, true, good, []agentCall{}),
	)
	recs[len(recs)-1].TurnDetails[1].Error = "timeout"
	recs[len(recs)-1].FailureType = ptrS(results.FailTimeout)
	// "plain": no agentic cell at all.
	recs = append(recs, results.Record{RecordType: "result", Provider: "p", Model: "plain", PromptID: "P9", AvailabilityStatus: "ok", Success: true,
		ExpectedTools: []string{"t"}, ToolUseSuccess: ok})

	s := Summarize(recs)
	r := group(t, s, "ready")
	a := r.Agentic
	if a.NAgentic != 6 || a.NAgenticCompleted != 5 || *a.TaskSuccessRate != 0.833 || *a.MeanTurns != 2.167 {
		t.Errorf("ready: %+v", a)
	}
	if a.NAgenticCalls != 8 || a.NWrongArgumentCalls != 1 || *a.WrongArgumentRate != 0.125 || a.NUnknownToolCalls != 0 || *a.UnknownToolRate != 0 {
		t.Errorf("ready calls: %+v", a)
	}
	if a.NFailedCallCells != 1 || a.NRecovered != 1 || *a.RecoveryRate != 1 {
		t.Errorf("ready recovery: %+v", a)
	}
	// With so few cells every Tier 1 is borderline: routing is not judged
	// where nothing failed, and false where something did.
	if r.Tier.Tier != Tier1 || r.Tier.RoutingReady != nil || r.Tier.Recommended ||
		r.Tier.RoutingNote != "not judged: tool-use success 4/5 = 80.0%, 95% CI [37.5%, 96.4%], reaches below 80%; at this rate no number of repetitions would settle it" {
		t.Errorf("ready tier: %+v", r.Tier)
	}
	g := group(t, s, "ghost")
	if g.Tier.Tier != Tier1 || g.Tier.RoutingReady == nil || *g.Tier.RoutingReady || !strings.HasPrefix(g.Tier.RoutingNote, "1 call(s) of an unknown tool; and the Tier 1 itself is borderline") ||
		*g.Agentic.UnknownToolRate != 0.333 || *g.Agentic.RecoveryRate != 1 {
		t.Errorf("ghost: %+v %+v", g.Tier, g.Agentic)
	}
	w := group(t, s, "weak")
	if w.Tier.Tier != Tier1 || w.Tier.RoutingReady == nil || *w.Tier.RoutingReady || !strings.HasPrefix(w.Tier.RoutingNote, "3 of 5 agentic tasks completed (< 80%)") || *w.Agentic.RecoveryRate != 0 {
		t.Errorf("weak: %+v %+v", w.Tier, w.Agentic)
	}
	p := group(t, s, "plain")
	if p.Agentic.TaskSuccessRate != nil || p.Agentic.MeanTurns != nil || p.Tier.RoutingReady != nil || !strings.HasPrefix(p.Tier.RoutingNote, "not judged: tool-use success 1/1") {
		t.Errorf("plain: %+v %+v", p.Tier, p.Agentic)
	}
	if *a.TaskSuccessCI != (CI{0.4364, 0.97}) {
		t.Errorf("ready task_success_ci %v", *a.TaskSuccessCI)
	}

	tiers := TierRanking(s)
	if len(tiers.RoutingReady) != 0 || len(tiers.Recommended) != 0 || !strings.Contains(tiers.RoutingRule, "at least 80%") && !strings.Contains(tiers.RoutingRule, "fewer than 80%") {
		t.Errorf("tiers.json routing: %+v %+v", tiers.RoutingReady, tiers.Recommended)
	}
	var sb strings.Builder
	if err := WriteMarkdown(&sb, s); err != nil {
		t.Fatal(err)
	}
	md := sb.String()
	for _, want := range []string{
		"## Agentic tasks",
		"| p | ready | – | 5/6 | 83.3% | [43.6%, 97.0%] | 2.2 | 12.5% | 0.0% | 100.0% | 0.0% | 100.0% |",
		"| p | weak | – | 3/5 | 60.0% | [23.0%, 88.3%] | 2.0 | 0.0% | 0.0% | 0.0% | 0.0% | 100.0% |",
		"None: no group is a firm Tier 1",
		"- p/weak: 3 of 5 agentic tasks completed (< 80%)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| p | plain | – | 0/0") || strings.Contains(md, "recommended |") {
		t.Error("a model without agentic cells has no row in the agentic table, and no group is called recommended")
	}
}

func ptrS(s string) *string { return &s }
