package traces

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

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

// newClient makes the protocol's OTLP client for grpc and http/protobuf:
// the exporters' own (their endpoint, header, TLS and compression settings
// and OTEL_* variables). Retries are bounded by the timeout, so a dead
// collector costs at most that per batch. http/json is bench's own client
// (newJSONClient), which is handed the request body bench encodes.
func newClient(e Export) otlptrace.Client {
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
		return otlptracegrpc.NewClient(opts...)
	default:
		opts := []otlptracehttp.Option{otlptracehttp.WithTimeout(e.Timeout),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: e.Timeout})}
		if e.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(httpTracesURL(e.Endpoint)))
		}
		if e.Headers != nil {
			opts = append(opts, otlptracehttp.WithHeaders(e.Headers))
		}
		return otlptracehttp.NewClient(opts...)
	}
}

// Batching, as the SDK's batch span processor did it: up to
// otlpBatchSpans spans (or otlpBatchBytes of them) a request, a partial
// batch sent after otlpBatchDelay, at most otlpQueueBatches waiting (the
// processor's 16,384 spans). A full queue drops a batch rather than wait:
// the export never stalls the run. A batch's buffer is made at its full
// size once (a cell's span is under 1 KB, so 1,024 of them fit) and never
// grows or is made again.
const (
	otlpBatchSpans   = 1024
	otlpBatchBytes   = 1 << 20
	otlpBatchDelay   = 5 * time.Second
	otlpQueueBatches = 16
)

// otlpOut sends the spans over OTLP. Each span is encoded straight from
// bench's span record (otlpenc.go, jsonenc.go for http/json) into its
// batch as it is emitted; a goroutine sends the batches through the
// protocol's client. Starting and
// ending each span through the SDK's Tracer, or handing its ReadOnlySpan
// snapshot to the SDK's batch processor, cost 40-57 µs a cell against the
// NDJSON's 9 (BenchmarkTracedRun).
type otlpOut struct {
	client otlptrace.Client // grpc, http/protobuf; nil for http/json
	// json is http/json's client, which posts the body bench encodes;
	// head and tail are that body around a batch's spans.
	json       *jsonClient
	head, tail []byte
	tid        trace.TraceID
	timeout    time.Duration
	warn       func(error)
	// res and scope are the resource and scope every batch carries.
	res                  *resourcepb.Resource
	scope                *commonpb.InstrumentationScope
	resSchema, scopeSchm string

	mu      sync.Mutex
	span    []byte     // one span's encoding, before it joins the batch
	cur     *otlpBatch // the batch being filled; nil: none yet
	dropped int        // spans dropped on a full queue
	closed  bool

	queue chan *otlpBatch
	free  chan *otlpBatch // sent batches, for reuse
	tick  *time.Ticker
	done  chan struct{} // closed when the sender has sent the last batch
}

// otlpBatch is one request's spans, encoded: buf holds the repeated
// ScopeSpans.spans field (tag, length and Span encoding for each), which
// goes out as the fields of the batch's ScopeSpans; for http/json, the
// Span objects, comma-separated, of the spans array. Once sent, a batch is
// reused whole: no buffer is allocated per span or per batch in a long
// run, and sending it copies the buffer once, not span by span.
type otlpBatch struct {
	buf   []byte
	spans int
}

func (b *otlpBatch) full() bool {
	return b.spans >= otlpBatchSpans || len(b.buf) >= otlpBatchBytes
}

// errorSink routes the SDK's global error handler to the tracer that is
// exporting: partial-success notes and the like arrive there, not as
// returned errors.
var errorSink atomic.Pointer[func(error)]

var installHandler sync.Once

func newOTLP(ctx context.Context, e Export, tid trace.TraceID, version string, warn func(error)) (*otlpOut, error) {
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
	if e.Protocol == "http/json" {
		return startOTLP(nil, newJSONClient(e), res, tid, version, e.Timeout, warn), nil
	}
	client := newClient(e)
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	return startOTLP(client, nil, res, tid, version, e.Timeout, warn), nil
}

// startOTLP starts sending through a started client, or through json
// (http/json) when client is nil.
func startOTLP(client otlptrace.Client, json *jsonClient, res *resource.Resource, tid trace.TraceID, version string, timeout time.Duration, warn func(error)) *otlpOut {
	o := &otlpOut{
		client: client, json: json, tid: tid, timeout: timeout, warn: warn,
		res: resourceProto(res), resSchema: res.SchemaURL(),
		scope: &commonpb.InstrumentationScope{Name: "bench/traces", Version: version}, scopeSchm: semconv.SchemaURL,
		queue: make(chan *otlpBatch, otlpQueueBatches), free: make(chan *otlpBatch, 2),
		tick: time.NewTicker(otlpBatchDelay), done: make(chan struct{}),
	}
	if json != nil {
		o.head, o.tail = jsonEnvelope(res, o.resSchema, o.scope.Name, o.scope.Version, o.scopeSchm)
	}
	go o.send()
	return o
}

// resourceProto is the resource as OTLP carries it.
func resourceProto(r *resource.Resource) *resourcepb.Resource {
	var b []byte
	for _, kv := range r.Attributes() {
		b = pbKV(b, 1, kv) // Resource.attributes
	}
	pb := &resourcepb.Resource{}
	if err := proto.Unmarshal(b, pb); err != nil {
		return &resourcepb.Resource{}
	}
	return pb
}

// emit encodes the spans into the batch, sending it when full.
func (o *otlpOut) emit(spans []span) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	for i := range spans {
		if o.cur == nil {
			o.cur = o.batch()
		}
		c := o.cur
		if o.json != nil {
			if c.spans > 0 {
				c.buf = append(c.buf, ',')
			}
			c.buf = jsonSpan(c.buf, o.tid, &spans[i])
		} else {
			o.span = pbSpan(o.span[:0], o.tid, &spans[i])
			c.buf = appendTag(c.buf, fScopeSpans, protowire.BytesType)
			c.buf = pbAppendBytes(c.buf, o.span)
		}
		c.spans++
		if c.full() {
			o.flushLocked()
		}
	}
}

// batch is an empty batch: a sent one, or a new one.
func (o *otlpOut) batch() *otlpBatch {
	select {
	case b := <-o.free:
		return b
	default:
		return &otlpBatch{buf: make([]byte, 0, otlpBatchBytes+64<<10)}
	}
}

// recycle keeps a sent (or dropped) batch for reuse.
func (o *otlpOut) recycle(b *otlpBatch) {
	b.buf, b.spans = b.buf[:0], 0
	select {
	case o.free <- b:
	default:
	}
}

// flushLocked hands the batch to the sender, or drops it when the queue
// is full: the run does not wait for the collector.
func (o *otlpOut) flushLocked() {
	b := o.cur
	if b == nil || b.spans == 0 {
		return
	}
	o.cur = nil
	select {
	case o.queue <- b:
	default:
		if o.dropped == 0 {
			o.warn(fmt.Errorf("the collector is not keeping up: spans dropped (the export queue holds %d batches)", otlpQueueBatches))
		}
		o.dropped += b.spans
		o.recycle(b)
	}
}

// send exports the queued batches, and a partial batch every
// otlpBatchDelay, until the queue is closed.
func (o *otlpOut) send() {
	defer close(o.done)
	for {
		select {
		case b, ok := <-o.queue:
			if !ok {
				return
			}
			o.upload(b)
			o.recycle(b)
		case <-o.tick.C:
			o.mu.Lock()
			if !o.closed {
				o.flushLocked()
			}
			o.mu.Unlock()
		}
	}
}

func (o *otlpOut) upload(b *otlpBatch) {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	if o.json != nil {
		if err := o.json.post(ctx, o.head, b.buf, o.tail); err != nil {
			o.warn(err)
		}
		return
	}
	ss := &tracepb.ScopeSpans{Scope: o.scope, SchemaUrl: o.scopeSchm}
	ss.ProtoReflect().SetUnknown(b.buf)
	rs := &tracepb.ResourceSpans{Resource: o.res, SchemaUrl: o.resSchema, ScopeSpans: []*tracepb.ScopeSpans{ss}}
	if err := o.client.UploadTraces(ctx, []*tracepb.ResourceSpans{rs}); err != nil {
		o.warn(err)
	}
}

// shutdown sends what is left and stops, within the timeout whatever the
// collector does: a send still running then is abandoned.
func (o *otlpOut) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	o.tick.Stop()
	o.mu.Lock()
	last := o.cur
	o.cur, o.closed = nil, true
	o.mu.Unlock()
	go func() {
		// The last batch waits for room: nothing is dropped at the end.
		if last != nil && last.spans > 0 {
			o.queue <- last
		}
		close(o.queue)
	}()
	select {
	case <-o.done:
		if o.json != nil {
			o.json.stop()
		} else {
			_ = o.client.Stop(ctx)
		}
	case <-ctx.Done():
		o.warn(fmt.Errorf("the collector did not take the spans within %s (traces.timeout)", o.timeout))
	}
}
