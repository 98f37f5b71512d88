package providers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/testpeer/recorded"
	"bench/prompts"
)

// A recorded text stream (Gemini 2.0 Flash): the answer, the usage, STOP;
// the key in x-goog-api-key and never in the URL.
func TestGeminiRecordedText(t *testing.T) {
	srv := replay(t, recorded.One(t, "pydantic-ai/test_google_model_stream.yaml", "streamGenerateContent"))
	rec := &recorder{}
	resp, err := hostedProvider(t, "gemini", srv.URL, nil).Stream(context.Background(), Request{Model: "gemini-2.0-flash-exp", System: "You are a helpful chatbot.", Prompt: "What is the capital of France?"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "The capital of France is Paris.\n" || resp.FinishReason != "STOP" || resp.Metrics["model_version"] != "gemini-2.0-flash-exp" {
		t.Errorf("text %q finish %q metrics %v", resp.Text, resp.FinishReason, resp.Metrics)
	}
	checkTextEvents(t, rec, "The capital of France is Paris.\n")
	checkUsage(t, resp.Usage, intp(13), intp(8), nil)
	checkCached(t, resp.Usage, nil)
	r := srv.Requests()[0]
	if r.Path != "/v1beta/models/gemini-2.0-flash-exp:streamGenerateContent" || r.Query != "alt=sse" || r.Header.Get("X-Goog-Api-Key") != hostedKey {
		t.Errorf("path %s query %s headers %v", r.Path, r.Query, r.Header)
	}
	if strings.Contains(r.Path+r.Query, hostedKey) {
		t.Error("the key is in the URL")
	}
	body := r.JSON()
	if sys := body["systemInstruction"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"]; sys != "You are a helpful chatbot." || body["generationConfig"] != nil {
		t.Errorf("body %v", body)
	}
}

// Thinking (Gemini 2.5 Pro with includeThoughts): thought parts are the
// reasoning, apart from the answer; thoughtsTokenCount is the reasoning's
// share of the output, which counts it on top of candidatesTokenCount.
func TestGeminiRecordedThinking(t *testing.T) {
	srv := replay(t, recorded.One(t, "pydantic-ai/test_google_model_thinking_part_iter.yaml", "streamGenerateContent"))
	rec := &recorder{}
	resp, err := hostedProvider(t, "gemini", srv.URL, nil).Stream(context.Background(), Request{Model: "gemini-2.5-pro", Prompt: "How do I cross the street?", ThinkingLevel: "high"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Reasoning, "**Clarifying User Goals**") || len(resp.Reasoning) != 1575 || strings.Contains(resp.Text, "Clarifying") {
		t.Errorf("reasoning (%d bytes) %.60q", len(resp.Reasoning), resp.Reasoning)
	}
	if !strings.HasPrefix(resp.Text, "This is a great question!") || len(resp.Text) != 1938 || resp.FinishReason != "STOP" {
		t.Errorf("text (%d bytes) %.60q finish %q", len(resp.Text), resp.Text, resp.FinishReason)
	}
	checkUsage(t, resp.Usage, intp(34), intp(469+787), intp(787))
	if len(rec.texts(EventReasoning)) != 4 {
		t.Errorf("%d reasoning events, the recording has 4 thought parts", len(rec.texts(EventReasoning)))
	}
	gen := srv.Requests()[0].JSON()["generationConfig"].(map[string]any)
	if tc := gen["thinkingConfig"].(map[string]any); tc["thinkingBudget"] != float64(16384) || tc["includeThoughts"] != true {
		t.Errorf("thinkingConfig %v", tc)
	}
}

// Function calls: a whole call per functionCall part, its args as sent;
// Gemini 3's thought signature is kept and sent back with the call on the
// next turn, as the recording's second request carries it.
func TestGeminiRecordedToolCallAndSignature(t *testing.T) {
	ex := recorded.Load(t, "pydantic-ai/test_google_streaming_tool_call_thought_signature.yaml")
	srv := recorded.Serve(t, func(r recorded.Request) recorded.Exchange {
		if strings.Contains(string(r.Body), "functionResponse") {
			return ex[1]
		}
		return ex[0]
	})
	g := hostedProvider(t, "gemini", srv.URL, nil)
	req := Request{Model: "gemini-3-pro-preview", Prompt: "What is the capital of the user country? Call the tool", Tools: []prompts.Tool{{Name: "get_country"}}}
	resp, err := g.Stream(context.Background(), req, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "get_country" || string(resp.ToolCalls[0].Arguments) != "{}" || resp.ToolCalls[0].ID == "" {
		t.Fatalf("calls %+v", resp.ToolCalls)
	}
	checkUsage(t, resp.Usage, intp(29), intp(10+202), intp(202))
	req.Messages = []Message{
		{Role: RoleAssistant, ToolCalls: resp.ToolCalls},
		{Role: RoleTool, CallID: resp.ToolCalls[0].ID, Name: "get_country", Text: "Mexico"},
	}
	resp2, err := g.Stream(context.Background(), req, func(Event) {})
	if err != nil || resp2.Text != "The capital of Mexico is Mexico City." {
		t.Fatalf("%v: %q", err, resp2.Text)
	}
	var want, got struct {
		Contents []geminiContent `json:"contents"`
	}
	json.Unmarshal(ex[1].RequestBody, &want)
	json.Unmarshal(srv.Requests()[1].Body, &got)
	if len(got.Contents) != 3 || len(want.Contents) != 3 {
		t.Fatalf("contents %+v", got.Contents)
	}
	// The same bytes: the API sent the signature in standard base64,
	// pydantic-ai sent it back in the URL-safe alphabet.
	gp, wp := got.Contents[1].Parts[0], want.Contents[1].Parts[0]
	gs, _ := base64.StdEncoding.DecodeString(gp.ThoughtSignature)
	ws, _ := base64.URLEncoding.DecodeString(wp.ThoughtSignature)
	if len(gs) == 0 || !bytes.Equal(gs, ws) || gp.FunctionCall.Name != "get_country" || got.Contents[1].Role != "model" {
		t.Errorf("the call went back as %+v, the recording sent %+v", gp, wp)
	}
	if fr := got.Contents[2].Parts[0].FunctionResponse; fr == nil || fr.Name != "get_country" || fr.Response["result"] != "Mexico" || fr.ID != "" {
		t.Errorf("function response %+v", fr)
	}
	decl := srv.Requests()[0].JSON()["tools"].([]any)[0].(map[string]any)["functionDeclarations"].([]any)[0].(map[string]any)
	if decl["name"] != "get_country" {
		t.Errorf("declaration %v", decl)
	}
}

// Calls in one reply arrive as several functionCall parts (here the two
// calls of a recorded sequential exchange, in one event): each is a call.
func TestGeminiParallelCalls(t *testing.T) {
	ex := recorded.Load(t, "pydantic-ai/test_google_model_iter_stream.yaml")
	var parts []json.RawMessage
	for _, e := range ex[:2] {
		var ch struct {
			Candidates []struct {
				Content struct {
					Parts []json.RawMessage `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
		}
		json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(string(e.Body)), "data: ")), &ch)
		parts = append(parts, ch.Candidates[0].Content.Parts...)
	}
	one, _ := json.Marshal(map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP"}}})
	e := ex[0]
	e.Body = append(append([]byte("data: "), one...), "\r\n\r\n"...)
	srv := replay(t, e)
	resp, err := hostedProvider(t, "gemini", srv.URL, nil).Stream(context.Background(), Request{Model: "gemini-2.0-flash", Prompt: "x"}, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Name != "get_capital" || string(resp.ToolCalls[0].Arguments) != `{"country":"France"}` ||
		resp.ToolCalls[1].Name != "get_temperature" || string(resp.ToolCalls[1].Arguments) != `{"city":"Paris"}` || resp.ToolCalls[0].ID == resp.ToolCalls[1].ID {
		t.Errorf("calls %+v", resp.ToolCalls)
	}
}

// Blocks and errors as the API answers them: an answer stopped by the
// safety filter (finishReason SAFETY, the blocked category named), a
// blocked prompt (promptFeedback.blockReason), a wrong key (400
// API_KEY_INVALID: an auth error), an exhausted quota (429
// RESOURCE_EXHAUSTED), a stream cut before any finishReason, and an error
// event mid-stream.
func TestGeminiRecordedBlocksAndErrors(t *testing.T) {
	text := recorded.One(t, "pydantic-ai/test_google_model_stream.yaml", "streamGenerateContent")
	events := recorded.SplitEvents(text.Body)
	cut := text
	cut.Body = events[0]
	midErr := text
	midErr.Body = append(append([]byte{}, events[0]...), "data: {\"error\": {\"code\": 503, \"message\": \"The model is overloaded.\", \"status\": \"UNAVAILABLE\"}}\r\n\r\n"...)
	cases := []struct {
		name           string
		ex             recorded.Exchange
		status, typ    string
		msg, finish    string
		in, out        *int
		requests, text int
	}{
		{"safety", recorded.AsEvent(recorded.One(t, "pydantic-ai/test_google_model_safety_settings.yaml", "generateContent")),
			results.StatusError, "content_filtered", "answer blocked: finishReason SAFETY: HARM_CATEGORY_HATE_SPEECH (LOW)", "SAFETY", intp(14), nil, 1, 0},
		{"prompt blocked", recorded.AsEvent(recorded.One(t, "pydantic-ai/test_google_model_armor_prompt_template_text_gets_blocked.yaml", "generateContent")),
			results.StatusError, "prompt_blocked", "prompt blocked: MODEL_ARMOR: The prompt violated Prompt Injection and Jailbreak filters.", "MODEL_ARMOR", nil, nil, 1, 0},
		{"wrong key", recorded.One(t, "langchaingo/TestGoogleAIErrorHandling.httprr", "generateContent"),
			results.StatusAuthError, "http_400", "API_KEY_INVALID: API key not valid. Please pass a valid API key.", "", nil, nil, 1, 0},
		{"quota", recorded.ErrorBody(t, "vercel-ai/google-429-retry-info.json"),
			results.StatusRateLimited, results.FailHTTP429, "RESOURCE_EXHAUSTED: You exceeded your current quota, please check your plan. (after 2 retries)", "", nil, nil, 3, 0},
		// The first event: "The", 15 prompt tokens, no output count yet.
		{"cut", cut, results.StatusError, results.FailStreamTruncated, "stream ended without a finishReason", "", intp(15), nil, 1, len("The")},
		{"error event", midErr, results.StatusError, results.FailStreamError, "UNAVAILABLE: The model is overloaded.", "", intp(15), nil, 1, len("The")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := replay(t, c.ex)
			resp, err := hostedProvider(t, "gemini", srv.URL, nil).Stream(context.Background(), Request{Model: "gemini-2.5-flash", Prompt: "p"}, func(Event) {})
			f := asFailure(t, err)
			if f.Status != c.status || f.Type != c.typ || f.Message != c.msg || resp.FinishReason != c.finish || len(srv.Requests()) != c.requests || len(resp.Text) != c.text {
				t.Errorf("%s/%s %q finish %q after %d requests, text %q", f.Status, f.Type, f.Message, resp.FinishReason, len(srv.Requests()), resp.Text)
			}
			checkUsage(t, resp.Usage, c.in, c.out, nil)
		})
	}
}
