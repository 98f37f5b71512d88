package traces

import (
	"math"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
)

// The OTLP/JSON encoding of bench's spans (http/json), written straight
// from the span records as otlpenc.go writes protobuf. Encoding each batch
// as protobuf, decoding it into tracepb messages, running protojson over
// them and rewriting its base64 ids as hex cost 81-103 µs a cell, 4-5× the
// NDJSON line; appending the JSON costs about what the protobuf does.
//
// The mapping is the one the OTLP specification fixes (protobuf's JSON
// mapping with two exceptions): lowerCamelCase field names; trace and span
// ids as hex, not base64; enums as integers; 64-bit integers (the
// Unix-nano stamps, intValue) as decimal strings; fixed32 flags as numbers;
// doubles as protojson writes them (NaN and ±Infinity as strings); fields
// at their default left out, except a oneof member (it says which kind a
// value is) and a message that is set (a span's status, even empty).
// Fields come in the .proto's declaration order, as protojson writes them.
// Strings are escaped as protojson escapes them; one that is not valid
// UTF-8 (which protojson refuses) has each bad run replaced by U+FFFD, as
// the protobuf encoding does, so both protocols carry the same text.
// TestOTLPJSONMatchesProtojson holds the bytes equal, as parsed JSON, to
// protojson's output over the protobuf encoding of the same spans.

// jsonSpan appends s as an OTLP/JSON Span object.
func jsonSpan(b []byte, tid trace.TraceID, s *span) []byte {
	b = append(b, `{"traceId":`...)
	b = jsonHex(b, tid[:])
	b = append(b, `,"spanId":`...)
	b = jsonHex(b, s.id[:])
	if s.parent.IsValid() {
		b = append(b, `,"parentSpanId":`...)
		b = jsonHex(b, s.parent[:])
	}
	b = append(b, `,"flags":`...)
	b = strconv.AppendUint(b, uint64(spanFlags), 10)
	if s.name != "" {
		b = append(b, `,"name":`...)
		b = jsonString(b, s.name)
	}
	if s.otel != 0 {
		b = append(b, `,"kind":`...)
		b = strconv.AppendInt(b, int64(s.otel), 10)
	}
	b = jsonTime(b, `,"startTimeUnixNano":`, s.start.UnixNano())
	b = jsonTime(b, `,"endTimeUnixNano":`, s.end.UnixNano())
	// bench's attributes, then sop.span.kind and sop.span.status: there
	// are always some.
	b = append(b, `,"attributes":[`...)
	for _, kv := range s.attrs {
		b = jsonKV(b, kv)
		b = append(b, ',')
	}
	b = jsonKV(b, keySpanKind.String(s.kind))
	b = append(b, ',')
	b = jsonKV(b, keySpanStatus.String(s.status))
	b = append(b, ']')
	if len(s.events) > 0 {
		b = append(b, `,"events":[`...)
		for i := range s.events {
			e := &s.events[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			n := len(b)
			b = jsonTime(b, `,"timeUnixNano":`, e.at.UnixNano())
			if e.name != "" {
				b = append(b, `,"name":`...)
				b = jsonString(b, e.name)
			}
			b = jsonKVs(b, e.attrs)
			b = dropComma(b, n)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(s.links) > 0 {
		b = append(b, `,"links":[`...)
		for i := range s.links {
			l := &s.links[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"traceId":`...)
			b = jsonHex(b, l.trace[:])
			b = append(b, `,"spanId":`...)
			b = jsonHex(b, l.span[:])
			b = jsonKVs(b, l.attrs)
			b = append(b, `,"flags":`...)
			b = strconv.AppendUint(b, uint64(spanFlags), 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	// The status is always there, empty when unset, as the SDK sends it.
	code, msg := statusOf(s)
	b = append(b, `,"status":{`...)
	n := len(b)
	if msg != "" {
		b = append(b, `,"message":`...)
		b = jsonString(b, msg)
	}
	if code != 0 {
		b = append(b, `,"code":`...)
		b = strconv.AppendInt(b, int64(code), 10)
	}
	b = dropComma(b, n)
	return append(b, "}}"...)
}

// dropComma removes the comma a first member was written with at b[n]:
// members that may be left out are each written with a leading comma.
func dropComma(b []byte, n int) []byte {
	if len(b) > n && b[n] == ',' {
		return append(b[:n], b[n+1:]...)
	}
	return b
}

// jsonTime appends a fixed64 Unix-nano stamp as a decimal string; a stamp
// before 1970 is 0, which is left out, as in the protobuf.
func jsonTime(b []byte, field string, ns int64) []byte {
	if ns <= 0 {
		return b
	}
	b = append(b, field...)
	b = append(b, '"')
	b = strconv.AppendInt(b, ns, 10)
	return append(b, '"')
}

// jsonKVs appends a repeated KeyValue field, left out when empty.
func jsonKVs(b []byte, kvs []attribute.KeyValue) []byte {
	if len(kvs) == 0 {
		return b
	}
	b = append(b, `,"attributes":[`...)
	for i, kv := range kvs {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonKV(b, kv)
	}
	return append(b, ']')
}

// jsonKV appends a KeyValue object; its value is always set.
func jsonKV(b []byte, kv attribute.KeyValue) []byte {
	if kv.Key != "" {
		b = append(b, `{"key":`...)
		b = jsonString(b, string(kv.Key))
		b = append(b, `,"value":`...)
	} else {
		b = append(b, `{"value":`...)
	}
	b = jsonValue(b, kv.Value)
	return append(b, '}')
}

// jsonValue appends an AnyValue object.
func jsonValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.STRING:
		b = append(b, `{"stringValue":`...)
		b = jsonString(b, v.AsString())
	case attribute.BOOL:
		b = append(b, `{"boolValue":`...)
		b = strconv.AppendBool(b, v.AsBool())
	case attribute.INT64:
		b = append(b, `{"intValue":"`...)
		b = strconv.AppendInt(b, v.AsInt64(), 10)
		b = append(b, '"')
	case attribute.FLOAT64:
		b = append(b, `{"doubleValue":`...)
		b = jsonFloat(b, v.AsFloat64())
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE:
		b = append(b, `{"arrayValue":{`...)
		b = jsonArray(b, v)
		b = append(b, '}')
	default:
		// bench writes no other kind; one that came would go as the SDK
		// sends an unknown kind.
		b = append(b, `{"stringValue":"INVALID"`...)
	}
	return append(b, '}')
}

// jsonArray appends an ArrayValue's members: its values, left out when
// there are none. Each slice is read once (each read copies it).
func jsonArray(b []byte, v attribute.Value) []byte {
	n := len(b)
	b = append(b, `"values":[`...)
	switch v.Type() {
	case attribute.BOOLSLICE:
		for i, x := range v.AsBoolSlice() {
			b = sep(b, i)
			b = append(b, `{"boolValue":`...)
			b = strconv.AppendBool(b, x)
			b = append(b, '}')
		}
	case attribute.INT64SLICE:
		for i, x := range v.AsInt64Slice() {
			b = sep(b, i)
			b = append(b, `{"intValue":"`...)
			b = strconv.AppendInt(b, x, 10)
			b = append(b, `"}`...)
		}
	case attribute.FLOAT64SLICE:
		for i, x := range v.AsFloat64Slice() {
			b = sep(b, i)
			b = append(b, `{"doubleValue":`...)
			b = jsonFloat(b, x)
			b = append(b, '}')
		}
	case attribute.STRINGSLICE:
		for i, x := range v.AsStringSlice() {
			b = sep(b, i)
			b = append(b, `{"stringValue":`...)
			b = jsonString(b, x)
			b = append(b, '}')
		}
	}
	if b[len(b)-1] == '[' {
		return b[:n]
	}
	return append(b, ']')
}

func sep(b []byte, i int) []byte {
	if i > 0 {
		return append(b, ',')
	}
	return b
}

// jsonFloat appends a double as protojson does: encoding/json's form
// (exponent below 1e-6 and from 1e21, with "e-07" written "e-7"), and NaN
// and ±Infinity, which JSON has no number for, as strings.
func jsonFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// jsonHex appends an id as a lowercase hex string, as OTLP/JSON spells ids.
func jsonHex(b []byte, id []byte) []byte {
	return append(appendID(append(b, '"'), id), '"')
}

// jsonString appends s as a JSON string, escaped as protojson escapes:
// quote, backslash, and control characters (\b \f \n \r \t by name, the
// rest as \u00XX); everything else as it is. Invalid UTF-8 becomes U+FFFD
// first (validUTF8), as in the protobuf encoding.
func jsonString(b []byte, s string) []byte {
	s = validUTF8(s)
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		start = i + 1
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// jsonEnvelope is the request around a batch's spans: head opens the
// ExportTraceServiceRequest down to its one ScopeSpans' spans array, tail
// closes it. The resource and scope are the same for every batch, so they
// are written once.
func jsonEnvelope(res *resource.Resource, resSchema, scopeName, scopeVersion, scopeSchema string) (head, tail []byte) {
	head = append(head, `{"resourceSpans":[{"resource":{`...)
	n := len(head)
	head = jsonKVs(head, res.Attributes())
	head = dropComma(head, n)
	head = append(head, `},"scopeSpans":[{"scope":{`...)
	n = len(head)
	if scopeName != "" {
		head = append(head, `,"name":`...)
		head = jsonString(head, scopeName)
	}
	if scopeVersion != "" {
		head = append(head, `,"version":`...)
		head = jsonString(head, scopeVersion)
	}
	head = dropComma(head, n)
	head = append(head, `},"spans":[`...)
	tail = append(tail, ']')
	if scopeSchema != "" {
		tail = append(tail, `,"schemaUrl":`...)
		tail = jsonString(tail, scopeSchema)
	}
	tail = append(tail, "}]"...)
	if resSchema != "" {
		tail = append(tail, `,"schemaUrl":`...)
		tail = jsonString(tail, resSchema)
	}
	return head, append(tail, "}]}"...)
}
