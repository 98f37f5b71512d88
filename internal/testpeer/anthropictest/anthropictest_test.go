package anthropictest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

type sseEvent struct {
	name string
	data map[string]any
}

func post(t *testing.T, s *Server, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("data line %q: %v", line, err)
			}
		case line == "":
			if cur.name != cur.data["type"] {
				t.Errorf("event %q carries type %v", cur.name, cur.data["type"])
			}
			evs = append(evs, cur)
			cur = sseEvent{}
		}
	}
	return evs
}

// The body carries the bulk a real client sends (system prompt, tools, extra
// blocks); only the model decides the reply.
const bulk = `"system":[{"type":"text","text":"You are Claude Code..."}],"tools":[{"name":"Bash","input_schema":{}}],` +
	`"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"hi"}]}],"max_tokens":32000`

func TestStreamText(t *testing.T) {
	s := Start(t)
	resp := post(t, s, "/v1/messages", `{"model":"scripted-cc","stream":true,`+bulk+`}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs := readSSE(t, resp.Body)
	var names []string
	var text strings.Builder
	for _, e := range evs {
		names = append(names, e.name)
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "text_delta" {
			text.WriteString(d["text"].(string))
		}
	}
	want := "message_start content_block_start content_block_delta content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events = %s\nwant %s", got, want)
	}
	if text.String() != "I will run `free -h` to check memory." {
		t.Errorf("text = %q", text.String())
	}
	usage := evs[len(evs)-2].data["usage"].(map[string]any)
	if usage["output_tokens"] != float64(4) {
		t.Errorf("message_delta usage = %v", usage)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Model != "scripted-cc" || !reqs[0].Stream || !strings.Contains(string(reqs[0].Body), "Bash") {
		t.Errorf("recorded requests = %+v", reqs)
	}
}

func TestStreamToolUse(t *testing.T) {
	s := Start(t)
	evs := readSSE(t, post(t, s, "/v1/messages", `{"model":"scripted-tool","stream":true,`+bulk+`}`).Body)
	var input strings.Builder
	var start map[string]any
	for _, e := range evs {
		if cb, ok := e.data["content_block"].(map[string]any); ok && cb["type"] == "tool_use" {
			start = cb
		}
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			input.WriteString(d["partial_json"].(string))
		}
		if d, ok := e.data["delta"].(map[string]any); ok && e.name == "message_delta" && d["stop_reason"] != "tool_use" {
			t.Errorf("stop_reason = %v, want tool_use", d["stop_reason"])
		}
	}
	if start == nil || start["name"] != "Bash" {
		t.Fatalf("tool_use block start = %v", start)
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(input.String()), &args); err != nil || args["command"] != "free -h" {
		t.Errorf("tool input %q: %v", input.String(), err)
	}
}

func TestErrors(t *testing.T) {
	s := Start(t)
	s.Script("custom", Reply{Status: 503, ErrorType: "overloaded_error", Message: "busy"})
	cases := []struct {
		path, model string
		status      int
		typ         string
	}{
		{"/v1/messages", "err401", 401, "authentication_error"},
		{"/v1/messages", "err429", 429, "rate_limit_error"},
		{"/v1/messages", "err500", 500, "api_error"},
		{"/v1/messages", "custom", 503, "overloaded_error"},
		{"/v1/messages", "nomodel", 404, "not_found_error"},
		{"/v1/other", "scripted-cc", 404, "not_found_error"},
	}
	for _, tc := range cases {
		resp := post(t, s, tc.path, `{"model":"`+tc.model+`","stream":true,`+bulk+`}`)
		var body struct {
			Type  string `json:"type"`
			Error struct{ Type, Message string }
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatalf("%s %s: decode: %v", tc.path, tc.model, err)
		}
		if resp.StatusCode != tc.status || body.Type != "error" || body.Error.Type != tc.typ || body.Error.Message == "" {
			t.Errorf("%s %s: %d %+v, want %d %s", tc.path, tc.model, resp.StatusCode, body, tc.status, tc.typ)
		}
	}
}

func TestNonStreaming(t *testing.T) {
	s := Start(t)
	var msg struct {
		Content    []struct{ Type, Text, Name string }
		StopReason string `json:"stop_reason"`
	}
	if err := json.NewDecoder(post(t, s, "/v1/messages", `{"model":"scripted-tool",`+bulk+`}`).Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 2 || msg.Content[0].Text != "Checking memory." || msg.Content[1].Name != "Bash" || msg.StopReason != "tool_use" {
		t.Errorf("message = %+v", msg)
	}
}

// A stalled stream holds until the server closes; Close must not wait on it.
func TestStallReleasedByClose(t *testing.T) {
	s := New()
	resp := post(t, s, "/v1/messages", `{"model":"stall","stream":true}`)
	if m := <-s.Stalled(); m != "stall" {
		t.Fatalf("stalled model = %q", m)
	}
	s.Close()
	evs := readSSE(t, resp.Body)
	if len(evs) != 3 || evs[2].data["delta"].(map[string]any)["text"] != "partial " {
		t.Errorf("events before the stall = %+v", evs)
	}
}

// A conversation replies by turn: a tool_use first, then the final text to
// the request that carries the tool_result, which the test can read.
func TestConversation(t *testing.T) {
	s := Start(t)
	s.Conversation("agent",
		Reply{Text: []string{"Looking it up."}, ToolName: "mcp__bench__get_weather", ToolInput: []string{`{"city":`, ` "Paris"}`}},
		Reply{Text: []string{"It is ", "18 C."}},
	)
	first := `{"model":"agent","stream":true,"tools":[{"name":"mcp__bench__get_weather","input_schema":{}}],` +
		`"messages":[{"role":"user","content":"weather?"}]}`
	evs := readSSE(t, post(t, s, "/v1/messages", first).Body)
	var start map[string]any
	var input strings.Builder
	for _, e := range evs {
		if cb, ok := e.data["content_block"].(map[string]any); ok && cb["type"] == "tool_use" {
			start = cb
		}
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			input.WriteString(d["partial_json"].(string))
		}
	}
	if start == nil || start["name"] != "mcp__bench__get_weather" || start["id"] != "toolu_agent_0" || input.String() != `{"city": "Paris"}` {
		t.Fatalf("turn 0 tool_use %v input %q", start, input.String())
	}

	second := `{"model":"agent","stream":true,"messages":[` +
		`{"role":"user","content":"weather?"},` +
		`{"role":"system","content":"a reminder"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_agent_0","name":"mcp__bench__get_weather","input":{"city":"Paris"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_agent_0","content":[{"type":"text","text":"18 C"},{"type":"text","text":", rain"}]},` +
		`{"type":"tool_result","tool_use_id":"toolu_x","content":"boom","is_error":true}]}]}`
	var text strings.Builder
	for _, e := range readSSE(t, post(t, s, "/v1/messages", second).Body) {
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "text_delta" {
			text.WriteString(d["text"].(string))
		}
		if d, ok := e.data["delta"].(map[string]any); ok && e.name == "message_delta" && d["stop_reason"] != "end_turn" {
			t.Errorf("turn 1 stop_reason %v", d["stop_reason"])
		}
	}
	if text.String() != "It is 18 C." {
		t.Errorf("turn 1 text %q", text.String())
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Turn() != 0 || reqs[1].Turn() != 1 {
		t.Fatalf("requests %d, turns %d %d", len(reqs), reqs[0].Turn(), reqs[1].Turn())
	}
	if got := reqs[0].ToolNames(); len(got) != 1 || got[0] != "mcp__bench__get_weather" {
		t.Errorf("tool names %v", got)
	}
	want := []ToolResult{{ToolUseID: "toolu_agent_0", Content: "18 C, rain"}, {ToolUseID: "toolu_x", Content: "boom", IsError: true}}
	if got := reqs[1].ToolResults(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("tool results %+v\nwant %+v", got, want)
	}
	if len(reqs[0].ToolResults()) != 0 {
		t.Errorf("first request has tool results")
	}

	// Past the last turn the last reply repeats; non-streaming works too.
	third := `{"model":"agent","messages":[{"role":"assistant","content":"a"},{"role":"assistant","content":"b"},{"role":"assistant","content":"c"}]}`
	var msg struct {
		Content []struct{ Text string }
	}
	if err := json.NewDecoder(post(t, s, "/v1/messages", third).Body).Decode(&msg); err != nil || len(msg.Content) != 1 || msg.Content[0].Text != "It is 18 C." {
		t.Errorf("turn 3 = %+v, %v", msg, err)
	}
}
