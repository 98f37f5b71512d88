package otelcoltest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Span is one span as the collector received it, flattened out of the OTLP
// resource / scope / span nesting so a test can compare it field by field.
type Span struct {
	// TraceID, SpanID and ParentSpanID are lowercase hex, as in OTLP JSON
	// and as trace.TraceID.String() prints them; ParentSpanID is "" on a root.
	TraceID      string
	SpanID       string
	ParentSpanID string
	Name         string
	Kind         Kind
	// StartUnixNano and EndUnixNano are the timestamps exactly as sent:
	// OTLP carries nanoseconds since the Unix epoch.
	StartUnixNano int64
	EndUnixNano   int64
	// Attributes maps each key to a string, bool, int64, float64, []byte,
	// []any or map[string]any (OTLP's AnyValue kinds), or nil for an empty
	// value.
	Attributes    map[string]any
	Events        []Event
	Links         []Link
	StatusCode    StatusCode
	StatusMessage string
	// Resource holds the attributes of the span's resource (service.name,
	// telemetry.sdk.*, ...), typed like Attributes.
	Resource     map[string]any
	ScopeName    string
	ScopeVersion string
}

// Start is the span's start time.
func (s Span) Start() time.Time { return time.Unix(0, s.StartUnixNano) }

// End is the span's end time.
func (s Span) End() time.Time { return time.Unix(0, s.EndUnixNano) }

// Duration is end minus start.
func (s Span) Duration() time.Duration { return time.Duration(s.EndUnixNano - s.StartUnixNano) }

// Event is a timestamped event on a span (a first token, a retry).
type Event struct {
	Name         string
	TimeUnixNano int64
	Attributes   map[string]any
}

// Time is the event's time.
func (e Event) Time() time.Time { return time.Unix(0, e.TimeUnixNano) }

// Link is a span's link to a span of another (or the same) trace.
type Link struct {
	TraceID    string
	SpanID     string
	Attributes map[string]any
}

// Kind is a span kind by the name the Go SDK's trace.SpanKind.String()
// gives it, so a test can compare with trace.SpanKindClient.String().
type Kind string

// The span kinds of OTLP's Span.SpanKind enum.
const (
	KindUnspecified Kind = "unspecified"
	KindInternal    Kind = "internal"
	KindServer      Kind = "server"
	KindClient      Kind = "client"
	KindProducer    Kind = "producer"
	KindConsumer    Kind = "consumer"
)

var kinds = []Kind{KindUnspecified, KindInternal, KindServer, KindClient, KindProducer, KindConsumer}

// StatusCode is a span status code, lowercased from OTLP's Status.StatusCode.
type StatusCode string

// The status codes of OTLP's Status.StatusCode enum.
const (
	StatusUnset StatusCode = "unset"
	StatusOK    StatusCode = "ok"
	StatusError StatusCode = "error"
)

var statusCodes = []StatusCode{StatusUnset, StatusOK, StatusError}

// ParseSpans reads the collector file exporter's JSON output: one OTLP/JSON
// ExportTraceServiceRequest per line (the OTLP spec's "JSON Protobuf
// Encoding": lowerCamelCase keys, hex ids, 64-bit integers as strings, enums
// as integers). It returns the spans in file order. The exporter ends every
// request with a newline and flushes its buffer on a timer, so a last line
// without one is a request still being written: it is left out, not an
// error. Any other bad line is an error naming its line number and field.
//
// Why not the collector's pdata package: it would put the collector's
// release train into bench's go.mod for about a hundred lines of decoding of
// a format the OTLP spec fixes.
func ParseSpans(data []byte) ([]Span, error) {
	var spans []Span
	for lineNo := 1; len(data) > 0; lineNo++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // a request still being written
		}
		line := bytes.TrimSpace(data[:i])
		data = data[i+1:]
		if len(line) == 0 {
			continue
		}
		got, err := parseRequest(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		spans = append(spans, got...)
	}
	return spans, nil
}

// The OTLP/JSON shapes, only the fields a test looks at. Unknown fields are
// ignored, as the OTLP spec asks of receivers.
type jsonRequest struct {
	ResourceSpans []struct {
		Resource struct {
			Attributes []jsonKeyValue `json:"attributes"`
		} `json:"resource"`
		ScopeSpans []struct {
			Scope struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"scope"`
			Spans []jsonSpan `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type jsonSpan struct {
	TraceID           string          `json:"traceId"`
	SpanID            string          `json:"spanId"`
	ParentSpanID      string          `json:"parentSpanId"`
	Name              string          `json:"name"`
	Kind              json.RawMessage `json:"kind"`
	StartTimeUnixNano json.RawMessage `json:"startTimeUnixNano"`
	EndTimeUnixNano   json.RawMessage `json:"endTimeUnixNano"`
	Attributes        []jsonKeyValue  `json:"attributes"`
	Events            []struct {
		TimeUnixNano json.RawMessage `json:"timeUnixNano"`
		Name         string          `json:"name"`
		Attributes   []jsonKeyValue  `json:"attributes"`
	} `json:"events"`
	Links []struct {
		TraceID    string         `json:"traceId"`
		SpanID     string         `json:"spanId"`
		Attributes []jsonKeyValue `json:"attributes"`
	} `json:"links"`
	Status struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	} `json:"status"`
}

type jsonKeyValue struct {
	Key   string    `json:"key"`
	Value jsonValue `json:"value"`
}

// jsonValue is OTLP's AnyValue: exactly one of these is set, or none for an
// empty value. intValue and doubleValue stay raw: the first is a JSON string
// or number, the second a number or one of the strings "NaN", "Infinity",
// "-Infinity", which json.Number would refuse.
type jsonValue struct {
	StringValue *string         `json:"stringValue"`
	BoolValue   *bool           `json:"boolValue"`
	IntValue    json.RawMessage `json:"intValue"`
	DoubleValue json.RawMessage `json:"doubleValue"`
	BytesValue  *string         `json:"bytesValue"`
	ArrayValue  *struct {
		Values []jsonValue `json:"values"`
	} `json:"arrayValue"`
	KvlistValue *struct {
		Values []jsonKeyValue `json:"values"`
	} `json:"kvlistValue"`
}

func parseRequest(line []byte) ([]Span, error) {
	var req jsonRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return nil, fmt.Errorf("not an OTLP/JSON trace request: %w", err)
	}
	var spans []Span
	for ri, rs := range req.ResourceSpans {
		where := fmt.Sprintf("resourceSpans[%d]", ri)
		resource, err := attributes(rs.Resource.Attributes, where+".resource.attributes")
		if err != nil {
			return nil, err
		}
		for si, ss := range rs.ScopeSpans {
			for pi, js := range ss.Spans {
				at := fmt.Sprintf("%s.scopeSpans[%d].spans[%d]", where, si, pi)
				s, err := span(js, at)
				if err != nil {
					return nil, err
				}
				s.Resource = resource
				s.ScopeName, s.ScopeVersion = ss.Scope.Name, ss.Scope.Version
				spans = append(spans, s)
			}
		}
	}
	return spans, nil
}

func span(js jsonSpan, at string) (Span, error) {
	s := Span{Name: js.Name, StatusMessage: js.Status.Message}
	var err error
	if s.TraceID, err = hexID(js.TraceID, 16, false, at+".traceId"); err != nil {
		return s, err
	}
	if s.SpanID, err = hexID(js.SpanID, 8, false, at+".spanId"); err != nil {
		return s, err
	}
	if s.ParentSpanID, err = hexID(js.ParentSpanID, 8, true, at+".parentSpanId"); err != nil {
		return s, err
	}
	k, err := enum(js.Kind, len(kinds), at+".kind")
	if err != nil {
		return s, err
	}
	s.Kind = kinds[k]
	c, err := enum(js.Status.Code, len(statusCodes), at+".status.code")
	if err != nil {
		return s, err
	}
	s.StatusCode = statusCodes[c]
	if s.StartUnixNano, err = nanos(js.StartTimeUnixNano, at+".startTimeUnixNano"); err != nil {
		return s, err
	}
	if s.EndUnixNano, err = nanos(js.EndTimeUnixNano, at+".endTimeUnixNano"); err != nil {
		return s, err
	}
	if s.Attributes, err = attributes(js.Attributes, at+".attributes"); err != nil {
		return s, err
	}
	for i, je := range js.Events {
		e := Event{Name: je.Name}
		ea := fmt.Sprintf("%s.events[%d]", at, i)
		if e.TimeUnixNano, err = nanos(je.TimeUnixNano, ea+".timeUnixNano"); err != nil {
			return s, err
		}
		if e.Attributes, err = attributes(je.Attributes, ea+".attributes"); err != nil {
			return s, err
		}
		s.Events = append(s.Events, e)
	}
	for i, jl := range js.Links {
		var l Link
		la := fmt.Sprintf("%s.links[%d]", at, i)
		if l.TraceID, err = hexID(jl.TraceID, 16, false, la+".traceId"); err != nil {
			return s, err
		}
		if l.SpanID, err = hexID(jl.SpanID, 8, false, la+".spanId"); err != nil {
			return s, err
		}
		if l.Attributes, err = attributes(jl.Attributes, la+".attributes"); err != nil {
			return s, err
		}
		s.Links = append(s.Links, l)
	}
	return s, nil
}

// hexID checks an id is n bytes of hex and returns it lowercased.
func hexID(s string, n int, optional bool, field string) (string, error) {
	if s == "" && optional {
		return "", nil
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != n {
		return "", fmt.Errorf("%s: %q is not %d bytes of hex", field, s, n)
	}
	return hex.EncodeToString(b), nil
}

// enum reads an OTLP enum, which OTLP/JSON gives as an integer; absent is 0.
func enum(raw json.RawMessage, count int, field string) (int, error) {
	if !set(raw) {
		return 0, nil
	}
	v, err := strconv.Atoi(string(raw))
	if err != nil || v < 0 || v >= count {
		return 0, fmt.Errorf("%s: %s is not one of 0..%d", field, raw, count-1)
	}
	return v, nil
}

// nanos reads a fixed64 timestamp: OTLP/JSON writes it as a decimal
// string, a bare number is accepted too. Absent is 0.
func nanos(raw json.RawMessage, field string) (int64, error) {
	if !set(raw) {
		return 0, nil
	}
	v, err := strconv.ParseUint(unquote(raw), 10, 64)
	if err != nil || v > 1<<63-1 {
		return 0, fmt.Errorf("%s: %s is not a nanosecond timestamp", field, raw)
	}
	return int64(v), nil
}

func attributes(kvs []jsonKeyValue, field string) (map[string]any, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := make(map[string]any, len(kvs))
	for i, kv := range kvs {
		v, err := value(kv.Value, fmt.Sprintf("%s[%d] (%s)", field, i, kv.Key))
		if err != nil {
			return nil, err
		}
		m[kv.Key] = v
	}
	return m, nil
}

func value(v jsonValue, field string) (any, error) {
	switch {
	case v.StringValue != nil:
		return *v.StringValue, nil
	case v.BoolValue != nil:
		return *v.BoolValue, nil
	case set(v.IntValue):
		// A protobuf int64 is a JSON string in OTLP/JSON, a number is
		// accepted too.
		n, err := strconv.ParseInt(unquote(v.IntValue), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: intValue %s is not a 64-bit integer", field, v.IntValue)
		}
		return n, nil
	case set(v.DoubleValue):
		// A JSON number, or "NaN", "Infinity", "-Infinity" as strings.
		f, err := strconv.ParseFloat(unquote(v.DoubleValue), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: doubleValue %s is not a number", field, v.DoubleValue)
		}
		return f, nil
	case v.BytesValue != nil:
		b, err := base64.StdEncoding.DecodeString(*v.BytesValue)
		if err != nil {
			return nil, fmt.Errorf("%s: bytesValue is not base64: %w", field, err)
		}
		return b, nil
	case v.ArrayValue != nil:
		a := make([]any, 0, len(v.ArrayValue.Values))
		for i, e := range v.ArrayValue.Values {
			x, err := value(e, fmt.Sprintf("%s[%d]", field, i))
			if err != nil {
				return nil, err
			}
			a = append(a, x)
		}
		return a, nil
	case v.KvlistValue != nil:
		m, err := attributes(v.KvlistValue.Values, field)
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]any{}
		}
		return m, nil
	}
	return nil, nil
}

// set reports whether a raw field was present and not null.
func set(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// unquote returns a raw JSON string's content, or a raw number as is.
func unquote(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
