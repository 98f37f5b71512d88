package providers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"bench/config"
	"bench/prompts"
	"bench/results"
)

// Ollama speaks Ollama's native API (/api/chat, /api/tags, /api/pull), which
// reports the server's own timings (model load, prompt eval, decode) next to
// the client-side ones.
//
// It uses the request and message types of github.com/ollama/ollama/api but
// its own HTTP and NDJSON reading: api.Client turns every error body into a
// plain error without the status code (so 404, 401 and 429 could not be told
// apart) and ends a cut stream silently, as if it had finished.
type Ollama struct {
	cfg       config.Provider
	base      string
	secret    string
	http      *http.Client
	options   map[string]any
	keepAlive *api.Duration

	mu sync.Mutex
	// missing holds models the pre-sweep check found absent, with the reason
	// their cells are skipped.
	missing map[string]string
}

// NewOllama builds the native Ollama provider from its config entry: options
// (num_ctx, ...) with temperature, seed and max_tokens (as num_predict) on
// top, and keep_alive ("5m", "1h", "0", "-1").
func NewOllama(p config.Provider) (Provider, error) {
	o := &Ollama{
		cfg:     p,
		base:    strings.TrimRight(p.BaseURL, "/"),
		http:    httpClient(),
		options: map[string]any{},
		missing: map[string]string{},
	}
	if o.base == "" {
		o.base = config.DefaultBaseURL(config.TypeOllama)
	}
	if p.APIKeyEnv != "" {
		o.secret = os.Getenv(p.APIKeyEnv)
	}
	for k, v := range p.Options {
		o.options[k] = v
	}
	if p.Temperature != nil {
		o.options["temperature"] = *p.Temperature
	}
	if p.Seed != nil {
		o.options["seed"] = *p.Seed
	}
	if p.MaxTokens > 0 {
		o.options["num_predict"] = p.MaxTokens
	}
	if p.KeepAlive != "" {
		d, err := parseKeepAlive(p.KeepAlive)
		if err != nil {
			return nil, fmt.Errorf("provider %s: keep_alive: %w", p.Name, err)
		}
		o.keepAlive = d
	}
	return o, nil
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
		KeepAlive: o.keepAlive,
	}
	if req.System != "" {
		cr.Messages = append(cr.Messages, api.Message{Role: "system", Content: req.System})
	}
	cr.Messages = append(cr.Messages, api.Message{Role: "user", Content: req.Prompt})
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
	resp := &Response{}
	if reason, ok := o.missingReason(req.Model); ok {
		return resp, &Failure{Status: results.StatusSkippedUnavailable, Type: "model_not_found", Message: reason}
	}
	cr, err := o.chatRequest(req)
	if err != nil {
		return resp, &Failure{Status: results.StatusError, Type: "bad_request", Message: err.Error(), Err: err}
	}
	emit(Event{Kind: EventRequestStart})
	body, err := o.post(ctx, "/api/chat", cr)
	if err != nil {
		return resp, err
	}
	defer body.Close()
	err = readChat(body, emit, resp)
	if ctx.Err() != nil {
		return resp, ctx.Err()
	}
	if f := (*Failure)(nil); errors.As(err, &f) {
		f.Message = Scrub(f.Message, o.secret)
	}
	return resp, err
}

// post sends a JSON body and returns the streaming response body, or a
// classified failure: refused connection, HTTP status, or an Ollama error.
func (o *Ollama) post(ctx context.Context, path string, body any) (io.ReadCloser, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", path, err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, o.base+path, bytes.NewReader(b))
	if err != nil {
		return nil, &Failure{Status: results.StatusError, Type: "bad_request", Message: fmt.Sprintf("build request: %v", err), Err: err}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/x-ndjson")
	if o.secret != "" {
		hr.Header.Set("Authorization", "Bearer "+o.secret)
	}
	res, err := o.http.Do(hr)
	if err != nil {
		if f := NetFailure(err, o.secret); f != nil {
			return nil, f
		}
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		defer res.Body.Close()
		return nil, o.statusFailure(res)
	}
	return res.Body, nil
}

func (o *Ollama) statusFailure(res *http.Response) *Failure {
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	msg := strings.TrimSpace(string(raw))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if msg == "" {
		msg = res.Status
	}
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	f := HTTPFailure(res.StatusCode, msg, o.secret, nil)
	// Ollama answers think:true for a model without the capability with a
	// 400; name it, so the record says why rather than just http_4xx.
	if res.StatusCode == http.StatusBadRequest && strings.Contains(msg, "does not support thinking") {
		f.Type = "thinking_unsupported"
	}
	return f
}

// chatChunk is one NDJSON line of /api/chat. Metrics are pointers because
// Ollama omits zero values and a missing count is not a zero count.
type chatChunk struct {
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

// maxLine bounds one NDJSON line; a longer one is a broken stream, not a
// reason to grow memory without end.
const maxLine = 8 << 20

// readChat reads an /api/chat NDJSON stream into resp, emitting a text event
// per content delta, a reasoning event per thinking delta and a tool-call
// event per tool call. It fails on an {"error": ...} line (with the server's
// message), on a line that is not JSON, and on a stream that ends before its
// done line.
func readChat(r io.Reader, emit EmitFunc, resp *Response) error {
	br := bufio.NewReaderSize(r, 16<<10)
	var text, reasoning strings.Builder
	defer func() { resp.Text, resp.Reasoning = text.String(), reasoning.String() }()
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			var c chatChunk
			if jerr := json.Unmarshal(line, &c); jerr != nil {
				return &Failure{Status: results.StatusError, Type: "bad_stream", Message: fmt.Sprintf("stream line is not JSON: %.200q", line), Err: jerr}
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
				args, _ := json.Marshal(tc.Function.Arguments)
				if tc.Function.Arguments == nil {
					args = nil
				}
				resp.ToolCalls = append(resp.ToolCalls, results.ToolCall{Name: tc.Function.Name, Arguments: args})
				emit(Event{Kind: EventToolCall, Text: string(args)})
			}
			if c.Done {
				resp.FinishReason = c.DoneReason
				setOllamaMetrics(resp, &c)
				return nil
			}
		}
		if err == io.EOF {
			return &Failure{Status: results.StatusError, Type: "stream_truncated", Message: "stream ended before the done line"}
		}
		if err != nil {
			// A reset or a chunked body cut short: the server went away.
			return &Failure{Status: results.StatusError, Type: "stream_truncated", Message: "connection lost mid-stream: " + err.Error(), Err: err}
		}
	}
}

// readLine returns the next line without its newline; at the end of input it
// returns what is left with io.EOF.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("stream line longer than %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// setOllamaMetrics records the server's own figures from the done line.
func setOllamaMetrics(resp *Response, c *chatChunk) {
	m := map[string]any{}
	ms := func(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }
	if c.LoadDuration != nil {
		m["load_duration_ms"] = ms(*c.LoadDuration)
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
// marks the rest missing so their cells are skipped without a request. With
// warmup set it then loads each model with one untimed request, so the first
// cell's load_duration_ms measures a warm model. An unreachable server is
// reported and left to the cells, which record it themselves.
func (o *Ollama) Prepare(ctx context.Context, models []string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	have, err := o.tags(ctx)
	if err != nil {
		return fmt.Errorf("list models at %s: %w", o.base, err)
	}
	var present []string
	for _, m := range models {
		if have[canonicalModel(m)] {
			present = append(present, m)
			continue
		}
		if !o.cfg.Pull {
			o.markMissing(m, fmt.Sprintf("model %q is not on the server at %s (checked /api/tags before the sweep; set pull: true to pull it)", m, o.base))
			fmt.Fprintf(log, "%s: model %s not found on %s; its cells are skipped\n", o.cfg.Name, m, o.base)
			continue
		}
		if err := o.pull(ctx, m, log); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			o.markMissing(m, fmt.Sprintf("model %q is not on the server at %s and pulling it failed: %v", m, o.base, err))
			fmt.Fprintf(log, "%s: pull %s failed: %v; its cells are skipped\n", o.cfg.Name, m, err)
			continue
		}
		present = append(present, m)
	}
	if o.cfg.Warmup {
		for _, m := range present {
			if err := o.warmup(ctx, m, log); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				fmt.Fprintf(log, "%s: warmup %s failed: %v\n", o.cfg.Name, m, err)
			}
		}
	}
	return nil
}

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

func (o *Ollama) tags(ctx context.Context) (map[string]bool, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, o.base+"/api/tags", nil)
	if err != nil {
		return nil, err
	}
	if o.secret != "" {
		hr.Header.Set("Authorization", "Bearer "+o.secret)
	}
	res, err := o.http.Do(hr)
	if err != nil {
		if f := NetFailure(err, o.secret); f != nil {
			return nil, f
		}
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, o.statusFailure(res)
	}
	var list api.ListResponse
	if err := json.NewDecoder(io.LimitReader(res.Body, 32<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("decode /api/tags: %w", err)
	}
	have := map[string]bool{}
	for _, m := range list.Models {
		have[canonicalModel(m.Name)] = true
		have[canonicalModel(m.Model)] = true
	}
	return have, nil
}

// pull pulls a model, writing a progress line to log whenever the status
// changes or another tenth of a layer arrives.
func (o *Ollama) pull(ctx context.Context, model string, log io.Writer) error {
	stream := true
	body, err := o.post(ctx, "/api/pull", &api.PullRequest{Model: model, Stream: &stream})
	if err != nil {
		return err
	}
	defer body.Close()
	fmt.Fprintf(log, "%s: pulling %s\n", o.cfg.Name, model)
	return readPull(body, func(p api.ProgressResponse, pct int) {
		if pct >= 0 {
			fmt.Fprintf(log, "%s: pull %s: %s %d%% (%d/%d bytes)\n", o.cfg.Name, model, p.Status, pct, p.Completed, p.Total)
		} else {
			fmt.Fprintf(log, "%s: pull %s: %s\n", o.cfg.Name, model, p.Status)
		}
	})
}

// readPull reads /api/pull NDJSON progress, calling report on each status
// change and every 10% of a download (pct -1 when there is no size). It fails
// on an {"error": ...} line and on a stream that ends without "success".
func readPull(r io.Reader, report func(p api.ProgressResponse, pct int)) error {
	br := bufio.NewReaderSize(r, 16<<10)
	lastStatus, lastPct := "", -1
	for {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			var p struct {
				api.ProgressResponse
				Error string `json:"error"`
			}
			if jerr := json.Unmarshal(line, &p); jerr != nil {
				return fmt.Errorf("pull progress line is not JSON: %.200q", line)
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

// warmup loads a model with the cells' options and keep_alive (a different
// num_ctx would make Ollama reload it) through an /api/chat request with no
// messages, which loads the model without generating.
func (o *Ollama) warmup(ctx context.Context, model string, log io.Writer) error {
	stream := false
	start := time.Now()
	body, err := o.post(ctx, "/api/chat", &api.ChatRequest{
		Model: model, Messages: []api.Message{}, Stream: &stream, Options: o.options, KeepAlive: o.keepAlive,
	})
	if err != nil {
		return err
	}
	defer body.Close()
	var c chatChunk
	if err := json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&c); err != nil {
		return fmt.Errorf("decode warmup reply: %w", err)
	}
	if c.Error != "" {
		return errors.New(c.Error)
	}
	fmt.Fprintf(log, "%s: warmup %s: loaded in %d ms (untimed, not in results)\n", o.cfg.Name, model, time.Since(start).Milliseconds())
	return nil
}
