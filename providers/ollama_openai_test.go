package providers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/prompts"
)

// The ollama_openai provider against replays of the recorded Ollama 0.9.6
// /v1/chat/completions streams (testdata/chat/v1_*) and scripted variants of
// them for what a local Ollama will not produce on demand (401, 429, a cut
// stream, a mid-stream error). The real server is exercised end to end in
// cmd/bench.

const chatKeyEnv = "BENCH_CHAT_TEST_KEY"
const chatKey = "sk-chat-test-0123456789SECRET"

func newChatReplay(t *testing.T, steps ...step) *replayServer {
	rs := newReplayServer(t, steps...)
	rs.dir = "chat"
	rs.isDelta = func(ev []byte) bool { return bytes.HasPrefix(ev, []byte("data: {")) }
	return rs
}

func newChatProvider(t *testing.T, url string) Provider {
	t.Helper()
	t.Setenv(chatKeyEnv, chatKey)
	return newKind(t, "ollama_openai", &ollamaOpenAIOptions{httpOptions: httpOptions{BaseURL: url + "/v1", APIKeyEnv: chatKeyEnv}})
}

var chatMemoryTool = prompts.Tool{Name: "get_memory", Description: "Report memory usage",
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"unit": map[string]any{"type": "string"}}}}

func TestChatRecordedText(t *testing.T) {
	srv := newChatReplay(t, step{file: "v1_chat_stream_text_usage.http"})
	rec := &recorder{}
	req := Request{Model: "scripted", System: "Be brief.", Prompt: "How much memory is free?"}
	resp, err := newChatProvider(t, srv.URL).Stream(context.Background(), req, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "I will run `free -h` to check memory." || resp.FinishReason != "stop" || len(resp.ToolCalls) != 0 {
		t.Errorf("text %q finish %q calls %v", resp.Text, resp.FinishReason, resp.ToolCalls)
	}
	checkUsage(t, resp.Usage, intp(12), intp(4), nil)
	// The recording's last content delta is empty: it is not an event.
	if want := []EventKind{EventRequestStart, EventText, EventText, EventText}; !reflect.DeepEqual(rec.kinds(), want) {
		t.Errorf("events %v, want %v", rec.kinds(), want)
	}
	seen := srv.requests()[0]
	if seen.path != "/v1/chat/completions" || seen.auth != "Bearer "+chatKey {
		t.Errorf("request to %s with auth %q", seen.path, seen.auth)
	}
	so, _ := seen.body["stream_options"].(map[string]any)
	msgs, _ := seen.body["messages"].([]any)
	if seen.body["stream"] != true || so["include_usage"] != true || len(msgs) != 2 || seen.body["tools"] != nil {
		t.Errorf("request body %v", seen.body)
	}
	if _, ok := seen.body["reasoning_effort"]; ok {
		t.Errorf("a null thinking level sent reasoning_effort: %v", seen.body)
	}
}

func TestChatRecordedToolCall(t *testing.T) {
	srv := newChatReplay(t, step{file: "v1_chat_stream_toolcall.http"})
	rec := &recorder{}
	req := Request{Model: "scripted", Prompt: "memory?", Tools: []prompts.Tool{chatMemoryTool}, ThinkingLevel: "high"}
	resp, err := newChatProvider(t, srv.URL).Stream(context.Background(), req, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	want := []results.ToolCall{{ID: "call_kmui6azo", Name: "get_memory", Arguments: json.RawMessage(`{"unit":"MB"}`)}}
	if !reflect.DeepEqual(resp.ToolCalls, want) || resp.Text != "" || resp.FinishReason != "tool_calls" {
		t.Errorf("calls %+v text %q finish %q", resp.ToolCalls, resp.Text, resp.FinishReason)
	}
	checkUsage(t, resp.Usage, intp(222), intp(2), nil)
	if want := []EventKind{EventRequestStart, EventToolCall}; !reflect.DeepEqual(rec.kinds(), want) {
		t.Errorf("events %v, want %v", rec.kinds(), want)
	}
	body := srv.requests()[0].body
	tools, _ := body["tools"].([]any)
	if len(tools) != 1 || body["reasoning_effort"] != "high" {
		t.Fatalf("tools %v reasoning_effort %v", body["tools"], body["reasoning_effort"])
	}
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if fn["name"] != "get_memory" || fn["parameters"].(map[string]any)["type"] != "object" {
		t.Errorf("tool sent as %v", fn)
	}
}

// Tool calls arrive in pieces keyed by index: names first, arguments split
// across chunks; the role-only first chunk is not an event.
func TestChatToolCallsAccumulate(t *testing.T) {
	srv := newChatReplay(t, step{file: "scripted_toolcall_split.http"})
	rec := &recorder{}
	resp, err := newChatProvider(t, srv.URL).Stream(context.Background(), Request{Model: "scripted", Prompt: "x"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	want := []results.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: json.RawMessage(`{"path": "/etc/hostname"}`)},
		{ID: "call_b", Name: "list_directory", Arguments: json.RawMessage(`{"path": "/etc"}`)},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Errorf("calls %+v\nwant %+v", resp.ToolCalls, want)
	}
	if k := rec.kinds(); len(k) != 5 || k[0] != EventRequestStart || k[1] != EventToolCall {
		t.Errorf("events %v: want request start then 4 tool-call deltas", k)
	}
}

func TestChatReasoning(t *testing.T) {
	srv := newChatReplay(t, step{file: "scripted_reasoning.http"})
	rec := &recorder{}
	resp, err := newChatProvider(t, srv.URL).Stream(context.Background(), Request{Model: "scripted", Prompt: "x"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "391" || resp.Reasoning != "17 times 23 is 391." {
		t.Errorf("text %q reasoning %q", resp.Text, resp.Reasoning)
	}
	checkUsage(t, resp.Usage, intp(20), intp(8), intp(6))
	if c := resp.Usage.CachedInputTokens; c == nil || *c != 16 {
		t.Errorf("cached input tokens %v, want prompt_tokens_details.cached_tokens 16", c)
	}
	if want := []EventKind{EventRequestStart, EventReasoning, EventReasoning, EventText}; !reflect.DeepEqual(rec.kinds(), want) {
		t.Errorf("events %v, want %v", rec.kinds(), want)
	}
}

func TestChatFailures(t *testing.T) {
	cases := []struct {
		file         string
		cut          int
		status, typ  string
		httpStatus   int
		msg, partial string
	}{
		{file: "v1_chat_model_not_found.http", status: results.StatusSkippedUnavailable, typ: "model_not_found", httpStatus: 404, msg: `model "missing-model" not found`},
		{file: "scripted_401.http", status: results.StatusAuthError, typ: "http_401", httpStatus: 401, msg: "Incorrect API key provided: [redacted]"},
		{file: "scripted_403.http", status: results.StatusAuthError, typ: "http_403", httpStatus: 403, msg: "does not have access"},
		{file: "scripted_429.http", status: results.StatusRateLimited, typ: "http_429", httpStatus: 429, msg: "Rate limit reached"},
		{file: "scripted_500.http", status: results.StatusError, typ: "http_5xx", httpStatus: 500, msg: "runner process has terminated"},
		{file: "scripted_error_midstream.http", status: results.StatusError, typ: "stream_error", msg: "signal: killed", partial: "I will run "},
		{file: "scripted_no_finish.http", status: results.StatusError, typ: "stream_truncated", partial: "I will run "},
		{file: "v1_chat_stream_text_usage.http", cut: 2, status: results.StatusError, typ: "stream_truncated", partial: "I will run `free -h`"},
	}
	for _, tc := range cases {
		t.Run(strings.TrimSuffix(tc.file, ".http"), func(t *testing.T) {
			srv := newChatReplay(t, step{file: tc.file, cutAfterDeltas: tc.cut})
			resp, err := newChatProvider(t, srv.URL).Stream(context.Background(), Request{Model: "scripted", Prompt: "x"}, (&recorder{}).emit)
			f := asFailure(t, err)
			if f.Status != tc.status || f.Type != tc.typ || f.HTTPStatus != tc.httpStatus {
				t.Errorf("got %s/%s/%d, want %s/%s/%d", f.Status, f.Type, f.HTTPStatus, tc.status, tc.typ, tc.httpStatus)
			}
			if !strings.Contains(f.Message, tc.msg) || strings.Contains(f.Error(), chatKey) {
				t.Errorf("message %q: want it to contain %q and never the key", f.Message, tc.msg)
			}
			if resp == nil || resp.Text != tc.partial {
				t.Errorf("partial text %q, want %q", resp.Text, tc.partial)
			}
		})
	}
}

// A server that never sends a token: the call ends with the context's
// deadline (the runner records it as a timeout).
func TestChatNoFirstToken(t *testing.T) {
	srv := newChatReplay(t, step{file: "v1_chat_stream_text_usage.http", hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := newChatProvider(t, srv.URL).Stream(ctx, Request{Model: "scripted", Prompt: "x"}, (&recorder{}).emit)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context deadline", err)
	}
}

func TestChatConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = newChatProvider(t, "http://"+addr).Stream(context.Background(), Request{Model: "scripted", Prompt: "x"}, (&recorder{}).emit)
	if f := asFailure(t, err); f.Status != results.StatusSkippedUnavailable || f.Type != "connection_refused" {
		t.Errorf("got %s/%s", f.Status, f.Type)
	}
}

// A server that dies between two requests leaves the client a kept-alive
// connection that is dead: the request on it must be resent on a fresh
// connection (and then succeed, or find the server gone), not fail with EOF.
func TestChatStaleConnectionIsRetried(t *testing.T) {
	_, _, body := loadRecording(t, "chat/v1_chat_stream_text_usage.http")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conns := make(chan int, 4)
	go func() {
		for n := 1; ; n++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns <- n
			go func(n int, c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				for i := 0; ; i++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					if n == 1 && i == 1 {
						return // the second request on the first connection: the server "died"
					}
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n", len(body))
					c.Write(body)
				}
			}(n, c)
		}
	}()
	p := newChatProvider(t, "http://"+l.Addr().String())
	for i := 0; i < 2; i++ {
		resp, err := p.Stream(context.Background(), Request{Model: "scripted", Prompt: "x"}, (&recorder{}).emit)
		if err != nil || resp.Text != "I will run `free -h` to check memory." {
			t.Fatalf("request %d: %v (text %q)", i+1, err, resp.Text)
		}
	}
	if len(conns) != 2 {
		t.Errorf("%d connections, want 2 (the second request resent on a new one)", len(conns))
	}
}
