package traces

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// newJSONClient is OTLP/HTTP with the JSON encoding (http/json): the Go
// SDK's HTTP client sends protobuf only, so bench posts the same messages
// as OTLP/JSON itself. It takes the endpoint and headers from the traces:
// block or the standard variables, as the SDK's client would.
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

func (c *jsonClient) Start(context.Context) error { return nil }

func (c *jsonClient) Stop(context.Context) error {
	c.hc.CloseIdleConnections()
	return nil
}

// UploadTraces posts one ExportTraceServiceRequest as OTLP/JSON.
func (c *jsonClient) UploadTraces(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	if err := decodeSpans(rs); err != nil {
		return fmt.Errorf("otlp http/json: %w", err)
	}
	body, err := marshalJSON(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	if err != nil {
		return fmt.Errorf("otlp http/json: %w", err)
	}
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

// decodeSpans turns the encoded spans a batch's ScopeSpans carries (see
// otlpenc.go) into its Spans: protojson writes fields, not bytes.
func decodeSpans(rs []*tracepb.ResourceSpans) error {
	for _, r := range rs {
		for _, ss := range r.ScopeSpans {
			m := ss.ProtoReflect()
			raw := m.GetUnknown()
			if len(raw) == 0 {
				continue
			}
			m.SetUnknown(nil)
			if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(raw, ss); err != nil {
				return err
			}
		}
	}
	return nil
}

// idField is an id as protojson writes it (base64); OTLP/JSON wants hex.
var idField = regexp.MustCompile(`"(traceId|spanId|parentSpanId)":\s*"([A-Za-z0-9+/=]*)"`)

// marshalJSON is the OTLP/JSON encoding: protobuf's JSON mapping with
// enums as integers and trace and span ids as hex rather than base64, as
// the OTLP specification fixes.
func marshalJSON(req *coltracepb.ExportTraceServiceRequest) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(req)
	if err != nil {
		return nil, err
	}
	var bad error
	b = idField.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := idField.FindSubmatch(m)
		raw, err := base64.StdEncoding.DecodeString(string(sub[2]))
		if err != nil {
			bad = fmt.Errorf("id %s: %w", sub[1], err)
			return m
		}
		return []byte(`"` + string(sub[1]) + `":"` + hex.EncodeToString(raw) + `"`)
	})
	return b, bad
}
