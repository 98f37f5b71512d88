package providers

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/prompts"
)

// history is a two-turn conversation after the prompt: a reply with two
// calls (the second without an id, as a server may send it) and their
// results, then a reply with text and one call and its error result.
func history() []Message {
	return []Message{
		{Role: RoleAssistant, Text: "Checking both.", ToolCalls: []results.ToolCall{
			{ID: "call_a", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
			{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Madrid"}`)},
		}},
		{Role: RoleTool, Text: "4 C", CallID: "call_a", Name: "get_weather"},
		{Role: RoleTool, Text: "21 C", Name: "get_weather"},
		{Role: RoleAssistant, ToolCalls: []results.ToolCall{{ID: "call_c", Name: "convert", Arguments: json.RawMessage(`"not json"`)}}},
		{Role: RoleTool, Text: "error: bad arguments", CallID: "call_c", Name: "convert", IsError: true},
	}
}

func agenticRequest() Request {
	return Request{Model: "m", System: "Use tools.", Prompt: "Which is warmer?", Messages: history(),
		Tools: []prompts.Tool{{Name: "get_weather", Parameters: map[string]any{"type": "object"}}}}
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func compactJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Chat completions: each reply carries its calls back with ids (a missing
// one gets a stand-in), and each result is a tool message with the
// tool_call_id of its call, in order.
func TestChatMessagesMultiTurn(t *testing.T) {
	c := newChatCompletions(&httpOptions{BaseURL: "http://x"}, Secrets{}, nil)
	b, err := c.body(agenticRequest())
	if err != nil {
		t.Fatal(err)
	}
	got := compactJSON(t, decode(t, b)["messages"])
	want := `[{"content":"Use tools.","role":"system"},{"content":"Which is warmer?","role":"user"},` +
		`{"content":"Checking both.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\":\"Oslo\"}","name":"get_weather"},"id":"call_a","type":"function"},` +
		`{"function":{"arguments":"{\"city\":\"Madrid\"}","name":"get_weather"},"id":"call_0_1","type":"function"}]},` +
		`{"content":"4 C","name":"get_weather","role":"tool","tool_call_id":"call_a"},` +
		`{"content":"21 C","name":"get_weather","role":"tool","tool_call_id":"call_0_1"},` +
		`{"role":"assistant","tool_calls":[{"function":{"arguments":"not json","name":"convert"},"id":"call_c","type":"function"}]},` +
		`{"content":"error: bad arguments","name":"convert","role":"tool","tool_call_id":"call_c"}]`
	if got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

// Ollama's native API: replies carry tool_calls with object arguments (an
// argument text that is not an object goes back empty), results are tool
// messages naming their tool.
func TestOllamaMessagesMultiTurn(t *testing.T) {
	o := newKind(t, "ollama", &ollamaOptions{httpOptions: defaultHTTP("http://x")}).(*Ollama)
	cr, err := o.chatRequest(agenticRequest())
	if err != nil {
		t.Fatal(err)
	}
	got := compactJSON(t, cr.Messages)
	want := `[{"role":"system","content":"Use tools."},{"role":"user","content":"Which is warmer?"},` +
		`{"role":"assistant","content":"Checking both.","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Oslo"}}},{"function":{"name":"get_weather","arguments":{"city":"Madrid"}}}]},` +
		`{"role":"tool","content":"4 C","tool_name":"get_weather"},{"role":"tool","content":"21 C","tool_name":"get_weather"},` +
		`{"role":"assistant","content":"","tool_calls":[{"function":{"name":"convert","arguments":{}}}]},` +
		`{"role":"tool","content":"error: bad arguments","tool_name":"convert"}]`
	if got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

// The Responses API with store: false: every reply is echoed whole, its
// text as an assistant message and its calls as function_call items, each
// followed by the function_call_output of the same call_id.
func TestResponsesItemsMultiTurn(t *testing.T) {
	o := newKind(t, "openai_responses", &responsesOptions{httpOptions: defaultHTTP("http://x")}).(*OpenAIResponses)
	b, err := o.body(agenticRequest())
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, b)
	got := compactJSON(t, m["input"])
	want := `[{"content":"Which is warmer?","role":"user","type":"message"},` +
		`{"content":"Checking both.","role":"assistant","type":"message"},` +
		`{"arguments":"{\"city\":\"Oslo\"}","call_id":"call_a","name":"get_weather","type":"function_call"},` +
		`{"arguments":"{\"city\":\"Madrid\"}","call_id":"call_0_1","name":"get_weather","type":"function_call"},` +
		`{"call_id":"call_a","output":"4 C","type":"function_call_output"},` +
		`{"call_id":"call_0_1","output":"21 C","type":"function_call_output"},` +
		`{"arguments":"not json","call_id":"call_c","name":"convert","type":"function_call"},` +
		`{"call_id":"call_c","output":"error: bad arguments","type":"function_call_output"}]`
	if got != want {
		t.Errorf("input\n got %s\nwant %s", got, want)
	}
	if m["store"] != false || m["instructions"] != "Use tools." {
		t.Errorf("store %v instructions %v", m["store"], m["instructions"])
	}
	// A single-turn request is unchanged: the prompt alone.
	b, _ = o.body(Request{Model: "m", Prompt: "hi"})
	if got := compactJSON(t, decode(t, b)["input"]); got != `[{"content":"hi","role":"user","type":"message"}]` {
		t.Errorf("single-turn input %s", got)
	}
}

// An agentic cell's CLI command line: bench's MCP server is the only tool
// source, all its tools allowed, the task's max_turns; a plain cell keeps
// the configured tools and turns.
func TestClaudeArgsMCP(t *testing.T) {
	c := &ClaudeCode{opts: &claudeCodeOptions{Command: "claude", MaxTurns: 1, AllowedTools: []string{"Bash"}}}
	a := c.args(Request{Model: "m", MCP: &MCP{Config: `{"mcpServers":{}}`, Server: "bench", MaxTurns: 5}})
	s := strings.Join(a, " ")
	if !strings.Contains(s, "--max-turns 5") || !strings.HasSuffix(s, `--mcp-config {"mcpServers":{}} --strict-mcp-config --tools  --allowedTools mcp__bench`) || slices.Contains(a, "Bash") {
		t.Errorf("agentic args: %q", a)
	}
	i := slices.Index(a, "--tools")
	if i < 0 || a[i+1] != "" {
		t.Errorf("--tools must be given an empty list: %q", a)
	}
	a = c.args(Request{Model: "m"})
	if s := strings.Join(a, " "); !strings.Contains(s, "--max-turns 1") || strings.Contains(s, "mcp") || !strings.HasSuffix(s, "--allowedTools Bash") {
		t.Errorf("plain args: %q", a)
	}
}

// The CLI's own loop, recorded from Claude Code 2.1.330 against
// internal/testpeer/anthropictest with bench's MCP server: turn 1 writes text and
// calls mcp__bench__get_weather (which bench answered), turn 2 calls an
// unknown tool (the CLI answers that itself, with an error, while the
// reply is still streaming), turn 3 answers. Each turn is stamped with the
// time its lines were fed.
func TestClaudeStreamTurns(t *testing.T) {
	lines := claudeFixture(t, "agentic_mcp_partial.jsonl")
	s := newClaudeStream(0)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := map[int]time.Time{}
	for i, l := range lines {
		s.at = base.Add(time.Duration(i) * time.Millisecond)
		at[i] = s.at
		s.Feed(l, func(Event) {})
	}
	r := s.Response()
	if len(r.Turns) != 3 {
		t.Fatalf("%d turns, want 3: %+v", len(r.Turns), r.Turns)
	}
	t1, t2, t3 := r.Turns[0], r.Turns[1], r.Turns[2]
	if t1.Text != "Let me check." || len(t1.Calls) != 1 || t2.Text != "" || len(t2.Calls) != 1 || t3.Text != "It is 18 C in Paris." || len(t3.Calls) != 0 {
		t.Errorf("turn texts and calls: %+v", r.Turns)
	}
	c1 := t1.Calls[0]
	if c1.Call.ID != "toolu_m_0" || c1.Call.Name != "mcp__bench__get_weather" || string(c1.Call.Arguments) != `{"city": "Paris"}` ||
		c1.Result != `{"city":"Paris","temp_c":18}` || c1.IsError {
		t.Errorf("turn 1 call: %+v", c1)
	}
	c2 := t2.Calls[0]
	if c2.Call.Name != "mcp__bench__ghost" || !c2.IsError || c2.Result != "<tool_use_error>Error: No such tool available: mcp__bench__ghost</tool_use_error>" {
		t.Errorf("turn 2 call: %+v", c2)
	}
	for i, tn := range r.Turns {
		if tn.Start.IsZero() || tn.FirstOutput.Before(tn.Start) || tn.End.Before(tn.FirstOutput) {
			t.Errorf("turn %d times: start %v first %v end %v", i+1, tn.Start, tn.FirstOutput, tn.End)
		}
		if i > 0 && tn.Start.Before(r.Turns[i-1].End) {
			t.Errorf("turn %d starts before turn %d ends", i+1, i)
		}
		for _, c := range tn.Calls {
			if c.Made.Before(tn.Start) || c.Answered.Before(c.Made) || (i+1 < len(r.Turns) && r.Turns[i+1].Start.Before(c.Answered)) {
				t.Errorf("turn %d call times: made %v answered %v", i+1, c.Made, c.Answered)
			}
		}
	}
	// The CLI ran turn 2's tool before the reply finished streaming: the
	// answer comes before the turn's end, never before the call was made.
	if !c2.Answered.Before(t2.End) {
		t.Errorf("turn 2: answered %v, end %v: the recording has the result inside the turn", c2.Answered, t2.End)
	}
	// The whole-response view is unchanged.
	if r.Text != "Let me check.It is 18 C in Paris." || len(r.ToolCalls) != 2 {
		t.Errorf("text %q calls %v", r.Text, r.ToolCalls)
	}
	var names []string
	for _, tn := range r.Turns {
		for _, c := range tn.Calls {
			names = append(names, c.Call.Name)
		}
	}
	if !reflect.DeepEqual(names, []string{"mcp__bench__get_weather", "mcp__bench__ghost"}) {
		t.Errorf("calls %v", names)
	}
}
