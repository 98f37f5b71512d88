package otelcoltest_test

import (
	"context"
	"net"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"bench/internal/testpeer/otelcoltest"
)

// base is the tree's start: a fixed time with nanoseconds that a rounding
// to micro- or milliseconds anywhere on the way would lose.
var base = time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)

func at(d time.Duration) time.Time { return base.Add(d) }

// tree exports root → suite → cell → request through tp with explicit
// stamps, ends them, and returns the spans the collector must hold. IDs are
// the SDK's random ones, read back from the span contexts.
func tree(t *testing.T, tp *sdktrace.TracerProvider) []otelcoltest.Span {
	t.Helper()
	tr := tp.Tracer("bench/otelcoltest", trace.WithInstrumentationVersion("0.0.1-test"))
	ctx := context.Background()

	ctx, root := tr.Start(ctx, "skill.execute", trace.WithTimestamp(at(0)),
		trace.WithAttributes(attribute.String("sop.level", "L2"), attribute.String("bench.run.id", "run-1")))
	sctx, suite := tr.Start(ctx, "suite", trace.WithTimestamp(at(1*time.Millisecond+1)),
		trace.WithAttributes(attribute.String("gen_ai.request.model", "scripted"), attribute.Int("bench.cells", 1)))
	cctx, cell := tr.Start(sctx, "cell", trace.WithTimestamp(at(2*time.Millisecond+3)),
		trace.WithAttributes(
			attribute.Float64("bench.ttft_ms", 12.5),
			attribute.Bool("bench.valid", false),
			attribute.StringSlice("gen_ai.response.finish_reasons", []string{"stop", "length"}),
			attribute.Int64Slice("bench.ints", []int64{-1, 1 << 62}),
			attribute.Float64Slice("bench.floats", []float64{0.25, -3}),
			attribute.BoolSlice("bench.bools", []bool{true, false}),
			attribute.ByteSlice("bench.bytes", []byte{0, 1, 0xff}),
			attribute.Map("bench.map", attribute.String("k", "v"), attribute.Int("n", 7)),
		))
	_, req := tr.Start(cctx, "http.request", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(at(3*time.Millisecond+5)),
		trace.WithAttributes(attribute.Int("gen_ai.usage.output_tokens", 42), attribute.String("http.request.method", "POST")))
	req.AddEvent("first_byte", trace.WithTimestamp(at(40*time.Millisecond+7)), trace.WithAttributes(attribute.Int("bench.attempt", 1)))
	req.AddEvent("first_token", trace.WithTimestamp(at(41*time.Millisecond+9)))
	req.End(trace.WithTimestamp(at(900*time.Millisecond + 11)))
	cell.SetStatus(codes.Error, "validator failed: want OK")
	cell.End(trace.WithTimestamp(at(950*time.Millisecond + 13)))
	suite.SetStatus(codes.Ok, "ignored: OTel drops an ok status's message")
	suite.End(trace.WithTimestamp(at(999*time.Millisecond + 15)))
	root.End(trace.WithTimestamp(at(time.Second + 17)))

	tid := root.SpanContext().TraceID().String()
	id := func(s trace.Span) string { return s.SpanContext().SpanID().String() }
	res := map[string]any{"service.name": "bench-otelcoltest"}
	scope := func(s otelcoltest.Span) otelcoltest.Span {
		s.TraceID, s.Resource, s.ScopeName, s.ScopeVersion = tid, res, "bench/otelcoltest", "0.0.1-test"
		return s
	}
	return []otelcoltest.Span{
		scope(otelcoltest.Span{
			SpanID: id(root), Name: "skill.execute", Kind: otelcoltest.KindInternal,
			StartUnixNano: at(0).UnixNano(), EndUnixNano: at(time.Second + 17).UnixNano(),
			Attributes: map[string]any{"sop.level": "L2", "bench.run.id": "run-1"},
			StatusCode: otelcoltest.StatusUnset,
		}),
		scope(otelcoltest.Span{
			SpanID: id(suite), ParentSpanID: id(root), Name: "suite", Kind: otelcoltest.KindInternal,
			StartUnixNano: at(1*time.Millisecond + 1).UnixNano(), EndUnixNano: at(999*time.Millisecond + 15).UnixNano(),
			Attributes: map[string]any{"gen_ai.request.model": "scripted", "bench.cells": int64(1)},
			StatusCode: otelcoltest.StatusOK,
		}),
		scope(otelcoltest.Span{
			SpanID: id(cell), ParentSpanID: id(suite), Name: "cell", Kind: otelcoltest.KindInternal,
			StartUnixNano: at(2*time.Millisecond + 3).UnixNano(), EndUnixNano: at(950*time.Millisecond + 13).UnixNano(),
			Attributes: map[string]any{
				"bench.ttft_ms":                  12.5,
				"bench.valid":                    false,
				"gen_ai.response.finish_reasons": []any{"stop", "length"},
				"bench.ints":                     []any{int64(-1), int64(1 << 62)},
				"bench.floats":                   []any{0.25, -3.0},
				"bench.bools":                    []any{true, false},
				"bench.bytes":                    []byte{0, 1, 0xff},
				"bench.map":                      map[string]any{"k": "v", "n": int64(7)},
			},
			StatusCode: otelcoltest.StatusError, StatusMessage: "validator failed: want OK",
		}),
		scope(otelcoltest.Span{
			SpanID: id(req), ParentSpanID: id(cell), Name: "http.request", Kind: otelcoltest.KindClient,
			StartUnixNano: at(3*time.Millisecond + 5).UnixNano(), EndUnixNano: at(900*time.Millisecond + 11).UnixNano(),
			Attributes: map[string]any{"gen_ai.usage.output_tokens": int64(42), "http.request.method": "POST"},
			Events: []otelcoltest.Event{
				{Name: "first_byte", TimeUnixNano: at(40*time.Millisecond + 7).UnixNano(), Attributes: map[string]any{"bench.attempt": int64(1)}},
				{Name: "first_token", TimeUnixNano: at(41*time.Millisecond + 9).UnixNano()},
			},
			StatusCode: otelcoltest.StatusUnset,
		}),
	}
}

func provider(exp sdktrace.SpanExporter) *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "bench-otelcoltest"))),
	)
}

// checkTree asserts the collector received exactly want: same spans, ids,
// parents, nanosecond stamps, typed attributes, events and statuses.
func checkTree(t *testing.T, col *otelcoltest.Collector, want []otelcoltest.Span) {
	t.Helper()
	col.WaitSpans(t, len(want), 30*time.Second)
	// Stop flushes the file exporter: whatever else was sent is in the
	// file now, so the count below is exact.
	col.Stop()
	got := col.Spans(t)
	byName := func(s []otelcoltest.Span) {
		sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
	}
	byName(got)
	byName(want)
	if len(got) != len(want) {
		t.Fatalf("collector holds %d spans, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("span %q:\n got %+v\nwant %+v", want[i].Name, got[i], want[i])
		}
	}
}

func TestSDKExportsExactTree(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		exporter func(col *otelcoltest.Collector) (sdktrace.SpanExporter, error)
	}{
		{"http/protobuf", func(col *otelcoltest.Collector) (sdktrace.SpanExporter, error) {
			return otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(col.HTTPEndpoint()+"/v1/traces"))
		}},
		{"grpc", func(col *otelcoltest.Collector) (sdktrace.SpanExporter, error) {
			return otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(col.GRPCEndpoint()), otlptracegrpc.WithInsecure())
		}},
	} {
		t.Run(strings.ReplaceAll(tc.protocol, "/", "_"), func(t *testing.T) {
			col := otelcoltest.Start(t)
			exp, err := tc.exporter(col)
			if err != nil {
				t.Fatal(err)
			}
			tp := provider(exp)
			want := tree(t, tp)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := tp.Shutdown(ctx); err != nil {
				t.Fatalf("shutdown (flushes the batcher): %v", err)
			}
			checkTree(t, col, want)
			// OTELCOLTEST_KEEP=path saves the collector's file, e.g. to
			// refresh testdata/collector.jsonl.
			if p := os.Getenv("OTELCOLTEST_KEEP"); p != "" && tc.protocol == "http/protobuf" {
				b, err := os.ReadFile(col.OutputPath())
				if err == nil {
					err = os.WriteFile(p, b, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestSDKExportsFromEnvironment configures the exporters only through the
// standard variables, the way bench is turned on. The Go SDK has one package
// per protocol and neither switches on OTEL_EXPORTER_OTLP_PROTOCOL, so the
// caller picks the package from it, as this test does.
func TestSDKExportsFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name, protocol string
		env            func(col *otelcoltest.Collector) map[string]string
	}{
		{"http base endpoint", "http/protobuf", func(col *otelcoltest.Collector) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.HTTPEndpoint()}
		}},
		{"http traces endpoint", "http/protobuf", func(col *otelcoltest.Collector) map[string]string {
			// The per-signal variable is used as is: it needs the path.
			return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": col.HTTPEndpoint() + "/v1/traces"}
		}},
		{"http json", "http/json", func(col *otelcoltest.Collector) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.HTTPEndpoint()}
		}},
		{"grpc", "grpc", func(col *otelcoltest.Collector) map[string]string {
			// http:// is what makes the gRPC exporter skip TLS.
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + col.GRPCEndpoint()}
		}},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			col := otelcoltest.Start(t)
			for k, v := range tc.env(col) {
				t.Setenv(k, v)
			}
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tc.protocol)
			t.Setenv("OTEL_SERVICE_NAME", "from-env")
			var exp sdktrace.SpanExporter
			var err error
			switch tc.protocol {
			case "grpc":
				exp, err = otlptracegrpc.New(context.Background())
			default:
				exp, err = otlptracehttp.New(context.Background())
			}
			if err != nil {
				t.Fatal(err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
			_, span := tp.Tracer("env").Start(context.Background(), "one", trace.WithTimestamp(at(0)))
			span.End(trace.WithTimestamp(at(time.Nanosecond)))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := tp.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			got := col.WaitSpans(t, 1, 30*time.Second)
			if len(got) != 1 || got[0].Name != "one" || got[0].Duration() != time.Nanosecond {
				t.Fatalf("got %+v, want one span \"one\" of 1ns", got)
			}
			if sn := got[0].Resource["service.name"]; sn != "from-env" {
				t.Errorf("service.name = %v, want OTEL_SERVICE_NAME's from-env", sn)
			}
		})
	}
}

// deadAddr is a loopback port nothing listens on (connections are refused).
func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// stalledAddr accepts connections and never answers: a hung collector.
func stalledAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

func oneSpan() sdktrace.ReadOnlySpan {
	tp := sdktrace.NewTracerProvider()
	_, s := tp.Tracer("dead").Start(context.Background(), "single", trace.WithTimestamp(base))
	s.End(trace.WithTimestamp(base.Add(time.Second)))
	return s.(sdktrace.ReadOnlySpan)
}

type exporterFunc func(addr string, timeout time.Duration) (sdktrace.SpanExporter, error)

// httpExporter and grpcExporter make exporters to addr. A timeout > 0 sets
// the exporter's own timeout and turns its retries off: otlptracehttp's
// WithTimeout bounds each attempt only, and its retries (on by default) go on
// for up to a minute (an export to a stalled collector with WithTimeout(200ms)
// alone took 71s); otlptracegrpc's bounds the whole export.
func httpExporter(addr string, timeout time.Duration) (sdktrace.SpanExporter, error) {
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure()}
	if timeout > 0 {
		opts = append(opts, otlptracehttp.WithTimeout(timeout), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	}
	return otlptracehttp.New(context.Background(), opts...)
}

func grpcExporter(addr string, timeout time.Duration) (sdktrace.SpanExporter, error) {
	opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure()}
	if timeout > 0 {
		opts = append(opts, otlptracegrpc.WithTimeout(timeout), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	}
	return otlptracegrpc.New(context.Background(), opts...)
}

var exporters = []struct {
	name string
	make exporterFunc
}{{"http", httpExporter}, {"grpc", grpcExporter}}

// TestExportToDeadOrStalledCollectorIsBounded shows what bench's exporter
// can rely on: a collector that is gone or hangs makes an export fail with
// an error once its context (or the exporter's own timeout, retries off) runs
// out. Over HTTP a refused connection fails at once (not retried); over gRPC
// it is Unavailable, retried until the context ends. Nothing here measures
// time: a hang would show as the test binary's timeout.
func TestExportToDeadOrStalledCollectorIsBounded(t *testing.T) {
	for _, proto := range exporters {
		for _, tc := range []struct {
			name    string
			addr    func(t *testing.T) string
			timeout time.Duration // the exporter's own; 0: the context bounds it
		}{
			{"dead, context deadline", deadAddr, 0},
			{"stalled, context deadline", stalledAddr, 0},
			{"dead, exporter timeout", deadAddr, 200 * time.Millisecond},
			{"stalled, exporter timeout", stalledAddr, 200 * time.Millisecond},
		} {
			t.Run(proto.name+"/"+strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
				exp, err := proto.make(tc.addr(t), tc.timeout)
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if tc.timeout == 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
					defer cancel()
				}
				err = exp.ExportSpans(ctx, []sdktrace.ReadOnlySpan{oneSpan()})
				if err == nil {
					t.Fatal("export to a dead collector returned no error")
				}
				t.Logf("error: %v", err)
				sctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				_ = exp.Shutdown(sctx)
			})
		}
	}
}

// captureErrors routes the OTel global error handler, where the batch span
// processor sends the errors of its background exports, into a list for the
// test's duration. Without a handler the SDK prints each one with the
// standard logger.
func captureErrors(t *testing.T) func() []error {
	var mu sync.Mutex
	var errs []error
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}))
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	return func() []error {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(errs)
	}
}

// TestProviderWithDeadCollectorIsBounded is the whole-provider view, with
// the spans queued in the batcher and the collector gone. ForceFlush with a
// deadline returns the export's error. Shutdown alone returns nil or its
// context's error: the batcher's final export runs on a background context
// bounded only by WithExportTimeout (30s by default), and its error goes to
// the global error handler, not to the caller.
func TestProviderWithDeadCollectorIsBounded(t *testing.T) {
	for _, proto := range exporters {
		t.Run(proto.name+"/ForceFlush", func(t *testing.T) {
			errs := captureErrors(t)
			exp, err := proto.make(deadAddr(t), 0)
			if err != nil {
				t.Fatal(err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithExportTimeout(300*time.Millisecond)))
			tree(t, tp)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if err := tp.ForceFlush(ctx); err == nil {
				t.Fatal("ForceFlush to a dead collector returned no error")
			}
			_ = tp.Shutdown(ctx)
			t.Logf("handler got %v", errs())
		})
		t.Run(proto.name+"/Shutdown", func(t *testing.T) {
			errs := captureErrors(t)
			exp, err := proto.make(deadAddr(t), 0)
			if err != nil {
				t.Fatal(err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithExportTimeout(300*time.Millisecond)))
			tree(t, tp)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			err = tp.Shutdown(ctx)
			// The drain's error reaches the handler when it gives up, which
			// the export timeout bounds; wait for it (the limit is only
			// there to fail rather than hang if it never comes).
			for limit := time.Now().Add(30 * time.Second); err == nil && len(errs()) == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(limit) {
					t.Fatal("Shutdown returned nil and no export error reached the error handler")
				}
			}
			t.Logf("Shutdown: %v; handler got %v", err, errs())
		})
	}
}

// TestStopMidRun kills the collector between two exports: the first
// arrives, the second fails, and what arrived stays readable.
func TestStopMidRun(t *testing.T) {
	col := otelcoltest.Start(t)
	exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(col.GRPCEndpoint()), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := exp.ExportSpans(ctx, []sdktrace.ReadOnlySpan{oneSpan()}); err != nil {
		t.Fatalf("export to a running collector: %v", err)
	}
	col.Stop()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if err := exp.ExportSpans(ctx2, []sdktrace.ReadOnlySpan{oneSpan()}); err == nil {
		t.Fatal("export after Stop returned no error")
	}
	if got := col.Spans(t); len(got) != 1 || got[0].Name != "single" {
		t.Fatalf("after Stop the collector holds %+v, want the one span sent before", got)
	}
}
