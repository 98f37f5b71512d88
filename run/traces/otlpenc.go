package traces

import (
	"math"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
)

// The OTLP protobuf encoding of bench's spans, written straight from the
// span records. Building the SDK's snapshot of each span, turning it into
// go.opentelemetry.io/proto/otlp messages (three small allocations per
// attribute) and marshalling those by reflection cost 40-57 µs a cell, six
// times what the NDJSON line does; appending the same bytes costs about
// what the NDJSON line does. A batch's spans are its ScopeSpans' repeated
// spans field, encoded: the batch goes out as a tracepb.ResourceSpans whose
// resource and scope are fields and whose ScopeSpans carries the spans as
// fields not yet decoded (protobuf keeps and re-emits a message's unknown
// fields as they are), through the OTLP exporters' own clients, so
// endpoints, headers, TLS, compression and retries are theirs.
// TestOTLPEncodingMatchesSDK decodes the bytes with tracepb and holds them
// equal to what the SDK's exporter makes of the same spans; the field
// numbers are checked against tracepb's descriptors. (The SDK clients'
// optional self-observability counts the spans of a request from its
// decoded fields, so it counts none here.)

// Field numbers of opentelemetry/proto/trace/v1/trace.proto and
// common/v1/common.proto.
const (
	fScopeSpans protowire.Number = 2 // ScopeSpans.spans

	fSpanTraceID      protowire.Number = 1
	fSpanSpanID       protowire.Number = 2
	fSpanParentSpanID protowire.Number = 4
	fSpanName         protowire.Number = 5
	fSpanKind         protowire.Number = 6
	fSpanStart        protowire.Number = 7
	fSpanEnd          protowire.Number = 8
	fSpanAttributes   protowire.Number = 9
	fSpanEvents       protowire.Number = 11
	fSpanLinks        protowire.Number = 13
	fSpanStatus       protowire.Number = 15
	fSpanFlags        protowire.Number = 16

	fEventTime       protowire.Number = 1
	fEventName       protowire.Number = 2
	fEventAttributes protowire.Number = 3

	fLinkTraceID    protowire.Number = 1
	fLinkSpanID     protowire.Number = 2
	fLinkAttributes protowire.Number = 4
	fLinkFlags      protowire.Number = 6

	fStatusMessage protowire.Number = 2
	fStatusCode    protowire.Number = 3

	fKVKey   protowire.Number = 1
	fKVValue protowire.Number = 2

	fAnyString protowire.Number = 1
	fAnyBool   protowire.Number = 2
	fAnyInt    protowire.Number = 3
	fAnyDouble protowire.Number = 4
	fAnyArray  protowire.Number = 5

	fArrayValues protowire.Number = 1
)

// spanFlags are a span's and a link's flags as the SDK sets them: the W3C
// sampled flag, and "whether the parent is remote is known" (it is not
// remote: every span of the tree is bench's own).
const spanFlags = uint32(trace.FlagsSampled) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)

// pbSpan appends s's tracepb.Span encoding (its fields, no tag or
// length of its own) as the OTLP export sends it: bench's attributes and
// sop.span.kind and sop.span.status.
func pbSpan(b []byte, tid trace.TraceID, s *span) []byte {
	b = pbBytes(b, fSpanTraceID, tid[:])
	b = pbBytes(b, fSpanSpanID, s.id[:])
	if s.parent.IsValid() {
		b = pbBytes(b, fSpanParentSpanID, s.parent[:])
	}
	b = pbString(b, fSpanName, s.name)
	if s.otel != 0 {
		b = appendTag(b, fSpanKind, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(s.otel))
	}
	b = pbTime(b, fSpanStart, s.start.UnixNano())
	b = pbTime(b, fSpanEnd, s.end.UnixNano())
	for _, kv := range s.attrs {
		b = pbKV(b, fSpanAttributes, kv)
	}
	b = pbKV(b, fSpanAttributes, keySpanKind.String(s.kind))
	b = pbKV(b, fSpanAttributes, keySpanStatus.String(s.status))
	for i := range s.events {
		e := &s.events[i]
		b = appendTag(b, fSpanEvents, protowire.BytesType)
		b = appendLen(b, pbSizeEvent(e))
		b = pbTime(b, fEventTime, e.at.UnixNano())
		b = pbString(b, fEventName, e.name)
		for _, kv := range e.attrs {
			b = pbKV(b, fEventAttributes, kv)
		}
	}
	for i := range s.links {
		l := &s.links[i]
		b = appendTag(b, fSpanLinks, protowire.BytesType)
		b = appendLen(b, pbSizeLink(l))
		b = pbBytes(b, fLinkTraceID, l.trace[:])
		b = pbBytes(b, fLinkSpanID, l.span[:])
		for _, kv := range l.attrs {
			b = pbKV(b, fLinkAttributes, kv)
		}
		b = appendTag(b, fLinkFlags, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, spanFlags)
	}
	// The status is always there, empty when unset, as the SDK sends it.
	code, msg := statusOf(s)
	b = appendTag(b, fSpanStatus, protowire.BytesType)
	b = appendLen(b, pbSizeStatus(code, msg))
	b = pbString(b, fStatusMessage, msg)
	if code != 0 {
		b = appendTag(b, fStatusCode, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(code))
	}
	b = appendTag(b, fSpanFlags, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, spanFlags)
}

// statusOf is the span's OTLP status: error with "type: message", ok, or
// unset (skipped).
func statusOf(s *span) (tracepb.Status_StatusCode, string) {
	switch s.status {
	case StatusError:
		return tracepb.Status_STATUS_CODE_ERROR, s.errType + ": " + s.errMsg
	case StatusOK:
		return tracepb.Status_STATUS_CODE_OK, ""
	}
	return tracepb.Status_STATUS_CODE_UNSET, ""
}

func pbSizeStatus(code tracepb.Status_StatusCode, msg string) int {
	n := pbSizeString(fStatusMessage, msg)
	if code != 0 {
		n += protowire.SizeTag(fStatusCode) + protowire.SizeVarint(uint64(code))
	}
	return n
}

func pbSizeEvent(e *event) int {
	n := pbSizeTime(fEventTime, e.at.UnixNano()) + pbSizeString(fEventName, e.name)
	for _, kv := range e.attrs {
		n += pbSizeKVField(fEventAttributes, kv)
	}
	return n
}

func pbSizeLink(l *link) int {
	n := pbSizeBytes(fLinkTraceID, l.trace[:]) + pbSizeBytes(fLinkSpanID, l.span[:])
	for _, kv := range l.attrs {
		n += pbSizeKVField(fLinkAttributes, kv)
	}
	return n + protowire.SizeTag(fLinkFlags) + protowire.SizeFixed32()
}

// pbTime appends a fixed64 Unix-nano stamp; a stamp before 1970 is 0,
// which proto3 leaves out, as the SDK does.
func pbTime(b []byte, f protowire.Number, ns int64) []byte {
	if ns <= 0 {
		return b
	}
	b = appendTag(b, f, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, uint64(ns))
}

func pbSizeTime(f protowire.Number, ns int64) int {
	if ns <= 0 {
		return 0
	}
	return protowire.SizeTag(f) + protowire.SizeFixed64()
}

func pbBytes(b []byte, f protowire.Number, v []byte) []byte {
	b = appendTag(b, f, protowire.BytesType)
	return pbAppendBytes(b, v)
}

func pbSizeBytes(f protowire.Number, v []byte) int {
	return protowire.SizeTag(f) + protowire.SizeBytes(len(v))
}

// pbString appends a proto3 string: left out when empty, and
// valid UTF-8 (protobuf's strings must be; a server's stray byte in an
// error message must not cost the batch).
func pbString(b []byte, f protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, f, protowire.BytesType)
	return pbAppendString(b, validUTF8(s))
}

func pbSizeString(f protowire.Number, s string) int {
	if s == "" {
		return 0
	}
	return protowire.SizeTag(f) + protowire.SizeBytes(len(validUTF8(s)))
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// pbKV appends a KeyValue as field f. Keys are bench's own constants
// (attrs.go), plain ASCII; a string value is checked for UTF-8 once.
func pbKV(b []byte, f protowire.Number, kv attribute.KeyValue) []byte {
	key := string(kv.Key)
	if kv.Value.Type() == attribute.STRING {
		v := validUTF8(kv.Value.AsString())
		vsize := protowire.SizeTag(fAnyString) + protowire.SizeBytes(len(v))
		b = appendTag(b, f, protowire.BytesType)
		b = appendLen(b, pbSizeKey(key)+protowire.SizeTag(fKVValue)+protowire.SizeBytes(vsize))
		b = pbKey(b, key)
		b = appendTag(b, fKVValue, protowire.BytesType)
		b = appendLen(b, vsize)
		b = appendTag(b, fAnyString, protowire.BytesType)
		return pbAppendString(b, v)
	}
	if kv.Value.Type() == attribute.STRINGSLICE {
		// The slice is read once (each read copies it).
		ss := kv.Value.AsStringSlice()
		asize := pbSizeStrings(ss)
		vsize := protowire.SizeTag(fAnyArray) + protowire.SizeBytes(asize)
		b = appendTag(b, f, protowire.BytesType)
		b = appendLen(b, pbSizeKey(key)+protowire.SizeTag(fKVValue)+protowire.SizeBytes(vsize))
		b = pbKey(b, key)
		b = appendTag(b, fKVValue, protowire.BytesType)
		b = appendLen(b, vsize)
		b = appendTag(b, fAnyArray, protowire.BytesType)
		b = appendLen(b, asize)
		return pbStrings(b, ss)
	}
	vsize := pbSizeValue(kv.Value)
	b = appendTag(b, f, protowire.BytesType)
	b = appendLen(b, pbSizeKey(key)+protowire.SizeTag(fKVValue)+protowire.SizeBytes(vsize))
	b = pbKey(b, key)
	b = appendTag(b, fKVValue, protowire.BytesType)
	b = appendLen(b, vsize)
	return pbValue(b, kv.Value)
}

func pbKey(b []byte, key string) []byte {
	if key == "" {
		return b
	}
	b = appendTag(b, fKVKey, protowire.BytesType)
	return pbAppendString(b, key)
}

func pbSizeKey(key string) int {
	if key == "" {
		return 0
	}
	return protowire.SizeTag(fKVKey) + protowire.SizeBytes(len(key))
}

func pbSizeKVField(f protowire.Number, kv attribute.KeyValue) int {
	return protowire.SizeTag(f) + protowire.SizeBytes(pbSizeKV(kv))
}

func pbSizeKV(kv attribute.KeyValue) int {
	return pbSizeKey(string(kv.Key)) + protowire.SizeTag(fKVValue) + protowire.SizeBytes(pbSizeValue(kv.Value))
}

// pbValue appends an AnyValue's fields. A oneof member is written even
// when it holds its zero value: it is what says which kind the value is.
func pbValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.STRING:
		b = appendTag(b, fAnyString, protowire.BytesType)
		return pbAppendString(b, validUTF8(v.AsString()))
	case attribute.BOOL:
		b = appendTag(b, fAnyBool, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = appendTag(b, fAnyInt, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = appendTag(b, fAnyDouble, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE:
		b = appendTag(b, fAnyArray, protowire.BytesType)
		b = appendLen(b, pbSizeArray(v))
		eachElem(v, func(e attribute.Value) {
			b = appendTag(b, fArrayValues, protowire.BytesType)
			b = appendLen(b, pbSizeValue(e))
			b = pbValue(b, e)
		})
		return b
	}
	// bench writes no other kind; one that came would go as the SDK
	// sends an unknown kind.
	b = appendTag(b, fAnyString, protowire.BytesType)
	return pbAppendString(b, "INVALID")
}

func pbSizeValue(v attribute.Value) int {
	switch v.Type() {
	case attribute.STRING:
		return protowire.SizeTag(fAnyString) + protowire.SizeBytes(len(validUTF8(v.AsString())))
	case attribute.BOOL:
		return protowire.SizeTag(fAnyBool) + 1
	case attribute.INT64:
		return protowire.SizeTag(fAnyInt) + protowire.SizeVarint(uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return protowire.SizeTag(fAnyDouble) + protowire.SizeFixed64()
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE:
		return protowire.SizeTag(fAnyArray) + protowire.SizeBytes(pbSizeArray(v))
	}
	return protowire.SizeTag(fAnyString) + protowire.SizeBytes(len("INVALID"))
}

// pbStrings appends an ArrayValue's fields: each string an AnyValue.
func pbStrings(b []byte, ss []string) []byte {
	for _, x := range ss {
		x = validUTF8(x)
		b = appendTag(b, fArrayValues, protowire.BytesType)
		b = appendLen(b, protowire.SizeTag(fAnyString)+protowire.SizeBytes(len(x)))
		b = appendTag(b, fAnyString, protowire.BytesType)
		b = pbAppendString(b, x)
	}
	return b
}

func pbSizeStrings(ss []string) int {
	n := 0
	for _, x := range ss {
		n += protowire.SizeTag(fArrayValues) + protowire.SizeBytes(protowire.SizeTag(fAnyString)+protowire.SizeBytes(len(validUTF8(x))))
	}
	return n
}

func pbSizeArray(v attribute.Value) int {
	n := 0
	eachElem(v, func(e attribute.Value) {
		n += protowire.SizeTag(fArrayValues) + protowire.SizeBytes(pbSizeValue(e))
	})
	return n
}

// eachElem calls f with each element of a slice value.
func eachElem(v attribute.Value, f func(attribute.Value)) {
	switch v.Type() {
	case attribute.BOOLSLICE:
		for _, x := range v.AsBoolSlice() {
			f(attribute.BoolValue(x))
		}
	case attribute.INT64SLICE:
		for _, x := range v.AsInt64Slice() {
			f(attribute.Int64Value(x))
		}
	case attribute.FLOAT64SLICE:
		for _, x := range v.AsFloat64Slice() {
			f(attribute.Float64Value(x))
		}
	case attribute.STRINGSLICE:
		for _, x := range v.AsStringSlice() {
			f(attribute.StringValue(x))
		}
	}
}

// appendTag appends a field's tag: one byte for fields 1-15, which are
// nearly all of them.
func appendTag(b []byte, f protowire.Number, t protowire.Type) []byte {
	if f < 16 {
		return append(b, byte(f)<<3|byte(t))
	}
	return protowire.AppendTag(b, f, t)
}

// appendLen appends a length: one byte under 128, which most are.
func appendLen(b []byte, n int) []byte {
	if n < 0x80 {
		return append(b, byte(n))
	}
	return protowire.AppendVarint(b, uint64(n))
}

func pbAppendString(b []byte, s string) []byte {
	return append(appendLen(b, len(s)), s...)
}

func pbAppendBytes(b []byte, v []byte) []byte {
	return append(appendLen(b, len(v)), v...)
}
