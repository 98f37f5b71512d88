package providers

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bench/internal/record/results"
)

// The one HTTP path, checked the same way for every HTTP kind: each kind is
// pointed at a server that answers its path with a scripted sequence of
// failures and then its recorded success stream.

type httpKind struct {
	typ, path, recording string
	opts                 func(baseURL string) any
}

var httpKinds = []httpKind{
	{"ollama_openai", "/v1/chat/completions", "chat/v1_chat_stream_text_usage.http", func(u string) any {
		return &ollamaOpenAIOptions{httpOptions: httpOptions{BaseURL: u + "/v1", APIKeyEnv: "BENCH_HTTP_TEST_KEY", MaxRetries: 2}}
	}},
	{"ollama", "/api/chat", "ollama/api_chat_stream_text.http", func(u string) any {
		return &ollamaOptions{httpOptions: httpOptions{BaseURL: u, APIKeyEnv: "BENCH_HTTP_TEST_KEY", MaxRetries: 2}}
	}},
	{"openai_responses", "/v1/responses", "responses/v1_responses_stream_text.http", func(u string) any {
		return &responsesOptions{httpOptions: httpOptions{BaseURL: u + "/v1", APIKeyEnv: "BENCH_HTTP_TEST_KEY", MaxRetries: 2}}
	}},
}

const httpTestKey = "sk-http-test-Zq8Lr3Vx9Kp2Wm7Tn4Yb"

// answer is one scripted reply: a status with headers and a body, a
// dropped connection (reset), or the recorded success stream (status 0).
type answer struct {
	status int
	header map[string]string
	body   string
	reset  bool
}

type scriptServer struct {
	*httptest.Server
	mu       sync.Mutex
	answers  []answer
	requests int
}

func newScriptServer(t *testing.T, k httpKind, answers ...answer) *scriptServer {
	status, header, body := loadRecording(t, k.recording)
	s := &scriptServer{answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != k.path {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		var a answer
		switch {
		case s.requests < len(s.answers):
			a = s.answers[s.requests]
		case len(s.answers) > 0 && s.answers[len(s.answers)-1].reset:
			a = answer{reset: true} // a server that keeps dropping
		}
		s.requests++
		s.mu.Unlock()
		switch {
		case a.reset:
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		case a.status != 0:
			for k, v := range a.header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(a.status)
			w.Write([]byte(a.body))
		default:
			for k, v := range a.header {
				w.Header().Set(k, v)
			}
			w.Header().Set("Content-Type", header.Get("Content-Type"))
			w.WriteHeader(status)
			w.Write(body)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptServer) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.requests }

func newHTTPKind(t *testing.T, k httpKind, url string) Provider {
	t.Setenv("BENCH_HTTP_TEST_KEY", httpTestKey)
	p := newKind(t, k.typ, k.opts(url))
	// Back-off short enough for tests when the server names no wait.
	switch p := p.(type) {
	case *OllamaOpenAI:
		p.http.backoff = time.Millisecond
	case *Ollama:
		p.http.backoff = time.Millisecond
	case *OpenAIResponses:
		p.http.backoff = time.Millisecond
	}
	return p
}

func forEachHTTPKind(t *testing.T, f func(t *testing.T, k httpKind)) {
	for _, k := range httpKinds {
		t.Run(k.typ, func(t *testing.T) { f(t, k) })
	}
}

// A 429 naming its wait, a 503 and a reset connection are retried on every
// kind; the waits asked for are the ones taken, and reported as retries.
func TestHTTPRetries(t *testing.T) {
	forEachHTTPKind(t, func(t *testing.T, k httpKind) {
		srv := newScriptServer(t, k,
			answer{status: 429, header: map[string]string{"Retry-After-Ms": "30"}, body: `{"error":{"message":"slow down"}}`},
			answer{status: 503, header: map[string]string{"Retry-After": "0.02"}, body: "busy"},
			answer{reset: true},
		)
		rec := &recorder{}
		resp, err := newHTTPKind(t, k, srv.URL).Stream(context.Background(), Request{Model: "scripted", Prompt: "x"}, rec.emit)
		// max_retries 2: the reset, third failure, is not retried again.
		var f *Failure
		if !errors.As(err, &f) || f.Type != results.FailConnectionReset || !strings.Contains(f.Message, "after 2 retries") {
			t.Fatalf("err %v, want connection_reset after 2 retries", err)
		}
		// net/http itself resends once a request whose kept-alive
		// connection died before answering, so the server may see a 4th.
		if srv.count() < 3 || srv.count() > 4 || resp.Retries != 2 {
			t.Errorf("requests %d retries %d, want 3 (or 4) and 2", srv.count(), resp.Retries)
		}
		var waits []time.Duration
		var reasons []string
		for _, e := range rec.events {
			if e.Kind == EventRetry {
				waits, reasons = append(waits, e.Wait), append(reasons, e.Text)
			}
		}
		if len(waits) != 2 || waits[0] != 30*time.Millisecond || waits[1] != 20*time.Millisecond ||
			reasons[0] != "http_429" || reasons[1] != "http_5xx" {
			t.Errorf("retries %v %v, want 30ms http_429 then 20ms http_5xx", waits, reasons)
		}
		if got := resp.Metrics["retry_statuses"]; len(got.([]int)) != 2 {
			t.Errorf("retry_statuses %v", got)
		}
	})
}

func TestHTTPRetryThenSuccess(t *testing.T) {
	forEachHTTPKind(t, func(t *testing.T, k httpKind) {
		srv := newScriptServer(t, k, answer{reset: true}, answer{status: 500, body: "oops"})
		rec := &recorder{}
		resp, err := newHTTPKind(t, k, srv.URL).Stream(context.Background(), Request{Model: "scripted", Prompt: "x"}, rec.emit)
		if err != nil || resp.Retries != 2 || resp.Text == "" {
			t.Fatalf("err %v retries %d text %q", err, resp.Retries, resp.Text)
		}
		starts := 0
		for _, e := range rec.events {
			if e.Kind == EventRequestStart {
				if e.Attempt != starts {
					t.Errorf("request start %d numbered %d", starts, e.Attempt)
				}
				starts++
			}
		}
		if starts != 3 {
			t.Errorf("%d request starts, want 3", starts)
		}
	})
}

// What is not retried: an exhausted quota, auth failures, unknown models.
func TestHTTPNotRetried(t *testing.T) {
	cases := []struct {
		name   string
		a      answer
		status string
		typ    string
	}{
		{"quota", answer{status: 429, body: `{"error":{"code":"insufficient_quota","message":"no credit"}}`}, results.StatusRateLimited, "insufficient_quota"},
		{"401", answer{status: 401, body: `{"error":{"message":"bad key"}}`}, results.StatusAuthError, "http_401"},
		{"unknown model", answer{status: 404, body: `{"error":{"message":"model \"x\" not found, try pulling it first"}}`}, results.StatusSkippedUnavailable, results.FailModelNotFound},
		{"wrong path", answer{status: 404, body: "404 page not found"}, results.StatusError, results.FailEndpointNotFound},
		{"bad request", answer{status: 400, body: `{"error":"invalid options"}`}, results.StatusError, results.FailHTTP4xx},
	}
	forEachHTTPKind(t, func(t *testing.T, k httpKind) {
		for _, c := range cases {
			srv := newScriptServer(t, k, c.a, c.a, c.a)
			_, err := newHTTPKind(t, k, srv.URL).Stream(context.Background(), Request{Model: "scripted", Prompt: "x"}, func(Event) {})
			var f *Failure
			if !errors.As(err, &f) || f.Status != c.status || f.Type != c.typ || srv.count() != 1 {
				t.Errorf("%s: err %v after %d requests, want %s/%s once", c.name, err, srv.count(), c.status, c.typ)
			}
		}
	})
}

// An error body that quotes the key, at any offset and past the cut at
// maxMessage, leaves no 8-byte piece of it in the message.
func TestHTTPErrorBodyScrubbedBeforeCut(t *testing.T) {
	forEachHTTPKind(t, func(t *testing.T, k httpKind) {
		for _, off := range []int{0, 150, maxMessage - 20, maxMessage - 5, maxMessage, maxMessage + 3} {
			body := strings.Repeat("x", off) + "Bearer " + httpTestKey + " is not valid" + strings.Repeat("y", 400)
			srv := newScriptServer(t, k, answer{status: 401, body: body})
			_, err := newHTTPKind(t, k, srv.URL).Stream(context.Background(), Request{Model: "scripted", Prompt: "x"}, func(Event) {})
			if err == nil {
				t.Fatal("no error")
			}
			if piece := secretPiece(err.Error(), httpTestKey); piece != "" {
				t.Errorf("offset %d: %q of the key is in %q", off, piece, err.Error())
			}
		}
	})
}

// secretPiece returns an 8-byte piece of secret found in text, or "".
func secretPiece(text, secret string) string {
	for i := 0; i+8 <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+8]) {
			return secret[i : i+8]
		}
	}
	return ""
}

// Each attempt's phases are stamped with the request's clock, in order:
// connected, request written, first byte.
func TestHTTPPhases(t *testing.T) {
	forEachHTTPKind(t, func(t *testing.T, k httpKind) {
		srv := newScriptServer(t, k)
		var mu sync.Mutex
		tick := time.Unix(1_800_000_000, 0)
		now := func() time.Time { mu.Lock(); defer mu.Unlock(); tick = tick.Add(time.Millisecond); return tick }
		rec := &recorder{}
		if _, err := newHTTPKind(t, k, srv.URL).Stream(context.Background(), Request{Model: "scripted", Prompt: "x", Now: now}, rec.emit); err != nil {
			t.Fatal(err)
		}
		var phases []EventKind
		var last time.Time
		for _, e := range rec.events {
			if e.Kind == EventConnected || e.Kind == EventRequestWritten || e.Kind == EventFirstByte {
				phases = append(phases, e.Kind)
				if !e.At.After(last) {
					t.Errorf("%v stamped %v, not after %v", e.Kind, e.At, last)
				}
				last = e.At
			}
		}
		if len(phases) != 3 || phases[0] != EventConnected || phases[1] != EventRequestWritten || phases[2] != EventFirstByte {
			t.Errorf("phases %v", phases)
		}
	})
}

// A wait longer than what is left of the cell is not taken.
func TestHTTPRetryPastDeadline(t *testing.T) {
	forEachHTTPKind(t, func(t *testing.T, k httpKind) {
		srv := newScriptServer(t, k, answer{status: 429, header: map[string]string{"Retry-After": "3600"}, body: "later"})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := newHTTPKind(t, k, srv.URL).Stream(ctx, Request{Model: "scripted", Prompt: "x"}, func(Event) {})
		var f *Failure
		if !errors.As(err, &f) || f.Type != "http_429" || !strings.Contains(f.Message, "past the cell's deadline") || srv.count() != 1 {
			t.Errorf("err %v after %d requests", err, srv.count())
		}
	})
}

// Preconnect leaves n connections of their own open for the cells: n cells
// in flight at once then open none.
func TestPreconnect(t *testing.T) {
	chunk, err := os.ReadFile("testdata/chat/v1_chat_stream_text_usage.http")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(chunk), "\n\n")
	var opened atomic.Int64
	release := make(chan struct{})
	var inFlight atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/version" {
			io.WriteString(w, `{"version":"0.9.6"}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if inFlight.Add(1) == 8 {
			close(release)
		}
		<-release // all 8 cells in flight at once
		io.WriteString(w, body)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	p := newKind(t, "ollama_openai", &ollamaOpenAIOptions{httpOptions: httpOptions{BaseURL: srv.URL + "/v1"}})
	if err := p.(Preconnector).Preconnect(context.Background(), 8); err != nil {
		t.Fatal(err)
	}
	if n := opened.Load(); n != 8 {
		t.Fatalf("preconnect opened %d connections, want 8", n)
	}
	var wg sync.WaitGroup
	var fresh atomic.Int64
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := p.Stream(context.Background(), Request{Model: "m", Prompt: "x"}, func(e Event) {
				if e.Kind == EventConnected && e.Text == "new" {
					fresh.Add(1)
				}
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if fresh.Load() != 0 || opened.Load() != 8 {
		t.Errorf("cells opened %d connections (server saw %d in all), want none after preconnect", fresh.Load(), opened.Load())
	}
}
