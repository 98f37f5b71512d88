package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	openai "github.com/sashabaranov/go-openai"

	"bench/internal/record/results"
)

// chatCompletions speaks the OpenAI chat-completions streaming protocol
// (POST {base_url}/chat/completions with stream: true and
// stream_options.include_usage), as Ollama serves it under /v1 and as any
// compatible server does. Kinds that speak it (ollama_openai) hold one.
//
// The request is go-openai's type; the stream is read with the project's
// SSE reader and decoded into the few fields bench needs. go-openai's own
// stream reader was dropped: it cannot go through the shared HTTP path
// (retries, Retry-After, first-byte stamps), fails after 300 keep-alive
// comments, ignores the `reasoning` delta newer servers send, and costs
// about twice a plain decoder per chunk.
type chatCompletions struct {
	url     string
	http    *httpEndpoint
	secrets Secrets
	key     string
	// request fills the knobs of the kind (temperature, seed, max tokens).
	request func(*openai.ChatCompletionRequest)
	// header is sent with every request (an entry's extra headers, the
	// key in the header a server wants); keyInHeader says the key is in
	// it, not sent as a bearer token.
	header      http.Header
	keyInHeader bool
	// completionTokens sends the output cap as max_completion_tokens
	// (OpenAI's current name, which its reasoning models require) rather
	// than max_tokens (deprecated by OpenAI, and the only one Ollama
	// 0.9.6, vLLM's older releases and TGI read).
	completionTokens bool
}

// setMaxTokens puts the output cap in the field the server reads.
func (c *chatCompletions) setMaxTokens(cr *openai.ChatCompletionRequest, n int) {
	if c.completionTokens {
		cr.MaxCompletionTokens = n
		return
	}
	//lint:ignore SA1019 the servers that read only max_tokens are why this field is kept
	cr.MaxTokens = n
}

func newChatCompletions(o *httpOptions, s Secrets, request func(*openai.ChatCompletionRequest)) *chatCompletions {
	cr := o.credentials(s)
	c := &chatCompletions{url: o.BaseURL + "/chat/completions", secrets: cr.secrets, key: cr.key, request: request}
	c.http = o.endpoint(c.secrets)
	c.http.errorBody = chatErrorBody
	return c
}

func (c *chatCompletions) body(req Request) ([]byte, error) {
	cr := openai.ChatCompletionRequest{
		Model:         req.Model,
		Messages:      chatMessages(req),
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		// Sent as reasoning_effort; servers that do not reason ignore it.
		ReasoningEffort: req.ThinkingLevel,
	}
	if c.request != nil {
		c.request(&cr)
	}
	if req.MaxTokens > 0 {
		c.setMaxTokens(&cr, req.MaxTokens)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		cr.Tools = append(cr.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	b, err := json.Marshal(cr)
	if err != nil {
		return nil, &Failure{Status: results.StatusError, Type: "bad_request", Message: err.Error(), Err: err}
	}
	return b, nil
}

// chatMessages is the conversation: the system message, the prompt, then
// the agentic turns. An assistant reply carries its tool calls back with
// their ids (arguments as the JSON text the model wrote), and each result
// is a tool message with the tool_call_id of its call. A call the server
// gave no id gets "call_<m>_<j>" (message m, call j), which its result
// then names, so the pairing holds either way.
func chatMessages(req Request) []openai.ChatCompletionMessage {
	var msgs []openai.ChatCompletionMessage
	if req.System != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: req.System})
	}
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: req.Prompt})
	var pending []string // ids of the last reply's calls not yet answered
	for i, m := range req.Messages {
		switch m.Role {
		case RoleAssistant:
			am := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: m.Text}
			pending = pending[:0]
			for j, c := range m.ToolCalls {
				id := callID(c.ID, i, j)
				pending = append(pending, id)
				am.ToolCalls = append(am.ToolCalls, openai.ToolCall{Type: openai.ToolTypeFunction, ID: id,
					Function: openai.FunctionCall{Name: c.Name, Arguments: argumentsText(c.Arguments)}})
			}
			msgs = append(msgs, am)
		case RoleTool:
			id := m.CallID
			if len(pending) > 0 {
				if id == "" {
					id = pending[0]
				}
				pending = pending[1:]
			}
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: m.Text, ToolCallID: id, Name: m.Name})
		default:
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: m.Text})
		}
	}
	return msgs
}

// callID is a call's id, or a stand-in unique in the conversation when the
// server gave none.
func callID(id string, msg, call int) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("call_%d_%d", msg, call)
}

// argumentsText is a call's arguments as the JSON text a protocol carries:
// the object as recorded, or the raw text a model wrote that was not JSON
// (recorded as a JSON string).
func argumentsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	return string(raw)
}

// Stream sends one streaming chat completion and accumulates text,
// reasoning, tool calls (whose name and arguments arrive in pieces, keyed by
// index) and usage.
func (c *chatCompletions) Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error) {
	resp := newResponse(req)
	body, err := c.body(req)
	if err != nil {
		return resp, err
	}
	key := c.key
	if c.keyInHeader {
		key = ""
	}
	return c.http.stream(ctx, req, httpRequest{URL: c.url, Body: body, Accept: "text/event-stream", Bearer: key, Header: c.header}, resp, emit,
		func(body io.Reader, emit EmitFunc) error { return readChatStream(body, c.secrets, resp, emit) })
}

// chatChunk is what bench reads of one streamed chunk. The types are
// named so decodeChunk (chatchunk.go) can build them by hand.
type chatChunk struct {
	Choices []chatChoice `json:"choices"`
	Usage   *chatUsage   `json:"usage"`
	Error   *chatError   `json:"error"`
}

type chatChoice struct {
	Delta        chatDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

type chatDelta struct {
	Content string `json:"content"`
	// ReasoningContent is vLLM's and DeepSeek's name, Reasoning
	// newer Ollama's and OpenRouter's.
	ReasoningContent string         `json:"reasoning_content"`
	Reasoning        string         `json:"reasoning"`
	ToolCalls        []chatToolCall `json:"tool_calls"`
}

type chatToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatUsage struct {
	PromptTokens            int                    `json:"prompt_tokens"`
	CompletionTokens        int                    `json:"completion_tokens"`
	PromptTokensDetails     *chatPromptDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails *chatCompletionDetails `json:"completion_tokens_details"`
}

type chatPromptDetails struct {
	CachedTokens *int `json:"cached_tokens"`
}

type chatCompletionDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

type chatError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// chatErrorBody reads {"error": {"message", "type", "code"}} (or Ollama's
// {"error": "text"}).
func chatErrorBody(raw []byte) (code, msg string) {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &e) != nil || len(e.Error) == 0 {
		return "", ""
	}
	var ce chatError
	if json.Unmarshal(e.Error, &ce) == nil {
		var c string
		if json.Unmarshal(ce.Code, &c) != nil {
			c = strings.Trim(string(ce.Code), `"`)
			if c == "null" {
				c = ""
			}
		}
		return c, ce.Message
	}
	var s string
	if json.Unmarshal(e.Error, &s) == nil {
		return "", s
	}
	return "", ""
}

var doneMarker = []byte("[DONE]")

// streamBroke classifies an error reading an event stream (not its clean
// end): an event cut short or a line past the cap is a truncated stream, a
// reset connection the server gone mid-stream, another network error a
// broken stream; ctx's errors are returned as they are, for the runner.
func streamBroke(err error, secrets Secrets) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrSSELineTooLong) {
		return &Failure{Status: results.StatusError, Type: results.FailStreamTruncated, Message: secrets.Clean("stream cut: "+err.Error(), maxMessage), Err: err}
	}
	if f := NetFailure(err, secrets); f != nil {
		// A reset is the server gone mid-stream: a connection
		// failure; anything else broke the stream.
		f.Type = results.FailStreamTruncated
		if resetMidStream(err) {
			f.Type = results.FailConnectionReset
		}
		f.Message = secrets.Clean("connection lost mid-stream: "+err.Error(), maxMessage)
		return f
	}
	return err
}

// chunkJSON decodes the chunks decodeChunk gives up on, with
// encoding/json's semantics (names in any case, a name twice, invalid
// UTF-8, null leaving a field as it is; FuzzReadChatStream checks both
// agree) on the v2 decoder: one pass over the bytes instead of a
// validating pass and a decoding one, and 2 allocations a chunk instead of
// 11. It was the decoder of every chunk until decodeChunk took that over:
// a chunk is decoded per streamed token, and reflection made this a
// quarter of bench's CPU per request (BenchmarkChunkCost,
// BenchmarkDecodeChunk).
var chunkJSON = jsonv1.DefaultOptionsV1()

// chunkFallbacks counts the chunks decodeChunk gave up on, decoded with
// chunkJSON instead: a test reads it to prove the fast path is the one
// the recorded streams take.
var chunkFallbacks atomic.Uint64

// readChatStream reads chunks until [DONE] or the end of the body. A body
// that ends without any choice finishing was cut short.
func readChatStream(body io.Reader, secrets Secrets, resp *Response, emit EmitFunc) error {
	// Everything kept is capped while it streams (see capped).
	limit := resp.keepLimit()
	text, reasoning, tools := newCapped(limit), newCapped(limit), newToolBudget(limit)
	var calls []*results.ToolCall
	var names, args []*capped
	callAt := map[int]int{} // stream index -> position in calls
	finished := false
	defer func() {
		// Calls arrive keyed by index; keep them in index order.
		setOutput(resp, text, reasoning)
		for _, idx := range slices.Sorted(maps.Keys(callAt)) {
			at := callAt[idx]
			c := calls[at]
			c.Name = names[at].String()
			c.Arguments = results.Arguments(args[at].String())
			tools.noteCut(args[at])
			resp.ToolCalls = append(resp.ToolCalls, *c)
		}
		tools.report(resp)
	}()
	sr := newSSEReaderCap(body, resp.keepLimit())
	defer sr.release()
	sr.reuse = true // each event is decoded before the next is read
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return streamBroke(err, secrets)
		}
		data := bytes.TrimSpace(ev.Data)
		if bytes.Equal(data, doneMarker) {
			break
		}
		if len(data) == 0 {
			continue
		}
		var ch chatChunk
		if !decodeChunk(data, &ch) {
			chunkFallbacks.Add(1)
			ch = chatChunk{}
			if err := jsonv2.Unmarshal(data, &ch, chunkJSON); err != nil {
				return &Failure{Status: results.StatusError, Type: "invalid_stream",
					Message: secrets.Clean(fmt.Sprintf("chunk is not JSON: %s", data), maxMessage), Err: err}
			}
		}
		if ch.Error != nil {
			msg := ch.Error.Message
			if msg == "" {
				msg = string(data)
			}
			return &Failure{Status: results.StatusError, Type: results.FailStreamError, Message: secrets.Clean(msg, maxMessage)}
		}
		if u := ch.Usage; u != nil {
			in, out := u.PromptTokens, u.CompletionTokens
			resp.Usage.InputTokens, resp.Usage.OutputTokens = &in, &out
			if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens > 0 {
				r := d.ReasoningTokens
				resp.Usage.ReasoningTokens = &r
			}
			if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
				c := *d.CachedTokens
				resp.Usage.CachedInputTokens = &c
			}
		}
		for _, choice := range ch.Choices {
			d := &choice.Delta
			if r := d.ReasoningContent + d.Reasoning; r != "" {
				reasoning.WriteString(r)
				emit(Event{Kind: EventReasoning, Text: r})
			}
			if d.Content != "" {
				text.WriteString(d.Content)
				emit(Event{Kind: EventText, Text: d.Content})
			}
			for i, tc := range d.ToolCalls {
				idx := i
				if tc.Index != nil {
					idx = *tc.Index
				}
				at, ok := callAt[idx]
				if !ok {
					if !tools.admit() {
						// Past MaxToolCalls: still output, not kept.
						emit(Event{Kind: EventToolCall, Text: tc.Function.Arguments, Call: -1})
						continue
					}
					at = len(calls)
					callAt[idx] = at
					calls = append(calls, &results.ToolCall{})
					names, args = append(names, tools.name()), append(args, tools.args())
				}
				c := calls[at]
				if tc.ID != "" {
					c.ID = tc.ID
				}
				names[at].WriteString(tc.Function.Name)
				args[at].WriteString(tc.Function.Arguments)
				emit(Event{Kind: EventToolCall, Text: tc.Function.Arguments, Call: at})
			}
			if choice.FinishReason != "" {
				resp.FinishReason = choice.FinishReason
				finished = true
			}
		}
	}
	if !finished {
		// The body ended cleanly but no choice ever finished: the server
		// closed the stream early.
		return &Failure{Status: results.StatusError, Type: results.FailStreamTruncated, Message: "stream ended without a finish_reason"}
	}
	return nil
}
