package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"bench/config"
	"bench/results"
)

// OpenAIResponses speaks the OpenAI Responses API (POST {base_url}/responses
// with stream: true), as OpenAI serves it and as Ollama 0.13.3+ does under /v1.
//
// It is written on net/http rather than on go-openai's CreateResponseStream
// because that client drops the response headers of a failed request, so
// Retry-After and retry-after-ms cannot be honoured, and its stream reader is
// unexported (it cannot be fuzzed or shared) and counts every non-data line,
// comments included, against a limit after which the stream fails.
type OpenAIResponses struct {
	cfg        config.Provider
	url        string
	client     *http.Client
	maxRetries int
	// backoff is the first wait when a retryable answer names none; it doubles
	// per retry and is jittered by ±50%.
	backoff time.Duration
}

// DefaultMaxRetries is how many times a 429 or 5xx is retried when the
// provider entry does not set max_retries.
const DefaultMaxRetries = 2

// NewOpenAIResponses builds the provider. The key is not read here: it is read
// per cell, so a missing key is recorded per cell without sending anything.
func NewOpenAIResponses(p config.Provider) (Provider, error) {
	base := p.BaseURL
	if base == "" {
		base = config.DefaultBaseURL(config.TypeOpenAIResponses)
	}
	o := &OpenAIResponses{
		cfg:        p,
		url:        strings.TrimRight(base, "/") + "/responses",
		maxRetries: DefaultMaxRetries,
		backoff:    time.Second,
		// No client timeout: the cell's context bounds the whole exchange,
		// connection, headers and stream alike.
		client: httpClient(),
	}
	if p.MaxRetries != nil {
		o.maxRetries = *p.MaxRetries
	}
	return o, nil
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

type responsesInput struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content string `json:"content"`
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
		Input:           []responsesInput{{Type: "message", Role: "user", Content: req.Prompt}},
		Instructions:    req.System,
		MaxOutputTokens: o.cfg.MaxTokens,
		Temperature:     o.cfg.Temperature,
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

// Stream sends the request, retrying 429 and 5xx answers, and reads the
// event stream of the attempt that was accepted.
func (o *OpenAIResponses) Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error) {
	resp := &Response{Metrics: map[string]any{}}
	var key string
	if o.cfg.APIKeyEnv != "" {
		key = os.Getenv(o.cfg.APIKeyEnv)
		if key == "" {
			return resp, &Failure{Status: results.StatusSkippedUnavailable, Type: "missing_api_key",
				Message: fmt.Sprintf("environment variable %s is empty or unset; export the API key in it", o.cfg.APIKeyEnv)}
		}
	}
	body, err := o.body(req)
	if err != nil {
		return resp, err
	}
	var retryStatuses []int
	for attempt := 0; ; attempt++ {
		emit(Event{Kind: EventRequestStart})
		wait, err := o.attempt(ctx, body, key, resp, emit)
		var f *Failure
		if err == nil || !errors.As(err, &f) || wait < 0 {
			return resp, err
		}
		if attempt >= o.maxRetries {
			f.Message += fmt.Sprintf(" (after %d retries)", attempt)
			return resp, f
		}
		if wait == 0 {
			wait = jitter(o.backoff << attempt)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			// Waiting would outlive the cell: report what the server said
			// rather than a timeout of our own making.
			f.Message += fmt.Sprintf(" (retry in %s is past the cell's deadline)", wait.Round(time.Millisecond))
			return resp, f
		}
		retryStatuses = append(retryStatuses, f.HTTPStatus)
		resp.Metrics["retry_statuses"] = retryStatuses
		start := time.Now()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			resp.RetryWaitMS += time.Since(start).Milliseconds()
			return resp, ctx.Err()
		case <-t.C:
		}
		resp.RetryWaitMS += time.Since(start).Milliseconds()
		resp.Retries++
	}
}

// jitter spreads d uniformly over [d/2, 3d/2) so that cells rate-limited
// together do not retry together.
func jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(rand.Int64N(int64(d)+1))
}

// attempt sends one request. A returned wait of -1 means the failure is not
// retryable; 0 means retryable with no wait named by the server; more is the
// server's own Retry-After.
func (o *OpenAIResponses) attempt(ctx context.Context, body []byte, key string, resp *Response, emit EmitFunc) (time.Duration, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return -1, fmt.Errorf("build request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if key != "" {
		hreq.Header.Set("Authorization", "Bearer "+key)
	}
	hresp, err := o.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		if f := NetFailure(err, key); f != nil {
			return -1, f
		}
		return -1, fmt.Errorf("post %s: %w", o.url, err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode/100 != 2 {
		f := responsesHTTPFailure(hresp, key)
		if ctx.Err() != nil {
			// The body was cut by the deadline; the runner classifies that.
			return -1, ctx.Err()
		}
		if (f.Status == results.StatusRateLimited && f.Type != "insufficient_quota") || f.Type == "http_5xx" {
			return retryAfter(hresp.Header, time.Now()), f
		}
		return -1, f
	}
	err = readResponsesStream(ctx, hresp.Body, key, resp, emit)
	if err != nil && !strings.HasPrefix(hresp.Header.Get("Content-Type"), "text/event-stream") {
		var f *Failure
		if errors.As(err, &f) {
			f.Message += fmt.Sprintf(" (content-type %q, not an event stream)", hresp.Header.Get("Content-Type"))
		}
	}
	return -1, err
}

// responsesHTTPFailure classifies a non-2xx answer from the error body.
func responsesHTTPFailure(hresp *http.Response, key string) *Failure {
	raw, _ := io.ReadAll(io.LimitReader(hresp.Body, 64<<10))
	var eb struct {
		Error *responsesError `json:"error"`
	}
	msg := strings.TrimSpace(string(raw))
	var code string
	if json.Unmarshal(raw, &eb) == nil && eb.Error != nil && eb.Error.Message != "" {
		msg, code = eb.Error.Message, eb.Error.Code.String()
	}
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	if msg == "" {
		msg = hresp.Status
	}
	if code != "" {
		msg = code + ": " + msg
	}
	f := HTTPFailure(hresp.StatusCode, msg, key, nil)
	switch {
	case hresp.StatusCode == http.StatusNotFound && code != "model_not_found" && !strings.Contains(strings.ToLower(msg), "model"):
		// A 404 that names no model is a wrong base_url (Ollama answers
		// "404 page not found" when /v1 is missing): a config error to fix,
		// not a model to skip.
		f.Status, f.Type = results.StatusError, "endpoint_not_found"
		f.Message += " (is base_url right? it should end in /v1)"
	case hresp.StatusCode == http.StatusTooManyRequests && code == "insufficient_quota":
		// Out of credit: no wait will help, so it is not retried.
		f.Type = "insufficient_quota"
	}
	return f
}

// retryAfter reads how long the server asks us to wait: OpenAI's
// retry-after-ms first (finer), then Retry-After in seconds or as an HTTP
// date. It returns 0 when neither is usable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e6 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
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
	call    results.ToolCall
	args    strings.Builder
	final   *string // the complete arguments, once an event carries them
	emitted bool    // an EventToolCall was emitted for it
}

// responsesState accumulates one stream.
type responsesState struct {
	resp       *Response
	emit       EmitFunc
	text       strings.Builder
	reasoning  strings.Builder
	calls      []*responsesCall
	byItem     map[string]*responsesCall
	textItems  map[string]bool // message items whose text came as deltas
	lastCallID string          // item id of the last call, for events without one
}

func (s *responsesState) callFor(itemID string) *responsesCall {
	c := s.byItem[itemID]
	if c == nil {
		c = &responsesCall{}
		s.byItem[itemID] = c
		s.calls = append(s.calls, c)
	}
	s.lastCallID = itemID
	return c
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
		c.call.Name = it.Name
	}
	if done || it.Arguments != "" {
		if it.Arguments != "" || c.final == nil {
			a := it.Arguments
			c.final = &a
		}
	}
	if done && !c.emitted {
		c.emitted = true
		s.emit(Event{Kind: EventToolCall, Text: *c.final})
	}
}

// finish copies the accumulated output into the Response.
func (s *responsesState) finish() {
	s.resp.Text = s.text.String()
	s.resp.Reasoning = s.reasoning.String()
	s.resp.ToolCalls = nil
	for _, c := range s.calls {
		args := c.args.String()
		if c.final != nil && *c.final != "" {
			args = *c.final
		}
		tc := c.call
		tc.Arguments = RawArguments(args)
		s.resp.ToolCalls = append(s.resp.ToolCalls, tc)
	}
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
func readResponsesStream(ctx context.Context, body io.Reader, key string, resp *Response, emit EmitFunc) error {
	s := &responsesState{resp: resp, emit: emit, byItem: map[string]*responsesCall{}, textItems: map[string]bool{}}
	defer s.finish()
	sr := NewSSEReader(body)
	for {
		sev, err := sr.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			msg := "stream ended without response.completed"
			if err != io.EOF {
				msg = fmt.Sprintf("stream broke before response.completed: %v", err)
			}
			return &Failure{Status: results.StatusError, Type: "stream_truncated", Message: Scrub(msg, key), Err: err}
		}
		var ev responsesEvent
		if err := json.Unmarshal(sev.Data, &ev); err != nil {
			excerpt := string(sev.Data)
			if len(excerpt) > 200 {
				excerpt = excerpt[:200] + "..."
			}
			return &Failure{Status: results.StatusError, Type: "invalid_stream",
				Message: Scrub(fmt.Sprintf("event %q is not JSON: %s", sev.Event, excerpt), key), Err: err}
		}
		if ev.Type == "" {
			ev.Type = sev.Event
		}
		switch ev.Type {
		case "response.output_text.delta", "response.refusal.delta":
			if ev.Delta != "" {
				s.textItems[ev.ItemID] = true
				s.text.WriteString(ev.Delta)
				emit(Event{Kind: EventText, Text: ev.Delta})
			}
		case "response.output_text.done":
			// A server that sends the text whole, without deltas.
			if !s.textItems[ev.ItemID] && ev.Text != nil && *ev.Text != "" {
				s.textItems[ev.ItemID] = true
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
			emit(Event{Kind: EventToolCall, Text: ev.Delta})
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
			return streamFailure("response_failed", e, key, resp)
		case "error":
			e := ev.Error
			if e == nil {
				e = &responsesError{Code: ev.Code, Message: ev.Message}
			}
			return streamFailure("stream_error", e, key, resp)
		}
	}
}

// streamFailure classifies an error reported inside the stream. A rate limit
// announced this way is still a rate limit, but it is not retried: output may
// already have been emitted.
func streamFailure(typ string, e *responsesError, key string, resp *Response) *Failure {
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
	f.Message = Scrub(f.Message, key)
	return f
}
