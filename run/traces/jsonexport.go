package traces

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// newJSONClient is OTLP/HTTP with the JSON encoding (http/json): the Go
// SDK's HTTP client sends protobuf only, so bench posts OTLP/JSON itself,
// encoded straight from its span records (jsonenc.go). It takes the
// endpoint and headers from the traces: block or the standard variables,
// as the SDK's client would.
func newJSONClient(e Export) *jsonClient {
	getenv := e.getenv
	u := ""
	switch {
	case e.Endpoint != "":
		u = httpTracesURL(e.Endpoint)
	case getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		u = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	case getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		u = strings.TrimSuffix(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces"
	default:
		u = "http://localhost:4318/v1/traces"
	}
	headers := e.Headers
	if headers == nil {
		headers = parseHeaders(getenv("OTEL_EXPORTER_OTLP_HEADERS"))
		for k, v := range parseHeaders(getenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS")) {
			headers[k] = v
		}
	}
	return &jsonClient{url: u, headers: headers, timeout: e.Timeout, hc: &http.Client{}}
}

type jsonClient struct {
	url     string
	headers map[string]string
	timeout time.Duration
	hc      *http.Client
}

func (c *jsonClient) stop() { c.hc.CloseIdleConnections() }

// post sends one ExportTraceServiceRequest: head, the batch's Span objects
// and tail. The body is a copy made for the request: the transport may
// still be reading it after the response has come (http.RoundTripper's
// contract), while the batch's buffer goes back to be filled again.
func (c *jsonClient) post(ctx context.Context, head, spans, tail []byte) error {
	body := make([]byte, 0, len(head)+len(spans)+len(tail))
	body = append(append(append(body, head...), spans...), tail...)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("otlp http/json: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("otlp http/json: %w", err)
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("otlp http/json: %s: %s", res.Status, bytes.TrimSpace(msg))
	}
	return nil
}
