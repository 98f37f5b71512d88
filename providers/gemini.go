package providers

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/secrets"
)

// geminiKind is the gemini type: the Gemini API's streamGenerateContent.
type geminiKind struct{}

// geminiOptions are the keys a gemini entry takes.
type geminiOptions struct {
	httpOptions  `yaml:",inline"`
	sampling     `yaml:",inline"`
	extraHeaders `yaml:",inline"`
	// ThinkingBudgets overrides thinkingBudget per thinking level.
	ThinkingBudgets thinkingBudgets `yaml:"thinking_budgets" json:"thinking_budgets,omitempty"`
}

const geminiDefaultURL = "https://generativelanguage.googleapis.com/v1beta"

// geminiBudgets are the thinking budgets of the thinking levels
// (thinkingConfig.thinkingBudget; 24576 is the most Gemini 2.5 Flash
// takes, Pro takes up to 32768).
var geminiBudgets = thinkingBudgets{"low": 1024, "medium": 4096, "high": 16384, "xhigh": 24576}

func (geminiKind) Name() string { return "gemini" }

// GenAIProvider is OpenTelemetry's name for the Gemini API.
func (geminiKind) GenAIProvider() string { return "gcp.gemini" }

func (geminiKind) ToolProtocol() string {
	return "Gemini functionCall and functionResponse parts"
}

func (geminiKind) OwnsToolLoop() bool { return false }

func (geminiKind) Options() any { return &geminiOptions{httpOptions: defaultHTTP(geminiDefaultURL)} }

func (geminiKind) Resolve(p *config.Provider, problem func(key, msg string)) {
	o := options[geminiOptions](p)
	if o.APIKeyEnv == "" && strings.TrimRight(o.BaseURL, "/") == geminiDefaultURL {
		o.APIKeyEnv = "GEMINI_API_KEY"
	}
	if o.MaxTokens < 0 {
		problem("max_tokens", "must be positive")
	}
	o.ThinkingBudgets.check(0, problem)
	o.checkHeaders(problem)
	o.resolve(p, problem)
}

// secretSpec: the key, base_url's password and the secret headers.
func (o *geminiOptions) secretSpec() (all, own secrets.Spec) {
	return o.extraHeaders.secretSpec(o.httpOptions.secretSpec())
}

func (geminiKind) New(p *config.Provider, s Secrets) (Provider, error) {
	o := options[geminiOptions](p)
	g := &Gemini{opts: o, budgets: o.ThinkingBudgets.with(geminiBudgets), signatures: newSignatures()}
	g.secrets = o.credentials(s).secrets
	g.http = o.endpoint(g.secrets)
	g.http.errorBody = geminiErrorBody
	g.http.refine = geminiRefine
	return g, nil
}

func (geminiKind) Hint(p *config.Provider, failureType string, models []string) (string, bool) {
	return hostedHint(p, &options[geminiOptions](p).httpOptions, "the Gemini API", failureType, models)
}

// Gemini speaks the Gemini API (POST {base_url}/models/{model}:
// streamGenerateContent?alt=sse) through the one HTTP path. The key goes
// in the x-goog-api-key header, never in the URL, so no error, log or
// trace that quotes a URL can carry it. Written on net/http rather than
// on a Google SDK for the reason the other HTTP kinds are: an SDK's client
// sends and retries requests itself, outside the shared path.
type Gemini struct {
	opts       *geminiOptions
	http       *httpEndpoint
	secrets    Secrets
	budgets    thinkingBudgets
	signatures *signatures
}

// Secrets is the API key and the secret headers.
func (g *Gemini) Secrets() Secrets { return g.secrets }

// Probe records the endpoint and whether the key variable is set.
func (g *Gemini) Probe(ctx context.Context) *Probe {
	pr := &Probe{}
	g.opts.probeKey(pr)
	return pr
}

func (g *Gemini) headers() http.Header {
	h := http.Header{}
	if k := g.opts.key(); k != "" {
		h.Set("X-Goog-Api-Key", k)
	}
	return g.opts.extraHeaders.header(h)
}

// Preconnect opens n connections for the cells to come (GETs of the
// model list; any answer leaves its connection open).
func (g *Gemini) Preconnect(ctx context.Context, n int) error {
	return g.http.preconnect(ctx, g.opts.BaseURL+"/models", g.headers(), n)
}

// streamURL is where a model's stream is asked for ("models/" in the name
// is the API's own prefix, taken either way).
func (g *Gemini) streamURL(model string) string {
	return g.opts.BaseURL + "/models/" + url.PathEscape(strings.TrimPrefix(model, "models/")) + ":streamGenerateContent?alt=sse"
}

type geminiRequest struct {
	Contents          []geminiContent   `json:"contents"`
	SystemInstruction *geminiContent    `json:"systemInstruction,omitempty"`
	Tools             []geminiTool      `json:"tools,omitempty"`
	GenerationConfig  *geminiGeneration `json:"generationConfig,omitempty"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

// geminiPart is a part sent or streamed: text (a thought when Thought),
// a function call, or a function's response.
type geminiPart struct {
	Text             string          `json:"text,omitempty"`
	Thought          bool            `json:"thought,omitempty"`
	ThoughtSignature string          `json:"thoughtSignature,omitempty"`
	FunctionCall     *geminiCall     `json:"functionCall,omitempty"`
	FunctionResponse *geminiResponse `json:"functionResponse,omitempty"`
}

type geminiCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type geminiResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type geminiTool struct {
	FunctionDeclarations []geminiFunction `json:"functionDeclarations"`
}

// geminiFunction declares a tool. Its parameters go as
// parametersJsonSchema, which takes JSON Schema as the suite writes it
// (parameters takes only the API's OpenAPI subset).
type geminiFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parametersJsonSchema,omitempty"`
}

type geminiGeneration struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	Temperature     *float64        `json:"temperature,omitempty"`
	ThinkingConfig  *geminiThinking `json:"thinkingConfig,omitempty"`
}

type geminiThinking struct {
	ThinkingBudget  int  `json:"thinkingBudget"`
	IncludeThoughts bool `json:"includeThoughts"`
}

// contents is the conversation: the prompt, then the agentic turns. A
// reply goes back as a model content of its text and functionCall parts
// (each with the thought signature it came with, which Gemini 3 checks);
// the responses that answer it are functionResponse parts of one user
// content, {"result": text} (or {"error": text}), named by their call.
func (g *Gemini) contents(req Request) []geminiContent {
	cs := []geminiContent{{Role: "user", Parts: []geminiPart{{Text: req.Prompt}}}}
	user := func(p geminiPart) {
		if last := &cs[len(cs)-1]; last.Role == "user" {
			last.Parts = append(last.Parts, p)
			return
		}
		cs = append(cs, geminiContent{Role: "user", Parts: []geminiPart{p}})
	}
	type call struct{ id, name string }
	var pending []call
	for _, m := range req.Messages {
		switch m.Role {
		case RoleAssistant:
			mc := geminiContent{Role: "model"}
			if m.Text != "" {
				mc.Parts = append(mc.Parts, geminiPart{Text: m.Text})
			}
			pending = pending[:0]
			for _, c := range m.ToolCalls {
				pending = append(pending, call{c.ID, c.Name})
				mc.Parts = append(mc.Parts, geminiPart{
					FunctionCall:     &geminiCall{ID: g.signatures.apiID(c.ID), Name: c.Name, Args: objectArguments(c.Arguments)},
					ThoughtSignature: g.signatures.of(c.ID),
				})
			}
			if len(mc.Parts) == 0 {
				mc.Parts = []geminiPart{{Text: "(no answer)"}}
			}
			cs = append(cs, mc)
		case RoleTool:
			c := call{m.CallID, m.Name}
			if i := slices.IndexFunc(pending, func(p call) bool { return m.CallID != "" && p.id == m.CallID }); i >= 0 {
				c, pending = pending[i], slices.Delete(pending, i, i+1)
			} else if len(pending) > 0 && m.CallID == "" {
				c, pending = pending[0], pending[1:]
			}
			key := "result"
			if m.IsError {
				key = "error"
			}
			user(geminiPart{FunctionResponse: &geminiResponse{ID: g.signatures.apiID(c.id), Name: cmp.Or(c.name, m.Name), Response: map[string]any{key: m.Text}}})
		default:
			user(geminiPart{Text: m.Text})
		}
	}
	return cs
}

func (g *Gemini) body(req Request) ([]byte, error) {
	gr := geminiRequest{Contents: g.contents(req)}
	if req.System != "" {
		gr.SystemInstruction = &geminiContent{Parts: []geminiPart{{Text: req.System}}}
	}
	gen := geminiGeneration{MaxOutputTokens: cmp.Or(req.MaxTokens, g.opts.MaxTokens), Temperature: g.opts.Temperature}
	if req.ThinkingLevel != "" {
		budget, ok := g.budgets[req.ThinkingLevel]
		if !ok {
			return nil, &Failure{Status: results.StatusError, Type: "bad_request", Message: fmt.Sprintf("no thinking budget for level %q", req.ThinkingLevel)}
		}
		gen.ThinkingConfig = &geminiThinking{ThinkingBudget: budget, IncludeThoughts: true}
	}
	if gen != (geminiGeneration{}) {
		gr.GenerationConfig = &gen
	}
	if len(req.Tools) > 0 {
		var fns []geminiFunction
		for _, t := range req.Tools {
			fns = append(fns, geminiFunction{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
		gr.Tools = []geminiTool{{FunctionDeclarations: fns}}
	}
	b, err := json.Marshal(gr)
	if err != nil {
		return nil, &Failure{Status: results.StatusError, Type: "bad_request", Message: err.Error(), Err: err}
	}
	return b, nil
}

// Stream sends the request through the HTTP path and reads the accepted
// attempt's event stream.
func (g *Gemini) Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error) {
	resp := newResponse(req)
	if err := g.opts.missingKey(); err != nil {
		return resp, err
	}
	body, err := g.body(req)
	if err != nil {
		return resp, err
	}
	return g.http.stream(ctx, req, httpRequest{URL: g.streamURL(req.Model), Body: body, Accept: "text/event-stream", Header: g.headers()}, resp, emit,
		func(body io.Reader, emit EmitFunc) error { return g.readStream(body, resp, emit) })
}

// geminiError is Google's error object: {"code", "message", "status",
// "details": [{"reason"}]}.
type geminiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []struct {
		Reason string `json:"reason"`
	} `json:"details"`
}

// code is the error's most specific name: a detail's reason
// (API_KEY_INVALID), else its status (NOT_FOUND, RESOURCE_EXHAUSTED).
func (e *geminiError) code() string {
	for _, d := range e.Details {
		if d.Reason != "" {
			return d.Reason
		}
	}
	return e.Status
}

func geminiErrorBody(raw []byte) (code, msg string) {
	var eb struct {
		Error *geminiError `json:"error"`
	}
	// Some of Google's front ends answer with a list of one error.
	if json.Unmarshal(raw, &eb) != nil || eb.Error == nil {
		var list []struct {
			Error *geminiError `json:"error"`
		}
		if json.Unmarshal(raw, &list) != nil || len(list) == 0 || list[0].Error == nil {
			return "", ""
		}
		eb.Error = list[0].Error
	}
	return eb.Error.code(), eb.Error.Message
}

// geminiRefine: the Gemini API refuses a wrong key with 400
// INVALID_ARGUMENT, reason API_KEY_INVALID: an auth error, as a 401 is.
func geminiRefine(f *Failure, code string) {
	if code == "API_KEY_INVALID" {
		f.Status, f.Type = results.StatusAuthError, fmt.Sprintf("http_%d", f.HTTPStatus)
	}
}

// geminiChunk is what bench reads of one streamed GenerateContentResponse.
type geminiChunk struct {
	Candidates []struct {
		Content struct {
			Parts []geminiPart `json:"parts"`
		} `json:"content"`
		FinishReason  string `json:"finishReason"`
		FinishMessage string `json:"finishMessage"`
		SafetyRatings []struct {
			Category    string `json:"category"`
			Probability string `json:"probability"`
			Blocked     bool   `json:"blocked"`
		} `json:"safetyRatings"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason        string `json:"blockReason"`
		BlockReasonMessage string `json:"blockReasonMessage"`
	} `json:"promptFeedback"`
	UsageMetadata *struct {
		PromptTokenCount        *int `json:"promptTokenCount"`
		CandidatesTokenCount    *int `json:"candidatesTokenCount"`
		ThoughtsTokenCount      *int `json:"thoughtsTokenCount"`
		CachedContentTokenCount *int `json:"cachedContentTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string       `json:"modelVersion"`
	ResponseID   string       `json:"responseId"`
	Error        *geminiError `json:"error"`
}

// geminiFiltered are the finish reasons that say the answer was blocked
// by a filter (content_filtered); MALFORMED_FUNCTION_CALL and its kin say
// the model's call was not one (invalid_tool_call).
var (
	geminiFiltered = []string{"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "LANGUAGE",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR"}
	geminiBadCall = []string{"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"}
)

// readStream reads the stream's events (each a whole
// GenerateContentResponse) until the body ends. The API sends no
// terminator: a stream whose candidate never gave a finishReason (and no
// block) was cut. A thought part is reasoning, a functionCall part a
// whole tool call (parallel calls are several parts), usageMetadata the
// counts so far (the last one stands).
func (g *Gemini) readStream(body io.Reader, resp *Response, emit EmitFunc) error {
	limit := resp.keepLimit()
	text, reasoning, tools := newCapped(limit), newCapped(limit), newToolBudget(limit)
	resp.Metrics = map[string]any{}
	var finish string
	var fail *Failure
	defer func() {
		setOutput(resp, text, reasoning)
		tools.report(resp)
	}()
	sr := newSSEReaderCap(body, limit)
	defer sr.release()
	sr.reuse = true
	for {
		sev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return streamBroke(err, g.secrets)
		}
		var ch geminiChunk
		if err := json.Unmarshal(sev.Data, &ch); err != nil {
			return &Failure{Status: results.StatusError, Type: "invalid_stream",
				Message: g.secrets.Clean(fmt.Sprintf("event is not JSON: %s", sev.Data), maxMessage), Err: err}
		}
		if e := ch.Error; e != nil {
			f := &Failure{Status: results.StatusError, Type: results.FailStreamError, Message: g.secrets.Clean(strings.TrimPrefix(e.code()+": "+e.Message, ": "), maxMessage)}
			if e.Code == http.StatusTooManyRequests || e.Status == "RESOURCE_EXHAUSTED" {
				f.Status = results.StatusRateLimited
			}
			return f
		}
		if ch.ModelVersion != "" {
			resp.Metrics["model_version"] = ch.ModelVersion
		}
		if ch.ResponseID != "" {
			resp.Metrics["response_id"] = ch.ResponseID
		}
		if u := ch.UsageMetadata; u != nil {
			resp.Usage.InputTokens = u.PromptTokenCount
			resp.Usage.CachedInputTokens = u.CachedContentTokenCount
			resp.Usage.ReasoningTokens = u.ThoughtsTokenCount
			resp.Usage.OutputTokens = nil
			if u.CandidatesTokenCount != nil || u.ThoughtsTokenCount != nil {
				// Bench counts reasoning inside the output; Gemini apart.
				resp.Usage.OutputTokens = sumCounts(u.CandidatesTokenCount, u.ThoughtsTokenCount)
			}
		}
		if pf := ch.PromptFeedback; pf != nil && pf.BlockReason != "" {
			finish = pf.BlockReason
			fail = &Failure{Status: results.StatusError, Type: "prompt_blocked",
				Message: strings.TrimSuffix("prompt blocked: "+pf.BlockReason+": "+pf.BlockReasonMessage, ": ")}
		}
		if len(ch.Candidates) == 0 {
			continue
		}
		c := &ch.Candidates[0] // bench asks for one candidate
		for i := range c.Content.Parts {
			p := &c.Content.Parts[i]
			switch {
			case p.FunctionCall != nil:
				if !tools.admit() {
					emit(Event{Kind: EventToolCall, Text: p.FunctionCall.Name, Call: -1})
					continue
				}
				id := g.signatures.keep(p.FunctionCall.ID, p.ThoughtSignature)
				args := "{}"
				if len(p.FunctionCall.Args) > 0 {
					args = string(p.FunctionCall.Args)
				}
				resp.ToolCalls = append(resp.ToolCalls, results.ToolCall{ID: id, Name: claudeTruncate(p.FunctionCall.Name, maxToolName),
					Arguments: results.Arguments(tools.keep(args))})
				emit(Event{Kind: EventToolCall, Text: args, Call: len(resp.ToolCalls) - 1})
			case p.Thought:
				if p.Text != "" {
					reasoning.WriteString(p.Text)
					emit(Event{Kind: EventReasoning, Text: p.Text})
				}
			case p.Text != "":
				text.WriteString(p.Text)
				emit(Event{Kind: EventText, Text: p.Text})
			}
		}
		if c.FinishReason == "" {
			continue
		}
		finish = c.FinishReason
		switch {
		case slices.Contains(geminiFiltered, finish):
			var blocked []string
			for _, r := range c.SafetyRatings {
				if r.Blocked {
					blocked = append(blocked, r.Category+" ("+r.Probability+")")
				}
			}
			msg := "answer blocked: finishReason " + finish
			if len(blocked) > 0 {
				msg += ": " + strings.Join(blocked, ", ")
			}
			fail = &Failure{Status: results.StatusError, Type: "content_filtered", Message: msg}
		case slices.Contains(geminiBadCall, finish):
			fail = &Failure{Status: results.StatusError, Type: "invalid_tool_call", Message: strings.TrimSuffix("finishReason "+finish+": "+c.FinishMessage, ": ")}
		}
	}
	if finish == "" {
		return &Failure{Status: results.StatusError, Type: results.FailStreamTruncated, Message: "stream ended without a finishReason"}
	}
	resp.FinishReason = finish
	if fail != nil {
		fail.Message = g.secrets.Clean(fail.Message, maxMessage)
		return fail
	}
	return nil
}

// signatures keeps the thought signatures of the function calls a Gemini
// provider streamed, until the next turn of the same task sends each call
// back with its own (Gemini 3 refuses a call sent back without it). A
// call the API gave no id gets one of bench's ("gemini_call_<n>", unique
// for the provider), by which its signature is found and which is not
// sent to the API. Bounded: the oldest are forgotten past maxSignatures.
type signatures struct {
	mu    sync.Mutex
	sig   map[string]string
	order []string
	n     atomic.Uint64
}

const (
	maxSignatures   = 4096
	geminiIDPrefix  = "gemini_call_"
	maxSignatureLen = 64 << 10
)

func newSignatures() *signatures { return &signatures{sig: map[string]string{}} }

// keep records a streamed call's signature and returns the call's id: the
// API's, or a new one of bench's.
func (s *signatures) keep(apiID, signature string) string {
	id := apiID
	if id == "" {
		id = fmt.Sprintf("%s%d", geminiIDPrefix, s.n.Add(1))
	}
	if signature == "" || len(signature) > maxSignatureLen {
		return id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sig[id]; !ok {
		s.order = append(s.order, id)
	}
	s.sig[id] = signature
	for len(s.order) > maxSignatures {
		delete(s.sig, s.order[0])
		s.order = s.order[1:]
	}
	return id
}

// of returns a call's signature, "" when none is kept. It stays kept:
// every later turn of the task sends the call back again.
func (s *signatures) of(id string) string {
	if id == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sig[id]
}

// apiID is the id a call is sent back with: the API's own, none for one
// of bench's.
func (s *signatures) apiID(id string) string {
	if strings.HasPrefix(id, geminiIDPrefix) {
		return ""
	}
	return id
}
