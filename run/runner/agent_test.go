package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/forsy"
	"bench/internal/record/results"
	"bench/prompts"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
)

// turnsProvider answers each turn of an agentic cell with the reply its
// script gives for that turn (the number of assistant messages the request
// carries), advancing a fake clock, and keeps every request it got: the
// loop is tested here, the protocols in package providers.
type turnsProvider struct {
	clk   *fakeClock
	reply func(turn int, req providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error)
	mu    sync.Mutex
	reqs  []providers.Request
}

func (p *turnsProvider) Probe(context.Context) *providers.Probe { return &providers.Probe{} }
func (p *turnsProvider) Secrets() providers.Secrets             { return providers.Secrets{} }

func (p *turnsProvider) Stream(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	turn := 0
	for _, m := range req.Messages {
		if m.Role == providers.RoleAssistant {
			turn++
		}
	}
	return p.reply(turn, req, p.clk, emit)
}

// callReply is a reply of tool calls: request start, 10 ms to the first
// call, 5 ms more to the end.
func callReply(clk *fakeClock, emit providers.EmitFunc, text string, calls ...results.ToolCall) (*providers.Response, error) {
	emit(providers.Event{Kind: providers.EventRequestStart})
	clk.Advance(10 * time.Millisecond)
	if text != "" {
		emit(providers.Event{Kind: providers.EventText, Text: text})
	}
	for i := range calls {
		emit(providers.Event{Kind: providers.EventToolCall, Call: i})
	}
	clk.Advance(5 * time.Millisecond)
	out := 6
	return &providers.Response{Text: text, ToolCalls: calls, Usage: providers.Usage{OutputTokens: &out}}, nil
}

func textReply(clk *fakeClock, emit providers.EmitFunc, text string) (*providers.Response, error) {
	return callReply(clk, emit, text)
}

func tc(id, name, args string) results.ToolCall {
	return results.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

const weatherTask = `prompts:
  - id: W
    name: weather
    prompt: "Weather in Paris?"
    max_turns: 3
    tools:
      - name: get_weather
        parameters: {type: object, properties: {city: {type: string}}}
        fail_first: "error: busy, retry"
        rules:
          - args: {city: Paris}
            result: "18 C"
      - name: delete_city
    validators:
      - type: tool_sequence
        calls: [{name: get_weather, args: {city: Paris}}]
      - {type: no_unknown_tools}
      - {type: exact, value: "18 C in Paris"}
`

func loadTask(t testing.TB, src string) []prompts.Prompt {
	t.Helper()
	ps, err := prompts.Parse("task.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// runTask runs every prompt of src once on prov and returns the records.
func runTask(t *testing.T, src string, prov providers.Provider, clk Clock, obs ...output.Output) []*results.Record {
	t.Helper()
	cfg := &config.Config{Run: config.Run{ID: "agent", Concurrency: 1, Repetitions: 1, Timeout: config.Duration(time.Minute), MaxOutputBytes: 1 << 16},
		Providers: []config.Provider{{Name: "p", Type: "ollama", Concurrency: 1, Models: []string{"m"}, ThinkingLevels: []*string{nil}}},
		PromptSet: loadTask(t, src)}
	sink := &memSink{}
	if _, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Clock: clk,
		Providers: map[string]providers.Provider{"p": prov}, Outputs: append([]output.Output{sink}, obs...)}); err != nil {
		t.Fatal(err)
	}
	return sink.recs
}

// The loop answers every call from the script and sends the results back
// with their call ids; each turn is timed on the fake clock, and the cell's
// e2e covers the whole task. A failed first call retried, and a call with
// the wrong argument, are recorded as such.
func TestAgentLoopNative(t *testing.T) {
	clk := newFakeClock()
	prov := &turnsProvider{clk: clk, reply: func(turn int, req providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
		switch turn {
		case 0:
			return callReply(clk, emit, "", tc("c1", "get_weather", `{"city":"Paris"}`))
		case 1:
			return callReply(clk, emit, "Retrying.", tc("c2", "get_weather", `{"city":"Paris"}`), tc("c3", "get_weather", `{"city":"Lyon"}`))
		}
		return textReply(clk, emit, "18 C in Paris")
	}}
	recs := runTask(t, weatherTask, prov, clk)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.AvailabilityStatus != "ok" || !r.Success || r.ObjectivePass == nil || !*r.ObjectivePass || r.ToolUseSuccess == nil || !*r.ToolUseSuccess {
		t.Fatalf("record: %s success %v pass %v (%v) tool use %v", r.AvailabilityStatus, r.Success, r.ObjectivePass, r.Violation, r.ToolUseSuccess)
	}
	if !reflect.DeepEqual(r.ToolCalls, []string{"get_weather", "get_weather", "get_weather"}) || r.ToolCallCount != 3 || !reflect.DeepEqual(r.ExpectedTools, []string{"get_weather"}) {
		t.Errorf("tool_calls %v count %d expected %v", r.ToolCalls, r.ToolCallCount, r.ExpectedTools)
	}
	// Three turns of 15 ms each, back to back; e2e is all of them.
	if r.Turns != 3 || len(r.TurnDetails) != 3 || r.E2EMS != 45 || r.TTFTMS == nil || *r.TTFTMS != 10 || r.RawOutput != "18 C in Paris" {
		t.Fatalf("turns %d e2e %d ttft %v raw %q", r.Turns, r.E2EMS, r.TTFTMS, r.RawOutput)
	}
	for i, tn := range r.TurnDetails {
		if tn.StartMS != float64(15*i) || tn.EndMS != float64(15*i+15) || tn.TTFTMS == nil || *tn.TTFTMS != 10 || tn.Error != "" {
			t.Errorf("turn %d: %+v", i+1, tn)
		}
	}
	if r.OutputTokens == nil || *r.OutputTokens != 18 {
		t.Errorf("output tokens %v, want the sum 18", r.OutputTokens)
	}
	c1 := r.TurnDetails[0].Calls[0]
	if c1.ID != "c1" || !c1.IsError || !c1.FailFirst || c1.Rule != -1 || c1.Result != "error: busy, retry" || c1.ResultHash != forsy.Hash("error: busy, retry") || c1.StartMS != 15 {
		t.Errorf("turn 1 call: %+v", c1)
	}
	c2, c3 := r.TurnDetails[1].Calls[0], r.TurnDetails[1].Calls[1]
	if c2.IsError || c2.Rule != 0 || c2.Result != "18 C" || c2.WrongArgs || c2.ResultHash != forsy.Hash("18 C") {
		t.Errorf("turn 2 call 1: %+v", c2)
	}
	if !c3.IsError || c3.Rule != -1 || !c3.WrongArgs || !strings.Contains(c3.Result, `get_weather has no result for arguments {"city":"Lyon"}`) {
		t.Errorf("turn 2 call 2: %+v", c3)
	}
	// What went back: turn 2's request carries the reply and the result of
	// c1; turn 3's adds the second reply and both results, in order.
	if len(prov.reqs) != 3 {
		t.Fatalf("%d requests", len(prov.reqs))
	}
	if len(prov.reqs[0].Messages) != 0 || len(prov.reqs[0].Tools) != 2 {
		t.Errorf("turn 1 request: %d messages, %d tools", len(prov.reqs[0].Messages), len(prov.reqs[0].Tools))
	}
	m := prov.reqs[2].Messages
	if len(m) != 5 {
		t.Fatalf("turn 3 messages: %+v", m)
	}
	if m[0].Role != "assistant" || len(m[0].ToolCalls) != 1 || m[1].Role != "tool" || m[1].CallID != "c1" || m[1].Text != "error: busy, retry" || !m[1].IsError ||
		m[2].Text != "Retrying." || len(m[2].ToolCalls) != 2 || m[3].CallID != "c2" || m[3].Text != "18 C" || m[4].CallID != "c3" || m[4].Name != "get_weather" {
		t.Errorf("turn 3 messages: %+v", m)
	}
}

// A model that never stops calling is stopped at max_turns: the last
// reply's calls are never run, the cell succeeded (the model answered each
// turn) but fails its checks for want of a final answer.
func TestAgentLoopMaxTurns(t *testing.T) {
	clk := newFakeClock()
	prov := &turnsProvider{clk: clk, reply: func(turn int, req providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
		return callReply(clk, emit, "", tc("", "get_weather", `{"city":"Paris"}`))
	}}
	r := runTask(t, weatherTask, prov, clk)[0]
	if !r.Success || r.Turns != 3 || len(prov.reqs) != 3 || r.ObjectivePass == nil || *r.ObjectivePass {
		t.Fatalf("success %v turns %d requests %d pass %v", r.Success, r.Turns, len(prov.reqs), r.ObjectivePass)
	}
	if r.Violation == nil || !strings.HasPrefix(*r.Violation, "no final answer: the loop stopped at max_turns (3)") {
		t.Errorf("violation %v", r.Violation)
	}
	last := r.TurnDetails[2].Calls[0]
	if !last.Unanswered || last.Result != "" || last.ResultHash != "" {
		t.Errorf("last call: %+v", last)
	}
	// Calls 1 (fail-first) and 2 (answered) ran; the sequence matched.
	if r.ToolUseSuccess == nil || !*r.ToolUseSuccess || r.TurnDetails[1].Calls[0].Result != "18 C" {
		t.Errorf("tool use %v, turn 2 %+v", r.ToolUseSuccess, r.TurnDetails[1].Calls)
	}
}

// A request that fails ends the loop: the cell is the failure, the failed
// turn is in turn_details with its error, and tool use counts as failed.
func TestAgentLoopTurnFails(t *testing.T) {
	clk := newFakeClock()
	prov := &turnsProvider{clk: clk, reply: func(turn int, req providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
		if turn == 0 {
			return callReply(clk, emit, "", tc("c1", "get_weather", `{"city":"Paris"}`))
		}
		emit(providers.Event{Kind: providers.EventRequestStart})
		clk.Advance(3 * time.Millisecond)
		return &providers.Response{}, &providers.Failure{Status: results.StatusError, Type: results.FailStreamTruncated, Message: "cut"}
	}}
	var traces sync.Map
	r := runTask(t, weatherTask, prov, clk, outputFunc(func(r *results.Record) error { traces.Store(r.PromptID, r); return nil }))[0]
	if r.AvailabilityStatus != "error" || r.Success || *r.FailureType != results.FailStreamTruncated || r.Turns != 2 {
		t.Fatalf("%s success %v %v turns %d", r.AvailabilityStatus, r.Success, r.FailureType, r.Turns)
	}
	if e := r.TurnDetails[1].Error; !strings.Contains(e, "cut") || r.TurnDetails[1].EndMS != 18 {
		t.Errorf("turn 2: %+v", r.TurnDetails[1])
	}
	if r.ToolUseSuccess == nil || *r.ToolUseSuccess || r.ObjectivePass != nil {
		t.Errorf("tool use %v pass %v", r.ToolUseSuccess, r.ObjectivePass)
	}
	if !reflect.DeepEqual(r.ToolCalls, []string{"get_weather"}) {
		t.Errorf("tool_calls %v: the call made before the failure is kept", r.ToolCalls)
	}
}

type outputFunc func(r *results.Record) error

func (f outputFunc) AddRecord(r *results.Record) error { return f(r) }

const diskTask = `prompts:
  - id: D
    name: disk
    system: "Run commands after a '$ ' prompt."
    prompt: "Free space on /?"
    max_turns: 3
    tools:
      - name: df
        mode: text
        rules:
          - args_regex: {command: "^df( .*)?$"}
            result: "/dev/sda1 98G 61G 33G 65% /"
    validators:
      - type: tool_sequence
        calls: [{name: df}]
      - {type: no_unknown_tools}
      - {type: regex_fullmatch, pattern: "33G"}
`

// Text mode: the commands in the reply are the calls; their outputs go
// back in one user message, each after its command line. A command the
// task does not have is an unknown tool.
func TestAgentLoopTextMode(t *testing.T) {
	clk := newFakeClock()
	prov := &turnsProvider{clk: clk, reply: func(turn int, req providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
		switch turn {
		case 0:
			return textReply(clk, emit, "$ diskinfo --free /")
		case 1:
			return textReply(clk, emit, "$ df -h /")
		}
		return textReply(clk, emit, "33G")
	}}
	r := runTask(t, diskTask, prov, clk)[0]
	if !r.Success || r.Turns != 3 || r.ObjectivePass == nil || *r.ObjectivePass || !strings.Contains(*r.Violation, "called unknown tool diskinfo") {
		t.Fatalf("success %v turns %d pass %v %v", r.Success, r.Turns, r.ObjectivePass, r.Violation)
	}
	if r.ToolUseSuccess == nil || !*r.ToolUseSuccess {
		t.Errorf("tool use %v: df was run", r.ToolUseSuccess)
	}
	u := r.TurnDetails[0].Calls[0]
	if u.Name != "diskinfo" || !u.Unknown || !u.IsError || u.Result != "diskinfo: command not found" || string(u.Arguments) != `{"command":"diskinfo --free /"}` {
		t.Errorf("unknown command: %+v", u)
	}
	if len(prov.reqs[0].Tools) != 0 {
		t.Errorf("a text-mode task offers no native tools: %+v", prov.reqs[0].Tools)
	}
	m := prov.reqs[2].Messages
	want := []providers.Message{
		{Role: "assistant", Text: "$ diskinfo --free /"},
		{Role: "user", Text: "$ diskinfo --free /\ndiskinfo: command not found"},
		{Role: "assistant", Text: "$ df -h /"},
		{Role: "user", Text: "$ df -h /\n/dev/sda1 98G 61G 33G 65% /"},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("messages\n%+v\nwant\n%+v", m, want)
	}
	if d := r.ToolCallDetails; len(d) != 2 || d[1].Source != "text" || d[1].Name != "df" {
		t.Errorf("tool_call_details %+v", d)
	}
}

// Every agentic cell gets a work trace that passes the upstream JSON
// Schema and forsy.Validate, and says what the record says.
func TestWorkTracesOfLoops(t *testing.T) {
	dir := t.TempDir()
	for _, cs := range []struct {
		name, task string
		reply      func(turn int, req providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error)
		end        string
		completed  bool
	}{
		{"answered", weatherTask, func(turn int, _ providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			if turn < 2 {
				return callReply(clk, emit, "", tc("c", "get_weather", `{"city":"Paris"}`))
			}
			return textReply(clk, emit, "18 C in Paris")
		}, "task_complete", true},
		{"max_turns", weatherTask, func(turn int, _ providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			return callReply(clk, emit, "", tc("", "get_weather", `{"city":"Paris"}`), tc("", "ghost", `{}`))
		}, "partial_then_stopped", false},
		{"failed", weatherTask, func(turn int, _ providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			if turn == 0 {
				return callReply(clk, emit, "", tc("c", "delete_city", `{"city":"Paris"}`))
			}
			return nil, errors.New("boom")
		}, "error_unrecoverable", false},
		{"text", diskTask, func(turn int, _ providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			if turn == 0 {
				return textReply(clk, emit, "$ df -h")
			}
			return textReply(clk, emit, "33G")
		}, "task_complete", true},
	} {
		t.Run(cs.name, func(t *testing.T) {
			clk := newFakeClock()
			sub := filepath.Join(dir, cs.name)
			ps := loadTask(t, cs.task)
			r := runTask(t, cs.task, &turnsProvider{clk: clk, reply: cs.reply}, clk, NewWorkTraces(sub, ps, "test"))[0]
			cell := WorkTraceCell(r, &ps[0], "test")
			data, err := os.ReadFile(filepath.Join(sub, forsy.FileName(cell.Task)))
			if err != nil {
				t.Fatalf("no trace: %v", err)
			}
			tr := requireTrace(t, data)
			if tr.TerminationReason != cs.end || tr.Summary.GoalAchieved != cs.completed {
				t.Errorf("termination %s goal %v, want %s %v", tr.TerminationReason, tr.Summary.GoalAchieved, cs.end, cs.completed)
			}
			if got := len(tr.Steps); got < 1+r.Turns {
				t.Errorf("%d steps for %d turns", got, r.Turns)
			}
		})
	}
}

// BenchmarkAgentCell is the harness's cost of one agentic cell of three
// turns (two calls answered from the script, a final answer) with a
// provider that costs nothing: the loop, the record and the scoring.
// BenchmarkWorkTrace is the cost of its work trace (rebuilt, validated,
// written).
func BenchmarkAgentCell(b *testing.B) {
	clk := newFakeClock()
	prov := &turnsProvider{clk: clk, reply: func(turn int, req providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
		if turn < 2 {
			return callReply(clk, emit, "", tc("c", "get_weather", `{"city":"Paris"}`))
		}
		return textReply(clk, emit, "18 C in Paris")
	}}
	ps := loadTask(b, weatherTask)
	cfg := &config.Config{Run: config.Run{ID: "b", Timeout: config.Duration(time.Minute), MaxOutputBytes: 1 << 16}}
	c := plan.Cell{Provider: &config.Provider{Name: "p", Type: "ollama"}, Model: "m", Prompt: &ps[0]}
	b.ReportAllocs()
	for b.Loop() {
		prov.reqs = prov.reqs[:0]
		if r := runCell(context.Background(), cfg, clk, prov, c, ""); r.Turns != 3 {
			b.Fatal(r.Turns)
		}
	}
}

func BenchmarkWorkTrace(b *testing.B) {
	clk := newFakeClock()
	prov := &turnsProvider{clk: clk, reply: func(turn int, req providers.Request, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
		if turn < 2 {
			return callReply(clk, emit, "", tc("c", "get_weather", `{"city":"Paris"}`))
		}
		return textReply(clk, emit, "18 C in Paris")
	}}
	ps := loadTask(b, weatherTask)
	cfg := &config.Config{Run: config.Run{ID: "b", Timeout: config.Duration(time.Minute), MaxOutputBytes: 1 << 16}}
	r := runCell(context.Background(), cfg, clk, prov, plan.Cell{Provider: &config.Provider{Name: "p", Type: "ollama"}, Model: "m", Prompt: &ps[0]}, "")
	w := NewWorkTraces(b.TempDir(), ps, "bench")
	b.ReportAllocs()
	for b.Loop() {
		if err := w.AddRecord(r); err != nil {
			b.Fatal(err)
		}
	}
}
