// Package faultserver is a hostile LLM server for tests: one real HTTP
// server that speaks the four protocols bench uses, with frames shaped like
// the recorded real streams, and misbehaves in the way the request's model
// name asks. It exists so every provider can be run against the same fault
// matrix (issue 15): errors, cuts, stalls, floods, malformed frames, dropped
// connections and servers that echo the caller's key.
//
// # Endpoints
//
//	POST /v1/chat/completions  OpenAI chat completions (SSE when "stream": true)
//	POST /v1/responses         OpenAI Responses (SSE when "stream": true)
//	POST /v1/messages          Anthropic Messages (SSE when "stream": true);
//	                           good enough for the real Claude Code CLI
//	POST /v1beta/models/{model}:streamGenerateContent
//	                           Gemini (SSE; :generateContent answers whole),
//	                           the model named in the path
//	POST /api/chat             Ollama native chat (NDJSON unless "stream": false)
//	POST /api/pull             Ollama pull progress (NDJSON unless "stream": false)
//	POST /api/show             Ollama model details (one JSON body)
//	GET  /api/tags             Ollama model list (lists the behaviour names)
//	GET  /api/version, /api/ps Ollama version and loaded models
//
// Any path may be prefixed with /fault/<behaviour> (see BehaviourURL), and
// any request may carry an X-Fault-Behaviour header; either picks the
// behaviour instead of the model name, which is how calls that name no model
// (/api/tags, /api/version, /api/ps) are made to misbehave. Override does
// the same per path from the test. Precedence: header, then URL prefix,
// then Override, then the model name.
//
// # Behaviours
//
// A model name is a behaviour, optionally with ":N". Ollama's ":latest" tag
// is ignored ("ok:latest" is "ok"). An unknown model gets the protocol's
// 404 model-not-found answer.
//
//	ok                    a short normal answer, "I will run `free -h` to
//	                      check memory.", in three deltas, with usage and the
//	                      protocol's terminator
//	httpNNN               HTTP status NNN (400-599) with the protocol's error
//	                      body; 429 and 503 carry Retry-After (seconds,
//	                      rounded up) and retry-after-ms (see SetRetryAfter)
//	httpNNN:N             status NNN for the first N requests of that name,
//	                      then ok (retries succeed after N)
//	stall_headers         reads the request, then never answers
//	stall_body            headers and the first delta, then holds the stream
//	                      open without another byte
//	cut                   two deltas, then the body ends cleanly with no
//	                      terminator (no [DONE], finish, done line or stop)
//	cut_frame             one delta and half of the next frame, then a clean end
//	die                   one delta, then the TCP connection is reset (RST)
//	die_headers           the connection is reset before any response byte
//	flood                 an endless fast stream of valid text deltas
//	flood:N               N text deltas, then a normal end (an answer of
//	                      6*N bytes: "flood " repeated)
//	flood_reasoning[:N]   the same with reasoning/thinking deltas
//	flood_tool[:N]        the same with tool-call argument pieces (Ollama: N
//	                      whole tool calls); a finite flood's arguments are
//	                      valid JSON, {"data":"flood flood ..."}
//	                      (on /api/pull every flood is progress lines)
//	endless_line          one text delta whose line never ends ("x" forever)
//	long_line:N           one text delta of N "x" on a single line, then a
//	                      normal end
//	comment_flood         keep-alive lines forever, before any frame: SSE
//	                      comments (": keep-alive") or blank NDJSON lines
//	comment_flood:N       N keep-alive lines, then the ok answer (go-openai
//	                      fails at 301 and above: "too many empty messages")
//	malformed             a delta, a frame whose JSON is cut short, then the
//	                      rest of the ok answer and its terminator
//	stream_error          a delta, then the protocol's mid-stream error event
//	echo_key              401 whose error message quotes the credential
//	echo_key_event        a delta, then a mid-stream error event quoting it
//	echo_key_frame        the ok answer with a delta that contains it
//	echo_key_split        the ok answer with it split across two deltas
//	echo_key_long:N       401 whose message is N bytes of filler, the key,
//	                      then 1 KiB more (the key starts at byte N of the
//	                      decoded message; N at most 16 MiB)
//	echo_key_long_event:N the same message in a mid-stream error event
//	echo_key_long_frame:N the same text as a single answer delta
//	echo_key_finish       the ok answer whose stop reason is the key:
//	                      finish_reason (chat), done_reason (Ollama),
//	                      stop_reason (Messages), and for Responses a
//	                      response.incomplete whose incomplete_details.reason
//	                      is the key
//	echo_key_args         a tool call whose arguments are {"data":"KEY"} with
//	                      every character of the key \u-escaped (a JSON
//	                      parser reads the key back)
//	echo_key_encoded:N    the ok answer with a delta that holds the key in
//	                      the encoding EncodedForms[N] names (base64 of a
//	                      blob the key sits in at each alignment, std and
//	                      URL, padded or not; hex in both cases; URL
//	                      encoding), wrapped in JSON as a credential
//	                      file's would be
//	hostile               500 whose message is HostileText: a newline and a
//	                      GitHub Actions command, terminal escapes (clear
//	                      screen, window title, OSC 52 clipboard, bell) and
//	                      an Azure Pipelines command
//
// The credential is the Authorization bearer token, the x-api-key or the
// x-goog-api-key header value (all that differ); with none, a placeholder is echoed.
//
// A request answered with one JSON body (stream false, or /api/tags,
// /api/version, /api/ps, /api/show) gets the same behaviours as a body:
// stall_body, cut and die send half of it; malformed sends half and
// garbage; flood, endless_line and long_line send a body whose string field
// never ends or is that long; comment_flood sends blank lines first;
// stream errors become a 500 (echo_key_event's quoting the key); the
// echo_key frames (and echo_key_finish and echo_key_args) put the key in
// the answer text.
//
// # Guarantees
//
// Stalls end when the client goes away or the server closes, floods stop
// when a write fails, so Close returns promptly and leaves no goroutine.
// Floods write in 32 KiB batches from a fixed frame: the server's memory
// does not grow with the stream. Every request is recorded (Requests, with
// credentials redacted) and counted by model name (Count).
//
// Layer: test peers (tests only; production code never imports it).
package faultserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Endpoint names, as recorded in Request.Endpoint and Stall.Endpoint.
const (
	EndpointChat        = "chat_completions"
	EndpointResponses   = "responses"
	EndpointMessages    = "messages"
	EndpointGemini      = "gemini"
	EndpointOllamaChat  = "ollama_chat"
	EndpointPull        = "ollama_pull"
	EndpointShow        = "ollama_show"
	EndpointTags        = "ollama_tags"
	EndpointVersion     = "ollama_version"
	EndpointPS          = "ollama_ps"
	EndpointOllamaRoot  = "ollama_root"
	EndpointUnknown     = "unknown"
	behaviourHeader     = "X-Fault-Behaviour"
	behaviourPathPrefix = "/fault/"
)

// maxBody bounds a request body; a bigger one is refused with 413.
const maxBody = 64 << 20

// maxRecordedBody is how much of each body Requests keeps.
const maxRecordedBody = 1 << 20

type endpoint struct {
	name   string
	method string
	// model says the body names a model; stream is the default of its
	// stream flag; streams says it can stream at all.
	model, stream, streams bool
}

var endpoints = map[string]endpoint{
	"/v1/chat/completions": {EndpointChat, http.MethodPost, true, false, true},
	"/v1/responses":        {EndpointResponses, http.MethodPost, true, false, true},
	"/v1/messages":         {EndpointMessages, http.MethodPost, true, false, true},
	"/api/chat":            {EndpointOllamaChat, http.MethodPost, true, true, true},
	"/api/pull":            {EndpointPull, http.MethodPost, true, true, true},
	"/api/show":            {EndpointShow, http.MethodPost, true, false, false},
	"/api/tags":            {EndpointTags, http.MethodGet, false, false, false},
	"/api/version":         {EndpointVersion, http.MethodGet, false, false, false},
	"/api/ps":              {EndpointPS, http.MethodGet, false, false, false},
}

// Request is what the server saw of one request.
type Request struct {
	Method string
	// Path is the URL path as received (a /fault/<behaviour> prefix included).
	Path     string
	Endpoint string
	// Model is the model named in the body, as sent.
	Model string
	// Behaviour is the behaviour that answered, "" when none could be chosen.
	Behaviour string
	Stream    bool
	// Header is the request's headers with credentials (Authorization,
	// X-Api-Key, Proxy-Authorization, Cookie) replaced by "[redacted]".
	Header http.Header
	// Body is the request body, cut at 1 MiB.
	Body []byte

	// credentials are SHA-256 digests of the bearer token and x-api-key:
	// printing a Request with %+v must not print a key.
	credentials []string
}

// SentCredential reports whether the request carried key as its bearer
// token or x-api-key.
func (r Request) SentCredential(key string) bool {
	return key != "" && slices.Contains(r.credentials, digestOf(key))
}

func digestOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Stall says a stalling behaviour has sent its last byte and is now holding
// the request open.
type Stall struct {
	Endpoint, Model, Behaviour string
}

// Server is a running fault server.
type Server struct {
	srv     *httptest.Server
	done    chan struct{}
	once    sync.Once
	stalled chan Stall

	mu         sync.Mutex
	requests   []Request
	counts     map[string]int
	attempts   map[string]int
	overrides  map[string]string
	models     []string
	retryAfter time.Duration
	inflight   int
	closed     *closedPort
}

// New starts a server on a loopback port. Close it when done; Start does
// that for a test.
func New() *Server {
	s := newServer()
	s.srv = httptest.NewServer(s)
	return s
}

// newServer is a Server that is not listening yet.
func newServer() *Server {
	return &Server{
		done:       make(chan struct{}),
		stalled:    make(chan Stall, 64),
		counts:     map[string]int{},
		attempts:   map[string]int{},
		overrides:  map[string]string{},
		retryAfter: time.Second,
	}
}

// Start starts a server that is closed when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := New()
	tb.Cleanup(s.Close)
	return s
}

// URL is the server's base URL, e.g. http://127.0.0.1:41234. OpenAI clients
// take URL()+"/v1", Ollama and Anthropic clients URL() itself.
func (s *Server) URL() string { return s.srv.URL }

// BehaviourURL is a base URL under which every request gets behaviour b,
// whatever model it names: URL()+"/fault/"+b. Point a client at it (append
// /v1 for OpenAI clients) to make calls that name no model misbehave.
func (s *Server) BehaviourURL(b string) string { return s.srv.URL + behaviourPathPrefix + b }

// ClosedURL is a loopback URL where nothing listens: connecting to it is
// refused. The port stays reserved (bound, not listening) until Close, so
// no other server can take it meanwhile.
func (s *Server) ClosedURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed == nil {
		s.closed = reserveClosedPort()
	}
	return s.closed.url
}

// Close releases stalled requests, drops every connection and stops the
// server. It returns once every handler has returned.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
		s.mu.Lock()
		if s.closed != nil {
			s.closed.release()
		}
		s.mu.Unlock()
	})
}

// Override makes every request to path (e.g. "/api/tags", without a
// /fault/ prefix) get behaviour b; "" removes the override.
func (s *Server) Override(path, b string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b == "" {
		delete(s.overrides, path)
		return
	}
	s.overrides[path] = b
}

// AddModels adds names to what /api/tags lists (parameterised names such as
// "flood:50000" that the built-in list lacks).
func (s *Server) AddModels(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append(s.models, names...)
}

// SetRetryAfter sets the wait that 429 and 503 answers name (default 1s):
// retry-after-ms carries it exactly, Retry-After in whole seconds, rounded up.
func (s *Server) SetRetryAfter(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.retryAfter = d
}

// Stalled receives a Stall each time a stalling behaviour has sent its last
// byte, so a test can act once the client is surely waiting. Notices beyond
// 64 unread ones are dropped.
func (s *Server) Stalled() <-chan Stall { return s.stalled }

// Requests returns the requests seen so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Count is how many requests named model (exactly as sent).
func (s *Server) Count(model string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[model]
}

// InFlight is how many requests are being answered right now.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inflight
}

// WaitIdle waits until no request is being answered (every stall released,
// every flood stopped), or ctx ends.
func (s *Server) WaitIdle(ctx context.Context) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for s.InFlight() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

func (s *Server) notifyStalled(st Stall) {
	select {
	case s.stalled <- st:
	default:
	}
}

// attempt counts one more request for a behaviour and returns the count.
func (s *Server) attempt(full string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts[full]++
	return s.attempts[full]
}

// credentials returns the bearer token and x-api-key of a request.
func credentials(h http.Header) []string {
	var out []string
	if tok, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer "); ok && tok != "" {
		out = append(out, tok)
	}
	for _, name := range []string{"X-Api-Key", "X-Goog-Api-Key"} {
		if k := h.Get(name); k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func redacted(h http.Header) http.Header {
	c := h.Clone()
	for _, k := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Proxy-Authorization", "Cookie"} {
		if _, ok := c[k]; ok {
			c[k] = []string{"[redacted]"}
		}
	}
	return c
}

// requestHead is what the server reads from a body.
type requestHead struct {
	Model         string `json:"model"`
	Name          string `json:"name"` // /api/show and /api/pull of older clients
	Stream        *bool  `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// ServeHTTP answers one request (Server is the http.Handler that New serves
// on its loopback port).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.inflight++
	retry := s.retryAfter
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}()

	path, forced := r.URL.Path, ""
	if rest, ok := strings.CutPrefix(path, behaviourPathPrefix); ok {
		forced, path, _ = strings.Cut(rest, "/")
		path = "/" + path
	}
	if h := r.Header.Get(behaviourHeader); h != "" {
		forced = h
	}
	s.mu.Lock()
	if forced == "" {
		forced = s.overrides[path]
	}
	s.mu.Unlock()

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	ep, known := endpoints[path]
	geminiModel, isGemini := geminiPath(path)
	if isGemini {
		ep, known = endpoint{EndpointGemini, http.MethodPost, true, strings.HasSuffix(path, ":streamGenerateContent"), true}, true
	}
	if !known {
		ep = endpoint{name: EndpointUnknown}
		if path == "/" {
			ep = endpoint{name: EndpointOllamaRoot, method: http.MethodGet}
		}
	}
	var head requestHead
	if ep.model && len(body) > 0 {
		_ = json.Unmarshal(body, &head) // a bad body is answered below
	}
	if head.Model == "" {
		head.Model = head.Name
	}
	if isGemini {
		head.Model = geminiModel
	}
	stream := ep.stream
	if head.Stream != nil {
		stream = *head.Stream
	}
	stream = stream && ep.streams

	creds := credentials(r.Header)
	rec := Request{Method: r.Method, Path: r.URL.Path, Endpoint: ep.name, Model: head.Model, Stream: stream,
		Header: redacted(r.Header), Body: body[:min(len(body), maxRecordedBody)]}
	for _, c := range creds {
		rec.credentials = append(rec.credentials, digestOf(c))
	}
	p := &player{s: s, w: w, r: r, rc: http.NewResponseController(w), retry: retry,
		st: Stall{Endpoint: ep.name, Model: head.Model}, key: strings.Join(creds, " ")}
	p.f.w = p
	doc, d := s.protocol(ep, head)
	p.doc = doc
	if stream {
		p.d = d
	}

	var beh behaviour
	var berr error
	switch {
	case err != nil:
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "faultserver: request body too large", http.StatusRequestEntityTooLarge)
		}
		s.record(rec)
		return // the client went away while sending
	case !known && ep.name != EndpointOllamaRoot:
		s.record(rec)
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	case r.Method != ep.method:
		s.record(rec)
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	case forced != "":
		if beh, berr = parseBehaviour(forced); berr != nil {
			s.record(rec)
			http.Error(w, "faultserver: "+berr.Error(), http.StatusBadRequest)
			return
		}
	case ep.name == EndpointOllamaRoot:
		s.record(rec)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "Ollama is running")
		return
	case !ep.model:
		beh, _ = parseBehaviour(OK)
	case head.Model == "":
		s.record(rec)
		e := statusError(http.StatusBadRequest, "")
		e.msg = "model is required"
		p.fail(e)
		return
	default:
		if beh, berr = parseBehaviour(head.Model); berr != nil {
			rec.Behaviour = ""
			s.record(rec)
			p.fail(statusError(http.StatusNotFound, head.Model))
			return
		}
	}
	rec.Behaviour = beh.full
	s.record(rec)
	p.beh, p.st.Behaviour = beh, beh.full
	p.play()
	select {
	case <-s.done:
		// Returning would end the response cleanly (an empty 200 for a
		// stall, a terminated chunked body for a flood): a server that
		// shuts down drops the connection instead.
		p.drop()
	default:
	}
}

// geminiPath reads the model of a Gemini path,
// /v1beta/models/{model}:streamGenerateContent (or :generateContent).
func geminiPath(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/v1beta/models/")
	if !ok {
		return "", false
	}
	for _, method := range []string{":streamGenerateContent", ":generateContent"} {
		if m, ok := strings.CutSuffix(rest, method); ok {
			return m, true // net/http has unescaped the path
		}
	}
	return "", false
}

func (s *Server) record(rec Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
	if rec.Model != "" {
		s.counts[rec.Model]++
	}
}

// protocol returns the JSON document and the stream dialect of an endpoint.
func (s *Server) protocol(ep endpoint, head requestHead) (document, dialect) {
	m := head.Model
	switch ep.name {
	case EndpointChat:
		c := &chat{model: m, includeUsage: head.StreamOptions != nil && head.StreamOptions.IncludeUsage}
		return c, c
	case EndpointResponses:
		r := &responses{model: m}
		return r, r
	case EndpointMessages:
		a := &anthropic{model: m}
		return a, a
	case EndpointGemini:
		g := &gemini{model: m}
		return g, g
	case EndpointOllamaChat:
		o := &ollama{model: m}
		return o, o
	case EndpointPull:
		p := &pull{}
		return p, p
	case EndpointShow:
		return showDoc(m), nil
	case EndpointVersion:
		return versionDoc(), nil
	case EndpointTags, EndpointPS:
		s.mu.Lock()
		names := append(catalogue(), s.models...)
		s.mu.Unlock()
		for i, n := range names {
			if !strings.Contains(n, ":") {
				names[i] = n + latestTag
			}
		}
		slices.Sort(names)
		names = slices.Compact(names)
		if ep.name == EndpointPS {
			names = []string{OK + latestTag}
		}
		return listDoc(names, ep.name == EndpointPS), nil
	}
	return &static{`{"error":"`, `"}`}, nil
}
