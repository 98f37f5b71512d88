package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"

	"bench/internal/record/results"
)

// HTTPFailure classifies an HTTP error status the same way for every
// HTTP-based provider: 401/403 auth_error, 404 skipped_unavailable
// (model_not_found), 429 rate_limited (http_429), 529 rate_limited
// (http_529: Anthropic's overloaded, a refusal for rate as its SDKs treat
// it), other 5xx error (http_5xx), other 4xx error (http_4xx). msg must
// already be clean of secrets.
func HTTPFailure(status int, msg string, err error) *Failure {
	f := &Failure{HTTPStatus: status, Message: msg, Err: err}
	switch {
	case status == 401 || status == 403:
		f.Status, f.Type = results.StatusAuthError, fmt.Sprintf("http_%d", status)
	case status == 404:
		f.Status, f.Type = results.StatusSkippedUnavailable, results.FailModelNotFound
	case status == 429:
		f.Status, f.Type = results.StatusRateLimited, results.FailHTTP429
	case status == StatusOverloaded:
		f.Status, f.Type = results.StatusRateLimited, results.FailHTTP529
	case status >= 500:
		f.Status, f.Type = results.StatusError, results.FailHTTP5xx
	default:
		f.Status, f.Type = results.StatusError, results.FailHTTP4xx
	}
	return f
}

// NetFailure classifies a transport error: nothing listening or no such
// host is skipped_unavailable (the server is not there, which is not the
// model's fault); a connection the server reset or dropped is
// connection_reset; anything else is an error. It returns nil for context
// errors, which the runner classifies itself.
func NetFailure(err error, secrets Secrets) *Failure {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	// net/http shows a URL's password as ***, but keeps the user: the URL
	// is shown without either.
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = StripUserinfo(ue.URL)
	}
	msg := secrets.Clean(err.Error(), maxMessage)
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Failure{Status: results.StatusSkippedUnavailable, Type: results.FailConnectionRefused, Message: msg, Err: err}
	case errors.As(err, &dnsErr), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return &Failure{Status: results.StatusSkippedUnavailable, Type: results.FailHostUnreachable, Message: msg, Err: err}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// A server that died mid-request: its connection went, not a bug.
		return &Failure{Status: results.StatusError, Type: results.FailConnectionReset, Message: msg, Err: err}
	}
	return &Failure{Status: results.StatusError, Type: results.FailException, Message: msg, Err: err}
}

// replayable marks every request as safe to resend, so the transport retries
// it once on a fresh connection when a kept-alive one turns out to be dead
// before any response byte (a restarted or killed server). Without it a POST
// on a stale connection fails with EOF, and a dead server would be recorded
// as an exception instead of skipped_unavailable. A nil-valued header entry
// marks the request without sending anything (see net/http.Transport).
type replayable struct{ base http.RoundTripper }

func (t replayable) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.GetBody != nil { // the body can be sent again
		req = req.Clone(req.Context())
		req.Header["X-Idempotency-Key"] = nil
	}
	return t.base.RoundTrip(req)
}

// resetMidStream says a stream broke because the server reset or dropped
// the connection (it died): a connection failure, where a body that ends
// early but cleanly is a truncated stream.
func resetMidStream(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
