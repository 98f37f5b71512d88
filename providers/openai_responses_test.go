package providers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/prompts"
)

const testKeyEnv = "BENCH_RESPONSES_TEST_KEY"
const testKey = "sk-test-0123456789abcdefSECRET"

// step is what the scripted server does for one request.
type step struct {
	file string // a recorded response in testdata/responses
	// cutAfterDeltas > 0 drops the connection after that many delta events.
	cutAfterDeltas int
	// hang sends the headers and the first event, then nothing more.
	hang bool
}

// seenRequest is what the server received.
type seenRequest struct {
	path, auth string
	body       map[string]any
}

// replayServer answers the i-th request with the i-th step (the last step
// repeats), writing event streams one event at a time with a flush after each.
type replayServer struct {
	*httptest.Server
	t     *testing.T
	dir   string // under testdata
	steps []step
	// isDelta tells the events that count for cutAfterDeltas.
	isDelta func(event []byte) bool
	mu      sync.Mutex
	seen    []seenRequest
}

func newReplayServer(t *testing.T, steps ...step) *replayServer {
	rs := &replayServer{t: t, dir: "responses", steps: steps,
		isDelta: func(ev []byte) bool { return bytes.Contains(ev, []byte(".delta\n")) }}
	rs.Server = httptest.NewServer(http.HandlerFunc(rs.serve))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *replayServer) requests() []seenRequest {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]seenRequest(nil), rs.seen...)
}

func (rs *replayServer) serve(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		rs.t.Errorf("request body is not JSON: %v", err)
	}
	rs.mu.Lock()
	rs.seen = append(rs.seen, seenRequest{path: r.URL.Path, auth: r.Header.Get("Authorization"), body: body})
	st := rs.steps[min(len(rs.seen), len(rs.steps))-1]
	rs.mu.Unlock()

	status, header, payload := loadRecording(rs.t, filepath.Join(rs.dir, st.file))
	// Servers quote the key they rejected; play that back.
	payload = bytes.ReplaceAll(payload, []byte("{{KEY}}"), []byte(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")))
	for k, vs := range header {
		switch k {
		case "Content-Length", "Transfer-Encoding", "Date", "Connection":
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(status)
	if !strings.HasPrefix(header.Get("Content-Type"), "text/event-stream") {
		w.Write(payload)
		return
	}
	flusher := w.(http.Flusher)
	deltas := 0
	for _, ev := range bytes.SplitAfter(payload, []byte("\n\n")) {
		if len(ev) == 0 {
			continue
		}
		w.Write(ev)
		flusher.Flush()
		if st.hang {
			<-r.Context().Done()
			return
		}
		if rs.isDelta(ev) {
			deltas++
			if deltas == st.cutAfterDeltas {
				panic(http.ErrAbortHandler) // closes the connection mid-body
			}
		}
	}
}

// loadRecording parses a recorded HTTP response: status line, headers, body.
func loadRecording(t testing.TB, name string) (int, http.Header, []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	// The recordings hold the decoded body after the headers, whatever
	// Transfer-Encoding they name, so take the bytes as they are.
	body := raw[bytes.Index(raw, []byte("\r\n\r\n"))+4:]
	return resp.StatusCode, resp.Header, body
}

// recorder keeps emitted events.
type recorder struct{ events []Event }

func (r *recorder) emit(e Event) { r.events = append(r.events, e) }

func (r *recorder) kinds() []EventKind {
	var out []EventKind
	for _, e := range r.events {
		if isPhase(e.Kind) {
			continue
		}
		out = append(out, e.Kind)
	}
	return out
}

func (r *recorder) texts(k EventKind) []string {
	var out []string
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e.Text)
		}
	}
	return out
}

// newTestProvider points a provider at the server, with the key set and
// back-off short enough for tests.
func newTestProvider(t *testing.T, url string, edit func(*responsesOptions)) *OpenAIResponses {
	t.Setenv(testKeyEnv, testKey)
	opts := responsesKind{}.Options().(*responsesOptions)
	opts.BaseURL, opts.APIKeyEnv = url+"/v1/", testKeyEnv
	if edit != nil {
		edit(opts)
	}
	o := newKind(t, "openai_responses", opts).(*OpenAIResponses)
	o.http.backoff = 2 * time.Millisecond
	return o
}

var simpleReq = Request{Model: "scripted", Prompt: "How much memory is free?"}

func asFailure(t *testing.T, err error) *Failure {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v (%T), want a *Failure", err, err)
	}
	return f
}

func intp(n int) *int { return &n }

func checkUsage(t *testing.T, u Usage, in, out, reasoning *int) {
	t.Helper()
	got := []*int{u.InputTokens, u.OutputTokens, u.ReasoningTokens}
	for i, want := range []*int{in, out, reasoning} {
		switch {
		case (got[i] == nil) != (want == nil):
			t.Errorf("usage[%d] = %v, want %v", i, got[i], want)
		case got[i] != nil && *got[i] != *want:
			t.Errorf("usage[%d] = %d, want %d", i, *got[i], *want)
		}
	}
}

func TestResponsesRecordedText(t *testing.T) {
	srv := newReplayServer(t, step{file: "v1_responses_stream_text.http"})
	rec := &recorder{}
	resp, err := newTestProvider(t, srv.URL, nil).Stream(context.Background(), simpleReq, rec.emit)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if want := "I will run `free -h` to check memory."; resp.Text != want {
		t.Errorf("Text = %q, want %q", resp.Text, want)
	}
	if want := []EventKind{EventRequestStart, EventText, EventText, EventText}; !reflect.DeepEqual(rec.kinds(), want) {
		t.Errorf("event kinds = %v, want %v", rec.kinds(), want)
	}
	if want := []string{"I will run ", "`free -h`", " to check memory."}; !reflect.DeepEqual(rec.texts(EventText), want) {
		t.Errorf("text events = %q, want %q", rec.texts(EventText), want)
	}
	checkUsage(t, resp.Usage, intp(12), intp(4), intp(0))
	if c := resp.Usage.CachedInputTokens; c == nil || *c != 0 {
		t.Errorf("cached input tokens %v, want the stream's 0", c)
	}
	if resp.FinishReason != "completed" || resp.Retries != 0 || resp.RetryWaitMS != 0 || len(resp.ToolCalls) != 0 {
		t.Errorf("FinishReason %q Retries %d RetryWaitMS %d ToolCalls %v", resp.FinishReason, resp.Retries, resp.RetryWaitMS, resp.ToolCalls)
	}
	for k, want := range map[string]any{"response_id": "resp_242546", "status": "completed", "model": "scripted", "cached_input_tokens": 0} {
		if resp.Metrics[k] != want {
			t.Errorf("Metrics[%s] = %v, want %v", k, resp.Metrics[k], want)
		}
	}
	reqs := srv.requests()
	if len(reqs) != 1 || reqs[0].path != "/v1/responses" || reqs[0].auth != "Bearer "+testKey {
		t.Fatalf("server saw %+v", reqs)
	}
}

func TestResponsesRequestBody(t *testing.T) {
	srv := newReplayServer(t, step{file: "v1_responses_stream_text.http"})
	temp := 0.25
	o := newTestProvider(t, srv.URL, func(p *responsesOptions) { p.MaxTokens = 64; p.Temperature = &temp })
	req := Request{Model: "gpt-x", ThinkingLevel: "xhigh", System: "Be terse.", Prompt: "Free memory?",
		Tools: []prompts.Tool{
			{Name: "get_memory", Description: "Report memory usage", Parameters: map[string]any{"type": "object", "properties": map[string]any{"unit": map[string]any{"type": "string"}}}},
			{Name: "no_params"},
		}}
	if _, err := o.Stream(context.Background(), req, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(srv.requests()[0].body)
	want := `{"input":[{"content":"Free memory?","role":"user","type":"message"}],"instructions":"Be terse.",` +
		`"max_output_tokens":64,"model":"gpt-x","reasoning":{"effort":"xhigh"},"store":false,"stream":true,"temperature":0.25,` +
		`"tools":[{"description":"Report memory usage","name":"get_memory","parameters":{"properties":{"unit":{"type":"string"}},"type":"object"},"strict":false,"type":"function"},` +
		`{"name":"no_params","parameters":{"properties":{},"type":"object"},"strict":false,"type":"function"}]}`
	if string(got) != want {
		t.Errorf("request body\n got %s\nwant %s", got, want)
	}

	// No thinking level, no key variable (a local server): no reasoning, no
	// Authorization header, no optional knobs.
	o = newTestProvider(t, srv.URL, func(p *responsesOptions) { p.APIKeyEnv = "" })
	if _, err := o.Stream(context.Background(), simpleReq, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	seen := srv.requests()[1]
	for _, k := range []string{"reasoning", "instructions", "tools", "max_output_tokens", "temperature"} {
		if _, ok := seen.body[k]; ok {
			t.Errorf("%s sent although unset: %v", k, seen.body[k])
		}
	}
	if seen.auth != "" {
		t.Errorf("Authorization sent without api_key_env: %q", seen.auth)
	}
}

func TestResponsesToolCalls(t *testing.T) {
	tests := []struct {
		file      string
		wantCall  results.ToolCall
		wantEvent []string
		in, out   int
	}{
		{"v1_responses_stream_function_call.http", results.ToolCall{ID: "call_aem8zluu", Name: "get_memory", Arguments: json.RawMessage(`{"unit":"MB"}`)}, []string{`{"unit":"MB"}`}, 189, 2},
		// The item arrives whole, with no argument deltas: still one event.
		{"scripted_function_call_whole.http", results.ToolCall{ID: "call_9", Name: "run_shell", Arguments: json.RawMessage(`{"cmd":"df -h"}`)}, []string{`{"cmd":"df -h"}`}, 30, 6},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := newReplayServer(t, step{file: tt.file})
			rec := &recorder{}
			resp, err := newTestProvider(t, srv.URL, nil).Stream(context.Background(), simpleReq, rec.emit)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) != 1 || !reflect.DeepEqual(resp.ToolCalls[0], tt.wantCall) {
				t.Errorf("ToolCalls = %+v, want [%+v]", resp.ToolCalls, tt.wantCall)
			}
			if want := []EventKind{EventRequestStart, EventToolCall}; !reflect.DeepEqual(rec.kinds(), want) {
				t.Errorf("event kinds = %v, want %v", rec.kinds(), want)
			}
			if !reflect.DeepEqual(rec.texts(EventToolCall), tt.wantEvent) {
				t.Errorf("tool events = %q, want %q", rec.texts(EventToolCall), tt.wantEvent)
			}
			if resp.Text != "" {
				t.Errorf("Text = %q, want none", resp.Text)
			}
			checkUsage(t, resp.Usage, intp(tt.in), intp(tt.out), intp(0))
		})
	}
}

func TestResponsesReasoningBeforeText(t *testing.T) {
	srv := newReplayServer(t, step{file: "scripted_reasoning_text.http"})
	rec := &recorder{}
	resp, err := newTestProvider(t, srv.URL, nil).Stream(context.Background(), Request{Model: "scripted", ThinkingLevel: "high", Prompt: "2+2?"}, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if want := []EventKind{EventRequestStart, EventReasoning, EventReasoning, EventReasoning, EventText}; !reflect.DeepEqual(rec.kinds(), want) {
		t.Errorf("event kinds = %v, want %v", rec.kinds(), want)
	}
	if resp.Reasoning != "The user wants a number. Say 4." || resp.Text != "4" {
		t.Errorf("Reasoning %q Text %q", resp.Reasoning, resp.Text)
	}
	checkUsage(t, resp.Usage, intp(20), intp(9), intp(7))
}

func TestResponsesIncompleteIsSuccess(t *testing.T) {
	srv := newReplayServer(t, step{file: "scripted_incomplete.http"})
	resp, err := newTestProvider(t, srv.URL, nil).Stream(context.Background(), simpleReq, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "One, two, three" || resp.FinishReason != "max_output_tokens" {
		t.Errorf("Text %q FinishReason %q", resp.Text, resp.FinishReason)
	}
	if resp.Metrics["incomplete"] != true || resp.Metrics["incomplete_reason"] != "max_output_tokens" || resp.Metrics["status"] != "incomplete" {
		t.Errorf("Metrics = %v", resp.Metrics)
	}
	checkUsage(t, resp.Usage, intp(11), intp(3), intp(0))
}

// TestResponsesFailures covers every classified failure that involves no
// retry wait.
func TestResponsesFailures(t *testing.T) {
	tests := []struct {
		name        string
		steps       []step
		status, typ string
		httpStatus  int
		msgHas      []string
		text        string
		requests    int
		kinds       []EventKind
	}{
		{"error event", []step{{file: "scripted_error_event.http"}}, results.StatusError, "stream_error", 0,
			[]string{"server_error", "The server had an error"}, "Hel", 1, []EventKind{EventRequestStart, EventText}},
		{"response.failed", []step{{file: "scripted_failed.http"}}, results.StatusError, "response_failed", 0,
			[]string{"server_error: model crashed"}, "Partial", 1, []EventKind{EventRequestStart, EventText}},
		{"401", []step{{file: "scripted_401.http"}}, results.StatusAuthError, "http_401", 401,
			[]string{"invalid_api_key", "Incorrect API key provided: [redacted]"}, "", 1, []EventKind{EventRequestStart}},
		{"404 unknown model", []step{{file: "v1_responses_model_not_found.http"}}, results.StatusSkippedUnavailable, "model_not_found", 404,
			[]string{"model 'missing-model' not found"}, "", 1, []EventKind{EventRequestStart}},
		{"404 wrong path", []step{{file: "scripted_404_path.http"}}, results.StatusError, "endpoint_not_found", 404,
			[]string{"404 page not found", "base_url"}, "", 1, []EventKind{EventRequestStart}},
		{"429 out of quota is not retried", []step{{file: "scripted_429_quota.http"}}, results.StatusRateLimited, "insufficient_quota", 429,
			[]string{"insufficient_quota"}, "", 1, []EventKind{EventRequestStart}},
		{"500 retried then given up", []step{{file: "scripted_500.http"}}, results.StatusError, "http_5xx", 500,
			[]string{"500 Internal Server Error", "after 2 retries"}, "", 3, []EventKind{EventRequestStart, EventRequestStart, EventRequestStart}},
		{"cut after two deltas", []step{{file: "v1_responses_stream_text.http", cutAfterDeltas: 2}}, results.StatusError, "stream_truncated", 0,
			[]string{"stream broke"}, "I will run `free -h`", 1, []EventKind{EventRequestStart, EventText, EventText}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newReplayServer(t, tt.steps...)
			rec := &recorder{}
			resp, err := newTestProvider(t, srv.URL, nil).Stream(context.Background(), simpleReq, rec.emit)
			f := asFailure(t, err)
			if f.Status != tt.status || f.Type != tt.typ || f.HTTPStatus != tt.httpStatus {
				t.Errorf("failure = %s/%s/%d, want %s/%s/%d", f.Status, f.Type, f.HTTPStatus, tt.status, tt.typ, tt.httpStatus)
			}
			for _, s := range tt.msgHas {
				if !strings.Contains(f.Message, s) {
					t.Errorf("message %q lacks %q", f.Message, s)
				}
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(f.Message, testKey) {
				t.Errorf("the key leaked into the error: %v", err)
			}
			if resp == nil || resp.Text != tt.text {
				t.Errorf("partial Text = %+v, want %q", resp, tt.text)
			}
			if got := len(srv.requests()); got != tt.requests {
				t.Errorf("server saw %d requests, want %d", got, tt.requests)
			}
			if !reflect.DeepEqual(rec.kinds(), tt.kinds) {
				t.Errorf("event kinds = %v, want %v", rec.kinds(), tt.kinds)
			}
			if resp.Retries != tt.requests-1 {
				t.Errorf("Retries = %d, want %d", resp.Retries, tt.requests-1)
			}
		})
	}
}

func TestResponsesStreamEndsWithoutTerminalEvent(t *testing.T) {
	// A server that closes the body cleanly after the text, without
	// response.completed.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _, body := loadRecording(t, "responses/v1_responses_stream_text.http")
		w.Write(body[:bytes.Index(body, []byte("event: response.completed"))])
	}))
	defer srv.Close()
	resp, err := newTestProvider(t, srv.URL, nil).Stream(context.Background(), simpleReq, func(Event) {})
	f := asFailure(t, err)
	if f.Status != results.StatusError || f.Type != "stream_truncated" || !strings.Contains(f.Message, "without response.completed") {
		t.Errorf("failure = %+v", f)
	}
	if resp.Text != "I will run `free -h` to check memory." {
		t.Errorf("partial Text = %q", resp.Text)
	}
}

func TestResponsesRetryAfterThenSuccess(t *testing.T) {
	srv := newReplayServer(t, step{file: "scripted_429.http"}, step{file: "v1_responses_stream_text.http"})
	rec := &recorder{}
	resp, err := newTestProvider(t, srv.URL, nil).Stream(context.Background(), simpleReq, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Retries != 1 {
		t.Errorf("Retries = %d, want 1", resp.Retries)
	}
	// Retry-After: 1 was honoured (a wait can overrun, never undershoot).
	if resp.RetryWaitMS < 1000 {
		t.Errorf("RetryWaitMS = %d, want at least the 1000 the server asked for", resp.RetryWaitMS)
	}
	if want := []EventKind{EventRequestStart, EventRequestStart, EventText, EventText, EventText}; !reflect.DeepEqual(rec.kinds(), want) {
		t.Errorf("event kinds = %v, want %v", rec.kinds(), want)
	}
	if !reflect.DeepEqual(resp.Metrics["retry_statuses"], []int{429}) {
		t.Errorf("retry_statuses = %v", resp.Metrics["retry_statuses"])
	}
	if resp.Text != "I will run `free -h` to check memory." || len(srv.requests()) != 2 {
		t.Errorf("Text %q after %d requests", resp.Text, len(srv.requests()))
	}
}

func TestResponsesRetryAfterPastDeadline(t *testing.T) {
	srv := newReplayServer(t, step{file: "scripted_429.http"})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	resp, err := newTestProvider(t, srv.URL, nil).Stream(ctx, simpleReq, func(Event) {})
	f := asFailure(t, err)
	if f.Status != results.StatusRateLimited || f.Type != "http_429" || !strings.Contains(f.Message, "past the cell's deadline") {
		t.Errorf("failure = %+v", f)
	}
	if resp.Retries != 0 || resp.RetryWaitMS != 0 || len(srv.requests()) != 1 {
		t.Errorf("Retries %d RetryWaitMS %d requests %d; want no wait", resp.Retries, resp.RetryWaitMS, len(srv.requests()))
	}
}

func TestResponsesNoFirstToken(t *testing.T) {
	srv := newReplayServer(t, step{file: "v1_responses_stream_text.http", hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	rec := &recorder{}
	resp, err := newTestProvider(t, srv.URL, nil).Stream(ctx, simpleReq, rec.emit)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	var f *Failure
	if errors.As(err, &f) {
		t.Errorf("a timeout is the runner's to classify, got %+v", f)
	}
	if want := []EventKind{EventRequestStart}; !reflect.DeepEqual(rec.kinds(), want) || resp.Text != "" {
		t.Errorf("events %v text %q; want only the request start", rec.kinds(), resp.Text)
	}
}

func TestResponsesMissingKey(t *testing.T) {
	srv := newReplayServer(t, step{file: "v1_responses_stream_text.http"})
	o := newTestProvider(t, srv.URL, nil)
	t.Setenv(testKeyEnv, "")
	rec := &recorder{}
	resp, err := o.Stream(context.Background(), simpleReq, rec.emit)
	f := asFailure(t, err)
	if f.Status != results.StatusSkippedUnavailable || f.Type != "missing_api_key" || !strings.Contains(f.Message, testKeyEnv) {
		t.Errorf("failure = %+v", f)
	}
	if resp == nil || len(rec.events) != 0 || len(srv.requests()) != 0 {
		t.Errorf("resp %v, %d events, %d requests; want a response and nothing sent", resp, len(rec.events), len(srv.requests()))
	}
}

func TestResponsesConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := newTestProvider(t, url, nil).Stream(context.Background(), simpleReq, func(Event) {})
	f := asFailure(t, err)
	if f.Status != results.StatusSkippedUnavailable || f.Type != "connection_refused" || strings.Contains(f.Message, testKey) {
		t.Errorf("failure = %+v", f)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": now.Add(3 * time.Second).Format(http.TimeFormat)}, 3 * time.Second},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"negative", map[string]string{"Retry-After": "-4"}, 0},
		{"ms wins", map[string]string{"Retry-After": "2", "retry-after-ms": "150"}, 150 * time.Millisecond},
		{"bad ms falls back", map[string]string{"Retry-After": "2", "retry-after-ms": "x"}, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := retryAfter(h, now); got != tt.want {
				t.Errorf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestJitterBounds(t *testing.T) {
	for range 1000 {
		if d := jitter(time.Second); d < 500*time.Millisecond || d > 1500*time.Millisecond {
			t.Fatalf("jitter(1s) = %v, outside [0.5s, 1.5s]", d)
		}
	}
}

// BenchmarkResponsesStream measures the client side of one cell against a
// local server replaying the recorded text stream.
func BenchmarkResponsesStream(b *testing.B) {
	status, header, body := loadRecording(b, "responses/v1_responses_stream_text.http")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", header.Get("Content-Type"))
		w.WriteHeader(status)
		w.Write(body)
	}))
	defer srv.Close()
	prov := newKind(b, "openai_responses", &responsesOptions{httpOptions: httpOptions{BaseURL: srv.URL + "/v1"}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := prov.Stream(context.Background(), simpleReq, func(Event) {}); err != nil {
			b.Fatal(err)
		}
	}
}
