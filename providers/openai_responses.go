package providers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"bench/config"
	"bench/internal/record/results"
)

// responsesKind is the openai_responses type: the OpenAI Responses API.
type responsesKind struct{}

// responsesOptions are the keys an openai_responses entry takes.
type responsesOptions struct {
	httpOptions `yaml:",inline"`
	sampling    `yaml:",inline"`
}

const responsesDefaultURL = "https://api.openai.com/v1"

func (responsesKind) Name() string { return "openai_responses" }

func (responsesKind) GenAIProvider() string { return "openai" }

func (responsesKind) ToolProtocol() string {
	return "OpenAI Responses function_call and function_call_output items"
}

func (responsesKind) OwnsToolLoop() bool { return false }

func (responsesKind) Options() any {
	return &responsesOptions{httpOptions: defaultHTTP(responsesDefaultURL)}
}

func (responsesKind) Resolve(p *config.Provider, problem func(key, msg string)) {
	o := options[responsesOptions](p)
	if o.APIKeyEnv == "" && strings.TrimRight(o.BaseURL, "/") == responsesDefaultURL {
		o.APIKeyEnv = "OPENAI_API_KEY"
	}
	// A local server that speaks the API may listen on base_url's port;
	// no process name is assumed (the default endpoint is remote).
	o.resolve(p, problem)
}

func (responsesKind) New(p *config.Provider, s Secrets) (Provider, error) {
	o := options[responsesOptions](p)
	r := &OpenAIResponses{opts: o, url: o.BaseURL + "/responses"}
	r.secrets = o.credentials(s).secrets
	r.http = o.endpoint(r.secrets)
	r.http.errorBody = responsesErrorBody
	return r, nil
}

func (responsesKind) Hint(p *config.Provider, failureType string, models []string) (string, bool) {
	return hostedHint(p, &options[responsesOptions](p).httpOptions, "the Responses API", failureType, models)
}

// OpenAIResponses speaks the OpenAI Responses API (POST {base_url}/responses
// with stream: true), as OpenAI serves it and as Ollama 0.13.3+ does under /v1.
//
// It is written on net/http rather than on go-openai's CreateResponseStream
// because that client drops the response headers of a failed request, so
// Retry-After and retry-after-ms cannot be honoured, and its stream reader is
// unexported (it cannot be fuzzed or shared) and counts every non-data line,
// comments included, against a limit after which the stream fails.
type OpenAIResponses struct {
	opts    *responsesOptions
	url     string
	http    *httpEndpoint
	secrets Secrets
}

// Secrets is the API key.
func (o *OpenAIResponses) Secrets() Secrets { return o.secrets }

// Probe records the endpoint and whether the key variable is set; the
// Responses API has no version call.
func (o *OpenAIResponses) Probe(ctx context.Context) *Probe {
	pr := &Probe{}
	o.opts.probeKey(pr)
	return pr
}

// responsesRequest is the request body. Only what bench sets is sent.
type responsesRequest struct {
	Model           string              `json:"model"`
	Input           []responsesInput    `json:"input"`
	Instructions    string              `json:"instructions,omitempty"`
	Tools           []responsesTool     `json:"tools,omitempty"`
	Reasoning       *responsesReasoning `json:"reasoning,omitempty"`
	MaxOutputTokens int                 `json:"max_output_tokens,omitempty"`
	Temperature     *float64            `json:"temperature,omitempty"`
	Stream          bool                `json:"stream"`
	// Store is false: a benchmark's prompts and answers have no business
	// being kept server-side (OpenAI stores responses by default).
	Store bool `json:"store"`
}

// responsesInput is one input item: a message (type message, role,
// content), a function call the model made earlier (type function_call,
// call_id, name, arguments), or its result (type function_call_output,
// call_id, output).
type responsesInput struct {
	Type      string  `json:"type"`
	Role      string  `json:"role,omitempty"`
	Content   *string `json:"content,omitempty"`
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
	Output    *string `json:"output,omitempty"`
}

// responsesItems is the input: the prompt, then the agentic turns. Sent
// with store: false, a reply cannot be referred to by id, so each is
// echoed back whole: its text as an assistant message and each call as a
// function_call item, followed by the function_call_output items that
// answer them (a call without a call_id gets "call_<m>_<j>", which its
// output then names).
func responsesItems(req Request) []responsesInput {
	items := []responsesInput{{Type: "message", Role: "user", Content: &req.Prompt}}
	var pending []string
	for i, m := range req.Messages {
		switch m.Role {
		case RoleAssistant:
			if m.Text != "" {
				items = append(items, responsesInput{Type: "message", Role: "assistant", Content: &m.Text})
			}
			pending = pending[:0]
			for j, c := range m.ToolCalls {
				id := callID(c.ID, i, j)
				pending = append(pending, id)
				args := argumentsText(c.Arguments)
				items = append(items, responsesInput{Type: "function_call", CallID: id, Name: c.Name, Arguments: &args})
			}
		case RoleTool:
			id := m.CallID
			if len(pending) > 0 {
				if id == "" {
					id = pending[0]
				}
				pending = pending[1:]
			}
			items = append(items, responsesInput{Type: "function_call_output", CallID: id, Output: &m.Text})
		default:
			items = append(items, responsesInput{Type: "message", Role: "user", Content: &m.Text})
		}
	}
	return items
}

type responsesTool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
	// Strict is false: OpenAI makes function tools strict by default and then
	// rejects any schema that does not list every property as required, which
	// the prompt suite's schemas need not do.
	Strict bool `json:"strict"`
}

type responsesReasoning struct {
	Effort string `json:"effort"`
}

// body builds the request. The thinking level is sent verbatim as the
// reasoning effort, "xhigh" included: OpenAI accepts it on the models that
// have it, and a server that does not (Ollama takes low|medium|high|max)
// answers 400, which is recorded as such rather than quietly benchmarking
// another level under the name xhigh.
func (o *OpenAIResponses) body(req Request) ([]byte, error) {
	rr := responsesRequest{
		Model:           req.Model,
		Input:           responsesItems(req),
		Instructions:    req.System,
		MaxOutputTokens: cmp.Or(req.MaxTokens, o.opts.MaxTokens),
		Temperature:     o.opts.Temperature,
		Stream:          true,
	}
	if req.ThinkingLevel != "" {
		rr.Reasoning = &responsesReasoning{Effort: req.ThinkingLevel}
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		rr.Tools = append(rr.Tools, responsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params})
	}
	b, err := json.Marshal(rr)
	if err != nil {
		return nil, fmt.Errorf("encode responses request: %w", err)
	}
	return b, nil
}

// Stream sends the request through the HTTP path (which retries 429 and
// 5xx) and reads the event stream of the attempt that was accepted.
func (o *OpenAIResponses) Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error) {
	resp := newResponse(req)
	resp.Metrics = map[string]any{}
	if err := o.opts.missingKey(); err != nil {
		return resp, err
	}
	key := o.opts.key()
	body, err := o.body(req)
	if err != nil {
		return resp, err
	}
	hres, err := o.http.post(ctx, req, httpRequest{URL: o.url, Body: body, Accept: "text/event-stream", Bearer: key}, resp, emit)
	if err != nil {
		return resp, err
	}
	defer hres.Body.Close()
	err = readResponsesStream(ctx, hres.Body, o.secrets, resp, hres.stamp(emit))
	if ct := hres.Header.Get("Content-Type"); err != nil && !strings.HasPrefix(ct, "text/event-stream") {
		var f *Failure
		if errors.As(err, &f) {
			f.Message += fmt.Sprintf(" (content-type %q, not an event stream)", ct)
		}
	}
	return resp, err
}

// responsesErrorBody reads the API's {"error": {"code", "message"}} body.
func responsesErrorBody(raw []byte) (code, msg string) {
	var eb struct {
		Error *responsesError `json:"error"`
	}
	if json.Unmarshal(raw, &eb) == nil && eb.Error != nil {
		return eb.Error.Code.String(), eb.Error.Message
	}
	return "", ""
}

// responsesEvent holds the fields bench reads from any stream event.
type responsesEvent struct {
	Type      string             `json:"type"`
	Delta     string             `json:"delta"`
	ItemID    string             `json:"item_id"`
	Text      *string            `json:"text"`
	Arguments *string            `json:"arguments"`
	Item      *responsesItem     `json:"item"`
	Response  *responsesResponse `json:"response"`
	// The error event: code and message at the top level (OpenAI), or
	// nested under error (some compatible servers).
	Code    looseString     `json:"code"`
	Message string          `json:"message"`
	Error   *responsesError `json:"error"`
}

type responsesItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type responsesResponse struct {
	ID                string          `json:"id"`
	Status            string          `json:"status"`
	Model             string          `json:"model"`
	Error             *responsesError `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage  *responsesUsage `json:"usage"`
	Output []responsesItem `json:"output"`
}

type responsesUsage struct {
	InputTokens        *int `json:"input_tokens"`
	OutputTokens       *int `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

type responsesError struct {
	Code    looseString `json:"code"`
	Message string      `json:"message"`
	Type    string      `json:"type"`
}

// looseString decodes an error code that servers send as a string, a number
// or null.
type looseString string

func (l *looseString) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = looseString(s)
		return nil
	}
	if string(b) == "null" {
		*l = ""
		return nil
	}
	*l = looseString(b)
	return nil
}

func (l looseString) String() string { return string(l) }

// responsesCall is a function call being assembled from its events.
type responsesCall struct {
	index   int // position in the reply (-1: past MaxToolCalls, not kept)
	call    results.ToolCall
	args    *capped
	final   *string // the complete arguments, once an event carries them
	emitted bool    // an EventToolCall was emitted for it
}

// responsesState accumulates one stream.
type responsesState struct {
	resp       *Response
	emit       EmitFunc
	text       *capped
	reasoning  *capped
	tools      *toolBudget
	calls      []*responsesCall
	byItem     map[string]*responsesCall
	textItems  map[string]bool // message items whose text came as deltas
	lastCallID string          // item id of the last call, for events without one
}

func (s *responsesState) callFor(itemID string) *responsesCall {
	c := s.byItem[itemID]
	if c == nil {
		if !s.tools.admit() {
			// Past MaxToolCalls: its events still count, nothing is kept
			// (and the map of items stays bounded too).
			c = &responsesCall{index: -1, args: newCapped(0)}
			if len(s.byItem) < maxTrackedItems {
				s.byItem[itemID] = c
			}
			return c
		}
		c = &responsesCall{index: len(s.calls), args: s.tools.args()}
		s.byItem[itemID] = c
		s.calls = append(s.calls, c)
	}
	s.lastCallID = itemID
	return c
}

// maxTrackedItems bounds the item ids a stream remembers, so a server
// that sends a new id with every event cannot grow memory.
const maxTrackedItems = 4 * MaxToolCalls

// markText notes that an item's text arrived as deltas.
func (s *responsesState) markText(itemID string) {
	if len(s.textItems) < maxTrackedItems {
		s.textItems[itemID] = true
	}
}

// item records what a function_call item tells: its call id, name and, when
// complete, its arguments. A call that arrives whole, with no argument deltas,
// is emitted here so its time is still recorded.
func (s *responsesState) item(it *responsesItem, done bool) {
	if it == nil || it.Type != "function_call" {
		return
	}
	c := s.callFor(it.ID)
	if it.CallID != "" {
		c.call.ID = it.CallID
	}
	if it.Name != "" {
		c.call.Name = claudeTruncate(it.Name, maxToolName)
	}
	if done || it.Arguments != "" {
		if it.Arguments != "" || c.final == nil {
			a := claudeTruncate(it.Arguments, s.tools.limit)
			c.final = &a
		}
	}
	if done && !c.emitted {
		c.emitted = true
		s.emit(Event{Kind: EventToolCall, Text: *c.final, Call: c.index})
	}
}

// finish copies the accumulated output into the Response.
func (s *responsesState) finish() {
	setOutput(s.resp, s.text, s.reasoning)
	s.resp.ToolCalls = nil
	for _, c := range s.calls {
		args := c.args.String()
		if c.final != nil && *c.final != "" {
			// The whole arguments, cut to what the budget has left once
			// the pieces streamed for them are given back.
			s.tools.left += c.args.Len()
			args = s.tools.keep(*c.final)
		} else {
			s.tools.noteCut(c.args)
		}
		tc := c.call
		tc.Arguments = results.Arguments(args)
		s.resp.ToolCalls = append(s.resp.ToolCalls, tc)
	}
	s.tools.report(s.resp)
}

// terminal records what a terminal event's response object carries.
func (s *responsesState) terminal(r *responsesResponse) {
	if r == nil {
		return
	}
	m := s.resp.Metrics
	if r.ID != "" {
		m["response_id"] = r.ID
	}
	if r.Status != "" {
		m["status"] = r.Status
	}
	if r.Model != "" {
		m["model"] = r.Model
	}
	if u := r.Usage; u != nil {
		s.resp.Usage.InputTokens = u.InputTokens
		s.resp.Usage.OutputTokens = u.OutputTokens
		if d := u.OutputTokensDetails; d != nil {
			s.resp.Usage.ReasoningTokens = d.ReasoningTokens
		}
		if d := u.InputTokensDetails; d != nil && d.CachedTokens != nil {
			m["cached_input_tokens"] = *d.CachedTokens
			c := *d.CachedTokens
			s.resp.Usage.CachedInputTokens = &c
		}
	}
	// Calls present only in the final output (a server that streams none of
	// their events) still count.
	known := map[string]bool{}
	for _, c := range s.calls {
		known[c.call.ID] = true
	}
	for i := range r.Output {
		it := &r.Output[i]
		if it.Type == "function_call" && it.ID != "" && s.byItem[it.ID] == nil && (it.CallID == "" || !known[it.CallID]) {
			s.item(it, true)
		}
	}
}

// readResponsesStream reads events until a terminal one. It returns nil for
// response.completed and response.incomplete, a *Failure for the rest, and
// ctx's error when the context ended the stream.
func readResponsesStream(ctx context.Context, body io.Reader, secrets Secrets, resp *Response, emit EmitFunc) error {
	limit := resp.keepLimit()
	s := &responsesState{resp: resp, emit: emit, byItem: map[string]*responsesCall{}, textItems: map[string]bool{},
		text: newCapped(limit), reasoning: newCapped(limit), tools: newToolBudget(limit)}
	defer s.finish()
	sr := newSSEReaderCap(body, resp.keepLimit())
	defer sr.release()
	sr.reuse = true // each event is decoded before the next is read
	for {
		sev, err := sr.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			msg, typ := "stream ended without response.completed", results.FailStreamTruncated
			if err != io.EOF {
				msg = fmt.Sprintf("stream broke before response.completed: %v", err)
				// A reset is the server gone mid-stream: a connection failure.
				if resetMidStream(err) {
					typ = results.FailConnectionReset
				}
			}
			return &Failure{Status: results.StatusError, Type: typ, Message: secrets.Clean(msg, maxMessage), Err: err}
		}
		var ev responsesEvent
		if err := json.Unmarshal(sev.Data, &ev); err != nil {
			return &Failure{Status: results.StatusError, Type: "invalid_stream",
				Message: secrets.Clean(fmt.Sprintf("event %q is not JSON: %s", sev.Event, sev.Data), maxMessage), Err: err}
		}
		if ev.Type == "" {
			ev.Type = sev.Event
		}
		switch ev.Type {
		case "response.output_text.delta", "response.refusal.delta":
			if ev.Delta != "" {
				s.markText(ev.ItemID)
				s.text.WriteString(ev.Delta)
				emit(Event{Kind: EventText, Text: ev.Delta})
			}
		case "response.output_text.done":
			// A server that sends the text whole, without deltas.
			if !s.textItems[ev.ItemID] && len(s.textItems) < maxTrackedItems && ev.Text != nil && *ev.Text != "" {
				s.markText(ev.ItemID)
				s.text.WriteString(*ev.Text)
				emit(Event{Kind: EventText, Text: *ev.Text})
			}
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			if ev.Delta != "" {
				s.reasoning.WriteString(ev.Delta)
				emit(Event{Kind: EventReasoning, Text: ev.Delta})
			}
		case "response.output_item.added":
			s.item(ev.Item, false)
		case "response.output_item.done":
			s.item(ev.Item, true)
		case "response.function_call_arguments.delta":
			if ev.ItemID == "" {
				ev.ItemID = s.lastCallID
			}
			c := s.callFor(ev.ItemID)
			c.args.WriteString(ev.Delta)
			c.emitted = true
			emit(Event{Kind: EventToolCall, Text: ev.Delta, Call: c.index})
		case "response.function_call_arguments.done":
			if ev.ItemID == "" {
				ev.ItemID = s.lastCallID
			}
			if ev.Arguments != nil {
				c := s.callFor(ev.ItemID)
				a := *ev.Arguments
				c.final = &a
			}
		case "response.completed":
			s.terminal(ev.Response)
			resp.FinishReason = "completed"
			return nil
		case "response.incomplete":
			s.terminal(ev.Response)
			reason := "incomplete"
			if r := ev.Response; r != nil && r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "" {
				reason = r.IncompleteDetails.Reason
			}
			resp.FinishReason = reason
			resp.Metrics["incomplete"] = true
			resp.Metrics["incomplete_reason"] = reason
			return nil
		case "response.failed":
			s.terminal(ev.Response)
			resp.FinishReason = "failed"
			var e *responsesError
			if ev.Response != nil {
				e = ev.Response.Error
			}
			return streamFailure("response_failed", e, secrets, resp)
		case "error":
			e := ev.Error
			if e == nil {
				e = &responsesError{Code: ev.Code, Message: ev.Message}
			}
			return streamFailure("stream_error", e, secrets, resp)
		}
	}
}

// streamFailure classifies an error reported inside the stream. A rate limit
// announced this way is still a rate limit, but it is not retried: output may
// already have been emitted.
func streamFailure(typ string, e *responsesError, secrets Secrets, resp *Response) *Failure {
	f := &Failure{Status: results.StatusError, Type: typ, Message: "no error details"}
	if e != nil {
		code := e.Code.String()
		if code == "" {
			code = e.Type
		}
		if code != "" {
			resp.Metrics["error_code"] = code
		}
		switch {
		case code != "" && e.Message != "":
			f.Message = code + ": " + e.Message
		case e.Message != "":
			f.Message = e.Message
		case code != "":
			f.Message = code
		}
		if strings.Contains(code, "rate_limit") {
			f.Status = results.StatusRateLimited
		}
	}
	f.Message = secrets.Clean(f.Message, maxMessage)
	return f
}
