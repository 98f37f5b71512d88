package compare

import (
	"encoding/json"
	"strings"
	"testing"

	"bench/internal/record/results"
)

func onProvider(p string) func(*results.Record) {
	return func(r *results.Record) { r.Provider, r.ProviderType = p, p }
}

func withCost(usd float64) func(*results.Record) { return func(r *results.Record) { r.CostUSD = &usd } }

func agentic(secondValue int, errResult bool, final string) func(*results.Record) {
	return func(r *results.Record) {
		r.RawOutput = final
		r.TurnDetails = []results.Turn{
			{Calls: []results.TurnCall{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`), Result: `{"temp_c": 18}`, ResultHash: "sha256:" + strings.Repeat("a", 64)}}},
			{Calls: []results.TurnCall{{Name: "convert_temperature", Arguments: json.RawMessage(`{"value":` + itoa(secondValue) + `,"to":"F"}`),
				Result: map[bool]string{true: "no rule for these arguments", false: "18 C = 64.4 F"}[errResult], IsError: errResult,
				ResultHash: "sha256:" + strings.Repeat(map[bool]string{true: "c", false: "b"}[errResult], 64)}}},
			{Text: final},
		}
		r.Turns = 3
	}
}

// Six cells of P1 on two providers and three repetitions that all changed
// "Canberra" to "Sydney" are one finding; a trajectory that diverged is
// one finding that names the turn; the cells stay in compare.json.
func TestRootCauses(t *testing.T) {
	dir := t.TempDir()
	prompts := append(defaultPrompts(), prompt{ID: "A1", Name: "two_dependent_calls", Prompt: "Weather in Paris in F?",
		Validator: json.RawMessage(`{"type":"regex_fullmatch","pattern":"64.4.*"}`)})
	var base, cur []*results.Record
	for _, p := range []string{"ollama", "ollama_openai"} {
		for rep := 0; rep < 3; rep++ {
			base = append(base, rec("P0", rep, onProvider(p), withOutput("Canberra")))
			cur = append(cur, rec("P0", rep, onProvider(p), withOutput("Sydney"), failing(`want "Canberra"`)))
			base = append(base, rec("A1", rep, onProvider(p), agentic(18, false, "64.4 °F")))
			if p == "ollama" {
				cur = append(cur, rec("A1", rep, onProvider(p), agentic(81, true, "I could not convert it."), failing("no match")))
			} else {
				cur = append(cur, rec("A1", rep, onProvider(p), agentic(18, false, "64.4 °F")))
			}
		}
	}
	b := writeRun(t, dir, runSpec{id: "base", prompts: prompts, recs: base})
	n := writeRun(t, dir, runSpec{id: "new", prompts: prompts, recs: cur})
	res, err := Compare(b, n, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if len(res.RootCauses) != 2 {
		for _, rc := range res.RootCauses {
			t.Log(rc.Message)
		}
		t.Fatalf("%d root causes, want 2 (P0's output, A1's turn 2)", len(res.RootCauses))
	}
	p0, a1 := res.RootCauses[0], res.RootCauses[1]
	if want := `P0: output "Canberra" → "Sydney" (want "Canberra") in 6/6 cells: both providers, all repetitions`; p0.Message != want || !p0.FailsGate || p0.NCells != 6 {
		t.Errorf("P0 cause %q (%d cells), want %q", p0.Message, p0.NCells, want)
	}
	if want := `A1: turn 2: convert_temperature value 18 → 81; result error in 3/6 cells: ollama/m (1 of 2 groups), all repetitions`; a1.Message != want || a1.NCells != 3 {
		t.Errorf("A1 cause %q, want %q", a1.Message, want)
	}
	if c := cellOf(t, res, "A1", 1); c.Diverged == nil || c.Diverged.Turn != 2 {
		t.Errorf("A1 rep 1 diverged %+v, want turn 2", c.Diverged)
	}
	cellFindings := 0
	for _, f := range res.Findings {
		if f.Scope == "cell" {
			cellFindings++
		}
	}
	if cellFindings != 9 {
		t.Errorf("%d cell findings in compare.json, want the 9 cells", cellFindings)
	}

	var txt strings.Builder
	if err := WriteText(&txt, res); err != nil {
		t.Fatal(err)
	}
	causes := 0
	for _, l := range strings.Split(txt.String(), "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == "FAIL" && f[2] == "cells" {
			causes++
		}
	}
	if causes != 2 || !strings.Contains(txt.String(), p0.Message) || !strings.Contains(txt.String(), "turn 2: convert_temperature value 18 → 81; result error") {
		t.Errorf("terminal findings:\n%s", txt.String())
	}
	var page strings.Builder
	if err := WriteHTML(&page, res); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{`<del>Canberra</del>`, `<ins>Sydney</ins>`, `<tr data-turn="2" class="diverged">`, "turn 2: convert_temperature value 18 → 81; result error"} {
		if !strings.Contains(html, want) {
			t.Errorf("compare.html lacks %s", want)
		}
	}
	if strings.Contains(html, `\"Canberra\"`) {
		t.Error("compare.html shows an answer as a JSON string literal")
	}
}

func TestWordDiff(t *testing.T) {
	b, n := wordDiff("The capital is Canberra, not Sydney.", "The capital is Sydney, not Canberra!")
	var bs, ns []string
	for _, s := range b {
		if s.Op == "del" {
			bs = append(bs, s.Text)
		}
	}
	for _, s := range n {
		if s.Op == "ins" {
			ns = append(ns, s.Text)
		}
	}
	join := func(segs []segment) string {
		var sb strings.Builder
		for _, s := range segs {
			sb.WriteString(s.Text)
		}
		return sb.String()
	}
	if join(b) != "The capital is Canberra, not Sydney." || join(n) != "The capital is Sydney, not Canberra!" {
		t.Errorf("segments do not rebuild the texts: %q / %q", join(b), join(n))
	}
	for _, w := range bs {
		if strings.ContainsAny(w, "abcdefghijklmnopqrstuvwxyz") && !strings.Contains(w, "Canberra") && !strings.Contains(w, "Sydney") {
			t.Errorf("deleted %q: only whole changed words should be marked", w)
		}
	}
	if len(bs) == 0 || len(ns) == 0 {
		t.Errorf("no change marked: %v / %v", bs, ns)
	}
}

// A group's mean cost of a cell base -> new; a rise beyond the threshold
// is a cost finding that fails the gate only with --fail-on cost.
func TestCostGate(t *testing.T) {
	dir := t.TempDir()
	var base, cur []*results.Record
	for rep := 0; rep < 4; rep++ {
		base = append(base, rec("P0", rep, withCost(0.010)))
		cur = append(cur, rec("P0", rep, withCost(0.013)))
	}
	b := writeRun(t, dir, runSpec{id: "base", prompts: defaultPrompts(), recs: base})
	n := writeRun(t, dir, runSpec{id: "new", prompts: defaultPrompts(), recs: cur})
	for _, c := range []struct {
		failOn    []string
		threshold float64
		regressed bool
		finding   bool
	}{
		{[]string{Quality}, 0.10, false, true},
		{[]string{Quality, Cost}, 0.10, true, true},
		{[]string{Quality, Cost}, 0.50, false, false},
	} {
		opt := DefaultOptions()
		opt.FailOn, opt.CostThreshold = c.failOn, c.threshold
		res, err := Compare(b, n, opt)
		if err != nil {
			t.Fatal(err)
		}
		g := res.Groups[0]
		if g.Cost == nil || g.Cost.N != 4 || g.Cost.BasePerCell != 0.01 || g.Cost.NewPerCell != 0.013 || g.Cost.BaseTotal != 0.04 {
			t.Fatalf("cost %+v", g.Cost)
		}
		found := false
		for _, f := range res.Findings {
			found = found || f.Category == Cost
		}
		if res.Regressed() != c.regressed || found != c.finding {
			t.Errorf("fail-on %v threshold %v: regressed %v finding %v; want %v %v", c.failOn, c.threshold, res.Regressed(), found, c.regressed, c.finding)
		}
		var txt strings.Builder
		WriteText(&txt, res)
		if !strings.Contains(txt.String(), "$0.01000 -> $0.01300/cell +30%") {
			t.Errorf("no cost in the groups table:\n%s", txt.String())
		}
		res.Close()
	}
	// Without costs, no cost column.
	res, err := Compare(writeRun(t, dir, runSpec{id: "b2", prompts: defaultPrompts(), recs: []*results.Record{rec("P0", 0)}}),
		writeRun(t, dir, runSpec{id: "n2", prompts: defaultPrompts(), recs: []*results.Record{rec("P0", 0)}}), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var txt strings.Builder
	WriteText(&txt, res)
	if res.Groups[0].Cost != nil || strings.Contains(txt.String(), "cost") {
		t.Errorf("a run without costs shows one:\n%s", txt.String())
	}
}
