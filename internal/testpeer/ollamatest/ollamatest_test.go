package ollamatest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"bench/internal/testpeer/testmodel"
)

// script replies to the last words of prompts/default.yaml-style prompts.
var script = testmodel.Script{
	"word":    {"I will run ", "`free -h`", " to check memory."},
	"OK":      {"OK"},
	"product": {"391"},
	"memory":  {`<tool_call>{"name": "get_memory_usage", "arguments": {"unit": "MB"}}</tool_call>`},
	"think":   {"<think>", "Let me", " think.", "</think>", "Done."},
}

var tools = json.RawMessage(`[{"type":"function","function":{"name":"get_memory_usage","description":"Report memory.",
	"parameters":{"type":"object","properties":{"unit":{"type":"string","enum":["MB","GB"]}},"required":["unit"]}}}]`)

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type nativeChunk struct {
	Message struct {
		Content   string `json:"content"`
		Thinking  string `json:"thinking"`
		ToolCalls []struct {
			Function struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"message"`
	Done            bool   `json:"done"`
	PromptEvalCount int    `json:"prompt_eval_count"`
	EvalCount       int    `json:"eval_count"`
	Error           string `json:"error"`
}

func nativeChat(t *testing.T, srv *Server, req map[string]any) (text, thinking string, calls []string, last nativeChunk) {
	t.Helper()
	resp := post(t, srv.URL()+"/api/chat", req)
	if resp.StatusCode != 200 {
		t.Fatalf("/api/chat status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var c nativeChunk
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		text += c.Message.Content
		thinking += c.Message.Thinking
		for _, tc := range c.Message.ToolCalls {
			args, _ := json.Marshal(tc.Function.Arguments)
			calls = append(calls, tc.Function.Name+string(args))
		}
		last = c
	}
	if !last.Done {
		t.Fatalf("stream ended without done: %+v", last)
	}
	return text, thinking, calls, last
}

type openAIChunk struct {
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func openAIChat(t *testing.T, srv *Server, req map[string]any) (text string, calls []string, prompt, completion int, finish string) {
	t.Helper()
	req["stream"] = true
	req["stream_options"] = map[string]any{"include_usage": true}
	resp := post(t, srv.URL()+"/v1/chat/completions", req)
	if resp.StatusCode != 200 {
		t.Fatalf("/v1/chat/completions status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sawDone := false
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			sawDone = true
			break
		}
		var c openAIChunk
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("bad chunk %q: %v", line, err)
		}
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				calls = append(calls, tc.Function.Name+tc.Function.Arguments)
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			prompt, completion = c.Usage.PromptTokens, c.Usage.CompletionTokens
		}
	}
	if !sawDone {
		t.Fatal("no [DONE]")
	}
	return text, calls, prompt, completion, finish
}

func userMsg(s string) []map[string]any {
	return []map[string]any{{"role": "system", "content": "Be brief."}, {"role": "user", "content": s}}
}

func TestScriptedModel(t *testing.T) {
	srv := Start(t)
	srv.CreateModel(t, "scripted", script)
	srv.CreateModel(t, "thinker", script, WithThinking())

	t.Run("native text", func(t *testing.T) {
		text, _, calls, last := nativeChat(t, srv, map[string]any{"model": "scripted", "messages": userMsg("say a word")})
		if text != "I will run `free -h` to check memory." || len(calls) != 0 {
			t.Errorf("text %q calls %v", text, calls)
		}
		// Three pieces plus the </s> that ends the reply.
		if last.EvalCount != 4 || last.PromptEvalCount <= 0 {
			t.Errorf("eval_count %d prompt_eval_count %d", last.EvalCount, last.PromptEvalCount)
		}
	})
	t.Run("openai text with usage", func(t *testing.T) {
		text, calls, prompt, completion, finish := openAIChat(t, srv, map[string]any{"model": "scripted", "messages": userMsg("Reply with exactly: OK")})
		if text != "OK" || len(calls) != 0 || finish != "stop" {
			t.Errorf("text %q calls %v finish %q", text, calls, finish)
		}
		if completion != 2 || prompt <= 0 {
			t.Errorf("usage prompt %d completion %d", prompt, completion)
		}
	})
	t.Run("unscripted prompt is empty", func(t *testing.T) {
		text, _, _, last := nativeChat(t, srv, map[string]any{"model": "scripted", "messages": userMsg("nothing here")})
		if text != "" || last.EvalCount != 1 {
			t.Errorf("text %q eval_count %d", text, last.EvalCount)
		}
	})
	t.Run("native tool call", func(t *testing.T) {
		text, _, calls, _ := nativeChat(t, srv, map[string]any{"model": "scripted", "tools": tools, "messages": userMsg("How much? memory")})
		if text != "" || len(calls) != 1 || calls[0] != `get_memory_usage{"unit":"MB"}` {
			t.Errorf("text %q calls %v", text, calls)
		}
	})
	t.Run("openai tool call", func(t *testing.T) {
		text, calls, _, completion, finish := openAIChat(t, srv, map[string]any{"model": "scripted", "tools": tools, "messages": userMsg("How much? memory")})
		if text != "" || len(calls) != 1 || calls[0] != `get_memory_usage{"unit":"MB"}` || finish != "tool_calls" || completion != 2 {
			t.Errorf("text %q calls %v finish %q completion %d", text, calls, finish, completion)
		}
	})
	t.Run("thinking", func(t *testing.T) {
		text, thinking, _, _ := nativeChat(t, srv, map[string]any{"model": "thinker", "think": true, "messages": userMsg("please think")})
		if text != "Done." || thinking != "Let me think." {
			t.Errorf("text %q thinking %q", text, thinking)
		}
		resp := post(t, srv.URL()+"/api/chat", map[string]any{"model": "scripted", "think": true, "messages": userMsg("please think")})
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("think on a model without thinking: status %d, want 400", resp.StatusCode)
		}
	})
	t.Run("unknown model", func(t *testing.T) {
		resp := post(t, srv.URL()+"/api/chat", map[string]any{"model": "nope", "messages": userMsg("OK")})
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("status %d, want 404", resp.StatusCode)
		}
	})
	t.Run("default reply", func(t *testing.T) {
		srv.CreateModel(t, "fallback", testmodel.Script{"OK": {"OK"}, testmodel.Default: {"No", " function", " fits."}})
		if text, _, _, _ := nativeChat(t, srv, map[string]any{"model": "fallback", "messages": userMsg("nothing here")}); text != "No function fits." {
			t.Errorf("an unscripted prompt got %q, want the default reply", text)
		}
		if text, _, _, _ := nativeChat(t, srv, map[string]any{"model": "fallback", "messages": userMsg("Reply with exactly: OK")}); text != "OK" {
			t.Errorf("a trigger got %q", text)
		}
	})
	t.Run("stop", func(t *testing.T) {
		srv.Stop()
		_, err := http.Get(srv.URL() + "/api/version")
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("after Stop: %v, want connection refused", err)
		}
		srv.Stop() // idempotent
	})
}

func TestBinary(t *testing.T) {
	t.Setenv("BENCH_OLLAMA_BIN", "/nonexistent/ollama")
	if _, err := Binary(); !errors.Is(err, ErrNoBinary) {
		t.Errorf("Binary with a bad BENCH_OLLAMA_BIN: %v, want ErrNoBinary", err)
	}
}
