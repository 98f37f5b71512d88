package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"bench/internal/record/results"
)

// Bounds of the calls bench makes to a server outside any cell. None may
// hang a run: a server that accepts and never answers costs at most these.
const (
	// ProbeTimeout bounds a version or model listing call.
	ProbeTimeout = 10 * time.Second
	// WarmupTimeout bounds loading a model before its suite.
	WarmupTimeout = 5 * time.Minute
	// PullTimeout bounds pulling one model.
	PullTimeout = 2 * time.Hour
)

// The bounds in force; tests shorten them to see each one hold.
var (
	probeTimeout  = ProbeTimeout
	warmupTimeout = WarmupTimeout
	pullTimeout   = PullTimeout
)

// nativeRoot is the Ollama native API root of a base URL: the OpenAI
// compatible .../v1 suffix and trailing slashes removed.
func nativeRoot(baseURL string) string {
	r := strings.TrimRight(baseURL, "/")
	r = strings.TrimSuffix(r, "/v1")
	return strings.TrimRight(r, "/")
}

// traceParentKey carries a traceparent to the side calls made for it (a
// suite's warm-up names the suite's span).
type traceParentKey struct{}

func withTraceParent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return context.WithValue(ctx, traceParentKey{}, tp)
}

// sideCall makes a call outside any cell (listing, pulling, warming up) and
// returns the body of a 2xx answer; ctx must carry its bound.
func sideCall(ctx context.Context, method, url string, c creds, body any) (io.ReadCloser, error) {
	shown := StripUserinfo(url)
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %s", method, shown, c.secrets.Clean(err.Error(), maxMessage))
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if tp, _ := ctx.Value(traceParentKey{}).(string); tp != "" {
		req.Header.Set("Traceparent", tp)
	}
	res, err := sideClient.Do(req)
	if err != nil {
		if f := NetFailure(err, c.secrets); f != nil {
			if f.Status == results.StatusSkippedUnavailable {
				return nil, fmt.Errorf("%s %s: %w (%s)", method, shown, ErrUnreachable, strings.ReplaceAll(f.Type, "_", " "))
			}
			return nil, fmt.Errorf("%s %s: %s", method, shown, f.Message)
		}
		return nil, fmt.Errorf("%s %s: %s", method, shown, c.secrets.Clean(err.Error(), maxMessage))
	}
	if res.StatusCode/100 != 2 {
		defer res.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_, msg := ollamaErrorBody(raw)
		if msg == "" {
			msg = strings.TrimSpace(string(raw))
		}
		msg = c.secrets.Clean(msg, maxMessage)
		return nil, &sideError{status: res.StatusCode, msg: msg, text: fmt.Sprintf("%s %s: HTTP %d: %s", method, shown, res.StatusCode, msg)}
	}
	return res.Body, nil
}

var sideClient = httpClient()

// ErrUnreachable is a call outside a cell that found nothing at the
// server's address (connection refused, no such host). The cells find the
// same and are recorded skipped_unavailable, and the run's end says what to
// start, so a caller need not print it as it happens.
var ErrUnreachable = errors.New("nothing answers there")

// cleanError is an error whose text was cleaned of secrets, still
// wrapping the error it came from, so errors.Is sees through it (to
// ErrUnreachable) while only the cleaned text is ever shown.
type cleanError struct {
	msg string
	err error
}

func (e *cleanError) Error() string { return e.msg }
func (e *cleanError) Unwrap() error { return e.err }

// Unreachable says whether err is a call (a side call or a cell's stream)
// that found nothing at the server's address.
func Unreachable(err error) bool {
	if errors.Is(err, ErrUnreachable) {
		return true
	}
	var f *Failure
	if errors.As(err, &f) {
		return f.Status == results.StatusSkippedUnavailable && (f.Type == results.FailConnectionRefused || f.Type == results.FailHostUnreachable)
	}
	f = NetFailure(err, Secrets{})
	return f != nil && f.Status == results.StatusSkippedUnavailable
}

// sideError is a side call's non-2xx answer.
type sideError struct {
	status    int
	msg, text string
}

func (e *sideError) Error() string { return e.text }

// probeBoundKey carries a bound shorter than ProbeTimeout (WithProbeBound).
type probeBoundKey struct{}

// WithProbeBound makes the version, listing and /api/ps calls made under
// ctx wait at most d when d is shorter than ProbeTimeout: a run whose
// cells may take 2 s must not wait 10 s a call on a server that accepts
// and never answers before its first cell. The runner and the inventory
// pass the run's timeout. Pulls and loads have bounds of their own.
func WithProbeBound(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, probeBoundKey{}, d)
}

// probeBound is the bound of one probe call under ctx.
func probeBound(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(probeBoundKey{}).(time.Duration); ok && d < probeTimeout {
		return d
	}
	return probeTimeout
}

// errNoAnswer is a probe call that reached its bound: the server accepted
// and did not answer. Asking it again (the listing after the version, the
// sweep's listing after the inventory's) would only wait as long again.
var errNoAnswer = errors.New("no complete answer")

// getJSON GETs url into v within probeBound.
func getJSON(ctx context.Context, url string, c creds, v any) error {
	bound := probeBound(ctx)
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	body, err := sideCall(ctx, http.MethodGet, url, c, nil)
	if err == nil {
		defer body.Close()
		err = json.NewDecoder(io.LimitReader(body, 32<<20)).Decode(v)
		if err != nil {
			err = fmt.Errorf("GET %s: decode: %w", StripUserinfo(url), err)
		}
	}
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("GET %s: %w within %s", StripUserinfo(url), errNoAnswer, bound)
	}
	return err
}

// listModels lists the models of the Ollama server at root (/api/tags).
func listModels(ctx context.Context, root string, c creds) ([]ServerModel, error) {
	var list api.ListResponse
	if err := getJSON(ctx, root+"/api/tags", c, &list); err != nil {
		return nil, err
	}
	out := make([]ServerModel, 0, len(list.Models))
	for _, m := range list.Models {
		out = append(out, ServerModel{Name: m.Name, Size: m.Size, Digest: m.Digest, ModifiedAt: m.ModifiedAt,
			Family: m.Details.Family, ParameterSize: m.Details.ParameterSize, QuantizationLevel: m.Details.QuantizationLevel})
	}
	return out, nil
}

// probeOllama fills a probe with the server's version and models. What the
// server said is scrubbed and cut like any message: a hostile server could
// echo the key as its version or a model's name.
func probeOllama(ctx context.Context, root string, c creds, pr *Probe) {
	var v struct {
		Version string `json:"version"`
	}
	if err := getJSON(ctx, root+"/api/version", c, &v); err != nil {
		pr.Errors = append(pr.Errors, c.secrets.Clean(err.Error(), maxMessage))
		if errors.Is(err, errNoAnswer) {
			// A silent server: the listing would wait as long again.
			pr.silent = err
			return
		}
	} else {
		v.Version = c.secrets.Clean(v.Version, maxMessage)
		pr.ServerVersion = &v.Version
	}
	models, err := listModels(ctx, root, c)
	if err != nil {
		pr.Errors = append(pr.Errors, c.secrets.Clean(err.Error(), maxMessage))
		if errors.Is(err, errNoAnswer) {
			pr.silent = err
		}
		return
	}
	for i := range models {
		m := &models[i]
		for _, f := range []*string{&m.Name, &m.Digest, &m.Family, &m.ParameterSize, &m.QuantizationLevel} {
			*f = c.secrets.Clean(*f, maxMessage)
		}
	}
	pr.ServerModels = models
}

// ErrWarmupUnsupported says a server has no way to load a model without
// generating; the runner then warms up with a short request instead.
var ErrWarmupUnsupported = errors.New("the server cannot load a model without generating")

// ollamaLoad loads a model on the Ollama server at root through an
// /api/chat request with no messages, which Ollama answers once the model
// is ready, without generating. A server that has no /api/chat (an OpenAI
// compatible server that is not Ollama) gives ErrWarmupUnsupported.
func ollamaLoad(ctx context.Context, root string, c creds, model string, options map[string]any, keepAlive *api.Duration) error {
	stream := false
	ctx, cancel := context.WithTimeout(ctx, warmupTimeout)
	defer cancel()
	body, err := sideCall(ctx, http.MethodPost, root+"/api/chat", c, &api.ChatRequest{
		Model: model, Messages: []api.Message{}, Stream: &stream, Options: options, KeepAlive: keepAlive,
	})
	var se *sideError
	if errors.As(err, &se) && (se.status == http.StatusNotFound || se.status == http.StatusMethodNotAllowed) && !strings.Contains(strings.ToLower(se.msg), "model") {
		return fmt.Errorf("%w: %v", ErrWarmupUnsupported, err)
	}
	if err != nil {
		return err
	}
	defer body.Close()
	var reply ollamaChunk
	if err := json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&reply); err != nil {
		return fmt.Errorf("decode warm-up reply: %w", err)
	}
	if reply.Error != "" {
		return errors.New(reply.Error)
	}
	return nil
}

// ollamaPS names the models the Ollama server at root holds (/api/ps),
// loaded or being loaded. Only an answer of Ollama's shape is believed: a
// 200 with a JSON content type whose body is an object with a "models"
// array of objects, each naming its model ("name" or "model"). Anything
// else (another status, HTML, a catch-all route's {"status": "ok"}, a
// list of strings) is ErrNotResident: read as "no model loaded" it would
// flag every cell a cold start and leave the latency gate blind.
func ollamaPS(ctx context.Context, root string, c creds) ([]string, error) {
	url := root + "/api/ps"
	shown := StripUserinfo(url)
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %s", shown, c.secrets.Clean(err.Error(), maxMessage))
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	res, err := sideClient.Do(req)
	if err != nil {
		if f := NetFailure(err, c.secrets); f != nil {
			if f.Status == results.StatusSkippedUnavailable {
				// Down, as the other side calls say it (Unreachable).
				return nil, fmt.Errorf("GET %s: %w (%s)", shown, ErrUnreachable, strings.ReplaceAll(f.Type, "_", " "))
			}
			return nil, fmt.Errorf("GET %s: %s", shown, f.Message)
		}
		return nil, fmt.Errorf("GET %s: %s", shown, c.secrets.Clean(err.Error(), maxMessage))
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %s", shown, c.secrets.Clean(err.Error(), maxMessage))
	}
	notOllama := func(why string) error {
		return fmt.Errorf("%w: GET %s: %s", ErrNotResident, shown, c.secrets.Clean(why, maxMessage))
	}
	if res.StatusCode != http.StatusOK {
		return nil, notOllama(fmt.Sprintf("HTTP %d", res.StatusCode))
	}
	if ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); ct != "application/json" {
		return nil, notOllama(fmt.Sprintf("content type %q, not application/json", res.Header.Get("Content-Type")))
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, notOllama("not a JSON object")
	}
	var models []map[string]json.RawMessage
	if m, ok := body["models"]; !ok {
		return nil, notOllama(`no "models" in the answer`)
	} else if err := json.Unmarshal(m, &models); err != nil || models == nil {
		return nil, notOllama(`"models" is not an array of objects`)
	}
	names := make([]string, 0, len(models))
	for i, m := range models {
		var name, model string
		json.Unmarshal(m["name"], &name)
		json.Unmarshal(m["model"], &model)
		switch {
		case name != "":
			names = append(names, name)
		case model != "":
			names = append(names, model)
		default:
			return nil, notOllama(fmt.Sprintf(`models[%d] names no model ("name" or "model")`, i))
		}
	}
	return names, nil
}
