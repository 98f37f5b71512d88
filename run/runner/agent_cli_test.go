package runner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/testpeer/anthropictest"
)

// The real Claude Code CLI runs built-in task A1 with its own agent loop
// against the Messages test server, calling bench's scripted tools over MCP
// (this test binary is the server, see TestMain): the calls reach bench,
// whose call log gives their arguments and answers; a call of a tool bench
// does not have never reaches it; a model that keeps calling is stopped at
// max_turns; the text-mode task is skipped.
func TestClaudeCodeAgentLoop(t *testing.T) {
	bin := anthropictest.ClaudeBin(t)
	srv := anthropictest.Start(t)
	srv.Conversation("cli-weather",
		anthropictest.Reply{Text: []string{"Let me check."}, ToolName: "mcp__bench__get_weather", ToolInput: []string{`{"city": `, `"Paris"}`}},
		anthropictest.Reply{ToolName: "mcp__bench__convert_temperature", ToolInput: []string{`{"value": 18, "from": "C", "to": "F"}`}},
		anthropictest.Reply{Text: []string{"64.4 °F"}},
	)
	srv.Conversation("cli-ghost",
		anthropictest.Reply{ToolName: "mcp__bench__ghost", ToolInput: []string{`{"x": 1}`}},
		anthropictest.Reply{Text: []string{"I could not check."}},
	)
	srv.Conversation("cli-loop",
		anthropictest.Reply{ToolName: "mcp__bench__get_weather", ToolInput: []string{`{"city": "Paris"}`}},
	)
	cfg, provs := loadConfig(t, fmt.Sprintf(`run:
  concurrency: 3
  timeout: 120s
providers:
  - type: claude_code_cli
    command: %s
    env:
      ANTHROPIC_BASE_URL: %s
      ANTHROPIC_AUTH_TOKEN: test-token
      ANTHROPIC_API_KEY: ""
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
      CLAUDE_CODE_MAX_RETRIES: "0"
      HOME: %s
    models: [cli-weather, cli-ghost, cli-loop]
prompts:
  only: [A1, A7]
`, bin, srv.URL, t.TempDir()))
	dir := t.TempDir()
	recs := sweepAll(t, cfg, provs, dir)
	rec := func(model, prompt string) *results.Record {
		for _, r := range recs {
			if r.Model == model && r.PromptID == prompt {
				return r
			}
		}
		t.Fatalf("no record %s/%s", model, prompt)
		return nil
	}

	w := rec("cli-weather", "A1")
	if !w.Success || w.Turns != 3 || w.ObjectivePass == nil || !*w.ObjectivePass || w.ToolUseSuccess == nil || !*w.ToolUseSuccess {
		t.Fatalf("cli-weather: %s success %v turns %d pass %v %v use %v; %v; %+v", w.AvailabilityStatus, w.Success, w.Turns, w.ObjectivePass, w.Violation, w.ToolUseSuccess, w.ErrorMessage, w.TurnDetails)
	}
	if strings.Join(w.ToolCalls, ",") != "get_weather,convert_temperature" || w.RawOutput != "64.4 °F" {
		t.Errorf("cli-weather: calls %v answer %q", w.ToolCalls, w.RawOutput)
	}
	// Bench's side: the rule that answered and what it answered come only
	// from the call log of bench's MCP server.
	c := w.TurnDetails[0].Calls[0]
	if c.ID != "toolu_cli-weather_0" || string(c.Arguments) != `{"city":"Paris"}` || c.Rule != 0 || c.Result != `{"city": "Paris", "temp_c": 18, "conditions": "clear"}` || c.IsError {
		t.Errorf("cli-weather call 1: %+v", c)
	}
	if c := w.TurnDetails[1].Calls[0]; c.Name != "convert_temperature" || string(c.Arguments) != `{"value":18,"from":"C","to":"F"}` || c.Rule != 0 || c.Result != "18 C = 64.4 F" {
		t.Errorf("cli-weather call 2: %+v", c)
	}
	for k, tn := range w.TurnDetails {
		if tn.TTFTMS == nil || tn.EndMS < tn.StartMS || (k > 0 && tn.StartMS < w.TurnDetails[k-1].StartMS) {
			t.Errorf("cli-weather turn %d: %+v", k+1, tn)
		}
	}
	// The model's side: the scripted result reached it as the tool_result.
	var second []anthropictest.Request
	for _, r := range srv.Requests() {
		if r.Model == "cli-weather" && r.Path == "/v1/messages" && r.Turn() == 1 {
			second = append(second, r)
		}
	}
	if len(second) != 1 {
		t.Fatalf("%d requests at turn 1", len(second))
	}
	if trs := second[0].ToolResults(); len(trs) != 1 || trs[0].Content != `{"city": "Paris", "temp_c": 18, "conditions": "clear"}` || trs[0].ToolUseID != "toolu_cli-weather_0" {
		t.Errorf("tool results sent to the model: %+v", trs)
	}
	if names := second[0].ToolNames(); !slices.Equal(slices.Sorted(slices.Values(names)), []string{"mcp__bench__convert_temperature", "mcp__bench__get_weather"}) {
		t.Errorf("tools offered to the model: %v (the task's tools only)", names)
	}
	tr := checkTrace(t, dir, cfg, w, true)
	if tr.Steps[2].Tool == nil || *tr.Steps[2].Tool != "mcp__bench__get_weather" {
		t.Errorf("trace names the call as the model saw it: %v", tr.Steps[2].Tool)
	}

	g := rec("cli-ghost", "A1")
	if !g.Success || g.ObjectivePass == nil || *g.ObjectivePass || !strings.Contains(*g.Violation, "called unknown tool mcp__bench__ghost") {
		t.Errorf("cli-ghost: success %v pass %v %v", g.Success, g.ObjectivePass, g.Violation)
	}
	if c := g.TurnDetails[0].Calls[0]; !c.Unknown || !c.IsError || c.Rule != -1 || !strings.Contains(c.Result, "No such tool available: mcp__bench__ghost") {
		t.Errorf("cli-ghost call: %+v", c)
	}
	checkTrace(t, dir, cfg, g, false)

	l := rec("cli-loop", "A1")
	if !l.Success || l.Turns != 4 || l.ObjectivePass == nil || *l.ObjectivePass || !strings.Contains(*l.Violation, "max_turns (4)") {
		t.Errorf("cli-loop: success %v turns %d pass %v %v; %v", l.Success, l.Turns, l.ObjectivePass, l.Violation, l.ErrorMessage)
	}
	checkTrace(t, dir, cfg, l, false)

	for _, m := range []string{"cli-weather", "cli-ghost", "cli-loop"} {
		s := rec(m, "A7")
		if s.AvailabilityStatus != "skipped_unavailable" || s.FailureType == nil || *s.FailureType != textModeUnsupported {
			t.Errorf("%s A7: %s %v", m, s.AvailabilityStatus, s.FailureType)
		}
	}
}
