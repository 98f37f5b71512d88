package prompts_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/results"
	"bench/prompts"
)

// writeRun writes a run directory of the prompt set and records given.
func writeRun(t *testing.T, set []map[string]any, recs ...results.Record) string {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(map[string]any{"prompt_set": set})
	os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
	var lines []string
	for _, r := range recs {
		r.RecordType, r.RunID, r.ProviderType, r.AvailabilityStatus = results.RecordType, "r", "ollama", results.StatusOK
		r.ToolCalls, r.ToolCallDetails = []string{}, []results.ToolCall{}
		b, _ := json.Marshal(r)
		lines = append(lines, string(b))
	}
	os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	return dir
}

// A text-mode task's turns go back as bench sent them (the commands'
// outputs as one user message, no native calls); a cell written twice is
// replayed as its last line has it; the turns come in the order they were
// sent, from the first.
func TestReplayTextModeAndDuplicates(t *testing.T) {
	set := []map[string]any{{"id": "SH", "prompt": "List the files.", "max_turns": 3,
		"tools": []map[string]any{{"name": "shell", "mode": "text"}}}, {"id": "PLAIN", "prompt": "hi"}}
	turns := []results.Turn{
		{StartMS: 1, Text: "RUN: ls", Calls: []results.TurnCall{{Name: "shell", Arguments: json.RawMessage(`{"command":"ls -l"}`), Result: "a.txt"}}},
		{StartMS: 30, Text: "There is a.txt."},
	}
	first := results.Record{Provider: "p", Model: "m", PromptID: "SH", StartedAtMS: 1000, TurnDetails: turns[:1]}
	retried := results.Record{Provider: "p", Model: "m", PromptID: "SH", StartedAtMS: 2000, TurnDetails: turns}
	other := results.Record{Provider: "p", Model: "m", PromptID: "SH", Repetition: 1, StartedAtMS: 1010, TurnDetails: turns[:1]}
	plain := results.Record{Provider: "p", Model: "m", PromptID: "PLAIN", StartedAtMS: 900}
	ps, err := prompts.Replay(writeRun(t, set, first, other, plain, retried))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	// R1 is the retried cell (first seen first), at 2001 and 2030 ms; R2
	// the other repetition at 1011 ms.
	if got := strings.Join(ids, " "); got != "R2T1 R1T1 R1T2" {
		t.Fatalf("replayed %s", got)
	}
	if ps[0].ReplayAtMS != 0 || ps[1].ReplayAtMS != 990 || ps[2].ReplayAtMS != 1019 {
		t.Errorf("offsets %v %v %v", ps[0].ReplayAtMS, ps[1].ReplayAtMS, ps[2].ReplayAtMS)
	}
	h := ps[2].History
	if len(h) != 2 || h[0].Role != prompts.RoleAssistant || h[0].Text != "RUN: ls" || len(h[0].ToolCalls) != 0 ||
		h[1].Role != prompts.RoleUser || h[1].Text != "$ ls -l\na.txt" {
		t.Errorf("text-mode history %+v", h)
	}
	if len(ps[2].Tools) != 0 || ps[2].Conversation != "R1" || ps[2].Turn != 2 || ps[2].Prompt != "List the files." {
		t.Errorf("replayed turn %+v", ps[2])
	}
}

// A native task's reply carries its calls and each answer is a tool
// message with the call's id; an unanswered call (max_turns) adds none.
func TestReplayNativeCalls(t *testing.T) {
	set := []map[string]any{{"id": "W", "system": "sys", "prompt": "Weather?", "max_turns": 2,
		"tools": []map[string]any{{"name": "get_weather", "parameters": map[string]any{"type": "object"}}}}}
	r := results.Record{Provider: "p", Model: "m", PromptID: "W", StartedAtMS: 5, TurnDetails: []results.Turn{
		{StartMS: 0, Calls: []results.TurnCall{
			{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`), Result: "rain", IsError: true},
			{ID: "c2", Name: "get_weather", Arguments: json.RawMessage(`{}`), Unanswered: true}}},
		{StartMS: 10, Text: "Rain."},
	}}
	ps, err := prompts.Replay(writeRun(t, set, r))
	if err != nil {
		t.Fatal(err)
	}
	h := ps[1].History
	if len(h) != 2 || len(h[0].ToolCalls) != 1 || h[0].ToolCalls[0].ID != "c1" || string(h[0].ToolCalls[0].Arguments) != `{"city":"Oslo"}` ||
		h[1].Role != prompts.RoleTool || h[1].CallID != "c1" || h[1].Text != "rain" || !h[1].IsError {
		t.Errorf("history %+v", h)
	}
	if ps[1].System != "sys" || len(ps[1].Tools) != 1 || ps[0].History != nil {
		t.Errorf("turns %+v", ps)
	}
}

func TestReplayNothingToReplay(t *testing.T) {
	for name, dir := range map[string]string{
		"no agentic task": writeRun(t, []map[string]any{{"id": "A", "prompt": "x"}}, results.Record{PromptID: "A"}),
		"no turns":        writeRun(t, []map[string]any{{"id": "A", "prompt": "x", "max_turns": 2}}, results.Record{PromptID: "A"}),
		"no run":          filepath.Join(t.TempDir(), "none"),
	} {
		_, err := prompts.Replay(dir)
		var re *prompts.ReplayError
		if !errors.As(err, &re) || re.Field != "run" {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// arrival: recorded's schedule starts again one recorded span and one
// mean gap later for the requests past the recorded ones.
func TestRecordedArrivalsCycle(t *testing.T) {
	ms := time.Millisecond
	got := config.RecordedArrivals([]time.Duration{0, 10 * ms, 40 * ms}, 7)
	want := []time.Duration{0, 10 * ms, 40 * ms, 60 * ms, 70 * ms, 100 * ms, 120 * ms}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("schedule %v, want %v", got, want)
		}
	}
	if got := config.RecordedArrivals(nil, 2); len(got) != 2 || got[1] != 0 {
		t.Errorf("no recorded offsets: %v", got)
	}
}
