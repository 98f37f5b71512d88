package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/testpeer/recorded"
	"bench/prompts"
)

const hostedKeyEnv = "BENCH_HOSTED_TEST_KEY"
const hostedKey = "sk-hosted-0123456789abcdefSECRET"

// hostedProvider builds an entry of a hosted kind pointed at url, with the
// key set and a back-off short enough for tests.
func hostedProvider(t *testing.T, typ, url string, edit func(opts any)) Provider {
	t.Helper()
	t.Setenv(hostedKeyEnv, hostedKey)
	k, _ := Lookup(typ)
	opts := k.Options()
	switch o := opts.(type) {
	case *anthropicOptions:
		o.BaseURL, o.APIKeyEnv = url+"/v1", hostedKeyEnv
	case *openAIChatOptions:
		o.BaseURL, o.APIKeyEnv = url+"/v1", hostedKeyEnv
	case *geminiOptions:
		o.BaseURL, o.APIKeyEnv = url+"/v1beta", hostedKeyEnv
	}
	if edit != nil {
		edit(opts)
	}
	p := newKind(t, typ, opts)
	switch v := p.(type) {
	case *Anthropic:
		v.http.backoff = time.Millisecond
	case *OpenAIChat:
		v.http.backoff = time.Millisecond
	case *Gemini:
		v.http.backoff = time.Millisecond
	}
	return p
}

// replay serves one recorded exchange to every request.
func replay(t *testing.T, e recorded.Exchange) *recorded.Server {
	return recorded.Serve(t, func(recorded.Request) recorded.Exchange { return e })
}

func checkCached(t *testing.T, u Usage, want *int) {
	t.Helper()
	if (u.CachedInputTokens == nil) != (want == nil) || (want != nil && *u.CachedInputTokens != *want) {
		t.Errorf("cached input tokens %v, want %v", u.CachedInputTokens, want)
	}
}

// firstTextBeforeEnd checks TTFT's event: the first text event comes
// before any later one, and there is at least one.
func checkTextEvents(t *testing.T, rec *recorder, want string) {
	t.Helper()
	if got := strings.Join(rec.texts(EventText), ""); got != want {
		t.Errorf("text events %q, want %q", got, want)
	}
}

// A recorded text stream (Claude 3 Opus counting, with a ping between
// deltas): the answer, its usage and stop reason as the recording has
// them, and the key and version sent in their headers.
func TestAnthropicRecordedText(t *testing.T) {
	srv := replay(t, recorded.One(t, "langchaingo/TestClient_CreateMessageStream.httprr", "/v1/messages"))
	rec := &recorder{}
	resp, err := hostedProvider(t, "anthropic", srv.URL, nil).Stream(context.Background(), Request{Model: "claude-3-opus-20240229", Prompt: "Count from 1 to 5"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "1\n2\n3\n4\n5" || resp.FinishReason != "end_turn" || resp.Reasoning != "" {
		t.Errorf("text %q finish %q reasoning %q", resp.Text, resp.FinishReason, resp.Reasoning)
	}
	checkTextEvents(t, rec, "1\n2\n3\n4\n5")
	checkUsage(t, resp.Usage, intp(15), intp(13), nil)
	checkCached(t, resp.Usage, intp(0))
	r := srv.Requests()[0]
	if r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != hostedKey || r.Header.Get("Anthropic-Version") != "2023-06-01" || r.Header.Get("Authorization") != "" {
		t.Errorf("path %s, headers %v", r.Path, r.Header)
	}
	body := r.JSON()
	if body["stream"] != true || body["max_tokens"] != float64(4096) || body["thinking"] != nil {
		t.Errorf("body %v", body)
	}
}

// Two tool calls in one reply (Claude Sonnet 4.5): names, ids and the
// arguments the input_json_delta pieces spell, {} for the call whose
// input streamed empty, and tool_use as the stop reason.
func TestAnthropicRecordedParallelTools(t *testing.T) {
	srv := replay(t, recorded.One(t, "langchaingo/TestAnthropic_GenerateContentWithToolAndStreaming.httprr", "/v1/messages"))
	rec := &recorder{}
	req := Request{Model: "claude-sonnet-4-5", Prompt: "Calculate a 15% tip", Tools: []prompts.Tool{
		{Name: "calculateTip", Description: "Calculate tip amount", Parameters: map[string]any{"type": "object", "properties": map[string]any{"billAmount": map[string]any{"type": "number"}}}},
		{Name: "getWaiterName", Description: "Get the name of the waiter"},
	}}
	resp, err := hostedProvider(t, "anthropic", srv.URL, nil).Stream(context.Background(), req, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "I'll calculate the tip and get the waiter's name for you." || resp.FinishReason != "tool_use" {
		t.Errorf("text %q finish %q", resp.Text, resp.FinishReason)
	}
	want := []results.ToolCall{
		{ID: "toolu_01VsaoaKxpzdz8vgY4hTGjE3", Name: "calculateTip", Arguments: json.RawMessage(`{"billAmount": 50, "tipPercentage": 15}`)},
		{ID: "toolu_01Uksi8drJHeC8rCj8yVUtCJ", Name: "getWaiterName", Arguments: json.RawMessage(`{}`)},
	}
	if len(resp.ToolCalls) != 2 {
		t.Fatalf("calls %+v", resp.ToolCalls)
	}
	for i, c := range resp.ToolCalls {
		if c.ID != want[i].ID || c.Name != want[i].Name || string(c.Arguments) != string(want[i].Arguments) {
			t.Errorf("call %d: %+v, want %+v", i, c, want[i])
		}
	}
	checkUsage(t, resp.Usage, intp(679), intp(111), nil)
	tools := srv.Requests()[0].JSON()["tools"].([]any)
	if len(tools) != 2 || tools[0].(map[string]any)["input_schema"] == nil || tools[1].(map[string]any)["input_schema"].(map[string]any)["type"] != "object" {
		t.Errorf("tools sent: %v", tools)
	}
	n := 0
	for _, e := range rec.events {
		if e.Kind == EventToolCall {
			n++
		}
	}
	if n < 2 {
		t.Errorf("%d tool-call events", n)
	}
}

// Extended thinking (pydantic-ai's recording): the thinking apart from the
// answer, the level's budget sent, max_tokens counting it.
func TestAnthropicRecordedThinking(t *testing.T) {
	e := recorded.One(t, "pydantic-ai/test_anthropic_model_thinking_part_stream.yaml", "/v1/messages")
	srv := replay(t, e)
	rec := &recorder{}
	resp, err := hostedProvider(t, "anthropic", srv.URL, nil).Stream(context.Background(), Request{Model: "claude-3-7-sonnet-latest", Prompt: "How do I cross the street?", ThinkingLevel: "medium"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Reasoning, "This is a straightforward question about pedestrian safety.") || len(resp.Reasoning) != 202 {
		t.Errorf("reasoning (%d bytes) %q", len(resp.Reasoning), resp.Reasoning)
	}
	if !strings.HasPrefix(resp.Text, "Here are the basic steps for safely crossing the street:") || len(resp.Text) != 1021 || strings.Contains(resp.Text, "pedestrian safety.") {
		t.Errorf("text (%d bytes) %.80q", len(resp.Text), resp.Text)
	}
	if resp.FinishReason != "end_turn" || len(rec.texts(EventReasoning)) == 0 {
		t.Errorf("finish %q, %d reasoning events", resp.FinishReason, len(rec.texts(EventReasoning)))
	}
	checkUsage(t, resp.Usage, intp(43), intp(282), nil)
	body := srv.Requests()[0].JSON()
	th, _ := body["thinking"].(map[string]any)
	if th["type"] != "enabled" || th["budget_tokens"] != float64(4096) || body["max_tokens"] != float64(4096+4096) {
		t.Errorf("thinking %v max_tokens %v", th, body["max_tokens"])
	}
}

// Redacted thinking has no text: nothing in reasoning, the blocks counted.
func TestAnthropicRecordedRedactedThinking(t *testing.T) {
	srv := replay(t, recorded.One(t, "pydantic-ai/test_anthropic_model_thinking_part_redacted_stream.yaml", "/v1/messages"))
	resp, err := hostedProvider(t, "anthropic", srv.URL, nil).Stream(context.Background(), Request{Model: "claude-3-7-sonnet-20250219", Prompt: "x", ThinkingLevel: "low"}, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Reasoning != "" || resp.Metrics["redacted_thinking_blocks"] != 2 || len(resp.Text) != 359 || resp.FinishReason != "end_turn" {
		t.Errorf("reasoning %q, metrics %v, text %d bytes, finish %q", resp.Reasoning, resp.Metrics, len(resp.Text), resp.FinishReason)
	}
	checkUsage(t, resp.Usage, intp(92), intp(189), nil)
}

// Prompt caching (vercel/ai's recording): input counts the whole prompt,
// cache reads and writes included; the cache reads are the cached part,
// both counts also in the metrics. message_delta's input_tokens (6)
// revises message_start's (2).
func TestAnthropicRecordedCacheUsage(t *testing.T) {
	srv := replay(t, recorded.Chunks(t, "vercel-ai/anthropic-code-execution-20260120-prompt-cache.1.chunks.txt", recorded.Messages))
	resp, err := hostedProvider(t, "anthropic", srv.URL, nil).Stream(context.Background(), Request{Model: "claude-sonnet-5", Prompt: "x"}, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	checkUsage(t, resp.Usage, intp(6+6289+3337), intp(198), nil)
	checkCached(t, resp.Usage, intp(6289))
	if resp.Metrics["cache_read_input_tokens"] != 6289 || resp.Metrics["cache_creation_input_tokens"] != 3337 {
		t.Errorf("metrics %v", resp.Metrics)
	}
	if resp.Text != "The sum of the squares of the numbers 1 through 12 is **650**." || resp.FinishReason != "end_turn" {
		t.Errorf("text %q finish %q", resp.Text, resp.FinishReason)
	}
}

// An unknown model: the API's 404 not_found_error names the model, so the
// cell is skipped as model_not_found.
func TestAnthropicRecordedUnknownModel(t *testing.T) {
	srv := replay(t, recorded.One(t, "pydantic-ai/test_anthropic_count_tokens_error.yaml", "api.anthropic.com"))
	_, err := hostedProvider(t, "anthropic", srv.URL, nil).Stream(context.Background(), Request{Model: "claude-does-not-exist", Prompt: "hello"}, func(Event) {})
	f := asFailure(t, err)
	if f.Status != results.StatusSkippedUnavailable || f.Type != results.FailModelNotFound || f.Message != "not_found_error: model: claude-does-not-exist" {
		t.Errorf("%+v", f)
	}
}

// The bad input of a live API, built from a recorded stream: an error
// event after the first delta (the API's overloaded_error), a stream cut
// after message_start, a 529 storm (retried, then rate_limited), a wrong
// key (401 authentication_error, as the API answers it, quoting nothing
// of bench's), and a key variable left unset (nothing sent).
func TestAnthropicBadInput(t *testing.T) {
	rec := recorded.One(t, "langchaingo/TestClient_CreateMessageStream.httprr", "/v1/messages")
	events := recorded.SplitEvents(rec.Body)
	withBody := func(b string) recorded.Exchange { e := rec; e.Body = []byte(b); return e }
	overloaded := "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"
	jsonErr := func(status int, typ, msg string) recorded.Exchange {
		return recorded.Exchange{Status: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"}}`)}
	}
	cases := []struct {
		name         string
		ex           recorded.Exchange
		status, typ  string
		text         string
		wantRequests int
	}{
		{"error event mid-stream", withBody(string(events[0]) + string(events[1]) + string(events[2]) + overloaded), results.StatusRateLimited, results.FailStreamError, "1", 1},
		{"cut after message_start", withBody(string(events[0])), results.StatusError, results.FailStreamTruncated, "", 1},
		{"529 storm", jsonErr(529, "overloaded_error", "Overloaded"), results.StatusRateLimited, "http_529", "", 3},
		{"wrong key", jsonErr(401, "authentication_error", "invalid x-api-key"), results.StatusAuthError, "http_401", "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := replay(t, c.ex)
			resp, err := hostedProvider(t, "anthropic", srv.URL, nil).Stream(context.Background(), Request{Model: "m", Prompt: "p"}, func(Event) {})
			f := asFailure(t, err)
			if f.Status != c.status || f.Type != c.typ || resp.Text != c.text || len(srv.Requests()) != c.wantRequests {
				t.Errorf("%s/%s text %q after %d requests: %s", f.Status, f.Type, resp.Text, len(srv.Requests()), f.Message)
			}
		})
	}
	srv := replay(t, rec)
	p := hostedProvider(t, "anthropic", srv.URL, nil)
	t.Setenv(hostedKeyEnv, "")
	_, err := p.Stream(context.Background(), Request{Model: "m", Prompt: "p"}, func(Event) {})
	if f := asFailure(t, err); f.Status != results.StatusSkippedUnavailable || f.Type != results.FailMissingAPIKey || len(srv.Requests()) != 0 {
		t.Errorf("%+v after %d requests", f, len(srv.Requests()))
	}
}

// An agentic conversation goes back as the API wants it: the reply's text
// and tool_use blocks (input as an object), then every result of that
// reply in one user message of tool_result blocks, paired by id.
func TestAnthropicConversation(t *testing.T) {
	srv := replay(t, recorded.One(t, "langchaingo/TestClient_CreateMessageStream.httprr", "/v1/messages"))
	req := Request{Model: "m", System: "be brief", Prompt: "weather and time?", Messages: []Message{
		{Role: RoleAssistant, Text: "Checking.", ToolCalls: []results.ToolCall{
			{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			{Name: "get_time", Arguments: json.RawMessage(`"not json"`)},
		}},
		{Role: RoleTool, CallID: "toolu_1", Name: "get_weather", Text: "sunny"},
		{Role: RoleTool, Name: "get_time", Text: "no such city", IsError: true},
	}}
	if _, err := hostedProvider(t, "anthropic", srv.URL, nil).Stream(context.Background(), req, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	var body struct {
		System   string             `json:"system"`
		Messages []anthropicMessage `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(body.Messages)
	want := `[{"role":"user","content":[{"type":"text","text":"weather and time?"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}},{"type":"tool_use","id":"call_0_1","name":"get_time","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"},{"type":"tool_result","tool_use_id":"call_0_1","content":"no such city","is_error":true}]}]`
	if string(got) != want || body.System != "be brief" {
		t.Errorf("system %q messages\n%s\nwant\n%s", body.System, got, want)
	}
}
