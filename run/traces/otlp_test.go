package traces

import (
	"bytes"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/config"
	"bench/internal/testpeer/otelcoltest"
	"bench/run/traces/tracetest"
)

// syncBuffer is a log the SDK's goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// exportTo configures the export in the traces: block (endpoint from the
// block) or through the standard variables only.
func exportTo(t *testing.T, cfg *config.Config, col *otelcoltest.Collector, protocol string, viaEnv bool) func(string) string {
	env := map[string]string{}
	ep := col.HTTPEndpoint()
	if protocol == "grpc" {
		ep = "http://" + col.GRPCEndpoint()
	}
	if viaEnv {
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", ep)
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
		t.Setenv("OTEL_SERVICE_NAME", "nightly")
		env["OTEL_EXPORTER_OTLP_ENDPOINT"], env["OTEL_EXPORTER_OTLP_PROTOCOL"] = ep, protocol
	} else {
		cfg.Traces.Endpoint, cfg.Traces.Protocol, cfg.Traces.ServiceName = ep, protocol, "nightly"
	}
	return func(k string) string { return env[k] }
}

// The collector receives the NDJSON's tree: same ids, parents, names,
// stamps to the nanosecond of the microsecond stamps, attributes (plus
// sop.span.kind and sop.span.status), events, statuses and the root's link.
func TestOTLPMatchesNDJSON(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		viaEnv   bool
	}{{"http/protobuf", false}, {"grpc", false}, {"http/json", false}, {"http/protobuf", true}, {"grpc", true}, {"http/json", true}} {
		name := strings.ReplaceAll(tc.protocol, "/", "_")
		if tc.viaEnv {
			name += "_env"
		}
		t.Run(name, func(t *testing.T) {
			col := otelcoltest.Start(t)
			cfg := testConfig(t)
			getenv := exportTo(t, cfg, col, tc.protocol, tc.viaEnv)
			log := &syncBuffer{}
			dir := t.TempDir()
			first, _ := runTrace(t, dir, cfg, Options{Getenv: getenv, Log: log})
			tr, spans := runTrace(t, dir, cfg, Options{Getenv: getenv, Log: log, Resume: true, Done: 1}, retried(), skipped(), cli(), agentic())
			if !tr.Exporting() || log.String() != "" {
				t.Fatalf("exporting %v, log:\n%s", tr.Exporting(), log)
			}
			all := col.WaitSpans(t, len(spans)+1, 30*time.Second)
			col.Stop()
			all = col.Spans(t)
			var got []otelcoltest.Span
			for _, s := range all {
				if s.TraceID == tr.TraceID().String() {
					got = append(got, s)
				}
			}
			if len(got) != len(spans) || len(all) != len(spans)+1 {
				t.Fatalf("collector holds %d spans of the trace (%d in all, want 1 more: the first run's root), the NDJSON %d", len(got), len(all), len(spans))
			}
			byID := map[string]otelcoltest.Span{}
			for _, s := range got {
				byID[s.SpanID] = s
			}
			for _, n := range spans {
				o, ok := byID[n.SpanID]
				if !ok {
					t.Errorf("span %s (%s) not received", n.SpanID, n.Name)
					continue
				}
				compare(t, n, o)
				if o.Resource["service.name"] != "nightly" || o.Resource["service.version"] != "v9.9.9-test" || o.ScopeName != "bench/traces" {
					t.Errorf("resource %v scope %s", o.Resource, o.ScopeName)
				}
			}
			root := byID[rootID(tr.TraceID()).String()]
			if len(root.Links) != 1 || root.Links[0].TraceID != first.TraceID().String() || root.Links[0].SpanID != rootID(first.TraceID()).String() {
				t.Errorf("the resumed root's links %+v", root.Links)
			}
		})
	}
}

// compare checks one OTLP span against its NDJSON line.
func compare(t *testing.T, n tracetest.Span, o otelcoltest.Span) {
	t.Helper()
	if o.Name != n.Name || o.TraceID != n.TraceID || o.ParentSpanID != n.ParentSpanID {
		t.Errorf("%s: name/trace/parent %q %s %s, NDJSON %q %s %s", n.SpanID, o.Name, o.TraceID, o.ParentSpanID, n.Name, n.TraceID, n.ParentSpanID)
	}
	if o.Start().UTC().Format(TimeLayout) != n.StartTime || o.End().UTC().Format(TimeLayout) != n.EndTime || o.StartUnixNano%1000 != 0 || o.EndUnixNano%1000 != 0 {
		t.Errorf("%s: OTLP %d–%d, NDJSON %s–%s", n.Name, o.StartUnixNano, o.EndUnixNano, n.StartTime, n.EndTime)
	}
	if float64(o.Duration().Microseconds())/1000 != n.DurationMS {
		t.Errorf("%s: OTLP duration %v, NDJSON %v ms", n.Name, o.Duration(), n.DurationMS)
	}
	want := map[string]any{"sop.span.kind": n.Kind, "sop.span.status": n.Status}
	for k, v := range n.Attributes {
		want[k] = v
	}
	if !reflect.DeepEqual(normalize(o.Attributes), normalize(want)) {
		t.Errorf("%s: attributes\n OTLP %v\nNDJSON %v", n.Name, o.Attributes, want)
	}
	if len(o.Events) != len(n.Events) {
		t.Errorf("%s: %d events, NDJSON %d", n.Name, len(o.Events), len(n.Events))
	} else {
		for i, e := range n.Events {
			oe := o.Events[i]
			if oe.Name != e.Name || oe.Time().UTC().Format(TimeLayout) != e.Timestamp || !reflect.DeepEqual(normalize(oe.Attributes), normalize(e.Attributes)) {
				t.Errorf("%s: event %d %+v, NDJSON %+v", n.Name, i, oe, e)
			}
		}
	}
	wantStatus := map[string]otelcoltest.StatusCode{StatusOK: otelcoltest.StatusOK, StatusError: otelcoltest.StatusError, StatusSkipped: otelcoltest.StatusUnset}[n.Status]
	if o.StatusCode != wantStatus || (n.Error != nil && o.StatusMessage != n.Error.Type+": "+n.Error.Message) {
		t.Errorf("%s: status %s %q, NDJSON %s %+v", n.Name, o.StatusCode, o.StatusMessage, n.Status, n.Error)
	}
	if n.Kind == KindHTTPRequest && o.Kind != otelcoltest.KindClient || n.Kind != KindHTTPRequest && o.Kind != otelcoltest.KindInternal {
		t.Errorf("%s: OTLP kind %s for %s", n.Name, o.Kind, n.Kind)
	}
}

// normalize makes JSON's and OTLP's values comparable: numbers as float64,
// arrays as []any.
func normalize(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	out := map[string]any{}
	for k, v := range m {
		out[k] = norm(v)
	}
	return out
}

func norm(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = norm(x[i])
		}
		return out
	}
	return v
}

// deadAddr is a loopback port nothing listens on; stalledAddr accepts
// connections and never answers.
func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func stalledAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// A collector that refuses or hangs costs one warning; the NDJSON is
// whole. The finish is bounded by traces.timeout by construction (a hang
// would show as the test binary's timeout); the time taken is logged.
func TestDeadCollectorOneWarning(t *testing.T) {
	for _, proto := range []string{"http/protobuf", "grpc", "http/json"} {
		for _, c := range []struct {
			name string
			addr func(*testing.T) string
		}{{"refused", deadAddr}, {"stalled", stalledAddr}} {
			t.Run(strings.ReplaceAll(proto, "/", "_")+"_"+c.name, func(t *testing.T) {
				cfg := testConfig(t)
				cfg.Traces.Endpoint, cfg.Traces.Protocol = "http://"+c.addr(t), proto
				cfg.Traces.Timeout = config.Duration(300 * time.Millisecond)
				log := &syncBuffer{}
				began := time.Now()
				_, spans := runTrace(t, t.TempDir(), cfg, Options{Log: log}, retried(), skipped(), cli(), agentic())
				t.Logf("finished in %s: %s", time.Since(began).Round(time.Millisecond), strings.TrimSpace(log.String()))
				if len(spans) != 24 {
					t.Errorf("the NDJSON has %d spans, want all 24", len(spans))
				}
				if n := strings.Count(log.String(), "\n"); n != 1 || !strings.Contains(log.String(), "bench: warning: traces: OTLP export ("+proto+") failed") {
					t.Errorf("want one warning, got %d lines:\n%s", n, log)
				}
			})
		}
	}
}

// Header values never appear in a warning, wherever they came from.
func TestHeaderValuesNotInWarnings(t *testing.T) {
	cfg := testConfig(t)
	addr := stalledAddr(t)
	cfg.Traces.Endpoint, cfg.Traces.Protocol = "http://"+addr, "http/json"
	cfg.Traces.HeadersEnv = map[string]string{"x-api-key": "BENCH_TEST_OTLP_KEY"}
	cfg.Traces.Timeout = config.Duration(200 * time.Millisecond)
	env := map[string]string{"BENCH_TEST_OTLP_KEY": secretText, "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20" + secretText + "2"}
	log := &syncBuffer{}
	runTrace(t, t.TempDir(), cfg, Options{Log: log, Getenv: func(k string) string { return env[k] }}, retried())
	if strings.Contains(log.String(), "SECRET") || !strings.Contains(log.String(), "OTLP export") {
		t.Errorf("log:\n%s", log)
	}
	e, notes := ResolveExport(cfg.Traces, func(k string) string { return env[k] })
	if e.Headers["x-api-key"] != secretText || e.Headers["authorization"] != "Bearer "+secretText+"2" || len(notes) != 0 {
		t.Errorf("headers %d, notes %v", len(e.Headers), notes)
	}
}

func TestResolveExport(t *testing.T) {
	on, off := true, false
	for _, tc := range []struct {
		name     string
		block    config.Traces
		env      map[string]string
		on       bool
		protocol string
		note     string
	}{
		{"nothing set", config.Traces{}, nil, false, "http/protobuf", ""},
		{"env endpoint", config.Traces{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true, "http/protobuf", ""},
		{"env traces endpoint and protocol", config.Traces{}, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, true, "grpc", ""},
		{"block endpoint", config.Traces{Endpoint: "http://c:4318"}, nil, true, "http/protobuf", ""},
		{"block protocol wins", config.Traces{Endpoint: "http://c:4317", Protocol: "grpc"}, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, true, "grpc", ""},
		{"otlp false wins", config.Traces{OTLP: &off}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, false, "http/protobuf", ""},
		{"otlp true, default endpoint", config.Traces{OTLP: &on}, nil, true, "http/protobuf", ""},
		{"sdk disabled", config.Traces{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_SDK_DISABLED": "true"}, false, "http/protobuf", ""},
		{"exporter none", config.Traces{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_TRACES_EXPORTER": "none"}, false, "http/protobuf", ""},
		{"bad env protocol", config.Traces{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "udp"}, false, "http/protobuf", "OTEL_EXPORTER_OTLP_PROTOCOL is not one of"},
		{"unset header variable", config.Traces{Endpoint: "http://c", HeadersEnv: map[string]string{"x-key": "NOPE"}}, nil, true, "http/protobuf", "traces.headers_env.x-key: $NOPE is not set"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			e, notes := ResolveExport(tc.block, func(k string) string { return tc.env[k] })
			if e.On != tc.on || e.Protocol != tc.protocol || (tc.note == "") != (len(notes) == 0) || tc.note != "" && !strings.Contains(notes[0], tc.note) {
				t.Errorf("on %v protocol %s notes %v", e.On, e.Protocol, notes)
			}
		})
	}
}
