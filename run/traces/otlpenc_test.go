package traces

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"bench/internal/record/results"
	"bench/run/output"
)

// sdkStub is how bench handed a span to the SDK before it encoded spans
// itself: the SDK's own snapshot of the span, which its exporter turned
// into OTLP. It is the oracle the direct encoding is held to.
func sdkStub(tid trace.TraceID, res *resource.Resource, scope instrumentation.Scope, s *span) sdktrace.ReadOnlySpan {
	attrs := append(append([]attribute.KeyValue(nil), s.attrs...), keySpanKind.String(s.kind), keySpanStatus.String(s.status))
	stub := tracetest.SpanStub{
		Name:                 s.name,
		SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: s.id, TraceFlags: trace.FlagsSampled}),
		SpanKind:             s.otel,
		StartTime:            s.start,
		EndTime:              s.end,
		Attributes:           attrs,
		Resource:             res,
		InstrumentationScope: scope,
	}
	if s.parent.IsValid() {
		stub.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: s.parent, TraceFlags: trace.FlagsSampled})
	}
	for _, e := range s.events {
		stub.Events = append(stub.Events, sdktrace.Event{Name: e.name, Time: e.at, Attributes: e.attrs})
	}
	for _, l := range s.links {
		stub.Links = append(stub.Links, sdktrace.Link{
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: l.trace, SpanID: l.span, TraceFlags: trace.FlagsSampled}),
			Attributes:  l.attrs,
		})
	}
	switch s.status {
	case StatusError:
		stub.Status = sdktrace.Status{Code: codes.Error, Description: s.errType + ": " + s.errMsg}
	case StatusOK:
		stub.Status = sdktrace.Status{Code: codes.Ok}
	}
	return stub.Snapshot()
}

// captureClient is an OTLP client that keeps what it is asked to send,
// with wire set as a collector gets it: marshalled when sent (as the
// exporters' clients do, before UploadTraces returns), then decoded.
type captureClient struct {
	wire bool
	got  []*tracepb.ResourceSpans
}

func (c *captureClient) Start(context.Context) error { return nil }
func (c *captureClient) Stop(context.Context) error  { return nil }
func (c *captureClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	if !c.wire {
		c.got = append(c.got, rs...)
		return nil
	}
	for _, r := range rs {
		wire, err := proto.Marshal(r)
		if err != nil {
			return err
		}
		dec := &tracepb.ResourceSpans{}
		if err := proto.Unmarshal(wire, dec); err != nil {
			return err
		}
		c.got = append(c.got, dec)
	}
	return nil
}

// everySpan is a run's spans of every shape: the cells of a retried, a
// skipped, a CLI and an agentic record, their suites, and an interrupted,
// resumed root with its link; one attribute holds a byte that is not UTF-8.
func everySpan(t *testing.T) (trace.TraceID, []span) {
	cfg := testConfig(t)
	tr, err := New(context.Background(), Options{Config: cfg, RunDir: t.TempDir(), Version: "v9.9.9-test", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Stop()
	var all []span
	for _, r := range []func() *results.Record{retried, skipped, cli, agentic} {
		rec := r()
		tr.b.reset()
		for _, s := range tr.b.cell(rec) {
			s.attrs = append([]attribute.KeyValue(nil), s.attrs...)
			all = append(all, s)
		}
		if err := tr.AddRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range tr.order {
		all = append(all, tr.suiteSpan(tr.suites[k]))
	}
	tr.resume, tr.prev, tr.done = true, NewTraceID(), 3
	all = append(all, tr.root(output.End{Reason: "interrupted", Planned: 9, Recorded: 4}))
	all[0].attrs = append(all[0].attrs, attribute.String("bench.test.bad_utf8", "a\xffb"))
	return tr.TraceID(), all
}

// What bench sends, decoded with go.opentelemetry.io/proto's types, is
// exactly what the SDK's exporter makes of the same spans: the resource,
// the scope and every span, over batches (the spans are sent as 3 batches
// of at most 1,024, and once over a partial batch). The one difference
// allowed: a string that is not UTF-8 goes with U+FFFD, where the SDK's
// marshalling would fail the whole batch.
func TestOTLPEncodingMatchesSDK(t *testing.T) {
	tid, spans := everySpan(t)
	res, err := resource.New(context.Background(), resource.WithAttributes(semconv.ServiceName("bench"), semconv.ServiceVersion("v1")), resource.WithTelemetrySDK())
	if err != nil {
		t.Fatal(err)
	}
	scope := instrumentation.Scope{Name: "bench/traces", Version: "v1", SchemaURL: semconv.SchemaURL}
	var stubs []sdktrace.ReadOnlySpan
	for i := range spans {
		stubs = append(stubs, sdkStub(tid, res, scope, &spans[i]))
	}
	sdk := &captureClient{}
	exp, err := otlptrace.New(context.Background(), sdk)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), stubs); err != nil {
		t.Fatal(err)
	}
	if len(sdk.got) != 1 || len(sdk.got[0].ScopeSpans) != 1 || len(sdk.got[0].ScopeSpans[0].Spans) != len(spans) {
		t.Fatalf("the SDK sent %d resource spans", len(sdk.got))
	}
	want := sdk.got[0]
	// The SDK keeps the stray byte (and its marshalling would fail).
	bad := want.ScopeSpans[0].Spans[0].Attributes
	if a := bad[len(bad)-3]; a.Key != "bench.test.bad_utf8" {
		t.Fatalf("attribute %s", a.Key)
	} else {
		a.Value = &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "a\uFFFDb"}}
	}

	for _, rounds := range []int{1, 1 + 2*otlpBatchSpans/len(spans)} {
		bench := &captureClient{wire: true}
		var warned []error
		o := startOTLP(bench, nil, res, tid, "v1", 10*time.Second, func(err error) { warned = append(warned, err) })
		for r := 0; r < rounds; r++ {
			o.emit(spans)
		}
		o.shutdown()
		if len(warned) > 0 {
			t.Fatal(warned)
		}
		var got []*tracepb.Span
		for i, dec := range bench.got {
			if len(dec.ScopeSpans) != 1 || len(dec.ScopeSpans[0].Spans) > otlpBatchSpans {
				t.Fatalf("%d rounds, batch %d: %d scope spans, %d spans", rounds, i, len(dec.ScopeSpans), len(dec.ScopeSpans[0].Spans))
			}
			got = append(got, dec.ScopeSpans[0].Spans...)
			dec.ScopeSpans[0].Spans = nil
			wantHead := proto.Clone(want).(*tracepb.ResourceSpans)
			wantHead.ScopeSpans[0].Spans = nil
			if !proto.Equal(wantHead, dec) {
				t.Errorf("batch %d's resource and scope: the SDK's\n%s\nbench's\n%s", i, prototext.Format(wantHead), prototext.Format(dec))
			}
		}
		if wantBatches := (rounds*len(spans) + otlpBatchSpans - 1) / otlpBatchSpans; len(bench.got) != wantBatches || len(got) != rounds*len(spans) {
			t.Fatalf("%d rounds: %d spans in %d batches, want %d in %d", rounds, len(got), len(bench.got), rounds*len(spans), wantBatches)
		}
		for i, g := range got {
			w := want.ScopeSpans[0].Spans[i%len(spans)]
			if !proto.Equal(w, g) {
				t.Fatalf("%s: the SDK's span\n%s\nbench's\n%s", spans[i%len(spans)].name, prototext.Format(w), prototext.Format(g))
			}
		}
	}
	// The spans cover errors, skips, events and links.
	kinds := map[string]bool{}
	for _, s := range spans {
		kinds[fmt.Sprintf("%s/%s/events=%v/links=%v", strings.Fields(s.name)[0], s.status, len(s.events) > 0, len(s.links) > 0)] = true
	}
	var cover []string
	for k := range kinds {
		cover = append(cover, k)
	}
	sort.Strings(cover)
	joined := strings.Join(cover, " ")
	for _, need := range []string{"/error/", "/skipped/", "events=true", "links=true"} {
		if !strings.Contains(joined, need) {
			t.Errorf("no span with %s among %s", need, joined)
		}
	}
}

// The field numbers the encoder writes are the ones
// go.opentelemetry.io/proto's descriptors give.
func TestOTLPFieldNumbers(t *testing.T) {
	for _, c := range []struct {
		m     proto.Message
		field string
		num   protowire.Number
	}{
		{&tracepb.ScopeSpans{}, "spans", fScopeSpans},
		{&tracepb.Span{}, "trace_id", fSpanTraceID}, {&tracepb.Span{}, "span_id", fSpanSpanID},
		{&tracepb.Span{}, "parent_span_id", fSpanParentSpanID}, {&tracepb.Span{}, "name", fSpanName},
		{&tracepb.Span{}, "kind", fSpanKind}, {&tracepb.Span{}, "start_time_unix_nano", fSpanStart},
		{&tracepb.Span{}, "end_time_unix_nano", fSpanEnd}, {&tracepb.Span{}, "attributes", fSpanAttributes},
		{&tracepb.Span{}, "events", fSpanEvents}, {&tracepb.Span{}, "links", fSpanLinks},
		{&tracepb.Span{}, "status", fSpanStatus}, {&tracepb.Span{}, "flags", fSpanFlags},
		{&tracepb.Span_Event{}, "time_unix_nano", fEventTime}, {&tracepb.Span_Event{}, "name", fEventName},
		{&tracepb.Span_Event{}, "attributes", fEventAttributes},
		{&tracepb.Span_Link{}, "trace_id", fLinkTraceID}, {&tracepb.Span_Link{}, "span_id", fLinkSpanID},
		{&tracepb.Span_Link{}, "attributes", fLinkAttributes}, {&tracepb.Span_Link{}, "flags", fLinkFlags},
		{&tracepb.Status{}, "message", fStatusMessage}, {&tracepb.Status{}, "code", fStatusCode},
		{&commonpb.KeyValue{}, "key", fKVKey}, {&commonpb.KeyValue{}, "value", fKVValue},
		{&commonpb.AnyValue{}, "string_value", fAnyString}, {&commonpb.AnyValue{}, "bool_value", fAnyBool},
		{&commonpb.AnyValue{}, "int_value", fAnyInt}, {&commonpb.AnyValue{}, "double_value", fAnyDouble},
		{&commonpb.AnyValue{}, "array_value", fAnyArray}, {&commonpb.ArrayValue{}, "values", fArrayValues},
	} {
		fd := c.m.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(c.field))
		if fd == nil || fd.Number() != c.num {
			t.Errorf("%s.%s: descriptor %v, encoder %d", c.m.ProtoReflect().Descriptor().FullName(), c.field, fd, c.num)
		}
	}
}
