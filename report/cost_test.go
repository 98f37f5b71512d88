package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"bench/internal/record/pricing"
	"bench/internal/record/results"
)

// A group's cost figures: the sum of its cells' costs, per passed cell,
// per completed task, the token totals, and the cells without a cost by
// reason. Without any cost, the tables leave cost out.
func TestGroupCost(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	yes, no := true, false
	cell := func(prompt string, cost *float64, pass *bool, in, out int) results.Record {
		return results.Record{RecordType: "result", Provider: "p", Model: "m", PromptID: prompt, AvailabilityStatus: "ok", Success: true,
			ObjectivePass: pass, CostUSD: cost, InputTokens: n(in), OutputTokens: n(out), CachedInputTokens: n(in / 2)}
	}
	task := cell("A1", f(0.5), &yes, 100, 10)
	task.TurnDetails = []results.Turn{{Calls: []results.TurnCall{{Name: "t"}}}, {Text: "done"}}
	failedTask := cell("A1", f(0.25), &no, 100, 10)
	failedTask.Repetition = 1
	failedTask.TurnDetails = []results.Turn{{Text: "gave up"}}
	noTokens := cell("P2", nil, &yes, 0, 0)
	noTokens.CostMissing = pricing.NoTokens
	recs := []results.Record{cell("P0", f(0.125), &yes, 1000, 200), cell("P1", f(0.125), &no, 1000, 200), task, failedTask, noTokens,
		{RecordType: "result", Provider: "q", Model: "m", PromptID: "P0", AvailabilityStatus: "ok", Success: true, ObjectivePass: &yes}}
	s := Summarize(recs)
	g := s.Groups[0]
	// 0.125 + 0.125 + 0.5 + 0.25 over 3 passed cells (P0, A1 r0, P2); the
	// agentic cells' 0.75 over 1 completed task.
	if g.CostUSDTotal == nil || *g.CostUSDTotal != 1 || math.Abs(*g.CostPerPassedCell-1.0/3) > 1e-9 || *g.CostPerCompletedTask != 0.75 {
		t.Errorf("total %v per pass %v per task %v; want 1, 0.333…, 0.75", deref(g.CostUSDTotal), deref(g.CostPerPassedCell), deref(g.CostPerCompletedTask))
	}
	if *g.InputTokensTotal != 2200 || *g.OutputTokensTotal != 420 || *g.CachedInputTokensTotal != 1100 || g.ReasoningTokensTotal != nil {
		t.Errorf("tokens in %d out %d cached %d reasoning %v", *g.InputTokensTotal, *g.OutputTokensTotal, *g.CachedInputTokensTotal, g.ReasoningTokensTotal)
	}
	if g.NCostKnown != 4 || g.CostMissing.Get(pricing.NoTokens) != 1 || len(g.CostMissing) != 1 {
		t.Errorf("known %d missing %v", g.NCostKnown, g.CostMissing)
	}
	other := s.Groups[1]
	if other.CostUSDTotal != nil || other.CostPerPassedCell != nil || other.CostMissing.Get(pricing.NoPrice) != 1 {
		t.Errorf("unpriced group: total %v per pass %v missing %v; want no cost and the reason", deref(other.CostUSDTotal), deref(other.CostPerPassedCell), other.CostMissing)
	}

	var table, md bytes.Buffer
	WriteTable(&table, s)
	WriteMarkdown(&md, s)
	if !strings.Contains(table.String(), "COST") || !strings.Contains(table.String(), "$1.00") || !strings.Contains(md.String(), "## Cost") ||
		!strings.Contains(md.String(), "1 cell: "+pricing.NoPrice) {
		t.Errorf("cost missing from the table or summary.md:\n%s\n%s", table.String(), md.String())
	}
	table.Reset()
	md.Reset()
	unpriced := Summarize(recs[5:])
	WriteTable(&table, unpriced)
	WriteMarkdown(&md, unpriced)
	if strings.Contains(table.String(), "COST") || strings.Contains(md.String(), "## Cost") || strings.Contains(md.String(), "$") {
		t.Errorf("a run without prices shows a cost:\n%s\n%s", table.String(), md.String())
	}
}

func TestFormatUSD(t *testing.T) {
	for v, want := range map[float64]string{0: "$0", 1234.5: "$1234", 12.345: "$12.35", 0.5: "$0.5000", 0.004213: "$0.004213"} {
		if got := FormatUSD(&v); got != want {
			t.Errorf("%v: %s, want %s", v, got, want)
		}
	}
}

// cost_missing is the JSON object the map it once was wrote, byte for
// byte (keys sorted, HTML as the encoder escapes it), and reads back.
func TestReasonCountsJSON(t *testing.T) {
	var c ReasonCounts
	for _, why := range []string{"zeta <b>", pricing.NoPrice, "zeta <b>", pricing.NoTokens} {
		c.add(why)
	}
	m := map[string]int{"zeta <b>": 2, pricing.NoPrice: 1, pricing.NoTokens: 1}
	for _, escape := range []bool{true, false} {
		enc := func(v any) string {
			var b strings.Builder
			e := json.NewEncoder(&b)
			e.SetEscapeHTML(escape)
			e.SetIndent("", "  ")
			if err := e.Encode(struct {
				V any `json:"cost_missing,omitempty"`
			}{v}); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		if got, want := enc(c), enc(m); got != want {
			t.Errorf("escape %v: got %s, want %s", escape, got, want)
		}
	}
	var back struct {
		CostMissing ReasonCounts `json:"cost_missing,omitempty"`
	}
	data, _ := json.Marshal(struct {
		CostMissing ReasonCounts `json:"cost_missing,omitempty"`
	}{c})
	if err := json.Unmarshal(data, &back); err != nil || back.CostMissing.Get("zeta <b>") != 2 || len(back.CostMissing) != 3 {
		t.Errorf("read back %v (%v) from %s", back.CostMissing, err, data)
	}
	if data, _ := json.Marshal(struct {
		CostMissing ReasonCounts `json:"cost_missing,omitempty"`
	}{nil}); string(data) != "{}" {
		t.Errorf("no missing cost: %s, want the field left out", data)
	}
}
