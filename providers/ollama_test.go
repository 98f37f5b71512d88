package providers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ollama/ollama/api"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/testpeer/ollamatest"
	"bench/internal/testpeer/testmodel"
	"bench/prompts"
)

// ollamaRecording parses a recorded response from testdata/ollama: status
// line, headers, then the decoded body as it is.
func ollamaRecording(t testing.TB, name string) (int, http.Header, []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "ollama", name))
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.StatusCode, res.Header, raw[bytes.Index(raw, []byte("\r\n\r\n"))+4:]
}

// ollamaReplay serves recordings by path and records request bodies.
type ollamaReplay struct {
	mu     sync.Mutex
	routes map[string]http.HandlerFunc
	bodies map[string][]json.RawMessage
}

func newOllamaReplay(t *testing.T) (*ollamaReplay, *httptest.Server) {
	rp := &ollamaReplay{routes: map[string]http.HandlerFunc{}, bodies: map[string][]json.RawMessage{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rp.mu.Lock()
		rp.bodies[r.URL.Path] = append(rp.bodies[r.URL.Path], b)
		h := rp.routes[r.URL.Path]
		rp.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return rp, srv
}

func (rp *ollamaReplay) file(t *testing.T, path, name string) {
	status, hdr, body := ollamaRecording(t, name)
	rp.handle(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", hdr.Get("Content-Type"))
		w.WriteHeader(status)
		// One write and flush per line, as the server streams.
		for _, line := range bytes.SplitAfter(body, []byte("\n")) {
			w.Write(line)
			w.(http.Flusher).Flush()
		}
	})
}

func (rp *ollamaReplay) handle(path string, h http.HandlerFunc) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	rp.routes[path] = h
}

func (rp *ollamaReplay) requests(path string) []json.RawMessage {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return rp.bodies[path]
}

func newOllamaProvider(t *testing.T, baseURL string, edit func(*ollamaOptions)) *Ollama {
	t.Helper()
	o := ollamaKind{}.Options().(*ollamaOptions)
	o.BaseURL = baseURL
	if edit != nil {
		edit(o)
	}
	p, err := newKind(t, "ollama", o), error(nil)
	if err != nil {
		t.Fatalf("NewOllama: %v", err)
	}
	return p.(*Ollama)
}

// ollamaEvents collects emitted events.
type ollamaEvents struct {
	mu     sync.Mutex
	events []Event
}

func (e *ollamaEvents) emit(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, ev)
}

func (e *ollamaEvents) kinds() string {
	names := map[EventKind]string{EventRequestStart: "start", EventText: "text", EventToolCall: "tool", EventReasoning: "reasoning"}
	var out []string
	for _, ev := range e.events {
		if isPhase(ev.Kind) {
			continue
		}
		out = append(out, names[ev.Kind])
	}
	return strings.Join(out, ",")
}

func ollamaFailure(t *testing.T, err error, status, typ string, httpStatus int, msgHas string) {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("error %v (%T), want a *Failure %s/%s", err, err, status, typ)
	}
	if f.Status != status || f.Type != typ || f.HTTPStatus != httpStatus || !strings.Contains(f.Message, msgHas) {
		t.Errorf("failure %s/%s http %d %q, want %s/%s http %d containing %q", f.Status, f.Type, f.HTTPStatus, f.Message, status, typ, httpStatus, msgHas)
	}
}

var memoryTool = prompts.Tool{
	Name: "get_memory_usage", Description: "Report memory.",
	Parameters: map[string]any{
		"type":       "object",
		"properties": map[string]any{"unit": map[string]any{"type": "string", "enum": []any{"MB", "GB"}}},
		"required":   []any{"unit"},
	},
}

func TestOllamaRecordedText(t *testing.T) {
	rp, srv := newOllamaReplay(t)
	rp.file(t, "/api/chat", "api_chat_stream_text.http")
	temp, seed := 0.2, 7
	p := newOllamaProvider(t, srv.URL, func(c *ollamaOptions) {
		c.Temperature, c.Seed, c.MaxTokens = &temp, &seed, 64
		c.Options = map[string]any{"num_ctx": 512, "temperature": 0.9}
		c.KeepAlive = "10m"
	})
	var ev ollamaEvents
	resp, err := p.Stream(context.Background(), Request{Model: "scripted", System: "sys", Prompt: "the word", ThinkingLevel: "high", Tools: []prompts.Tool{memoryTool}}, ev.emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Text != "I will run `free -h` to check memory." || resp.FinishReason != "stop" || len(resp.ToolCalls) != 0 {
		t.Errorf("text %q finish %q calls %v", resp.Text, resp.FinishReason, resp.ToolCalls)
	}
	if got := ev.kinds(); got != "start,text,text,text" {
		t.Errorf("events %s", got)
	}
	if *resp.Usage.InputTokens != 12 || *resp.Usage.OutputTokens != 4 {
		t.Errorf("usage %d/%d, want 12/4", *resp.Usage.InputTokens, *resp.Usage.OutputTokens)
	}
	want := map[string]any{
		"load_duration_ms": 3.235, "total_duration_ms": 5.595, "prompt_eval_count": 12, "prompt_eval_ms": 0.812,
		"eval_count": 4, "eval_ms": 1.011, "server_ttft_ms": 4.046, "decode_tokens_per_s": 3955.36, "done_reason": "stop",
	}
	for k, v := range want {
		if resp.Metrics[k] != v {
			t.Errorf("metric %s = %v (%T), want %v", k, resp.Metrics[k], resp.Metrics[k], v)
		}
	}

	// The request carries system, prompt, tools, think, options, keep_alive.
	var body struct {
		Model     string         `json:"model"`
		Stream    bool           `json:"stream"`
		Messages  []api.Message  `json:"messages"`
		Tools     []api.Tool     `json:"tools"`
		Think     *bool          `json:"think"`
		Options   map[string]any `json:"options"`
		KeepAlive string         `json:"keep_alive"`
	}
	if err := json.Unmarshal(rp.requests("/api/chat")[0], &body); err != nil {
		t.Fatal(err)
	}
	if body.Model != "scripted" || !body.Stream || len(body.Messages) != 2 || body.Messages[0].Role != "system" ||
		body.Messages[1].Content != "the word" || body.Think == nil || !*body.Think || body.KeepAlive != "10m0s" {
		t.Errorf("request body %+v", body)
	}
	if len(body.Tools) != 1 || body.Tools[0].Function.Name != "get_memory_usage" || body.Tools[0].Function.Parameters.Required[0] != "unit" ||
		body.Tools[0].Function.Parameters.Properties["unit"].Enum[1] != "GB" {
		t.Errorf("tools %+v", body.Tools)
	}
	wantOpts := map[string]any{"num_ctx": 512.0, "temperature": 0.2, "seed": 7.0, "num_predict": 64.0}
	for k, v := range wantOpts {
		if body.Options[k] != v {
			t.Errorf("option %s = %v, want %v", k, body.Options[k], v)
		}
	}
}

func TestOllamaRecordedToolCall(t *testing.T) {
	rp, srv := newOllamaReplay(t)
	rp.file(t, "/api/chat", "api_chat_stream_toolcall.http")
	p := newOllamaProvider(t, srv.URL, nil)
	var ev ollamaEvents
	resp, err := p.Stream(context.Background(), Request{Model: "scripted", Prompt: "memory", Tools: []prompts.Tool{memoryTool}}, ev.emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "get_memory" || string(resp.ToolCalls[0].Arguments) != `{"unit":"MB"}` || resp.Text != "" {
		t.Errorf("calls %+v text %q", resp.ToolCalls, resp.Text)
	}
	if got := ev.kinds(); got != "start,tool" {
		t.Errorf("events %s", got)
	}
	if *resp.Usage.InputTokens != 222 || *resp.Usage.OutputTokens != 2 {
		t.Errorf("usage %v", resp.Usage)
	}
	// No think level: think is left unset.
	if bytes.Contains(rp.requests("/api/chat")[0], []byte(`"think"`)) {
		t.Errorf("think sent without a level: %s", rp.requests("/api/chat")[0])
	}
}

func TestOllamaHTTPFailures(t *testing.T) {
	rp, srv := newOllamaReplay(t)
	rp.file(t, "/api/chat", "api_chat_model_not_found.http")
	p := newOllamaProvider(t, srv.URL, nil)
	var ev ollamaEvents
	_, err := p.Stream(context.Background(), Request{Model: "missing-model", Prompt: "x"}, ev.emit)
	ollamaFailure(t, err, results.StatusSkippedUnavailable, "model_not_found", 404, `model "missing-model" not found`)

	cases := []struct {
		status       int
		body         string
		wantStatus   string
		wantType     string
		wantMsg      string
		withAPIKeyOf string
	}{
		{401, `{"error":"unauthorized key sk-secret-123"}`, results.StatusAuthError, "http_401", "[redacted]", "sk-secret-123"},
		{403, `<html>Forbidden</html>`, results.StatusAuthError, "http_403", "Forbidden", ""},
		{429, `{"error":"too many requests"}`, results.StatusRateLimited, "http_429", "too many requests", ""},
		{500, `{"error":"llama runner process has terminated"}`, results.StatusError, "http_5xx", "runner process", ""},
		{400, `{"error":"registry.ollama.ai/library/x:latest does not support thinking"}`, results.StatusError, "thinking_unsupported", "does not support thinking", ""},
	}
	for _, c := range cases {
		rp.handle("/api/chat", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			io.WriteString(w, c.body)
		})
		t.Setenv("OLLAMA_TEST_KEY", c.withAPIKeyOf)
		p := newOllamaProvider(t, srv.URL, func(cfg *ollamaOptions) { cfg.APIKeyEnv = "OLLAMA_TEST_KEY" })
		_, err := p.Stream(context.Background(), Request{Model: "m", Prompt: "x"}, ev.emit)
		ollamaFailure(t, err, c.wantStatus, c.wantType, c.status, c.wantMsg)
		if c.withAPIKeyOf != "" && strings.Contains(err.Error(), c.withAPIKeyOf) {
			t.Errorf("secret in error: %v", err)
		}
	}
}

func TestOllamaStreamFailures(t *testing.T) {
	good := `{"model":"m","message":{"role":"assistant","content":"par"},"done":false}` + "\n" +
		`{"model":"m","message":{"role":"assistant","content":"tial"},"done":false}` + "\n"
	cases := []struct {
		name, body string
		cut        bool
		wantType   string
		wantMsg    string
	}{
		{"error line", good + `{"error":"an error was encountered while running the model: out of memory"}` + "\n", false, "stream_error", "out of memory"},
		{"ends without done", good, false, "stream_truncated", "before the done line"},
		{"cut connection", good, true, "stream_truncated", "mid-stream"},
		{"html", "<html>bad gateway</html>\n", false, "invalid_stream", "not JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rp, srv := newOllamaReplay(t)
			rp.handle("/api/chat", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/x-ndjson")
				io.WriteString(w, c.body)
				w.(http.Flusher).Flush()
				if c.cut {
					panic(http.ErrAbortHandler)
				}
			})
			p := newOllamaProvider(t, srv.URL, nil)
			var ev ollamaEvents
			resp, err := p.Stream(context.Background(), Request{Model: "m", Prompt: "x"}, ev.emit)
			ollamaFailure(t, err, results.StatusError, c.wantType, 0, c.wantMsg)
			if c.name != "html" && resp.Text != "partial" {
				t.Errorf("partial text %q, want kept", resp.Text)
			}
		})
	}
}

func TestOllamaRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	p := newOllamaProvider(t, url, nil)
	var ev ollamaEvents
	_, err = p.Stream(context.Background(), Request{Model: "m", Prompt: "x"}, ev.emit)
	ollamaFailure(t, err, results.StatusSkippedUnavailable, "connection_refused", 0, "refused")
	if err := p.Prepare(context.Background(), []string{"m"}, io.Discard); err == nil {
		t.Error("Prepare against a closed port succeeded")
	}
	// A failed pre-check marks nothing missing: the cells record the refusal.
	if _, ok := p.missingReason("m"); ok {
		t.Error("model marked missing after a failed /api/tags")
	}
}

func TestOllamaPrepareRecorded(t *testing.T) {
	rp, srv := newOllamaReplay(t)
	rp.file(t, "/api/tags", "api_tags.http")
	rp.file(t, "/api/chat", "api_chat_stream_text.http")
	rp.handle("/api/pull", func(w http.ResponseWriter, r *http.Request) {
		var req api.PullRequest
		json.NewDecoder(bytes.NewReader(rp.requests("/api/pull")[len(rp.requests("/api/pull"))-1])).Decode(&req)
		if req.Model == "unpullable" {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":"pull model manifest: file does not exist"}`)
			return
		}
		for _, l := range []string{
			`{"status":"pulling manifest"}`,
			`{"status":"pulling 6a0746a1ec1a","digest":"sha256:6a07","total":1000,"completed":0}`,
			`{"status":"pulling 6a0746a1ec1a","digest":"sha256:6a07","total":1000,"completed":50}`,
			`{"status":"pulling 6a0746a1ec1a","digest":"sha256:6a07","total":1000,"completed":550}`,
			`{"status":"pulling 6a0746a1ec1a","digest":"sha256:6a07","total":1000,"completed":1000}`,
			`{"status":"verifying sha256 digest"}`,
			`{"status":"success"}`,
		} {
			io.WriteString(w, l+"\n")
		}
	})

	// Without pull: a missing model is skipped without a request.
	p := newOllamaProvider(t, srv.URL, nil)
	var log bytes.Buffer
	if err := p.Prepare(context.Background(), []string{"scripted", "scripted:latest", "missing-model"}, &log); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if !strings.Contains(log.String(), "missing-model not found") {
		t.Errorf("log %q", log.String())
	}
	var ev ollamaEvents
	_, err := p.Stream(context.Background(), Request{Model: "missing-model", Prompt: "x"}, ev.emit)
	ollamaFailure(t, err, results.StatusSkippedUnavailable, "model_not_found", 0, "not on the server")
	if len(rp.requests("/api/chat")) != 0 || len(ev.events) != 0 {
		t.Errorf("a missing model sent %d requests, emitted %v", len(rp.requests("/api/chat")), ev.events)
	}
	if _, err := p.Stream(context.Background(), Request{Model: "scripted", Prompt: "x"}, ev.emit); err != nil {
		t.Errorf("present model: %v", err)
	}

	// With pull: pulled models run; a failed pull is skipped with its reason.
	p = newOllamaProvider(t, srv.URL, func(c *ollamaOptions) { c.Pull = true })
	log.Reset()
	if err := p.Prepare(context.Background(), []string{"newmodel", "unpullable"}, &log); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	for _, want := range []string{"pulling newmodel", "pulling 6a0746a1ec1a 0%", "pulling 6a0746a1ec1a 55%", "pulling 6a0746a1ec1a 100%", "success", "pull unpullable failed:", "pull model manifest: file does not exist"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), " 5%") {
		t.Errorf("progress not throttled to 10%% steps:\n%s", log.String())
	}
	if _, ok := p.missingReason("newmodel"); ok {
		t.Error("pulled model marked missing")
	}
	_, err = p.Stream(context.Background(), Request{Model: "unpullable", Prompt: "x"}, ev.emit)
	ollamaFailure(t, err, results.StatusSkippedUnavailable, "model_not_found", 0, "pulling it failed")
}

func TestOllamaBadKeepAlive(t *testing.T) {
	check := func(ka string) (problems []string) {
		o := ollamaKind{}.Options().(*ollamaOptions)
		o.KeepAlive = ka
		ollamaKind{}.Resolve(&config.Provider{Type: "ollama", Options: o}, func(key, msg string) { problems = append(problems, key+": "+msg) })
		return problems
	}
	for _, ok := range []string{"5m", "0", "-1", "3600", "1h30m"} {
		if p := check(ok); p != nil {
			t.Errorf("keep_alive %q: %v", ok, p)
		}
	}
	if p := check("soon"); len(p) != 1 || !strings.HasPrefix(p[0], "keep_alive: ") {
		t.Errorf("keep_alive soon: %v", p)
	}
}

func TestOllamaCanonicalModel(t *testing.T) {
	for in, want := range map[string]string{
		"llama3.2": "llama3.2:latest", "qwen3:4b": "qwen3:4b", "hf.co/org/m": "hf.co/org/m:latest",
		"host:5000/m": "host:5000/m:latest", "host:5000/m:q4": "host:5000/m:q4",
	} {
		if got := canonicalModel(in); got != want {
			t.Errorf("canonicalModel(%q) = %q, want %q", in, got, want)
		}
	}
}

// ollamaScript is what the real scripted server answers; the prompts end
// with the trigger words.
var ollamaScript = testmodel.Script{
	"word":   {"I will run ", "`free -h`", " to check memory."},
	"OK":     {"OK"},
	"memory": {`<tool_call>{"name": "get_memory_usage", "arguments": {"unit": "MB"}}</tool_call>`},
	"think":  {"<think>", "Let me", " think.", "</think>", "Done."},
}

func TestOllamaRealServer(t *testing.T) {
	srv := ollamatest.Start(t)
	srv.CreateModel(t, "scripted", ollamaScript)
	srv.CreateModel(t, "thinker", ollamaScript, ollamatest.WithThinking())
	ctx := context.Background()

	t.Run("text", func(t *testing.T) {
		p := newOllamaProvider(t, srv.URL(), nil)
		var ev ollamaEvents
		resp, err := p.Stream(ctx, Request{Model: "scripted", System: "Be brief.", Prompt: "Say the word"}, ev.emit)
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if resp.Text != "I will run `free -h` to check memory." || resp.FinishReason != "stop" {
			t.Errorf("text %q finish %q", resp.Text, resp.FinishReason)
		}
		if got := ev.kinds(); got != "start,text,text,text" {
			t.Errorf("events %s", got)
		}
		// Three pieces and the </s> that ends the reply.
		if resp.Usage.OutputTokens == nil || *resp.Usage.OutputTokens != 4 || resp.Usage.InputTokens == nil || *resp.Usage.InputTokens <= 0 {
			t.Errorf("usage %+v", resp.Usage)
		}
		for _, k := range []string{"load_duration_ms", "prompt_eval_ms", "eval_ms", "server_ttft_ms", "total_duration_ms"} {
			v, ok := resp.Metrics[k].(float64)
			if !ok || v < 0 {
				t.Errorf("metric %s = %v", k, resp.Metrics[k])
			}
		}
		if resp.Metrics["eval_count"] != 4 || resp.Metrics["prompt_eval_count"] != *resp.Usage.InputTokens {
			t.Errorf("metrics %v", resp.Metrics)
		}
		if v, ok := resp.Metrics["decode_tokens_per_s"].(float64); !ok || v <= 0 {
			t.Errorf("decode_tokens_per_s %v", resp.Metrics["decode_tokens_per_s"])
		}
	})

	t.Run("native tool call", func(t *testing.T) {
		p := newOllamaProvider(t, srv.URL(), nil)
		var ev ollamaEvents
		resp, err := p.Stream(ctx, Request{Model: "scripted", Prompt: "How much is free? memory", Tools: []prompts.Tool{memoryTool}}, ev.emit)
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "get_memory_usage" || string(resp.ToolCalls[0].Arguments) != `{"unit":"MB"}` || resp.Text != "" {
			t.Errorf("calls %+v text %q", resp.ToolCalls, resp.Text)
		}
		if got := ev.kinds(); got != "start,tool" {
			t.Errorf("events %s", got)
		}
	})

	t.Run("thinking", func(t *testing.T) {
		p := newOllamaProvider(t, srv.URL(), nil)
		var ev ollamaEvents
		resp, err := p.Stream(ctx, Request{Model: "thinker", Prompt: "please think", ThinkingLevel: "high"}, ev.emit)
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if resp.Reasoning != "Let me think." || resp.Text != "Done." {
			t.Errorf("reasoning %q text %q", resp.Reasoning, resp.Text)
		}
		if got := ev.kinds(); !strings.HasPrefix(got, "start,reasoning") || !strings.HasSuffix(got, "text") {
			t.Errorf("events %s", got)
		}
		// A model without the capability: a clear error, not a crash.
		_, err = p.Stream(ctx, Request{Model: "scripted", Prompt: "please think", ThinkingLevel: "low"}, ev.emit)
		ollamaFailure(t, err, results.StatusError, "thinking_unsupported", 400, "does not support thinking")
	})

	t.Run("unknown model without prepare", func(t *testing.T) {
		p := newOllamaProvider(t, srv.URL(), nil)
		var ev ollamaEvents
		_, err := p.Stream(ctx, Request{Model: "nope", Prompt: "OK"}, ev.emit)
		ollamaFailure(t, err, results.StatusSkippedUnavailable, "model_not_found", 404, `"nope" not found`)
	})

	t.Run("prepare and warmup", func(t *testing.T) {
		srv.CreateModel(t, "cold", testmodel.Script{"cold": {"warm"}})
		p := newOllamaProvider(t, srv.URL(), func(c *ollamaOptions) {
			c.KeepAlive = "1h"
			c.Options = map[string]any{"num_ctx": 512}
		})
		var log bytes.Buffer
		if err := p.Prepare(ctx, []string{"cold", "nope"}, &log); err != nil {
			t.Fatalf("Prepare: %v", err)
		}
		if !strings.Contains(log.String(), "nope not found") {
			t.Errorf("log:\n%s", log.String())
		}
		if loaded := running(t, srv, "cold:latest"); loaded {
			t.Fatalf("cold loaded by Prepare alone; warming up is the runner's, per suite")
		}
		if err := p.Warmup(ctx, Request{Model: "cold"}); err != nil {
			t.Fatalf("Warmup: %v", err)
		}
		if !running(t, srv, "cold:latest") {
			t.Errorf("cold not loaded after warmup")
		}
		if err := p.Warmup(ctx, Request{Model: "nope"}); err == nil || !strings.Contains(err.Error(), "checked /api/tags") {
			t.Errorf("warm-up of a missing model: %v", err)
		}
		var ev ollamaEvents
		_, err := p.Stream(ctx, Request{Model: "nope", Prompt: "OK"}, ev.emit)
		ollamaFailure(t, err, results.StatusSkippedUnavailable, "model_not_found", 0, "checked /api/tags")
		if len(ev.events) != 0 {
			t.Errorf("events for a missing model: %v", ev.events)
		}
		resp, err := p.Stream(ctx, Request{Model: "cold", Prompt: "now cold"}, ev.emit)
		if err != nil || resp.Text != "warm" {
			t.Errorf("after warmup: %q %v", resp.Text, err)
		}
		// The server's load time comes back as Load.
		if resp.Load == nil || resp.Metrics["load_duration_ms"] != math.Round(float64(*resp.Load)/1e3)/1e3 {
			t.Errorf("load %v, metrics %v", resp.Load, resp.Metrics["load_duration_ms"])
		}
	})

	t.Run("ollama_openai warm-up and residency", func(t *testing.T) {
		srv.CreateModel(t, "lukewarm", testmodel.Script{"lukewarm": {"tepid"}})
		p := newKind(t, "ollama_openai", &ollamaOpenAIOptions{httpOptions: httpOptions{BaseURL: srv.URL() + "/v1"}})
		w, ok := p.(Warmer)
		r, ok2 := p.(Resident)
		if !ok || !ok2 {
			t.Fatalf("ollama_openai is not a Warmer (%v) or Resident (%v)", ok, ok2)
		}
		if err := w.Warmup(ctx, Request{Model: "lukewarm"}); err != nil {
			t.Fatalf("Warmup: %v", err)
		}
		names, err := r.LoadedModels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held := false
		for _, n := range names {
			held = held || r.SameModel(n, "lukewarm")
		}
		if !held || r.SameModel("lukewarm:latest", "scripted") {
			t.Errorf("after warm-up the server holds %v", names)
		}
		if err := w.Warmup(ctx, Request{Model: "absent"}); err == nil || errors.Is(err, ErrWarmupUnsupported) || !strings.Contains(err.Error(), "absent") {
			t.Errorf("warm-up of a model the server lacks: %v", err)
		}
	})

	t.Run("server killed mid-sweep", func(t *testing.T) {
		p := newOllamaProvider(t, srv.URL(), nil)
		var ev ollamaEvents
		if _, err := p.Stream(ctx, Request{Model: "scripted", Prompt: "Reply with exactly: OK"}, ev.emit); err != nil {
			t.Fatalf("before the kill: %v", err)
		}
		srv.Stop()
		_, err := p.Stream(ctx, Request{Model: "scripted", Prompt: "Reply with exactly: OK"}, ev.emit)
		ollamaFailure(t, err, results.StatusSkippedUnavailable, "connection_refused", 0, "refused")
	})
}

func FuzzReadChat(f *testing.F) {
	for _, name := range []string{"api_chat_stream_text.http", "api_chat_stream_toolcall.http", "api_chat_model_not_found.http"} {
		_, _, body := ollamaRecording(f, name)
		f.Add(body)
	}
	f.Add([]byte(`{"message":{"content":"a"}}` + "\n" + `{"error":"boom"}`))
	f.Add([]byte(`{"message":{"thinking":"t","content":""},"done":false}` + "\n{\"done\":true,\"eval_count\":-1,\"eval_duration\":0}"))
	f.Add([]byte("\n\n{\"done\":true}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var text strings.Builder
		resp := &Response{}
		err := readChat(bytes.NewReader(data), func(e Event) {
			if e.Kind == EventText {
				text.WriteString(e.Text)
			}
		}, resp)
		if resp.Text != text.String() {
			t.Errorf("resp.Text %q != emitted text %q", resp.Text, text.String())
		}
		if err == nil && resp.Metrics == nil {
			t.Error("success without the done line's metrics")
		}
		var fl *Failure
		if err != nil && !errors.As(err, &fl) {
			t.Errorf("unclassified error %v", err)
		}
	})
}

func FuzzReadPull(f *testing.F) {
	f.Add([]byte(`{"status":"pulling manifest"}` + "\n" + `{"status":"x","total":10,"completed":5}` + "\n" + `{"status":"success"}`))
	f.Add([]byte(`{"error":"nope"}`))
	f.Add([]byte(`{"status":"x","total":1,"completed":-5}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		readPull(bytes.NewReader(data), func(p api.ProgressResponse, pct int) {
			if pct < -1 || pct > 100 {
				t.Errorf("pct %d", pct)
			}
		})
	})
}

// BenchmarkOllamaReadChat measures the NDJSON reader per recorded stream
// (three content chunks and the done line).
func BenchmarkOllamaReadChat(b *testing.B) {
	_, _, body := ollamaRecording(b, "api_chat_stream_text.http")
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		resp := &Response{}
		if err := readChat(bytes.NewReader(body), func(Event) {}, resp); err != nil {
			b.Fatal(err)
		}
	}
}

// running says whether the server holds model (/api/ps).
func running(t *testing.T, srv *ollamatest.Server, model string) bool {
	t.Helper()
	ps, err := srv.Client().ListRunning(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ps.Models {
		if m.Name == model {
			return true
		}
	}
	return false
}

// An OpenAI-compatible server that is not Ollama has no native load call:
// the warm-up says so, and the runner falls back to a short request.
func TestOllamaOpenAIWarmupElsewhere(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	p := newKind(t, "ollama_openai", &ollamaOpenAIOptions{httpOptions: httpOptions{BaseURL: srv.URL + "/v1"}})
	if err := p.(Warmer).Warmup(context.Background(), Request{Model: "m"}); !errors.Is(err, ErrWarmupUnsupported) {
		t.Errorf("warm-up on a server without /api/chat: %v", err)
	}
	if _, err := p.(Resident).LoadedModels(context.Background()); err == nil {
		t.Errorf("LoadedModels on a server without /api/ps: no error")
	}
}

// Which models a server holds is believed only from an answer of
// Ollama's shape; anything else is ErrNotResident, never "none loaded".
// Ollama's own answer (a real server) is read by the residency subtest of
// TestOllamaRealServer above; these servers answer what a catch-all route, an
// HTML error page or another API might.
func TestLoadedModelsShape(t *testing.T) {
	for _, tc := range []struct {
		name, ctype, body string
		status            int
		want              []string
		notResident       bool
	}{
		{"ollama, two models", "application/json; charset=utf-8", `{"models":[{"name":"a:latest","model":"a:latest"},{"model":"b:7b"}]}`, 200, []string{"a:latest", "b:7b"}, false},
		{"ollama, none loaded", "application/json; charset=utf-8", `{"models":[]}`, 200, []string{}, false},
		{"catch-all 200", "application/json", `{"status":"ok"}`, 200, nil, true},
		{"catch-all empty object", "application/json", `{}`, 200, nil, true},
		{"null models", "application/json", `{"models":null}`, 200, nil, true},
		{"models of strings", "application/json", `{"models":["a"]}`, 200, nil, true},
		{"models naming none", "application/json", `{"models":[{"size":1}]}`, 200, nil, true},
		{"html page", "text/html", `<html>ok</html>`, 200, nil, true},
		{"json array", "application/json", `[]`, 200, nil, true},
		{"not found", "text/plain", `404 page not found`, 404, nil, true},
		{"server error", "application/json", `{"error":"boom"}`, 500, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			p := newKind(t, "ollama_openai", &ollamaOpenAIOptions{httpOptions: httpOptions{BaseURL: srv.URL + "/v1"}})
			got, err := p.(Resident).LoadedModels(context.Background())
			if errors.Is(err, ErrNotResident) != tc.notResident {
				t.Fatalf("err %v, want ErrNotResident %v", err, tc.notResident)
			}
			if !tc.notResident && (err != nil || !slices.Equal(got, tc.want)) {
				t.Errorf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
	// A refused connection is no verdict on the server's shape.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p := newKind(t, "ollama_openai", &ollamaOpenAIOptions{httpOptions: httpOptions{BaseURL: url + "/v1"}})
	if _, err := p.(Resident).LoadedModels(context.Background()); err == nil || errors.Is(err, ErrNotResident) {
		t.Errorf("refused connection: %v", err)
	}
}
