package providers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"bench/internal/record/results"
)

// DefaultMaxRetries is how many times a 429, a 5xx or a reset connection is
// retried when the entry does not set max_retries.
const DefaultMaxRetries = 2

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// maxMessage bounds a failure message kept in a record.
const maxMessage = 300

// httpEndpoint is the one HTTP streaming path every HTTP kind sends its
// cells through: the request with the cell's context, the status classified
// the same way everywhere, error bodies read bounded and cleaned of secrets,
// retries of 429, 5xx and reset connections honouring Retry-After, and the
// phases of each attempt stamped for the cell's timeline.
type httpEndpoint struct {
	client     *http.Client
	secrets    Secrets
	maxRetries int
	// backoff is the first wait when a retryable answer names none; it
	// doubles per retry and is jittered by ±50%.
	backoff time.Duration
	// errorBody reads a protocol's error body into an error code (may be
	// "") and a message; nil takes the body as text.
	errorBody func(body []byte) (code, msg string)
	// refine adjusts a status failure for protocol-specific cases.
	refine func(f *Failure, code string)
}

// httpRequest is one cell's request.
type httpRequest struct {
	URL    string
	Body   []byte
	Accept string
	// Bearer is the API key sent as Authorization: Bearer, if any.
	Bearer string
	// Header holds the protocol's own headers (an API key header, a
	// version, an entry's extra headers), set after the ones above.
	Header http.Header
}

// post sends the request and returns the accepted (2xx) response, whose
// body the caller streams and closes. Anything else is a classified
// failure. A 429 or 529 (but not an exhausted quota), a 5xx and a
// connection reset before any answer are retried up to maxRetries times,
// waiting what the server asks (retry-after-ms, Retry-After in seconds or
// as a date) or a jittered back-off, never past the cell's deadline; waits
// are added to resp.RetryWaitMS and retries to resp.Retries. Every
// answer's rate-limit signals (ratelimit.go) go to the cell's Pacer, when
// it has one, which also holds the retries and may make a refusal's retry
// free; the last answer's are resp.RateLimit.
func (e *httpEndpoint) post(ctx context.Context, r Request, hr httpRequest, resp *Response, emit EmitFunc) (*httpResult, error) {
	pacer := pacerOf(ctx)
	counted := 0
	for attempt := 0; ; attempt++ {
		res, retryable, rl, err := e.attempt(ctx, r, hr, attempt, emit)
		if err == nil || rl != nil {
			resp.RateLimit = rl
		}
		if err == nil {
			if pacer != nil {
				pacer.Answered(rl)
			}
			return res, nil
		}
		var f *Failure
		if !errors.As(err, &f) {
			return nil, err
		}
		free := false
		if pacer != nil && rl.Refused() {
			// max_retries: 0 asks for none, free or not.
			free = pacer.Refused(rl) && e.maxRetries > 0
		}
		if !retryable {
			return nil, err
		}
		if !free && counted >= e.maxRetries {
			if attempt > 0 {
				f.Message += fmt.Sprintf(" (after %d retries)", attempt)
			}
			return nil, f
		}
		wait := rl.Wait()
		if wait == 0 {
			wait = jitter(backoff(e.backoff, counted))
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			// Waiting would outlive the cell: report what the server said
			// rather than a timeout of our own making.
			f.Message += fmt.Sprintf(" (retry in %s is past the cell's deadline)", wait.Round(time.Millisecond))
			return nil, f
		}
		reason := f.Type
		emit(Event{Kind: EventRetry, Text: reason, Wait: wait, RateLimit: rl})
		if resp.Metrics == nil {
			resp.Metrics = map[string]any{}
		}
		statuses, _ := resp.Metrics["retry_statuses"].([]int)
		resp.Metrics["retry_statuses"] = append(statuses, f.HTTPStatus)
		start := time.Now()
		err = sleep(ctx, pacer, wait)
		resp.RetryWaitMS += time.Since(start).Milliseconds()
		if err != nil {
			return nil, err
		}
		resp.Retries++
		if !free {
			counted++
		}
	}
}

// sleep waits d before a retry, or lets the pacer hold it.
func sleep(ctx context.Context, pacer Pacer, d time.Duration) error {
	if pacer != nil {
		return pacer.Wait(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// stream posts the request and reads the accepted answer's body with
// read, its events stamped as their bytes arrived; a context that ended
// the stream is the error, for the runner to classify.
func (e *httpEndpoint) stream(ctx context.Context, r Request, hr httpRequest, resp *Response, emit EmitFunc, read func(body io.Reader, emit EmitFunc) error) (*Response, error) {
	hres, err := e.post(ctx, r, hr, resp, emit)
	if err != nil {
		return resp, err
	}
	defer hres.Body.Close()
	err = read(hres.Body, hres.stamp(emit))
	if ctx.Err() != nil {
		return resp, ctx.Err()
	}
	return resp, err
}

// attempt sends the request once. retryable says whether the failure may be
// retried; rl is what the answer said of rate limits (nil: nothing, or no
// answer).
func (e *httpEndpoint) attempt(ctx context.Context, r Request, hr httpRequest, attempt int, emit EmitFunc) (_ *httpResult, retryable bool, rl *RateLimit, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hr.URL, bytes.NewReader(hr.Body))
	if err != nil {
		return nil, false, nil, &Failure{Status: results.StatusError, Type: "bad_request", Message: e.secrets.Clean(err.Error(), maxMessage), Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if hr.Accept != "" {
		req.Header.Set("Accept", hr.Accept)
	}
	if hr.Bearer != "" {
		req.Header.Set("Authorization", "Bearer "+hr.Bearer)
	}
	if r.TraceParent != "" {
		req.Header.Set("Traceparent", r.TraceParent)
	}
	for k, vs := range hr.Header {
		req.Header[k] = vs
	}
	ph := &phases{now: r.now}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), ph.trace()))

	emit(Event{Kind: EventRequestStart, Attempt: attempt})
	res, err := e.client.Do(req)
	ph.emit(emit)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, nil, ctx.Err()
		}
		f := NetFailure(err, e.secrets)
		if f == nil {
			return nil, false, nil, err
		}
		return nil, f.Type == results.FailConnectionReset, nil, f
	}
	rl = ParseRateLimit(res.Header, res.StatusCode, time.Now())
	conn, n := ph.stamped()
	if res.StatusCode/100 == 2 {
		if conn != nil {
			res.Body = &awaitedBody{ReadCloser: res.Body, conn: conn, req: n}
		}
		return &httpResult{Response: res, conn: conn, req: n}, false, rl, nil
	}
	if conn != nil {
		defer conn.doneAwaiting(n)
	}
	defer res.Body.Close()
	f, code := e.statusFailure(res)
	if ctx.Err() != nil {
		// The deadline cut the error body; the runner classifies that.
		return nil, false, nil, ctx.Err()
	}
	if code == "insufficient_quota" {
		// Out of credit: a 429 no wait will help, not a refusal for rate.
		rl = nil
	}
	retry := res.StatusCode >= 500 || (res.StatusCode == http.StatusTooManyRequests && code != "insufficient_quota")
	return nil, retry, rl, f
}

// statusFailure classifies a non-2xx answer from its status and body.
func (e *httpEndpoint) statusFailure(res *http.Response) (*Failure, string) {
	raw, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	code, msg := "", strings.TrimSpace(string(raw))
	if e.errorBody != nil {
		if c, m := e.errorBody(raw); m != "" {
			code, msg = c, m
		}
	}
	if msg == "" {
		msg = res.Status
	}
	if code != "" {
		msg = code + ": " + msg
	}
	f := HTTPFailure(res.StatusCode, e.secrets.Clean(msg, maxMessage), nil)
	if res.StatusCode == http.StatusNotFound && code != "model_not_found" && !strings.Contains(strings.ToLower(msg), "model") {
		// A 404 that names no model is a wrong base_url (Ollama answers
		// "404 page not found" for a missing /v1): a config error to fix,
		// not a model to skip.
		f.Status, f.Type = results.StatusError, results.FailEndpointNotFound
		f.Message += " (is base_url right?)"
	}
	if res.StatusCode == http.StatusTooManyRequests && code == "insufficient_quota" {
		// Out of credit: no wait will help, so it is not retried.
		f.Type = "insufficient_quota"
	}
	if e.refine != nil {
		e.refine(f, code)
	}
	return f, code
}

// httpResult is an accepted answer whose body the caller streams.
type httpResult struct {
	*http.Response
	// conn is the connection it arrives on, when bench dialled it, and req
	// the request's number on it (see stampedConn.awaitFirstToken).
	conn *stampedConn
	req  uint64
}

// awaitedBody ends the wait for a first token when the body is closed, for
// answers that bring none (an empty answer, a reasoning-only one).
type awaitedBody struct {
	io.ReadCloser
	conn *stampedConn
	req  uint64
}

func (b *awaitedBody) Close() error {
	b.conn.doneAwaiting(b.req)
	return b.ReadCloser.Close()
}

// stamp returns emit with every event that carries no time of its own
// stamped with the time its bytes came off the socket (see stampedConn):
// an event's time is then when it arrived, not when bench got round to
// decoding it, so decoding, a busy scheduler and the hand-over from the
// transport's goroutine stay out of ttft_ms and the token windows.
//
// Once the first token (answer text or tool call: what ttft_ms times) is
// stamped, the connection's reads stop splitting at frame ends.
func (h *httpResult) stamp(emit EmitFunc) EmitFunc {
	c := h.conn
	if c == nil {
		return emit
	}
	awaiting := true
	return func(e Event) {
		if e.At.IsZero() {
			e.At = c.readAt()
		}
		emit(e)
		if awaiting && (e.Kind == EventText && e.Text != "" || e.Kind == EventToolCall) {
			awaiting = false
			c.doneAwaiting(h.req)
		}
	}
}

// phases stamps the phases of one attempt with the cell's clock. The
// callbacks run on the transport's goroutines, so the stamps are kept under
// a lock and emitted on the provider's goroutine once Do returns.
type phases struct {
	now                    func() time.Time
	mu                     sync.Mutex
	connected, wrote, byte time.Time
	reused                 bool
	conn                   *stampedConn
	req                    uint64
}

// stamped is the connection of the attempt, if bench dialled it, and the
// request's number on it.
func (p *phases) stamped() (*stampedConn, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn, p.req
}

func (p *phases) trace() *httptrace.ClientTrace {
	stamp := func(t *time.Time) {
		now := p.now()
		p.mu.Lock()
		if t.IsZero() {
			*t = now
		}
		p.mu.Unlock()
	}
	return &httptrace.ClientTrace{
		GotConn: func(ci httptrace.GotConnInfo) {
			c := stampedOf(ci.Conn)
			if c != nil {
				// The connection serves this request alone until its body
				// is read: its reads are stamped on this cell's clock, and
				// split at frame ends until its first token.
				c.setClock(p.now)
			}
			var req uint64
			if c != nil {
				req = c.awaitFirstToken()
			}
			p.mu.Lock()
			p.reused = ci.Reused
			p.conn, p.req = c, req
			p.mu.Unlock()
			stamp(&p.connected)
		},
		WroteRequest: func(httptrace.WroteRequestInfo) { stamp(&p.wrote) },
		GotFirstResponseByte: func() {
			// The read that brought the first byte has just returned: its
			// kernel stamp is when the byte arrived, as the events' are.
			p.mu.Lock()
			c, wrote := p.conn, p.wrote
			p.mu.Unlock()
			if c != nil {
				if at := c.readAt(); !at.IsZero() && !at.Before(wrote) {
					p.mu.Lock()
					if p.byte.IsZero() {
						p.byte = at
					}
					p.mu.Unlock()
					return
				}
			}
			stamp(&p.byte)
		},
	}
}

func (p *phases) emit(emit EmitFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.connected.IsZero() {
		detail := "new"
		if p.reused {
			detail = "reused"
		}
		emit(Event{Kind: EventConnected, At: p.connected, Text: detail})
	}
	if !p.wrote.IsZero() {
		emit(Event{Kind: EventRequestWritten, At: p.wrote})
	}
	if !p.byte.IsZero() {
		emit(Event{Kind: EventFirstByte, At: p.byte})
	}
}

// jitter spreads d uniformly over [d/2, 3d/2) so that cells rate-limited
// together do not retry together.
func jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(rand.Int64N(int64(d)+1))
}

// preconnect opens n connections to the server at once with cheap GETs of
// url (with the headers h), holding every answer until all have one so that each is a
// connection of its own, then leaves them idle in the pool for the cells.
// Any answer will do (a 404 still leaves its connection open).
func (e *httpEndpoint) preconnect(ctx context.Context, url string, h http.Header, n int) error {
	var wg, held sync.WaitGroup
	errs := make([]error, n)
	held.Add(n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				errs[i] = err
				held.Done()
				return
			}
			for k, vs := range h {
				req.Header[k] = vs
			}
			res, err := e.client.Do(req)
			held.Done()
			if err != nil {
				errs[i] = err
				return
			}
			held.Wait()
			io.Copy(io.Discard, io.LimitReader(res.Body, maxErrorBody))
			res.Body.Close()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("preconnect: %s", e.secrets.Clean(err.Error(), maxMessage))
		}
	}
	return nil
}
