package providers

import (
	"context"
	"strings"
	"testing"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/testpeer/recorded"
	"bench/prompts"
)

// A recorded OpenAI stream (gpt-4.1-mini): the answer, its usage with the
// cached prompt tokens OpenAI reports (0 here, exact, not absent), stop.
func TestOpenAIChatRecordedText(t *testing.T) {
	srv := replay(t, recorded.One(t, "langchaingo/TestWithStreaming-openai.httprr", "/chat/completions"))
	rec := &recorder{}
	resp, err := hostedProvider(t, "openai_chat", srv.URL, nil).Stream(context.Background(), Request{Model: "gpt-4.1-mini", Prompt: "Tell me more about my taxonomy", MaxTokens: 300}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Text, "Sure! As a Pomeranian, here is your taxonomy:") || len(resp.Text) != 548 || resp.FinishReason != "stop" {
		t.Errorf("text (%d bytes) %.60q finish %q", len(resp.Text), resp.Text, resp.FinishReason)
	}
	checkTextEvents(t, rec, resp.Text)
	checkUsage(t, resp.Usage, intp(18), intp(143), nil)
	checkCached(t, resp.Usage, intp(0))
	r := srv.Requests()[0]
	body := r.JSON()
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+hostedKey || body["max_tokens"] != float64(300) || body["max_completion_tokens"] != nil {
		t.Errorf("path %s auth %q body %v", r.Path, r.Header.Get("Authorization"), body)
	}
}

// Two calls in one reply (gpt-4.1), each assembled from its pieces by
// index, with the ids and arguments the recording streamed.
func TestOpenAIChatRecordedParallelTools(t *testing.T) {
	srv := replay(t, recorded.One(t, "langchaingo/TestFunctionParallelCall-streaming-openai.httprr", "/chat/completions"))
	req := Request{Model: "gpt-4.1", Prompt: "What are the weather and time in Boston, MA?", Tools: []prompts.Tool{{Name: "getCurrentWeather"}, {Name: "getCurrentTime"}}}
	resp, err := hostedProvider(t, "openai_chat", srv.URL, nil).Stream(context.Background(), req, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	want := []results.ToolCall{
		{ID: "call_ZqGHKScptLaD0wmWHJYFN1Vo", Name: "getCurrentWeather", Arguments: []byte(`{"location": "Boston, MA"}`)},
		{ID: "call_XoLScnhw0USpb7ml5C5nfGW1", Name: "getCurrentTime", Arguments: []byte(`{"location": "Boston, MA"}`)},
	}
	if len(resp.ToolCalls) != 2 || resp.FinishReason != "tool_calls" {
		t.Fatalf("calls %+v finish %q", resp.ToolCalls, resp.FinishReason)
	}
	for i, c := range resp.ToolCalls {
		if c.ID != want[i].ID || c.Name != want[i].Name || string(c.Arguments) != string(want[i].Arguments) {
			t.Errorf("call %d: %+v", i, c)
		}
	}
	checkUsage(t, resp.Usage, intp(121), intp(50), nil)
}

// OpenRouter (Gemini 2.5 Flash thinking): keep-alive comments before the
// first chunk, reasoning in `reasoning` deltas apart from the answer, and
// the reasoning tokens of completion_tokens_details.
func TestOpenAIChatRecordedOpenRouterReasoning(t *testing.T) {
	srv := replay(t, recorded.One(t, "langchaingo/TestMultiContentTextWithReasoning-streaming-openrouter-gemini-2.5-flash-preview-thinking-effort.httprr", "/chat/completions"))
	resp, err := hostedProvider(t, "openai_chat", srv.URL, nil).Stream(context.Background(), Request{Model: "google/gemini-2.5-flash-preview:thinking", Prompt: "What is the factorial of 5?", ThinkingLevel: "high"}, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Reasoning, "**Calculating Factorial of 5**") || len(resp.Reasoning) != 886 || len(resp.Text) != 385 || strings.Contains(resp.Text, "Calculating Factorial") {
		t.Errorf("reasoning %d bytes, text %d bytes: %.60q", len(resp.Reasoning), len(resp.Text), resp.Text)
	}
	checkUsage(t, resp.Usage, intp(17), intp(650), intp(501))
	if body := srv.Requests()[0].JSON(); body["reasoning_effort"] != "high" {
		t.Errorf("body %v", body)
	}
}

// Azure OpenAI: api-version in the query, the key in api-key (no bearer
// token), max_completion_tokens; an entry's extra headers sent, a header
// from ${VAR} a secret; no Ollama side calls (a single request).
func TestOpenAIChatAzureAndHeaders(t *testing.T) {
	t.Setenv("BENCH_GATEWAY_TOKEN", "gw-token-0123456789abcdef")
	srv := replay(t, recorded.One(t, "langchaingo/TestWithStreaming-openai.httprr", "/chat/completions"))
	p := hostedProvider(t, "openai_chat", srv.URL, func(opts any) {
		o := opts.(*openAIChatOptions)
		o.BaseURL += "/openai/deployments/gpt-4o-mini"
		o.APIVersion = "2024-10-21"
		o.Headers = map[string]string{"X-Gateway-Token": "${BENCH_GATEWAY_TOKEN}", "HTTP-Referer": "https://bench.example"}
	})
	if _, err := p.Stream(context.Background(), Request{Model: "gpt-4o-mini", Prompt: "p", MaxTokens: 64}, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	r := reqs[0]
	if len(reqs) != 1 || r.Path != "/v1/openai/deployments/gpt-4o-mini/chat/completions" || r.Query != "api-version=2024-10-21" {
		t.Errorf("%d requests, path %s query %s", len(reqs), r.Path, r.Query)
	}
	if r.Header.Get("Api-Key") != hostedKey || r.Header.Get("Authorization") != "" || r.Header.Get("X-Gateway-Token") != "gw-token-0123456789abcdef" || r.Header.Get("Http-Referer") != "https://bench.example" {
		t.Errorf("headers %v", r.Header)
	}
	if body := r.JSON(); body["max_completion_tokens"] != float64(64) || body["max_tokens"] != nil {
		t.Errorf("body %v", body)
	}
	if got := p.Secrets().Clean("token gw-token-0123456789abcdef and key "+hostedKey, 0); strings.Contains(got, "gw-token") || strings.Contains(got, hostedKey) {
		t.Errorf("not scrubbed: %s", got)
	}
}

// Resolve's derived defaults and problems.
func TestOpenAIChatResolve(t *testing.T) {
	for _, c := range []struct {
		base, version, field, wantField, wantEnv string
		problems                                 int
	}{
		{openAIDefaultURL, "", "", "max_completion_tokens", "OPENAI_API_KEY", 0},
		{"http://127.0.0.1:8000/v1", "", "", "max_tokens", "", 0},
		{"https://r.openai.azure.com/openai/deployments/d", "2024-10-21", "", "max_completion_tokens", "", 0},
		{"http://127.0.0.1:8000/v1", "", "max_output", "max_output", "", 1},
		{"http://127.0.0.1:8000/v1", "2024-10-21&x=1", "", "max_completion_tokens", "", 1},
	} {
		o := openAIChatKind{}.Options().(*openAIChatOptions)
		o.BaseURL, o.APIVersion, o.MaxTokensField = c.base, c.version, c.field
		var problems []string
		openAIChatKind{}.Resolve(&config.Provider{Name: "x", Type: "openai_chat", Options: o}, func(k, m string) { problems = append(problems, k+": "+m) })
		if o.MaxTokensField != c.wantField || o.APIKeyEnv != c.wantEnv || len(problems) != c.problems {
			t.Errorf("%s %s %s: field %s env %q problems %v", c.base, c.version, c.field, o.MaxTokensField, o.APIKeyEnv, problems)
		}
	}
}
