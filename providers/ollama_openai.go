package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"bench/config"
	"bench/results"
)

// OllamaOpenAI speaks the OpenAI chat-completions streaming protocol, as
// Ollama serves it under /v1 (and as any compatible server does).
type OllamaOpenAI struct {
	cfg    config.Provider
	client *openai.Client
	secret string
}

// NewOllamaOpenAI builds the provider. The API key, if any, is read from the
// variable named by api_key_env now; Ollama itself needs none.
func NewOllamaOpenAI(p config.Provider) (Provider, error) {
	var key string
	if p.APIKeyEnv != "" {
		key = os.Getenv(p.APIKeyEnv)
	}
	cc := openai.DefaultConfig(key)
	cc.BaseURL = strings.TrimRight(p.BaseURL, "/")
	// No client timeout: the cell's context bounds the whole stream.
	cc.HTTPClient = httpClient()
	return &OllamaOpenAI{cfg: p, client: openai.NewClientWithConfig(cc), secret: key}, nil
}

func (o *OllamaOpenAI) request(req Request) openai.ChatCompletionRequest {
	var msgs []openai.ChatCompletionMessage
	if req.System != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: req.System})
	}
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: req.Prompt})
	cr := openai.ChatCompletionRequest{
		Model:         req.Model,
		Messages:      msgs,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		MaxTokens:     o.cfg.MaxTokens,
		Seed:          o.cfg.Seed,
		// Sent as reasoning_effort; servers that do not reason ignore it.
		ReasoningEffort: req.ThinkingLevel,
	}
	if o.cfg.Temperature != nil {
		cr.Temperature = float32(*o.cfg.Temperature)
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
	return cr
}

// Stream sends one streaming chat completion and accumulates text, tool calls
// (whose name and arguments arrive in pieces, keyed by index) and usage.
func (o *OllamaOpenAI) Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error) {
	resp := &Response{}
	emit(Event{Kind: EventRequestStart})
	stream, err := o.client.CreateChatCompletionStream(ctx, o.request(req))
	if err != nil {
		return resp, o.classify(err)
	}
	defer stream.Close()

	var text, reasoning strings.Builder
	calls := map[int]*results.ToolCall{}
	args := map[int]*strings.Builder{}
	finished := false
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			resp.Text, resp.Reasoning = text.String(), reasoning.String()
			resp.ToolCalls = collectCalls(calls, args)
			return resp, o.midStream(err)
		}
		if chunk.Usage != nil {
			in, out := chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens
			resp.Usage.InputTokens, resp.Usage.OutputTokens = &in, &out
			if d := chunk.Usage.CompletionTokensDetails; d != nil && d.ReasoningTokens > 0 {
				r := d.ReasoningTokens
				resp.Usage.ReasoningTokens = &r
			}
		}
		for _, ch := range chunk.Choices {
			d := ch.Delta
			if d.ReasoningContent != "" {
				reasoning.WriteString(d.ReasoningContent)
				emit(Event{Kind: EventReasoning, Text: d.ReasoningContent})
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
				c := calls[idx]
				if c == nil {
					c = &results.ToolCall{}
					calls[idx] = c
					args[idx] = &strings.Builder{}
				}
				if tc.ID != "" {
					c.ID = tc.ID
				}
				c.Name += tc.Function.Name
				args[idx].WriteString(tc.Function.Arguments)
				emit(Event{Kind: EventToolCall, Text: tc.Function.Arguments})
			}
			if ch.FinishReason != "" {
				resp.FinishReason = string(ch.FinishReason)
				finished = true
			}
		}
	}
	resp.Text, resp.Reasoning = text.String(), reasoning.String()
	resp.ToolCalls = collectCalls(calls, args)
	if !finished {
		// The body ended cleanly but no choice ever finished: the server
		// closed the stream early.
		return resp, &Failure{Status: results.StatusError, Type: "stream_truncated", Message: "stream ended without a finish_reason"}
	}
	return resp, nil
}

// collectCalls orders accumulated tool calls by index; arguments that are not
// valid JSON are kept as a JSON string so nothing the model sent is lost.
func collectCalls(calls map[int]*results.ToolCall, args map[int]*strings.Builder) []results.ToolCall {
	idx := make([]int, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]results.ToolCall, 0, len(idx))
	for _, i := range idx {
		c := *calls[i]
		c.Arguments = RawArguments(args[i].String())
		out = append(out, c)
	}
	return out
}

// RawArguments keeps tool-call arguments as JSON: valid JSON as is, anything
// else as a JSON string, and nothing as null.
func RawArguments(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

func (o *OllamaOpenAI) classify(err error) error {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return HTTPFailure(apiErr.HTTPStatusCode, apiErr.Message, o.secret, err)
	case errors.As(err, &reqErr):
		msg := strings.TrimSpace(string(reqErr.Body))
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		if msg == "" {
			msg = reqErr.HTTPStatus
		}
		return HTTPFailure(reqErr.HTTPStatusCode, msg, o.secret, err)
	}
	if f := NetFailure(err, o.secret); f != nil {
		return f
	}
	return err
}

// midStream classifies an error after the stream began: a server error event
// or a cut connection.
func (o *OllamaOpenAI) midStream(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return &Failure{Status: results.StatusError, Type: "stream_error", Message: Scrub(apiErr.Message, o.secret), Err: err}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &Failure{Status: results.StatusError, Type: "stream_truncated", Message: "connection closed mid-stream", Err: err}
	}
	return &Failure{Status: results.StatusError, Type: "stream_error", Message: Scrub(fmt.Sprint(err), o.secret), Err: err}
}
