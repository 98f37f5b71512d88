package providers

import (
	"bench/results"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
)

// HTTPFailure classifies an HTTP error status the same way for every
// HTTP-based provider: 401/403 auth_error, 404 skipped_unavailable
// (model_not_found), 429 rate_limited (http_429), 5xx error (http_5xx), other
// 4xx error (http_4xx). The message is scrubbed of secret.
func HTTPFailure(status int, msg, secret string, err error) *Failure {
	f := &Failure{HTTPStatus: status, Message: Scrub(msg, secret), Err: err}
	switch {
	case status == 401 || status == 403:
		f.Status, f.Type = results.StatusAuthError, fmt.Sprintf("http_%d", status)
	case status == 404:
		f.Status, f.Type = results.StatusSkippedUnavailable, "model_not_found"
	case status == 429:
		f.Status, f.Type = results.StatusRateLimited, "http_429"
	case status >= 500:
		f.Status, f.Type = results.StatusError, "http_5xx"
	default:
		f.Status, f.Type = results.StatusError, "http_4xx"
	}
	return f
}

// NetFailure classifies a transport error that happened before any response:
// nothing listening or no such host is skipped_unavailable (the server is not
// there, which is not the model's fault); anything else is an error. It
// returns nil for context errors, which the runner classifies itself.
func NetFailure(err error, secret string) *Failure {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	msg := Scrub(err.Error(), secret)
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Failure{Status: results.StatusSkippedUnavailable, Type: "connection_refused", Message: msg, Err: err}
	case errors.As(err, &dnsErr), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return &Failure{Status: results.StatusSkippedUnavailable, Type: "host_unreachable", Message: msg, Err: err}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return &Failure{Status: results.StatusError, Type: "connection_reset", Message: msg, Err: err}
	}
	return &Failure{Status: results.StatusError, Type: "exception", Message: msg, Err: err}
}

// Scrub removes a secret from a message that may echo it (servers sometimes
// quote the key they rejected).
func Scrub(msg, secret string) string {
	if secret == "" || len(secret) < 4 {
		return msg
	}
	return strings.ReplaceAll(msg, secret, "[redacted]")
}

// httpClient is the client every HTTP provider uses. It has no timeout of its
// own: the cell's context bounds the whole stream.
func httpClient() *http.Client { return &http.Client{Transport: replayable{http.DefaultTransport}} }

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
