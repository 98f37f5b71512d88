package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"bench/config"
	"bench/internal/record/results"
	"bench/prompts"
)

// ollamaKind is the ollama type: Ollama's native API.
type ollamaKind struct{}

// ollamaOptions are the keys an ollama entry takes.
type ollamaOptions struct {
	httpOptions `yaml:",inline"`
	sampling    `yaml:",inline"`
	Seed        *int `yaml:"seed" json:"seed,omitempty"`
	// Options are Ollama's model options (num_ctx, ...), sent as they are.
	Options map[string]any `yaml:"options" json:"options,omitempty"`
	// KeepAlive is how long the server keeps a model loaded ("5m", "-1").
	KeepAlive string `yaml:"keep_alive" json:"keep_alive,omitempty"`
	// Pull pulls models the server lacks before the sweep.
	Pull bool `yaml:"pull" json:"pull,omitempty"`

	keepAlive *api.Duration
}

func (ollamaKind) Name() string { return "ollama" }

func (ollamaKind) GenAIProvider() string { return "ollama" }

func (ollamaKind) ToolProtocol() string { return "Ollama /api/chat tool_calls and tool messages" }

func (ollamaKind) OwnsToolLoop() bool { return false }

func (ollamaKind) Options() any {
	return &ollamaOptions{httpOptions: defaultHTTP("http://127.0.0.1:11434")}
}

func (ollamaKind) Resolve(p *config.Provider, problem func(key, msg string)) {
	o := options[ollamaOptions](p)
	o.resolve(p, problem, "ollama")
	if o.KeepAlive != "" {
		d, err := parseKeepAlive(o.KeepAlive)
		if err != nil {
			problem("keep_alive", err.Error())
		}
		o.keepAlive = d
	}
}

func (ollamaKind) New(p *config.Provider, s Secrets) (Provider, error) {
	o := options[ollamaOptions](p)
	pr := &Ollama{
		name:    p.Name,
		opts:    o,
		base:    nativeRoot(o.BaseURL),
		side:    o.credentials(s),
		options: map[string]any{},
		missing: map[string]string{},
	}
	pr.secrets = pr.side.secrets
	pr.http = o.endpoint(pr.secrets)
	pr.http.errorBody = ollamaErrorBody
	pr.http.refine = func(f *Failure, _ string) {
		// Ollama answers think:true for a model without the capability with
		// a 400; name it, so the record says why rather than just http_4xx.
		if f.HTTPStatus == http.StatusBadRequest && strings.Contains(f.Message, "does not support thinking") {
			f.Type = "thinking_unsupported"
		}
	}
	for k, v := range o.Options {
		pr.options[k] = v
	}
	if o.Temperature != nil {
		pr.options["temperature"] = *o.Temperature
	}
	if o.Seed != nil {
		pr.options["seed"] = *o.Seed
	}
	if o.MaxTokens > 0 {
		pr.options["num_predict"] = o.MaxTokens
	}
	return pr, nil
}

func (ollamaKind) Hint(p *config.Provider, failureType string, models []string) (string, bool) {
	return ollamaHint(p, options[ollamaOptions](p).BaseURL, failureType, models)
}

// Ollama speaks Ollama's native API (/api/chat, /api/tags, /api/pull), which
// reports the server's own timings (model load, prompt eval, decode) next to
// the client-side ones.
//
// It uses the request and message types of github.com/ollama/ollama/api but
// its own HTTP and NDJSON reading: api.Client turns every error body into a
// plain error without the status code (so 404, 401 and 429 could not be told
// apart) and ends a cut stream silently, as if it had finished.
type Ollama struct {
	name    string
	opts    *ollamaOptions
	base    string
	secrets Secrets
	// side is the key and secrets of the calls beside the stream.
	side    creds
	http    *httpEndpoint
	options map[string]any

	mu sync.Mutex
	// missing holds models the pre-sweep check found absent, with the reason
	// their cells are skipped.
	missing map[string]string
	// models are the server's models as Probe found them (nil: not probed).
	models []ServerModel
	// silent is Probe's call that got no answer within its bound (nil:
	// the server answered, or was not probed).
	silent error
}

// Secrets is the API key, if one is configured.
func (o *Ollama) Secrets() Secrets { return o.secrets }

// Probe asks the server for its version and models, and keeps the models
// for Prepare, so a run lists them once; a server that did not answer is
// kept too, so Prepare does not wait on it a second time.
func (o *Ollama) Probe(ctx context.Context) *Probe {
	pr := &Probe{}
	o.opts.probeKey(pr)
	probeOllama(ctx, o.base, o.side, pr)
	o.mu.Lock()
	if pr.ServerModels != nil {
		o.models = pr.ServerModels
	}
	o.silent = pr.silent
	o.mu.Unlock()
	return pr
}

// parseKeepAlive accepts what Ollama accepts: a duration string or a number
// of seconds (negative keeps the model loaded forever).
func parseKeepAlive(s string) (*api.Duration, error) {
	raw := strconv.Quote(s)
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		raw = s
	}
	var d api.Duration
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return nil, fmt.Errorf("%q is not a duration (use e.g. 5m, 1h, 0 or -1)", s)
	}
	return &d, nil
}

// chatRequest builds the /api/chat body for one cell.
func (o *Ollama) chatRequest(req Request) (*api.ChatRequest, error) {
	stream := true
	cr := &api.ChatRequest{
		Model:     req.Model,
		Stream:    &stream,
		Options:   o.options,
		KeepAlive: o.opts.keepAlive,
	}
	if req.MaxTokens > 0 {
		// The prompt's own cap, over the entry's: a copy, as the map is shared.
		cr.Options = maps.Clone(o.options)
		cr.Options["num_predict"] = req.MaxTokens
	}
	if req.System != "" {
		cr.Messages = append(cr.Messages, api.Message{Role: "system", Content: req.System})
	}
	cr.Messages = append(cr.Messages, api.Message{Role: "user", Content: req.Prompt})
	cr.Messages = append(cr.Messages, ollamaMessages(req.Messages)...)
	// Ollama 0.9.6 takes think as a boolean: any level asks for thinking;
	// no level leaves it unset, so the model's default applies.
	if req.ThinkingLevel != "" {
		think := true
		cr.Think = &think
	}
	for _, t := range req.Tools {
		tool, err := ollamaTool(t)
		if err != nil {
			return nil, err
		}
		cr.Tools = append(cr.Tools, tool)
	}
	return cr, nil
}

// ollamaMessages are the agentic turns as /api/chat takes them: a reply
// with its tool_calls (arguments as an object; the API has no call ids),
// then one "tool" message per result, naming its tool.
func ollamaMessages(ms []Message) []api.Message {
	out := make([]api.Message, 0, len(ms))
	for _, m := range ms {
		switch m.Role {
		case RoleAssistant:
			am := api.Message{Role: "assistant", Content: m.Text}
			for _, c := range m.ToolCalls {
				args := api.ToolCallFunctionArguments{}
				// A call whose arguments were not an object goes back
				// without them: the API takes only an object.
				_ = json.Unmarshal(c.Arguments, &args)
				am.ToolCalls = append(am.ToolCalls, api.ToolCall{Function: api.ToolCallFunction{Name: c.Name, Arguments: args}})
			}
			out = append(out, am)
		case RoleTool:
			out = append(out, api.Message{Role: "tool", Content: m.Text, ToolName: m.Name})
		default:
			out = append(out, api.Message{Role: "user", Content: m.Text})
		}
	}
	return out
}

func ollamaTool(t prompts.Tool) (api.Tool, error) {
	tool := api.Tool{Type: "function", Function: api.ToolFunction{Name: t.Name, Description: t.Description}}
	params := t.Parameters
	if params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	b, err := json.Marshal(params)
	if err != nil {
		return tool, fmt.Errorf("tool %s: parameters: %w", t.Name, err)
	}
	if err := json.Unmarshal(b, &tool.Function.Parameters); err != nil {
		return tool, fmt.Errorf("tool %s: parameters do not fit Ollama's tool schema: %w", t.Name, err)
	}
	return tool, nil
}

// Stream sends one streaming /api/chat request. Models the pre-sweep check
// found missing are skipped without a request.
func (o *Ollama) Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error) {
	resp := newResponse(req)
	if reason, ok := o.missingReason(req.Model); ok {
		return resp, &Failure{Status: results.StatusSkippedUnavailable, Type: results.FailModelNotFound, Message: reason}
	}
	cr, err := o.chatRequest(req)
	if err != nil {
		return resp, &Failure{Status: results.StatusError, Type: "bad_request", Message: err.Error(), Err: err}
	}
	body, err := json.Marshal(cr)
	if err != nil {
		return resp, fmt.Errorf("encode /api/chat request: %w", err)
	}
	hres, err := o.http.post(ctx, req, httpRequest{URL: o.base + "/api/chat", Body: body, Accept: "application/x-ndjson", Bearer: o.side.key}, resp, emit)
	if err != nil {
		return resp, err
	}
	defer hres.Body.Close()
	err = readChat(hres.Body, hres.stamp(emit), resp)
	if ctx.Err() != nil {
		return resp, ctx.Err()
	}
	if f := (*Failure)(nil); errors.As(err, &f) {
		f.Message = o.secrets.Clean(f.Message, maxMessage)
	}
	return resp, err
}

// ollamaErrorBody reads Ollama's {"error": "text"} body, or the OpenAI
// form a proxy in front of it may answer with.
func ollamaErrorBody(raw []byte) (code, msg string) { return chatErrorBody(raw) }

// ollamaChunk is one NDJSON line of /api/chat. Metrics are pointers because
// Ollama omits zero values and a missing count is not a zero count.
type ollamaChunk struct {
	Message            api.Message `json:"message"`
	Done               bool        `json:"done"`
	DoneReason         string      `json:"done_reason"`
	TotalDuration      *int64      `json:"total_duration"`
	LoadDuration       *int64      `json:"load_duration"`
	PromptEvalCount    *int        `json:"prompt_eval_count"`
	PromptEvalDuration *int64      `json:"prompt_eval_duration"`
	EvalCount          *int        `json:"eval_count"`
	EvalDuration       *int64      `json:"eval_duration"`
	Error              string      `json:"error"`
}

// readChat reads an /api/chat NDJSON stream into resp, emitting a text event
// per content delta, a reasoning event per thinking delta and a tool-call
// event per tool call. It fails on an {"error": ...} line (with the server's
// message), on a line that is not JSON, and on a stream that ends before its
// done line.
func readChat(r io.Reader, emit EmitFunc, resp *Response) error {
	// Everything kept is capped while it streams (see capped), and lines
	// are bounded (see lineReader).
	limit := resp.keepLimit()
	lr := newLineReader(r, 16<<10, limit)
	text, reasoning, tools := newCapped(limit), newCapped(limit), newToolBudget(limit)
	defer func() { setOutput(resp, text, reasoning); tools.report(resp) }()
	for {
		line, err := lr.next()
		if len(bytes.TrimSpace(line)) > 0 {
			var c ollamaChunk
			if jerr := json.Unmarshal(line, &c); jerr != nil {
				if err == io.EOF {
					// Half a line, then the end: cut, as the SSE readers say.
					return &Failure{Status: results.StatusError, Type: results.FailStreamTruncated, Message: "stream cut inside a line", Err: jerr}
				}
				// The whole line: Stream scrubs it, then cuts it.
				return &Failure{Status: results.StatusError, Type: "invalid_stream", Message: "stream line is not JSON: " + string(line), Err: jerr}
			}
			if c.Error != "" {
				return &Failure{Status: results.StatusError, Type: "stream_error", Message: c.Error}
			}
			if c.Message.Thinking != "" {
				reasoning.WriteString(c.Message.Thinking)
				emit(Event{Kind: EventReasoning, Text: c.Message.Thinking})
			}
			if c.Message.Content != "" {
				text.WriteString(c.Message.Content)
				emit(Event{Kind: EventText, Text: c.Message.Content})
			}
			for _, tc := range c.Message.ToolCalls {
				args := results.EmptyArguments
				if len(tc.Function.Arguments) > 0 {
					b, _ := json.Marshal(tc.Function.Arguments)
					args = results.Arguments(string(b))
				}
				if !tools.admit() {
					// Past MaxToolCalls: still output, not kept.
					emit(Event{Kind: EventToolCall, Text: string(args), Call: -1})
					continue
				}
				args = results.Arguments(tools.keep(string(args)))
				resp.ToolCalls = append(resp.ToolCalls, results.ToolCall{Name: claudeTruncate(tc.Function.Name, maxToolName), Arguments: args})
				emit(Event{Kind: EventToolCall, Text: string(args), Call: len(resp.ToolCalls) - 1})
			}
			if c.Done {
				resp.FinishReason = c.DoneReason
				setOllamaMetrics(resp, &c)
				return nil
			}
		}
		switch {
		case err == io.EOF:
			return &Failure{Status: results.StatusError, Type: "stream_truncated", Message: "stream ended before the done line"}
		case errors.Is(err, errLineTooLong):
			return &Failure{Status: results.StatusError, Type: "stream_truncated", Message: "stream " + err.Error(), Err: err}
		case err != nil:
			// A reset (the server went away: a connection failure) or a
			// chunked body cut short.
			typ := results.FailStreamTruncated
			if resetMidStream(err) {
				typ = results.FailConnectionReset
			}
			return &Failure{Status: results.StatusError, Type: typ, Message: "connection lost mid-stream: " + err.Error(), Err: err}
		}
	}
}

// setOllamaMetrics records the server's own figures from the done line.
func setOllamaMetrics(resp *Response, c *ollamaChunk) {
	m := map[string]any{}
	ms := func(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }
	if c.LoadDuration != nil {
		m["load_duration_ms"] = ms(*c.LoadDuration)
		d := time.Duration(*c.LoadDuration)
		resp.Load = &d
	}
	if c.TotalDuration != nil {
		m["total_duration_ms"] = ms(*c.TotalDuration)
	}
	if c.PromptEvalCount != nil {
		m["prompt_eval_count"] = *c.PromptEvalCount
		n := *c.PromptEvalCount
		resp.Usage.InputTokens = &n
	}
	if c.PromptEvalDuration != nil {
		m["prompt_eval_ms"] = ms(*c.PromptEvalDuration)
	}
	if c.EvalCount != nil {
		m["eval_count"] = *c.EvalCount
		n := *c.EvalCount
		resp.Usage.OutputTokens = &n
	}
	if c.EvalDuration != nil {
		m["eval_ms"] = ms(*c.EvalDuration)
		if c.EvalCount != nil && *c.EvalDuration > 0 {
			m["decode_tokens_per_s"] = math.Round(float64(*c.EvalCount)/(float64(*c.EvalDuration)/1e9)*100) / 100
		}
	}
	// Server-side time to first token: loading the model plus evaluating the
	// prompt, before the first decoded token.
	if c.LoadDuration != nil || c.PromptEvalDuration != nil {
		var ns int64
		if c.LoadDuration != nil {
			ns += *c.LoadDuration
		}
		if c.PromptEvalDuration != nil {
			ns += *c.PromptEvalDuration
		}
		m["server_ttft_ms"] = ms(ns)
	}
	if c.DoneReason != "" {
		m["done_reason"] = c.DoneReason
	}
	resp.Metrics = m
}

func (o *Ollama) missingReason(model string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r, ok := o.missing[model]
	return r, ok
}

// Prepare runs once before the sweep: it lists the server's models
// (/api/tags), pulls the missing ones when pull is set (progress to log), and
// marks the rest missing so their cells are skipped without a request. An
// unreachable server is reported and left to the cells, which record it
// themselves. (Loading each model is the runner's warm-up, per suite.)
func (o *Ollama) Prepare(ctx context.Context, models []string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	// What the server says (pull statuses, errors) is echoed to the log:
	// scrubbed and cut like every message.
	log = &scrubWriter{w: log, secrets: o.secrets}
	have, err := o.serverModels(ctx)
	if err != nil {
		return &cleanError{msg: o.secrets.Clean(fmt.Sprintf("list models at %s: %v", StripUserinfo(o.base), err), maxMessage), err: err}
	}
	for _, m := range models {
		if have[canonicalModel(m)] {
			continue
		}
		if !o.opts.Pull {
			o.markMissing(m, fmt.Sprintf("model %q is not on the server at %s (checked /api/tags before the sweep; set pull: true to pull it)", m, StripUserinfo(o.base)))
			fmt.Fprintf(log, "%s: model %s not found on %s; its cells are skipped\n", o.name, m, StripUserinfo(o.base))
			continue
		}
		if err := o.pull(ctx, m, log); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			o.markMissing(m, fmt.Sprintf("model %q is not on the server at %s and pulling it failed: %v", m, StripUserinfo(o.base), err))
			fmt.Fprintf(log, "%s: pull %s failed: %v; its cells are skipped\n", o.name, m, err)
			continue
		}
	}
	return nil
}

// Pulls says the entry pulls the models its server lacks (pull: true).
func (o *Ollama) Pulls() bool { return o.opts.Pull }

func (o *Ollama) markMissing(model, reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.missing[model] = reason
}

// canonicalModel names a model as /api/tags does: an untagged name means the
// "latest" tag.
func canonicalModel(name string) string {
	if i := strings.LastIndex(name, "/"); !strings.Contains(name[i+1:], ":") {
		return name + ":latest"
	}
	return name
}

// serverModels returns the names the server has (canonical and as
// listed), from the probe when there was one, else from /api/tags.
func (o *Ollama) serverModels(ctx context.Context) (map[string]bool, error) {
	o.mu.Lock()
	models, silent := o.models, o.silent
	o.mu.Unlock()
	if silent != nil {
		return nil, silent
	}
	if models == nil {
		var err error
		if models, err = listModels(ctx, o.base, o.side); err != nil {
			return nil, err
		}
	}
	have := map[string]bool{}
	for _, m := range models {
		have[canonicalModel(m.Name)] = true
	}
	return have, nil
}

// pull pulls a model, writing a progress line to log whenever the status
// changes or another tenth of a layer arrives.
func (o *Ollama) pull(ctx context.Context, model string, log io.Writer) error {
	stream := true
	ctx, cancel := context.WithTimeout(ctx, pullTimeout)
	defer cancel()
	body, err := sideCall(ctx, http.MethodPost, o.base+"/api/pull", o.side, &api.PullRequest{Model: model, Stream: &stream})
	if err != nil {
		return err
	}
	defer body.Close()
	fmt.Fprintf(log, "%s: pulling %s\n", o.name, model)
	return readPull(body, func(p api.ProgressResponse, pct int) {
		if pct >= 0 {
			fmt.Fprintf(log, "%s: pull %s: %s %d%% (%d/%d bytes)\n", o.name, model, p.Status, pct, p.Completed, p.Total)
		} else {
			fmt.Fprintf(log, "%s: pull %s: %s\n", o.name, model, p.Status)
		}
	})
}

// readPull reads /api/pull NDJSON progress, calling report on each status
// change and every 10% of a download (pct -1 when there is no size). It fails
// on an {"error": ...} line and on a stream that ends without "success".
func readPull(r io.Reader, report func(p api.ProgressResponse, pct int)) error {
	lr := newLineReader(r, 16<<10, 0)
	lastStatus, lastPct := "", -1
	for {
		line, err := lr.next()
		if len(bytes.TrimSpace(line)) > 0 {
			var p struct {
				api.ProgressResponse
				Error string `json:"error"`
			}
			if jerr := json.Unmarshal(line, &p); jerr != nil {
				return fmt.Errorf("pull progress line is not JSON: %s", line) // Prepare scrubs, then cuts
			}
			if p.Error != "" {
				return errors.New(p.Error)
			}
			pct := -1
			if p.Total > 0 {
				pct = int(min(100, max(0, p.Completed*100/p.Total)))
			}
			if p.Status != lastStatus || (pct >= 0 && pct/10 != lastPct/10) {
				report(p.ProgressResponse, pct)
				lastStatus, lastPct = p.Status, pct
			}
			if p.Status == "success" {
				return nil
			}
		}
		if err == io.EOF {
			return errors.New("pull stream ended before success")
		}
		if err != nil {
			return fmt.Errorf("read pull progress: %w", err)
		}
	}
}

// Warmup loads the request's model with the cells' options and keep_alive
// (a different num_ctx would make Ollama reload it), without generating.
// A model the pre-sweep check found missing is not asked for.
func (o *Ollama) Warmup(ctx context.Context, req Request) error {
	if reason, ok := o.missingReason(req.Model); ok {
		return errors.New(reason)
	}
	return ollamaLoad(withTraceParent(ctx, req.TraceParent), o.base, o.side, req.Model, o.options, o.opts.keepAlive)
}

// Preconnect opens n connections to the server for the cells to come.
func (o *Ollama) Preconnect(ctx context.Context, n int) error {
	return o.http.preconnect(ctx, o.base+"/api/version", bearer(o.side.key), n)
}
