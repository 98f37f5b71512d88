// Package anthropictest is an Anthropic Messages API server for tests: a real
// HTTP server whose replies are scripted by the request's model name, so a
// client under test (the Claude Code CLI, an SDK) picks its case with --model.
//
// It reads only the model, the stream flag, the path and (for a scripted
// conversation) the number of assistant turns from a request. The large
// system prompt, tool list and extra content blocks a client such as Claude
// Code sends are recorded for assertions but never steer the reply.
//
// A conversation (Script with several replies, see Conversation) drives a
// client's agent loop: the first reply can be a tool_use, the request that
// carries its tool_result gets the next reply, and the test reads the
// tool_result a client sent with Request.ToolResults.
//
// Layer: test peers (tests only; production code never imports it).
package anthropictest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Reply is one scripted answer. A non-zero Status makes it an API error;
// otherwise the blocks are streamed in order (Thinking, Text, Tool).
type Reply struct {
	// Status is the HTTP status of an error reply; 0 means a normal reply.
	Status int
	// ErrorType is the Anthropic error type, e.g. rate_limit_error.
	ErrorType string
	// Message is the error's message.
	Message string

	// Thinking, Text and ToolInput are streamed as one delta per element.
	Thinking []string
	Text     []string
	// ToolName, when set, adds a tool_use block whose input is the
	// concatenation of ToolInput (input_json_delta pieces).
	ToolName  string
	ToolInput []string

	InputTokens  int
	OutputTokens int

	// StallAfterText makes the server send message_start and the Text
	// deltas, then hold the stream open without a further byte until the
	// client goes away or the server closes.
	StallAfterText bool
}

// Built-in scripts, chosen by model name. Any other model gets a 404
// not_found_error, as the real API answers an unknown model.
var scripts = map[string]Reply{
	ModelText: {
		Text:         []string{"I will run ", "`free -h`", " to check memory."},
		InputTokens:  737,
		OutputTokens: 4,
	},
	ModelTool: {
		Text:         []string{"Checking memory."},
		ToolName:     "Bash",
		ToolInput:    []string{`{"command": `, `"free -h", "description"`, `: "Show memory"}`},
		InputTokens:  800,
		OutputTokens: 21,
	},
	ModelThinking: {
		Thinking:     []string{"The user wants ", "a greeting."},
		Text:         []string{"Hello", "!"},
		InputTokens:  120,
		OutputTokens: 30,
	},
	ModelStall: {
		Text:           []string{"partial "},
		StallAfterText: true,
		InputTokens:    10,
	},
	ModelErr401: {Status: http.StatusUnauthorized, ErrorType: "authentication_error", Message: "injected 401"},
	ModelErr429: {Status: http.StatusTooManyRequests, ErrorType: "rate_limit_error", Message: "injected 429"},
	ModelErr500: {Status: http.StatusInternalServerError, ErrorType: "api_error", Message: "injected 500"},
}

// Model names of the built-in scripts.
const (
	// ModelText streams "I will run `free -h` to check memory." in three deltas.
	ModelText = "scripted-cc"
	// ModelTool streams a short text then a Bash tool_use with input
	// {"command": "free -h", "description": "Show memory"}.
	ModelTool = "scripted-tool"
	// ModelThinking streams a thinking block, then "Hello!".
	ModelThinking = "scripted-thinking"
	// ModelStall streams "partial " and then stalls.
	ModelStall = "stall"
	// ModelErr401, ModelErr429 and ModelErr500 answer with that HTTP status.
	ModelErr401 = "err401"
	ModelErr429 = "err429"
	ModelErr500 = "err500"
)

// Request is what the server saw of one request.
type Request struct {
	Path   string
	Model  string
	Stream bool
	// Header holds the request headers (auth, beta flags).
	Header http.Header
	// Body is the raw request body, for assertions on what a client sent.
	Body json.RawMessage
}

// Server is a running scripted Messages API.
type Server struct {
	// URL is the base URL to give a client, e.g. as ANTHROPIC_BASE_URL.
	URL string

	srv     *httptest.Server
	done    chan struct{}
	stalled chan string

	mu       sync.Mutex
	extra    map[string]Reply
	convs    map[string][]Reply
	requests []Request
}

// New starts a server. Close it when done; Start does that for a test.
func New() *Server {
	s := &Server{
		done:    make(chan struct{}),
		stalled: make(chan string, 16),
		extra:   map[string]Reply{},
		convs:   map[string][]Reply{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL
	return s
}

// Start starts a server that is closed when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := New()
	tb.Cleanup(s.Close)
	return s
}

// Close releases stalled streams and stops the server.
func (s *Server) Close() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Script adds or replaces the reply for a model name.
func (s *Server) Script(model string, r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extra[model] = r
}

// Conversation scripts a multi-turn exchange for a model: a request whose
// messages hold n assistant turns gets turns[n], so the reply depends on
// where the conversation is, not on how many requests came before (a client
// may send side requests). Past the last reply the last one repeats, which
// scripts a model that loops. A turn's tool_use block gets the id
// "toolu_<model>_<n>" and its message the id "msg_test_<model>_<n>", unique
// in the conversation.
func (s *Server) Conversation(model string, turns ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.convs[model] = append([]Reply(nil), turns...)
	delete(s.extra, model)
}

// Stalled receives the model name each time a stalling reply has sent its
// last byte, so a test can act once the client is surely waiting.
func (s *Server) Stalled() <-chan string { return s.stalled }

// Requests returns the requests seen so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ids name a reply's message and its tool_use block.
type ids struct{ msg, tool string }

// reply picks the reply for a model at a turn of its conversation, and the
// ids it is sent with. In a conversation both are unique per turn: Claude
// Code merges assistant messages that share a message id into one turn.
func (s *Server) reply(model string, turn int) (Reply, ids, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.convs[model]; ok && len(c) > 0 {
		return c[min(turn, len(c)-1)], ids{fmt.Sprintf("msg_test_%s_%d", model, turn), fmt.Sprintf("toolu_%s_%d", model, turn)}, true
	}
	fixed := ids{"msg_test_" + model, "toolu_test_1"}
	if r, ok := s.extra[model]; ok {
		return r, fixed, true
	}
	r, ok := scripts[model]
	return r, fixed, ok
}

// Turn returns how many assistant turns the request's messages hold: 0 for
// the first request of a conversation, 1 once it carries the reply to the
// first turn (and its tool_result), and so on.
func (r Request) Turn() int {
	var body struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(r.Body, &body) // a bad body has no turns
	n := 0
	for _, m := range body.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// ToolResult is a tool_result block a client sent back.
type ToolResult struct {
	ToolUseID string
	// Content is the result's text: a string content as is, a list of
	// blocks as their text parts joined.
	Content string
	IsError bool
}

// ToolResults returns every tool_result block of the request's messages, in
// order.
func (r Request) ToolResults() []ToolResult {
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(r.Body, &body)
	var out []ToolResult
	for _, m := range body.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string content has no blocks
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out = append(out, ToolResult{ToolUseID: b.ToolUseID, Content: blockText(b.Content), IsError: b.IsError})
			}
		}
	}
	return out
}

// blockText is the text of a tool_result content: a string, or the text
// parts of a list of blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "")
}

// ToolNames returns the names in the request's tools array, the tools the
// client offered the model.
func (r Request) ToolNames() []string {
	var body struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(r.Body, &body)
	var out []string
	for _, t := range body.Tools {
		out = append(out, t.Name)
	}
	return out
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "read body: "+err.Error())
		return
	}
	var head struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	_ = json.Unmarshal(body, &head) // a bad body still gets recorded and a 400 below
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Model: head.Model, Stream: head.Stream, Header: r.Header.Clone(), Body: append(json.RawMessage(nil), body...)})
	s.mu.Unlock()

	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		writeError(w, http.StatusNotFound, "not_found_error", "no route "+r.Method+" "+r.URL.Path)
		return
	}
	if head.Model == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "model: field required")
		return
	}
	req := Request{Body: body}
	rep, id, ok := s.reply(head.Model, req.Turn())
	if !ok {
		writeError(w, http.StatusNotFound, "not_found_error", "model: "+head.Model)
		return
	}
	if rep.Status != 0 {
		writeError(w, rep.Status, rep.ErrorType, rep.Message)
		return
	}
	if !head.Stream {
		writeMessage(w, head.Model, rep, id)
		return
	}
	s.stream(w, r, head.Model, rep, id)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_test")
	if status == http.StatusTooManyRequests {
		w.Header().Set("retry-after", "1")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": typ, "message": msg},
	})
}

// writeMessage answers a non-streaming request with the whole message.
func writeMessage(w http.ResponseWriter, model string, rep Reply, id ids) {
	var content []map[string]any
	if len(rep.Thinking) > 0 {
		content = append(content, map[string]any{"type": "thinking", "thinking": strings.Join(rep.Thinking, ""), "signature": "sig"})
	}
	if len(rep.Text) > 0 {
		content = append(content, map[string]any{"type": "text", "text": strings.Join(rep.Text, "")})
	}
	stop := "end_turn"
	if rep.ToolName != "" {
		var input any = map[string]any{}
		_ = json.Unmarshal([]byte(strings.Join(rep.ToolInput, "")), &input)
		content = append(content, map[string]any{"type": "tool_use", "id": id.tool, "name": rep.ToolName, "input": input})
		stop = "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": id.msg, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": rep.InputTokens, "output_tokens": rep.OutputTokens},
	})
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, model string, rep Reply, id ids) {
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", "req_test")
	w.WriteHeader(http.StatusOK)
	send := func(event string, data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if fl != nil {
			fl.Flush()
		}
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id.msg, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": rep.InputTokens, "output_tokens": 1},
	}})
	index := 0
	block := func(start map[string]any, deltas []map[string]any) {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": start})
		for _, d := range deltas {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if len(rep.Thinking) > 0 {
		var ds []map[string]any
		for _, t := range rep.Thinking {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": t})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": "c2lnbmF0dXJl"})
		block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ds)
	}
	if rep.StallAfterText {
		send("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, t := range rep.Text {
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": t}})
		}
		select {
		case s.stalled <- model:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	if len(rep.Text) > 0 {
		var ds []map[string]any
		for _, t := range rep.Text {
			ds = append(ds, map[string]any{"type": "text_delta", "text": t})
		}
		block(map[string]any{"type": "text", "text": ""}, ds)
	}
	stop := "end_turn"
	if rep.ToolName != "" {
		var ds []map[string]any
		for _, p := range rep.ToolInput {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": p})
		}
		block(map[string]any{"type": "tool_use", "id": id.tool, "name": rep.ToolName, "input": map[string]any{}}, ds)
		stop = "tool_use"
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": rep.OutputTokens}})
	send("message_stop", map[string]any{"type": "message_stop"})
}
