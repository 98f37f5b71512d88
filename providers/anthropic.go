package providers

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/secrets"
)

// anthropicKind is the anthropic type: Anthropic's Messages API, streamed.
type anthropicKind struct{}

// anthropicOptions are the keys an anthropic entry takes.
type anthropicOptions struct {
	httpOptions  `yaml:",inline"`
	sampling     `yaml:",inline"`
	extraHeaders `yaml:",inline"`
	// AnthropicVersion is the anthropic-version header.
	AnthropicVersion string `yaml:"anthropic_version" json:"anthropic_version"`
	// ThinkingBudgets overrides budget_tokens per thinking level.
	ThinkingBudgets thinkingBudgets `yaml:"thinking_budgets" json:"thinking_budgets,omitempty"`
}

const (
	anthropicDefaultURL     = "https://api.anthropic.com/v1"
	anthropicDefaultVersion = "2023-06-01"
	// anthropicMaxTokens is max_tokens when neither the entry nor the
	// prompt sets one: the API requires it.
	anthropicMaxTokens = 4096
	// anthropicLeastBudget is the smallest budget_tokens the API takes.
	anthropicLeastBudget = 1024
)

// anthropicBudgets are the extended-thinking budgets of the thinking
// levels (budget_tokens; the API takes 1024 and up).
var anthropicBudgets = thinkingBudgets{"low": 1024, "medium": 4096, "high": 16384, "xhigh": 32768}

func (anthropicKind) Name() string { return "anthropic" }

func (anthropicKind) GenAIProvider() string { return "anthropic" }

func (anthropicKind) ToolProtocol() string {
	return "Anthropic Messages tool_use and tool_result content blocks"
}

func (anthropicKind) OwnsToolLoop() bool { return false }

func (anthropicKind) Options() any {
	return &anthropicOptions{httpOptions: defaultHTTP(anthropicDefaultURL), AnthropicVersion: anthropicDefaultVersion}
}

func (anthropicKind) Resolve(p *config.Provider, problem func(key, msg string)) {
	o := options[anthropicOptions](p)
	if o.APIKeyEnv == "" && strings.TrimRight(o.BaseURL, "/") == anthropicDefaultURL {
		o.APIKeyEnv = "ANTHROPIC_API_KEY"
	}
	if strings.TrimSpace(o.AnthropicVersion) == "" {
		problem("anthropic_version", "must name an API version (e.g. "+anthropicDefaultVersion+")")
	}
	if o.MaxTokens < 0 {
		problem("max_tokens", "must be positive")
	}
	o.ThinkingBudgets.check(anthropicLeastBudget, problem)
	o.checkHeaders(problem)
	o.resolve(p, problem)
}

// secretSpec: the key, base_url's password and the secret headers.
func (o *anthropicOptions) secretSpec() (all, own secrets.Spec) {
	return o.extraHeaders.secretSpec(o.httpOptions.secretSpec())
}

func (anthropicKind) New(p *config.Provider, s Secrets) (Provider, error) {
	o := options[anthropicOptions](p)
	a := &Anthropic{opts: o, url: o.BaseURL + "/messages", budgets: o.ThinkingBudgets.with(anthropicBudgets)}
	a.secrets = o.credentials(s).secrets
	a.http = o.endpoint(a.secrets)
	a.http.errorBody = anthropicErrorBody
	return a, nil
}

func (anthropicKind) Hint(p *config.Provider, failureType string, models []string) (string, bool) {
	return hostedHint(p, &options[anthropicOptions](p).httpOptions, "the Messages API", failureType, models)
}

// Anthropic speaks the Messages API (POST {base_url}/messages with stream:
// true) through the one HTTP path. It is written on net/http and the
// project's SSE reader rather than on anthropic-sdk-go: the SDK's client
// sends and retries requests itself (it cannot go through the shared path,
// whose retries, Retry-After handling and first-byte stamps every HTTP
// kind shares), and the stream's events are folded by the same code that
// reads the Claude Code CLI's relayed Messages events (claudeStream).
type Anthropic struct {
	opts    *anthropicOptions
	url     string
	http    *httpEndpoint
	secrets Secrets
	budgets thinkingBudgets
}

// Secrets is the API key and the secret headers.
func (a *Anthropic) Secrets() Secrets { return a.secrets }

// Probe records the endpoint and whether the key variable is set.
func (a *Anthropic) Probe(ctx context.Context) *Probe {
	pr := &Probe{}
	a.opts.probeKey(pr)
	return pr
}

// headers are every request's: the key, the version, the entry's own.
func (a *Anthropic) headers() http.Header {
	h := http.Header{"Anthropic-Version": {a.opts.AnthropicVersion}}
	if k := a.opts.key(); k != "" {
		h.Set("X-Api-Key", k)
	}
	return a.opts.extraHeaders.header(h)
}

// Preconnect opens n connections for the cells to come (GETs of the
// model list; any answer leaves its connection open).
func (a *Anthropic) Preconnect(ctx context.Context, n int) error {
	return a.http.preconnect(ctx, a.opts.BaseURL+"/models", a.headers(), n)
}

// anthropicRequest is the request body; only what bench sets is sent.
type anthropicRequest struct {
	Model       string             `json:"model"`
	MaxTokens   int                `json:"max_tokens"`
	System      string             `json:"system,omitempty"`
	Messages    []anthropicMessage `json:"messages"`
	Tools       []anthropicTool    `json:"tools,omitempty"`
	Thinking    *anthropicThinking `json:"thinking,omitempty"`
	Temperature *float64           `json:"temperature,omitempty"`
	Stream      bool               `json:"stream"`
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

// anthropicBlock is a content block bench sends: text, tool_use (a call
// the model made earlier) or tool_result (bench's answer to it).
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anthropicTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
}

type anthropicThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// anthropicMessages is the conversation: the prompt, then the agentic
// turns. A reply goes back as an assistant message of its text and
// tool_use blocks; the results that answer it are tool_result blocks of
// one user message (the API wants every result of a reply in the message
// after it), and a user turn's text joins that message too, so roles
// alternate. A call the server gave no id gets "call_<m>_<j>".
func anthropicMessages(req Request) []anthropicMessage {
	msgs := []anthropicMessage{{Role: "user", Content: []anthropicBlock{{Type: "text", Text: req.Prompt}}}}
	user := func(b anthropicBlock) {
		if last := &msgs[len(msgs)-1]; last.Role == "user" {
			last.Content = append(last.Content, b)
			return
		}
		msgs = append(msgs, anthropicMessage{Role: "user", Content: []anthropicBlock{b}})
	}
	var pending []string
	for i, m := range req.Messages {
		switch m.Role {
		case RoleAssistant:
			am := anthropicMessage{Role: "assistant"}
			if m.Text != "" {
				am.Content = append(am.Content, anthropicBlock{Type: "text", Text: m.Text})
			}
			pending = pending[:0]
			for j, c := range m.ToolCalls {
				id := callID(c.ID, i, j)
				pending = append(pending, id)
				am.Content = append(am.Content, anthropicBlock{Type: "tool_use", ID: id, Name: c.Name, Input: objectArguments(c.Arguments)})
			}
			if len(am.Content) == 0 {
				// The API refuses an empty assistant message.
				am.Content = []anthropicBlock{{Type: "text", Text: "(no answer)"}}
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
			text := m.Text
			user(anthropicBlock{Type: "tool_result", ToolUseID: id, Content: &text, IsError: m.IsError})
		default:
			user(anthropicBlock{Type: "text", Text: m.Text})
		}
	}
	return msgs
}

// objectArguments is a call's arguments as a JSON object, which the
// protocols that carry them as a value (not as JSON text) require: the
// object as recorded, else {} (text that did not parse as an object has
// no faithful form there).
func objectArguments(raw json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	return json.RawMessage("{}")
}

// body builds the request. A thinking level turns extended thinking on
// with that level's budget; max_tokens then counts the budget on top of
// the answer's cap, as the API counts thinking inside max_tokens.
func (a *Anthropic) body(req Request) ([]byte, error) {
	ar := anthropicRequest{
		Model:       req.Model,
		MaxTokens:   cmp.Or(req.MaxTokens, a.opts.MaxTokens, anthropicMaxTokens),
		System:      req.System,
		Messages:    anthropicMessages(req),
		Temperature: a.opts.Temperature,
		Stream:      true,
	}
	if req.ThinkingLevel != "" {
		budget, ok := a.budgets[req.ThinkingLevel]
		if !ok {
			return nil, &Failure{Status: results.StatusError, Type: "bad_request", Message: fmt.Sprintf("no thinking budget for level %q", req.ThinkingLevel)}
		}
		ar.Thinking = &anthropicThinking{Type: "enabled", BudgetTokens: budget}
		ar.MaxTokens += budget
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		ar.Tools = append(ar.Tools, anthropicTool{Name: t.Name, Description: t.Description, InputSchema: params})
	}
	b, err := json.Marshal(ar)
	if err != nil {
		return nil, &Failure{Status: results.StatusError, Type: "bad_request", Message: err.Error(), Err: err}
	}
	return b, nil
}

// Stream sends the request through the HTTP path (which retries 429, 529
// and other 5xx) and reads the accepted attempt's event stream.
func (a *Anthropic) Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error) {
	resp := newResponse(req)
	if err := a.opts.missingKey(); err != nil {
		return resp, err
	}
	body, err := a.body(req)
	if err != nil {
		return resp, err
	}
	return a.http.stream(ctx, req, httpRequest{URL: a.url, Body: body, Accept: "text/event-stream", Header: a.headers()}, resp, emit,
		func(body io.Reader, emit EmitFunc) error { return readMessagesStream(body, a.secrets, resp, emit) })
}

// anthropicErrorBody reads {"type": "error", "error": {"type", "message"}}.
func anthropicErrorBody(raw []byte) (code, msg string) {
	var e struct {
		Error *anthropicError `json:"error"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Error == nil {
		return "", ""
	}
	return e.Error.Type, e.Error.Message
}

type anthropicError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// messagesEvent is a Messages stream event: what claudeStream folds, and
// the error event's error.
type messagesEvent struct {
	claudeEvent
	Error *anthropicError `json:"error"`
}

// readMessagesStream reads a Messages event stream until message_stop:
// text, thinking and tool_use blocks are folded by claudeStream (the same
// fold as the CLI's relayed events), ping is ignored, an error event ends
// the stream as a failure, and a stream that ends before message_stop was
// cut. Redacted thinking has no text to keep; its blocks are counted.
func readMessagesStream(body io.Reader, secrets Secrets, resp *Response, emit EmitFunc) (err error) {
	s := newClaudeStream(resp.keepLimit())
	redacted := 0
	defer func() {
		s.output(resp)
		if resp.Metrics == nil {
			resp.Metrics = map[string]any{}
		}
		u := s.done.plus(s.msg)
		for k, v := range map[string]*int{"cache_read_input_tokens": u.cacheRead, "cache_creation_input_tokens": u.cacheWrite} {
			if v != nil {
				resp.Metrics[k] = *v
			}
		}
		if redacted > 0 {
			resp.Metrics["redacted_thinking_blocks"] = redacted
		}
	}()
	sr := newSSEReaderCap(body, resp.keepLimit())
	defer sr.release()
	sr.reuse = true // each event is decoded before the next is read
	for {
		sev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return &Failure{Status: results.StatusError, Type: results.FailStreamTruncated, Message: "stream ended without message_stop"}
		}
		if err != nil {
			return streamBroke(err, secrets)
		}
		var ev messagesEvent
		if err := json.Unmarshal(sev.Data, &ev); err != nil {
			return &Failure{Status: results.StatusError, Type: "invalid_stream",
				Message: secrets.Clean(fmt.Sprintf("event %q is not JSON: %s", sev.Event, sev.Data), maxMessage), Err: err}
		}
		if ev.Type == "" {
			ev.Type = sev.Event
		}
		switch ev.Type {
		case "ping":
		case "message_stop":
			return nil
		case "error":
			return messagesStreamError(ev.Error, secrets)
		default:
			if ev.Type == "content_block_start" && ev.ContentBlock != nil && ev.ContentBlock.Type == "redacted_thinking" {
				redacted++
			}
			s.event(&claudeLine{Type: "stream_event", Event: &ev.claudeEvent}, emit)
		}
	}
}

// messagesStreamError classifies an error event: an overloaded API or a
// rate limit announced mid-stream is rate_limited (not retried: output
// may already have been emitted), anything else a stream error.
func messagesStreamError(e *anthropicError, secrets Secrets) *Failure {
	f := &Failure{Status: results.StatusError, Type: results.FailStreamError, Message: "error event without details"}
	if e != nil {
		f.Message = strings.TrimPrefix(e.Type+": "+e.Message, ": ")
		if e.Type == "overloaded_error" || e.Type == "rate_limit_error" {
			f.Status = results.StatusRateLimited
		}
	}
	f.Message = secrets.Clean(f.Message, maxMessage)
	return f
}
