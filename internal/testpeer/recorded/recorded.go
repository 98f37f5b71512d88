// Package recorded replays real HTTP exchanges recorded by other projects'
// test suites (SDK and library cassettes), for the provider kinds whose
// APIs cannot be reached from here: Anthropic's Messages API, OpenAI's
// chat completions as OpenAI, OpenRouter and others serve them, and the
// Gemini API. The recordings are kept in testdata byte for byte as their
// projects hold them, with their licences and provenance
// (testdata/README.md); this package reads the three formats they come in
// and serves them from a real HTTP server, an event stream one event at a
// time with a flush after each, as the API sent it.
//
// Formats:
//
//   - httprr (tmc/langchaingo): "httprr trace v1", then for each exchange a
//     line "<request bytes> <response bytes>" and the raw HTTP/1.1 request
//     and response as Go's net/http writes and reads them.
//   - VCR YAML (pydantic-ai): interactions of request and response, the
//     response body as a string or as parsed_body (re-encoded as JSON).
//   - chunk files (vercel/ai): one stream event's JSON per line, framed
//     here as the protocol frames it (see Framing).
//
// Layer: test peers (tests only; production code never imports it).
package recorded

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
)

//go:embed testdata
var files embed.FS

// Exchange is one recorded request and the answer it got.
type Exchange struct {
	// Method and URL of the recorded request; RequestBody as sent.
	Method, URL string
	RequestBody []byte
	// Status, Header and Body of the recorded answer.
	Status int
	Header http.Header
	Body   []byte
}

// Stream reports whether the answer is an event stream.
func (e Exchange) Stream() bool {
	return strings.HasPrefix(e.Header.Get("Content-Type"), "text/event-stream")
}

// Raw returns a recording's bytes as kept in testdata.
func Raw(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := files.ReadFile("testdata/" + name)
	if err != nil {
		tb.Fatalf("recording %s: %v", name, err)
	}
	return b
}

// Load reads the exchanges of an httprr file or a VCR cassette, by its
// name under testdata ("langchaingo/X.httprr", "pydantic-ai/Y.yaml").
func Load(tb testing.TB, name string) []Exchange {
	tb.Helper()
	raw := Raw(tb, name)
	var ex []Exchange
	var err error
	switch {
	case strings.HasSuffix(name, ".httprr"):
		ex, err = parseHTTPRR(raw)
	case strings.HasSuffix(name, ".yaml"):
		ex, err = parseVCR(raw)
	default:
		err = fmt.Errorf("not an httprr file or a cassette")
	}
	if err != nil {
		tb.Fatalf("recording %s: %v", name, err)
	}
	if len(ex) == 0 {
		tb.Fatalf("recording %s holds no exchange", name)
	}
	return ex
}

// One returns the only (or the last) exchange of a recording that went to
// a URL containing path: cassettes may hold an auth exchange first.
func One(tb testing.TB, name, path string) Exchange {
	tb.Helper()
	var found []Exchange
	for _, e := range Load(tb, name) {
		if strings.Contains(e.URL, path) {
			found = append(found, e)
		}
	}
	if len(found) == 0 {
		tb.Fatalf("recording %s has no exchange with %s", name, path)
	}
	return found[len(found)-1]
}

func parseHTTPRR(raw []byte) ([]Exchange, error) {
	const magic = "httprr trace v1\n"
	if !bytes.HasPrefix(raw, []byte(magic)) {
		return nil, fmt.Errorf("no httprr header")
	}
	rest := raw[len(magic):]
	var out []Exchange
	for len(rest) > 0 {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return nil, fmt.Errorf("exchange %d: no length line", len(out)+1)
		}
		var nreq, nresp int
		if _, err := fmt.Sscanf(string(rest[:nl]), "%d %d", &nreq, &nresp); err != nil {
			return nil, fmt.Errorf("exchange %d: length line %q: %v", len(out)+1, rest[:nl], err)
		}
		rest = rest[nl+1:]
		if nreq+nresp > len(rest) {
			return nil, fmt.Errorf("exchange %d: lengths %d+%d past the file's end (%d left)", len(out)+1, nreq, nresp, len(rest))
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(rest[:nreq])))
		if err != nil {
			return nil, fmt.Errorf("exchange %d: request: %v", len(out)+1, err)
		}
		reqBody, _ := io.ReadAll(req.Body)
		res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rest[nreq:nreq+nresp])), req)
		if err != nil {
			return nil, fmt.Errorf("exchange %d: response: %v", len(out)+1, err)
		}
		body, err := io.ReadAll(res.Body)
		if err != nil {
			return nil, fmt.Errorf("exchange %d: response body: %v", len(out)+1, err)
		}
		out = append(out, Exchange{Method: req.Method, URL: req.URL.String(), RequestBody: reqBody,
			Status: res.StatusCode, Header: res.Header, Body: body})
		rest = rest[nreq+nresp:]
	}
	return out, nil
}

// vcr is what is read of a pydantic-ai cassette.
type vcr struct {
	Interactions []struct {
		Request struct {
			Method     string    `yaml:"method"`
			URI        string    `yaml:"uri"`
			Body       string    `yaml:"body"`
			ParsedBody yaml.Node `yaml:"parsed_body"`
		} `yaml:"request"`
		Response struct {
			Headers map[string][]string `yaml:"headers"`
			Body    struct {
				String *string `yaml:"string"`
			} `yaml:"body"`
			ParsedBody yaml.Node `yaml:"parsed_body"`
			Status     struct {
				Code int `yaml:"code"`
			} `yaml:"status"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

func parseVCR(raw []byte) ([]Exchange, error) {
	var c vcr
	if err := yaml.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	var out []Exchange
	for i, it := range c.Interactions {
		e := Exchange{Method: it.Request.Method, URL: it.Request.URI, RequestBody: []byte(it.Request.Body),
			Status: it.Response.Status.Code, Header: http.Header{}}
		if it.Request.ParsedBody.Kind != 0 {
			b, err := nodeJSON(&it.Request.ParsedBody)
			if err != nil {
				return nil, fmt.Errorf("interaction %d: request parsed_body: %v", i+1, err)
			}
			e.RequestBody = b
		}
		for k, vs := range it.Response.Headers {
			for _, v := range vs {
				e.Header.Add(k, v)
			}
		}
		switch {
		case it.Response.Body.String != nil:
			e.Body = []byte(*it.Response.Body.String)
		case it.Response.ParsedBody.Kind != 0:
			b, err := nodeJSON(&it.Response.ParsedBody)
			if err != nil {
				return nil, fmt.Errorf("interaction %d: response parsed_body: %v", i+1, err)
			}
			e.Body = b
		}
		out = append(out, e)
	}
	return out, nil
}

// nodeJSON re-encodes a YAML value as JSON (pydantic-ai stores JSON
// bodies parsed, as YAML).
func nodeJSON(n *yaml.Node) ([]byte, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Framing is how a chunk file's lines are framed as a stream.
type Framing int

const (
	// Messages frames each line as Anthropic's API does:
	// "event: <type>\ndata: <line>\n\n".
	Messages Framing = iota
	// Gemini frames each line as streamGenerateContent?alt=sse does:
	// "data: <line>\r\n\r\n".
	Gemini
)

// Chunks reads a vercel/ai chunk file as the event stream it was recorded
// from: status 200, Content-Type text/event-stream, each line one event.
func Chunks(tb testing.TB, name string, f Framing) Exchange {
	tb.Helper()
	var body bytes.Buffer
	for i, line := range bytes.Split(bytes.TrimRight(Raw(tb, name), "\n"), []byte("\n")) {
		switch f {
		case Messages:
			var head struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(line, &head); err != nil || head.Type == "" {
				tb.Fatalf("recording %s:%d: not an event with a type: %v", name, i+1, err)
			}
			fmt.Fprintf(&body, "event: %s\ndata: %s\n\n", head.Type, line)
		case Gemini:
			fmt.Fprintf(&body, "data: %s\r\n\r\n", line)
		}
	}
	return Exchange{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body.Bytes()}
}

// ErrorBody reads a recorded JSON error body whose error.code is its HTTP
// status (Google's {"error": {"code", "message", "status"}}).
func ErrorBody(tb testing.TB, name string) Exchange {
	tb.Helper()
	raw := Raw(tb, name)
	var e struct {
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code == 0 {
		tb.Fatalf("recording %s: no error.code: %v", name, err)
	}
	return Exchange{Status: e.Error.Code, Header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}}, Body: raw}
}

// AsEvent is a recorded non-streamed answer served as the one event of a
// stream (a Gemini stream's events are whole GenerateContentResponse
// objects, so a recorded generateContent answer is a one-event stream).
func AsEvent(e Exchange) Exchange {
	e.Header = http.Header{"Content-Type": {"text/event-stream"}}
	e.Body = append(append([]byte("data: "), bytes.TrimSpace(e.Body)...), "\r\n\r\n"...)
	return e
}

// Request is what the server received.
type Request struct {
	Method string
	// Path and Query of the URL as received.
	Path, Query string
	Header      http.Header
	Body        []byte
}

// JSON decodes the request body into a map (nil when it is not JSON).
func (r Request) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Server answers each request with the exchange its picker chooses.
type Server struct {
	*httptest.Server
	pick func(Request) Exchange
	mu   sync.Mutex
	seen []Request
}

// Serve starts a server answering every request with pick's exchange; it
// is closed when the test ends.
func Serve(tb testing.TB, pick func(Request) Exchange) *Server {
	tb.Helper()
	s := &Server{pick: pick}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// Requests returns what the server received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.seen...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.seen = append(s.seen, req)
	s.mu.Unlock()
	Write(w, s.pick(req))
}

// Write sends a recorded answer: its headers (but those of the recorded
// connection: length, encoding, date), its status, and its body, an
// event stream one event at a time with a flush after each.
func Write(w http.ResponseWriter, e Exchange) {
	for k, vs := range e.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Transfer-Encoding", "Content-Encoding", "Date", "Connection":
			continue
		}
		w.Header()[http.CanonicalHeaderKey(k)] = vs
	}
	w.WriteHeader(e.Status)
	if !e.Stream() {
		w.Write(e.Body)
		return
	}
	fl, _ := w.(http.Flusher)
	for _, ev := range SplitEvents(e.Body) {
		w.Write(ev)
		if fl != nil {
			fl.Flush()
		}
	}
}

// SplitEvents cuts an event stream after each blank line (LF or CRLF
// ends), keeping every byte.
func SplitEvents(body []byte) [][]byte {
	var out [][]byte
	for len(body) > 0 {
		i, n := bytes.Index(body, []byte("\n\n")), 2
		if j := bytes.Index(body, []byte("\r\n\r\n")); j >= 0 && (i < 0 || j < i) {
			i, n = j, 4
		}
		if i < 0 {
			out = append(out, body)
			break
		}
		out = append(out, body[:i+n])
		body = body[i+n:]
	}
	return out
}
