package providers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"bench/internal/record/results"
)

// claudeFixture reads a recorded Claude Code 2.1.330 stream-json output from
// testdata/claude (copied from the shared fixtures, plus recordings of the
// same CLI against internal/testpeer/anthropictest).
func claudeFixture(tb testing.TB, name string) [][]byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "claude", name))
	if err != nil {
		tb.Fatalf("read fixture: %v", err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("scan fixture %s: %v", name, err)
	}
	return lines
}

// feedClaude runs lines through a fresh parser and returns it with the
// events, as kind:text strings, and how many lines were init lines.
func feedClaude(lines [][]byte) (*claudeStream, []Event, int) {
	s := newClaudeStream(0)
	var evs []Event
	inits := 0
	for _, l := range lines {
		if s.Feed(l, func(e Event) { e.Call = 0; evs = append(evs, e) }) {
			inits++
		}
	}
	return s, evs, inits
}

func ip(n int) *int { return &n }

func TestClaudeStreamFixtures(t *testing.T) {
	type want struct {
		text, reasoning string
		events          []Event
		calls           []results.ToolCall
		in, out         *int
		finish          string
		status, typ     string // "" status means success
		httpStatus      int
		msgHas          string
		metrics         map[string]any
	}
	toolCall := []results.ToolCall{{ID: "toolu_test_1", Name: "Bash", Arguments: json.RawMessage(`{"command": "free -h", "description": "Show memory"}`)}}
	tests := []struct {
		file string
		want want
	}{
		{"success_text_partial.jsonl", want{
			text: "I will run `free -h` to check memory.",
			events: []Event{
				{Kind: EventText, Text: "I will run "}, {Kind: EventText, Text: "`free -h`"}, {Kind: EventText, Text: " to check memory."},
			},
			in: ip(737), out: ip(4), finish: "end_turn",
			metrics: map[string]any{
				"cli_version": "2.1.330", "session_id": "1862d383-49f7-432a-b041-b3a4c87b0f0e",
				"duration_ms": int64(542), "duration_api_ms": int64(424), "num_turns": 1,
				"total_cost_usd": 0.0030280000000000003, "is_error": false, "result_subtype": "success",
				"cli_reported_ttft_ms": int64(363), "malformed_lines": 0,
			},
		}},
		{"success_text_no_partial.jsonl", want{
			text:   "I will run `free -h` to check memory.",
			events: []Event{{Kind: EventText, Text: "I will run `free -h` to check memory."}},
			in:     ip(737), out: ip(4), finish: "end_turn",
			metrics: map[string]any{"cli_version": "2.1.330", "duration_api_ms": int64(52), "num_turns": 1},
		}},
		{"success_tool_use_partial.jsonl", want{
			text: "Checking memory.",
			events: []Event{
				{Kind: EventText, Text: "Checking memory."}, {Kind: EventToolCall, Text: "Bash"},
				{Kind: EventToolCall, Text: `{"command": `}, {Kind: EventToolCall, Text: `"free -h", "description"`}, {Kind: EventToolCall, Text: `: "Show memory"}`},
			},
			calls: toolCall, in: ip(800), out: ip(21), finish: "tool_use",
			metrics: map[string]any{"result_subtype": "error_max_turns", "is_error": true, "terminal_reason": "max_turns", "num_turns": 2},
		}},
		{"success_tool_use_no_partial.jsonl", want{
			text:   "Checking memory.",
			events: []Event{{Kind: EventText, Text: "Checking memory."}, {Kind: EventToolCall, Text: "Bash"}},
			calls:  []results.ToolCall{{ID: "toolu_test_1", Name: "Bash", Arguments: json.RawMessage(`{"command":"free -h","description":"Show memory"}`)}},
			in:     ip(800), out: ip(21), finish: "tool_use",
		}},
		{"success_thinking_partial.jsonl", want{
			text:      "Hello!",
			reasoning: "The user wants a greeting.",
			events: []Event{
				{Kind: EventReasoning, Text: "The user wants "}, {Kind: EventReasoning, Text: "a greeting."}, {Kind: EventText, Text: "Hello"}, {Kind: EventText, Text: "!"},
			},
			in: ip(120), out: ip(30), finish: "end_turn",
		}},
		{"error_err401.jsonl", want{status: results.StatusAuthError, typ: "http_401", httpStatus: 401, msgHas: "401 injected 401",
			in: ip(0), out: ip(0), finish: "stop_sequence"}},
		{"error_err429.jsonl", want{status: results.StatusRateLimited, typ: "http_429", httpStatus: 429, msgHas: "injected 429",
			in: ip(0), out: ip(0), finish: "stop_sequence"}},
		{"error_err500.jsonl", want{status: results.StatusError, typ: "http_5xx", httpStatus: 500, msgHas: "API Error: 500 injected 500",
			in: ip(0), out: ip(0), finish: "stop_sequence"}},
		{"error_nomodel.jsonl", want{status: results.StatusSkippedUnavailable, typ: "model_not_found", httpStatus: 404, msgHas: "(nomodel)",
			in: ip(0), out: ip(0), finish: "stop_sequence"}},
		{"error_connection_refused.jsonl", want{status: results.StatusSkippedUnavailable, typ: "connection_refused", msgHas: "ECONNREFUSED",
			in: ip(0), out: ip(0), finish: "stop_sequence"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			s, evs, inits := feedClaude(claudeFixture(t, tc.file))
			w := tc.want
			if inits != 1 {
				t.Errorf("init lines = %d, want 1", inits)
			}
			if !s.Finished() {
				t.Fatal("result line not seen")
			}
			r := s.Response()
			if r.Text != w.text {
				t.Errorf("text = %q, want %q", r.Text, w.text)
			}
			if r.Reasoning != w.reasoning {
				t.Errorf("reasoning = %q, want %q", r.Reasoning, w.reasoning)
			}
			if !reflect.DeepEqual(evs, w.events) {
				t.Errorf("events =\n%v\nwant\n%v", evs, w.events)
			}
			if !reflect.DeepEqual(r.ToolCalls, w.calls) && !(len(r.ToolCalls) == 0 && len(w.calls) == 0) {
				t.Errorf("tool calls = %s, want %s", jsonOf(r.ToolCalls), jsonOf(w.calls))
			}
			if !reflect.DeepEqual(r.Usage.InputTokens, w.in) || !reflect.DeepEqual(r.Usage.OutputTokens, w.out) {
				t.Errorf("usage = %v/%v, want %v/%v", derefP(r.Usage.InputTokens), derefP(r.Usage.OutputTokens), derefP(w.in), derefP(w.out))
			}
			if r.FinishReason != w.finish {
				t.Errorf("finish = %q, want %q", r.FinishReason, w.finish)
			}
			for k, v := range w.metrics {
				if got := r.Metrics[k]; !reflect.DeepEqual(got, v) {
					t.Errorf("metrics[%s] = %#v, want %#v", k, got, v)
				}
			}
			f := s.Failure()
			if w.status == "" {
				if f != nil {
					t.Fatalf("failure = %v, want success", f)
				}
				return
			}
			if f == nil {
				t.Fatalf("no failure, want %s/%s", w.status, w.typ)
			}
			if f.Status != w.status || f.Type != w.typ || f.HTTPStatus != w.httpStatus {
				t.Errorf("failure = %s/%s/%d, want %s/%s/%d", f.Status, f.Type, f.HTTPStatus, w.status, w.typ, w.httpStatus)
			}
			if !strings.Contains(f.Message, w.msgHas) {
				t.Errorf("message %q lacks %q", f.Message, w.msgHas)
			}
		})
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

func derefP(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// A malformed line is counted and skipped; the lines around it still count.
func TestClaudeStreamMalformedLine(t *testing.T) {
	lines := claudeFixture(t, "success_text_partial.jsonl")
	var mixed [][]byte
	for i, l := range lines {
		mixed = append(mixed, l)
		if i == 3 {
			mixed = append(mixed, []byte(`{"type":"stream_event","event":{"type":"content_block_delta"`), []byte("Warning: something on stdout"), []byte("   "))
		}
	}
	s, _, _ := feedClaude(mixed)
	r := s.Response()
	if r.Text != "I will run `free -h` to check memory." {
		t.Errorf("text = %q", r.Text)
	}
	if got := r.Metrics["malformed_lines"]; got != 2 {
		t.Errorf("malformed_lines = %v, want 2", got)
	}
	if got := r.Metrics["malformed_sample"]; got != `{"type":"stream_event","event":{"type":"content_block_delta"` {
		t.Errorf("malformed_sample = %v", got)
	}
	if s.Failure() != nil {
		t.Errorf("failure = %v, want none", s.Failure())
	}
}

// A stream cut before the result line keeps partial text and closes an
// unfinished tool call with its raw input as a JSON string.
func TestClaudeStreamCut(t *testing.T) {
	lines := claudeFixture(t, "success_tool_use_partial.jsonl")
	var cut [][]byte
	for _, l := range lines {
		cut = append(cut, l)
		if bytes.Contains(l, []byte(`"partial_json":"\"free -h\", \"description\""`)) {
			break
		}
	}
	s, _, _ := feedClaude(cut)
	if s.Finished() {
		t.Fatal("finished without a result line")
	}
	r := s.Response()
	if r.Text != "Checking memory." {
		t.Errorf("text = %q", r.Text)
	}
	want := jsonOf(`{"command": "free -h", "description"`)
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "Bash" || string(r.ToolCalls[0].Arguments) != want {
		t.Errorf("tool calls = %s, want Bash with %s", jsonOf(r.ToolCalls), want)
	}
	if r.Usage.InputTokens == nil || *r.Usage.InputTokens != 800 || r.Usage.OutputTokens != nil {
		t.Errorf("usage from message_start = %v/%v, want 800/nil", derefP(r.Usage.InputTokens), derefP(r.Usage.OutputTokens))
	}
}

// Retries the CLI reports are counted; stream events of a subagent and a
// tool block with no input deltas are handled.
func TestClaudeStreamLines(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"type":"system","subtype":"init","session_id":"s1","claude_code_version":"9.9.9","model":"m"}`),
		[]byte(`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,"retry_delay_ms":555.5,"error_status":429}`),
		[]byte(`{"type":"system","subtype":"api_retry","attempt":2,"max_retries":2,"retry_delay_ms":1000,"error_status":429}`),
		[]byte(`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1","usage":{"input_tokens":5}}},"parent_tool_use_id":null}`),
		[]byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"sub"}},"parent_tool_use_id":"toolu_9"}`),
		[]byte(`{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/x"}}},"parent_tool_use_id":null,"api_message_id":"m1"}`),
		[]byte(`{"type":"stream_event","event":{"type":"content_block_stop","index":1},"parent_tool_use_id":null,"api_message_id":"m1"}`),
		[]byte(`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/x"}}]},"parent_tool_use_id":null}`),
		[]byte(`{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"sub answer"}]},"parent_tool_use_id":"toolu_9"}`),
		[]byte(`{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["boom"],"num_turns":1}`),
	}
	s, evs, inits := feedClaude(lines)
	if inits != 1 {
		t.Errorf("inits = %d", inits)
	}
	r := s.Response()
	if r.Retries != 2 || r.RetryWaitMS != 1555 {
		t.Errorf("retries = %d wait %d, want 2 and 1555", r.Retries, r.RetryWaitMS)
	}
	if r.Text != "" {
		t.Errorf("text = %q, want none (subagent text is not the answer)", r.Text)
	}
	if want := []Event{{Kind: EventToolCall, Text: "Read"}}; !reflect.DeepEqual(evs, want) {
		t.Errorf("events = %v, want %v", evs, want)
	}
	if len(r.ToolCalls) != 1 || string(r.ToolCalls[0].Arguments) != `{"file_path":"/x"}` {
		t.Errorf("tool calls = %s", jsonOf(r.ToolCalls))
	}
	f := s.Failure()
	if f == nil || f.Status != results.StatusError || f.Type != "cli_error_during_execution" || f.Message != "boom" {
		t.Errorf("failure = %+v, want error/cli_error_during_execution: boom", f)
	}
	if r.Metrics["session_id"] != "s1" || r.Metrics["cli_version"] != "9.9.9" {
		t.Errorf("metrics = %v", r.Metrics)
	}
}

func FuzzClaudeStream(f *testing.F) {
	entries, err := os.ReadDir(filepath.Join("testdata", "claude"))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			data, err := os.ReadFile(filepath.Join("testdata", "claude", e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("not json\n{}\n{\"type\":\"result\",\"is_error\":true}\n"))
	f.Add([]byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":-1,"delta":{"type":"input_json_delta","partial_json":"{"}}}`))
	f.Add([]byte(`{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"a"}}}` + "\n" +
		`{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"b"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newClaudeStream(0)
		var text, reasoning strings.Builder
		for _, line := range bytes.Split(data, []byte("\n")) {
			s.Feed(line, func(e Event) {
				switch e.Kind {
				case EventText:
					if e.Text == "" {
						t.Fatal("empty text event")
					}
					text.WriteString(e.Text)
				case EventReasoning:
					reasoning.WriteString(e.Text)
				}
			})
		}
		r := s.Response()
		// The answer is exactly what was emitted, so the runner's timing and
		// the recorded text agree.
		if r.Text != text.String() || r.Reasoning != reasoning.String() {
			t.Fatalf("response text %q/%q differs from events %q/%q", r.Text, r.Reasoning, text.String(), reasoning.String())
		}
		for _, c := range r.ToolCalls {
			if !json.Valid(c.Arguments) {
				t.Fatalf("tool call arguments not JSON: %q", c.Arguments)
			}
		}
		// The turns split the same answer: their texts and calls, in
		// order, are the response's.
		var turnText strings.Builder
		var turnCalls []results.ToolCall
		for _, tn := range r.Turns {
			turnText.WriteString(tn.Text)
			for _, c := range tn.Calls {
				turnCalls = append(turnCalls, c.Call)
			}
		}
		if turnText.String() != r.Text || !reflect.DeepEqual(turnCalls, r.ToolCalls) {
			t.Fatalf("turns hold %q and %d calls, the response %q and %d", turnText.String(), len(turnCalls), r.Text, len(r.ToolCalls))
		}
		if f := s.Failure(); f != nil && (f.Status == "" || f.Type == "") {
			t.Fatalf("unclassified failure %+v", f)
		}
		if _, err := json.Marshal(r.Metrics); err != nil {
			t.Fatalf("metrics do not marshal: %v", err)
		}
	})
}

// BenchmarkClaudeStream measures parsing a recorded text reply with partial
// messages (12 lines, one of them the ~5 KB init line).
func BenchmarkClaudeStream(b *testing.B) {
	lines := claudeFixture(b, "success_text_partial.jsonl")
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		s := newClaudeStream(0)
		for _, l := range lines {
			s.Feed(l, func(Event) {})
		}
		if s.Response().Text == "" {
			b.Fatal("no text")
		}
	}
}

// A message_delta's usage revises the message's counts (input tokens
// included, as the Messages API may send them late), the cache reads are
// the cached input, and the counts of a stream's messages add up when no
// result line gives the totals. With a result line, its usage and
// total_cost_usd win.
func TestClaudeStreamUsage(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1","usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}}`),
		[]byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}}`),
		[]byte(`{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"input_tokens":12,"cache_read_input_tokens":100,"cache_creation_input_tokens":3,"output_tokens":7}}}`),
		[]byte(`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m2","usage":{"input_tokens":20,"output_tokens":1}}}}`),
		[]byte(`{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}}`),
	}
	s, _, _ := feedClaude(lines)
	r := s.Response()
	// input: (12+100+3) + 20; output 7+5; cached 100.
	if derefP(r.Usage.InputTokens) != 135 || derefP(r.Usage.OutputTokens) != 12 || derefP(r.Usage.CachedInputTokens) != 100 || r.CostUSD != nil {
		t.Errorf("streamed usage in %v out %v cached %v cost %v; want 135, 12, 100, nil",
			derefP(r.Usage.InputTokens), derefP(r.Usage.OutputTokens), derefP(r.Usage.CachedInputTokens), r.CostUSD)
	}
	lines = append(lines, []byte(`{"type":"result","subtype":"success","is_error":false,"result":"a","total_cost_usd":0.0125,"usage":{"input_tokens":40,"cache_read_input_tokens":90,"cache_creation_input_tokens":0,"output_tokens":11}}`))
	s, _, _ = feedClaude(lines)
	r = s.Response()
	if derefP(r.Usage.InputTokens) != 130 || derefP(r.Usage.OutputTokens) != 11 || derefP(r.Usage.CachedInputTokens) != 90 || r.CostUSD == nil || *r.CostUSD != 0.0125 {
		t.Errorf("result usage in %v out %v cached %v cost %v; want 130, 11, 90, 0.0125",
			derefP(r.Usage.InputTokens), derefP(r.Usage.OutputTokens), derefP(r.Usage.CachedInputTokens), r.CostUSD)
	}
}
