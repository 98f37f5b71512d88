package traces

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"bench/config"
)

// Export is the OTLP export as configured: the traces: block over the
// standard OTEL_* variables.
type Export struct {
	// On says whether spans are exported at all.
	On bool
	// Protocol is grpc, http/protobuf or http/json.
	Protocol string
	// Endpoint is the traces: block's; "" leaves it to the exporter's own
	// reading of OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT.
	Endpoint string
	// Headers, when not nil, replace the exporter's reading of
	// OTEL_EXPORTER_OTLP_(TRACES_)HEADERS: those merged with headers_env.
	Headers map[string]string
	// Timeout bounds each export and the final flush.
	Timeout time.Duration
	// ServiceName overrides OTEL_SERVICE_NAME when set.
	ServiceName string
	// secrets are the header values, scrubbed from any message.
	secrets []string
	getenv  func(string) string
}

// ResolveExport reads the traces: block and the environment (getenv) into
// the export's settings. Notes are things the user should hear about (an
// unknown protocol, a header variable that is not set), never a value.
func ResolveExport(t config.Traces, getenv func(string) string) (Export, []string) {
	e := Export{Endpoint: t.Endpoint, Timeout: time.Duration(t.Timeout), ServiceName: t.ServiceName, getenv: getenv}
	if e.Timeout <= 0 {
		e.Timeout = config.DefaultTracesTimeout
	}
	var notes []string
	switch {
	case t.OTLP != nil:
		e.On = *t.OTLP
	case strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true"):
		e.On = false
	case getenv("OTEL_TRACES_EXPORTER") != "" && !strings.Contains(getenv("OTEL_TRACES_EXPORTER"), "otlp"):
		e.On = false // none, or an exporter bench does not have
	default:
		e.On = t.Endpoint != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	}
	e.Protocol = t.Protocol
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if e.Protocol == "" {
			e.Protocol = strings.TrimSpace(getenv(k))
			if e.Protocol != "" && !contains(config.Protocols, e.Protocol) {
				notes = append(notes, fmt.Sprintf("%s is not one of %s: no OTLP export", k, strings.Join(config.Protocols, ", ")))
				e.On, e.Protocol = false, ""
				break
			}
		}
	}
	if e.Protocol == "" {
		e.Protocol = "http/protobuf"
	}
	if len(t.HeadersEnv) > 0 {
		e.Headers = map[string]string{}
		for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
			for h, v := range parseHeaders(getenv(k)) {
				e.Headers[h] = v
			}
		}
		for h, name := range t.HeadersEnv {
			v := getenv(name)
			if v == "" {
				notes = append(notes, fmt.Sprintf("traces.headers_env.%s: $%s is not set; the header is not sent", h, name))
				continue
			}
			e.Headers[h] = v
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, v := range parseHeaders(getenv(k)) {
			e.secrets = append(e.secrets, v)
		}
	}
	for _, v := range e.Headers {
		e.secrets = append(e.secrets, v)
	}
	return e, notes
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parseHeaders reads the OTEL_EXPORTER_OTLP_HEADERS form: key=value pairs,
// comma-separated, values URL-encoded. Bad pairs are skipped, as the SDK does.
func parseHeaders(s string) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		if dv, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			out[k] = dv
		}
	}
	return out
}

// httpTracesURL is an http endpoint from the traces: block as the exporter
// takes it: the base URL gets the signal's path, a URL with a path of its
// own is used as is (as OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is).
func httpTracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return endpoint
	}
	u.Path = "/v1/traces"
	return u.String()
}

// newExporter makes the protocol's exporter. Retries are bounded by the
// timeout, so a dead collector costs at most that per export.
func newExporter(ctx context.Context, e Export) (sdktrace.SpanExporter, error) {
	switch e.Protocol {
	case "grpc":
		opts := []otlptracegrpc.Option{otlptracegrpc.WithTimeout(e.Timeout),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: e.Timeout})}
		if e.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(e.Endpoint))
		}
		if e.Headers != nil {
			opts = append(opts, otlptracegrpc.WithHeaders(e.Headers))
		}
		return otlptracegrpc.New(ctx, opts...)
	case "http/json":
		return newJSONExporter(ctx, e)
	default:
		opts := []otlptracehttp.Option{otlptracehttp.WithTimeout(e.Timeout),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: e.Timeout})}
		if e.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(httpTracesURL(e.Endpoint)))
		}
		if e.Headers != nil {
			opts = append(opts, otlptracehttp.WithHeaders(e.Headers))
		}
		return otlptracehttp.New(ctx, opts...)
	}
}

// otlpOut sends spans through the OpenTelemetry SDK's batch span
// processor and OTLP exporter. Each span is handed over finished, as the
// SDK's own ReadOnlySpan snapshot (tracetest.SpanStub) of bench's span:
// its ids, its stamps, its attributes. Starting and ending each span
// through a Tracer did the same with explicit ids (a context-fed
// IDGenerator) and trace.WithTimestamp, at twice the CPU per span (see
// BenchmarkAddRecord), for spans that are complete before they are sent.
// The batch processor never blocks the run: a full queue drops spans.
type otlpOut struct {
	bsp     sdktrace.SpanProcessor
	res     *resource.Resource
	scope   instrumentation.Scope
	tid     trace.TraceID
	timeout time.Duration
	warn    func(error)
}

// errorSink routes the SDK's global error handler to the tracer that is
// exporting: partial-success notes and the like arrive there, not as
// returned errors.
var errorSink atomic.Pointer[func(error)]

var installHandler sync.Once

func newOTLP(ctx context.Context, e Export, tid trace.TraceID, version string, warn func(error)) (*otlpOut, error) {
	exp, err := newExporter(ctx, e)
	if err != nil {
		return nil, err
	}
	installHandler.Do(func() {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			if f := errorSink.Load(); f != nil {
				(*f)(err)
			}
		}))
	})
	errorSink.Store(&warn)
	attrs := []resource.Option{
		resource.WithAttributes(semconv.ServiceName("bench"), semconv.ServiceVersion(version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
		resource.WithTelemetrySDK(),
	}
	if e.ServiceName != "" {
		attrs = append(attrs, resource.WithAttributes(semconv.ServiceName(e.ServiceName)))
	}
	res, err := resource.New(ctx, attrs...)
	if err != nil && res == nil {
		return nil, err
	}
	bsp := sdktrace.NewBatchSpanProcessor(guarded{exp, warn},
		sdktrace.WithExportTimeout(e.Timeout), sdktrace.WithMaxQueueSize(16384), sdktrace.WithMaxExportBatchSize(2048))
	return &otlpOut{
		bsp: bsp, res: res, tid: tid, timeout: e.Timeout, warn: warn,
		scope: instrumentation.Scope{Name: "bench/traces", Version: version, SchemaURL: semconv.SchemaURL},
	}, nil
}

// guarded turns an export's error into the tracer's one warning instead
// of the SDK's global handler (which would print each failed batch).
type guarded struct {
	sdktrace.SpanExporter
	warn func(error)
}

func (g guarded) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := g.SpanExporter.ExportSpans(ctx, spans); err != nil {
		g.warn(err)
	}
	return nil
}

// emit hands each span to the batch processor, finished, at bench's own
// stamps.
func (o *otlpOut) emit(spans []span) {
	for i := range spans {
		s := &spans[i]
		attrs := make([]attribute.KeyValue, len(s.attrs), len(s.attrs)+2)
		copy(attrs, s.attrs)
		stub := tracetest.SpanStub{
			Name:        s.name,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: o.tid, SpanID: s.id, TraceFlags: trace.FlagsSampled}),
			SpanKind:    s.otel,
			StartTime:   s.start, EndTime: s.end,
			Attributes:           append(attrs, keySpanKind.String(s.kind), keySpanStatus.String(s.status)),
			Resource:             o.res,
			InstrumentationScope: o.scope,
		}
		if s.parent.IsValid() {
			stub.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: o.tid, SpanID: s.parent, TraceFlags: trace.FlagsSampled})
		}
		if len(s.events) > 0 {
			stub.Events = make([]sdktrace.Event, len(s.events))
			for j, e := range s.events {
				stub.Events[j] = sdktrace.Event{Name: e.name, Time: e.at, Attributes: append([]attribute.KeyValue(nil), e.attrs...)}
			}
		}
		for _, l := range s.links {
			stub.Links = append(stub.Links, sdktrace.Link{
				SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: l.trace, SpanID: l.span, TraceFlags: trace.FlagsSampled}),
				Attributes:  append([]attribute.KeyValue(nil), l.attrs...),
			})
		}
		switch s.status {
		case StatusError:
			stub.Status = sdktrace.Status{Code: codes.Error, Description: s.errType + ": " + s.errMsg}
		case StatusOK:
			stub.Status = sdktrace.Status{Code: codes.Ok}
		}
		o.bsp.OnEnd(stub.Snapshot())
	}
}

// shutdown flushes what is queued and stops, within the timeout whatever
// the collector does: a flush still running then is abandoned.
func (o *otlpOut) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := o.bsp.ForceFlush(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			o.warn(err)
		} else if err != nil {
			o.warn(fmt.Errorf("the collector did not take the spans within %s (traces.timeout)", o.timeout))
		}
		_ = o.bsp.Shutdown(ctx)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		o.warn(fmt.Errorf("the collector did not take the spans within %s (traces.timeout)", o.timeout))
	}
}
