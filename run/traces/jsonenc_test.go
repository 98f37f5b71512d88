package traces

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"bench/internal/testpeer/otelcoltest"
)

// protojsonOracle is how bench wrote OTLP/JSON before jsonenc.go: the
// batch's protobuf decoded into tracepb messages, protojson over the
// request, and its base64 ids rewritten as hex. It is the oracle the
// direct encoding is held to.
func protojsonOracle(rs *tracepb.ResourceSpans) ([]byte, error) {
	for _, ss := range rs.ScopeSpans {
		m := ss.ProtoReflect()
		raw := m.GetUnknown()
		m.SetUnknown(nil)
		if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(raw, ss); err != nil {
			return nil, err
		}
	}
	b, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{rs}})
	if err != nil {
		return nil, err
	}
	var bad error
	b = oracleID.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := oracleID.FindSubmatch(m)
		raw, err := base64.StdEncoding.DecodeString(string(sub[2]))
		if err != nil {
			bad = fmt.Errorf("id %s: %w", sub[1], err)
		}
		return []byte(`"` + string(sub[1]) + `":"` + hex.EncodeToString(raw) + `"`)
	})
	return b, bad
}

// oracleID is an id as protojson writes it (base64, with the space it
// may put after the colon).
var oracleID = regexp.MustCompile(`"(traceId|spanId|parentSpanId)":\s*"([A-Za-z0-9+/=]*)"`)

// oddSpans are spans of every shape the encoder has a branch for: every
// attribute type (slices empty and not, an empty key, doubles JSON has no
// number for or writes with an exponent, 64-bit integers), events with and
// without a name or attributes, links with and without attributes, each
// status, no parent and no kind, stamps before 1970, and strings with
// quotes, backslashes, every control character, DEL, U+2028, U+FFFD,
// invalid UTF-8 and 100 KB.
func oddSpans(tid trace.TraceID) []span {
	var ctl strings.Builder
	for c := 0; c < 0x20; c++ {
		ctl.WriteByte(byte(c))
	}
	odd := `q"uo\te/` + ctl.String() + "\x7f\u2028\uFFFD é 🙂 <&>"
	bad := "a\xffb\xc3(c\xed\xa0\x80d" // a stray byte, a cut rune, a surrogate
	long := strings.Repeat("x\"y\n", 25000)
	t0 := time.Date(2026, 11, 25, 22, 0, 0, 123456000, time.UTC)
	allTypes := []attribute.KeyValue{
		attribute.String("s", odd), attribute.String("bad", bad), attribute.String("empty", ""), attribute.String("long", long),
		attribute.Bool("t", true), attribute.Bool("f", false),
		attribute.Int64("i0", 0), attribute.Int64("imin", math.MinInt64), attribute.Int64("imax", math.MaxInt64), attribute.Int("neg", -42),
		attribute.Float64("d0", 0), attribute.Float64("dneg0", math.Copysign(0, -1)), attribute.Float64("dtenth", 0.1),
		attribute.Float64("dsmall", 1e-7), attribute.Float64("dtiny", 5e-324), attribute.Float64("dbig", 1e21), attribute.Float64("dmax", math.MaxFloat64),
		attribute.Float64("d1e20", 1e20), attribute.Float64("dnegsmall", -1.5e-10),
		attribute.Float64("nan", math.NaN()), attribute.Float64("inf", math.Inf(1)), attribute.Float64("-inf", math.Inf(-1)),
		attribute.StringSlice("ss", []string{odd, bad, ""}), attribute.StringSlice("ss0", nil),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.BoolSlice("bs0", []bool{}),
		attribute.Int64Slice("is", []int64{-1, 0, math.MaxInt64}), attribute.Int64Slice("is0", nil),
		attribute.Float64Slice("fs", []float64{1.5, math.NaN(), math.Inf(-1), 1e-9}), attribute.Float64Slice("fs0", nil),
		{Key: "", Value: attribute.StringValue("no key")},
		{Key: "invalid", Value: attribute.Value{}},
	}
	other := NewTraceID()
	return []span{
		{id: oddID(1), kind: KindSkillExecute, otel: trace.SpanKindInternal, name: "root " + odd, start: t0, end: t0.Add(time.Second),
			status: StatusError, errType: "type\n" + bad, errMsg: "msg " + odd, attrs: allTypes,
			events: []event{{name: "e1", at: t0.Add(time.Millisecond), attrs: allTypes}, {name: "", at: t0}, {name: "before 1970", at: time.Unix(-5, 0)}, {}},
			links:  []link{{trace: trace.TraceID(other), span: oddID(9), attrs: []attribute.KeyValue{attribute.String("k", odd)}}, {trace: trace.TraceID(other), span: oddID(10)}},
		},
		{id: oddID(2), parent: oddID(1), kind: KindHTTPRequest, otel: trace.SpanKindClient, name: "POST", start: t0, end: t0, status: StatusOK},
		{id: oddID(3), parent: oddID(1), kind: KindCustom, name: "", start: time.Unix(0, 0), end: time.Unix(-1, 0), status: StatusSkipped},
		{id: oddID(4), parent: oddID(2), kind: KindToolCall, otel: trace.SpanKindServer, name: bad, start: t0, end: t0.Add(time.Hour), status: StatusError, errType: "", errMsg: ""},
	}
}

func oddID(n byte) trace.SpanID { return trace.SpanID{0xa0, 0, 0, 0, 0, 0, 0xff, n} }

// collectBodies is an OTLP/HTTP endpoint that keeps each request body.
type collectBodies struct {
	mu     sync.Mutex
	bodies [][]byte
	ctype  []string
}

func (c *collectBodies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.ctype = append(c.ctype, r.Header.Get("Content-Type"))
	c.mu.Unlock()
	w.Write([]byte("{}"))
}

// parseJSON parses an OTLP/JSON body, numbers kept as written.
func parseJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%v in %.300s", err, b)
	}
	return m
}

// splitBody is a request's spans, and the request with its spans array
// emptied (its resource and scope).
func splitBody(t *testing.T, b []byte) (head map[string]any, spans []any) {
	t.Helper()
	m := parseJSON(t, b)
	rs := m["resourceSpans"].([]any)
	if len(rs) != 1 {
		t.Fatalf("%d resourceSpans", len(rs))
	}
	ss := rs[0].(map[string]any)["scopeSpans"].([]any)
	if len(ss) != 1 {
		t.Fatalf("%d scopeSpans", len(ss))
	}
	scope := ss[0].(map[string]any)
	spans = scope["spans"].([]any)
	delete(scope, "spans")
	return m, spans
}

// What bench posts as http/json equals, as parsed JSON with numbers as
// written, what protojson made of the protobuf encoding of the same spans
// (the old path), over batches: bench's spans of every shape and the odd
// spans above, with a resource holding odd strings. Where protojson
// would refuse (a string that is not UTF-8), both have U+FFFD: the
// protobuf encoding puts it there before protojson sees it.
func TestOTLPJSONMatchesProtojson(t *testing.T) {
	tid, spans := everySpan(t)
	spans = append(spans, oddSpans(tid)...)
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("bench"), semconv.ServiceVersion("v1"),
		attribute.String("odd", "\"\\\x01\u2028"), attribute.String("bad", "x\xff"), attribute.Int64("n", -3), attribute.Float64Slice("f", []float64{1e-7}))

	for _, rounds := range []int{1, 1 + 2*otlpBatchSpans/len(spans)} {
		pb := &captureClient{wire: true} // marshalled when sent: the batch buffer is reused
		o := startOTLP(pb, nil, res, tid, "v1 \"odd\"", 10*time.Second, func(err error) { t.Error(err) })
		for r := 0; r < rounds; r++ {
			o.emit(spans)
		}
		o.shutdown()
		var wantHead map[string]any
		var want []any
		for i, rs := range pb.got {
			b, err := protojsonOracle(rs)
			if err != nil {
				t.Fatal(err)
			}
			h, s := splitBody(t, b)
			if i == 0 {
				wantHead = h
			}
			want = append(want, s...)
		}

		col := &collectBodies{}
		srv := httptest.NewServer(col)
		jc := &jsonClient{url: srv.URL, timeout: 10 * time.Second, hc: srv.Client()}
		o = startOTLP(nil, jc, res, tid, "v1 \"odd\"", 10*time.Second, func(err error) { t.Error(err) })
		for r := 0; r < rounds; r++ {
			o.emit(spans)
		}
		o.shutdown()
		srv.Close()
		var got []any
		for i, b := range col.bodies {
			if !utf8.Valid(b) || !json.Valid(b) {
				t.Fatalf("body %d is not valid UTF-8 JSON", i)
			}
			if col.ctype[i] != "application/json" {
				t.Errorf("Content-Type %q", col.ctype[i])
			}
			h, s := splitBody(t, b)
			if !reflect.DeepEqual(h, wantHead) {
				t.Errorf("batch %d's resource and scope:\n%v\nprotojson's\n%v", i, h, wantHead)
			}
			if len(s) > otlpBatchSpans {
				t.Errorf("batch %d: %d spans", i, len(s))
			}
			got = append(got, s...)
		}
		if len(got) != rounds*len(spans) || len(want) != len(got) {
			t.Fatalf("%d rounds: %d spans in %d bodies, protojson %d, want %d", rounds, len(got), len(col.bodies), len(want), rounds*len(spans))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				g, _ := json.Marshal(got[i])
				w, _ := json.Marshal(want[i])
				t.Fatalf("span %d (%.40q):\nbench's   %.3000s\nprotojson %.3000s", i, spans[i%len(spans)].name, g, w)
			}
		}
	}
}

// The bytes too, not only the parsed values, are protojson's for a span
// of every shape once its random spaces are taken out: same field order,
// escapes and number forms.
func TestOTLPJSONBytesAsProtojson(t *testing.T) {
	tid := NewTraceID()
	for _, s := range oddSpans(tid) {
		var pb []byte
		pb = pbSpan(pb, tid, &s)
		m := &tracepb.Span{}
		if err := proto.Unmarshal(pb, m); err != nil {
			t.Fatal(err)
		}
		b, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, b); err != nil {
			t.Fatal(err)
		}
		w := oracleIDAny.ReplaceAllStringFunc(want.String(), func(x string) string {
			sub := oracleIDAny.FindStringSubmatch(x)
			raw, _ := base64.StdEncoding.DecodeString(sub[2])
			return `"` + sub[1] + `":"` + hex.EncodeToString(raw) + `"`
		})
		if got := string(jsonSpan(nil, tid, &s)); got != w {
			for i := range min(len(got), len(w)) {
				if got[i] != w[i] {
					t.Fatalf("%.40q: differs at byte %d:\nbench's   …%.200s\nprotojson …%.200s", s.name, i, got[max(0, i-40):], w[max(0, i-40):])
				}
			}
			t.Fatalf("%.40q: %d bytes, protojson %d", s.name, len(got), len(w))
		}
	}
}

// oracleIDAny is oracleID for the link's and span's ids in compacted JSON.
var oracleIDAny = regexp.MustCompile(`"(traceId|spanId|parentSpanId)":"([A-Za-z0-9+/=]*)"`)

// jsonFloat and jsonString write what protojson writes for a double and
// a (valid UTF-8) string, byte for byte.
func TestJSONScalarsAsProtojson(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.0 / 3, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 5e-324, 1e20, 1e21, 1.2345e22, math.MaxFloat64,
		-1e-7, -1e21, 123456789.125, math.NaN(), math.Inf(1), math.Inf(-1), 1e100, 2e-10} {
		want, _ := protojson.Marshal(wrapperspb.Double(f))
		if got := jsonFloat(nil, f); string(got) != string(want) {
			t.Errorf("%v: %s, protojson %s", f, got, want)
		}
	}
	for _, s := range []string{"", "plain", `"`, `\`, "\x00\x01\x08\x09\x0a\x0b\x0c\x0d\x1f\x20\x7f", "\u2028\u2029", "é🙂\uFFFD", "</script>", strings.Repeat("ab\"", 100)} {
		want, _ := protojson.Marshal(wrapperspb.String(s))
		if got := jsonString(nil, s); string(got) != string(want) {
			t.Errorf("%q: %s, protojson %s", s, got, want)
		}
	}
}

// FuzzJSONString: any string, valid UTF-8 or not, becomes one JSON string
// that reads back as the string with each bad UTF-8 run as U+FFFD; for
// valid UTF-8 it is protojson's encoding byte for byte. A span carrying
// it is valid JSON.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\x1f\x7f", "a\xffb", "\xed\xa0\x80", "\u2028🙂", "\xc3"} {
		f.Add(s)
	}
	tid := NewTraceID()
	f.Fuzz(func(t *testing.T, s string) {
		b := jsonString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q: %s: %v", s, b, err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); back != want {
			t.Fatalf("%q reads back %q, want %q", s, back, want)
		}
		if utf8.ValidString(s) {
			if want, err := protojson.Marshal(wrapperspb.String(s)); err != nil || string(want) != string(b) {
				t.Fatalf("%q: %s, protojson %s (%v)", s, b, want, err)
			}
		}
		sp := span{id: oddID(1), name: s, status: StatusError, errType: s, errMsg: s, start: time.Unix(1, 0), end: time.Unix(2, 0),
			attrs:  []attribute.KeyValue{attribute.String(s, s), attribute.StringSlice("k", []string{s, s})},
			events: []event{{name: s, attrs: []attribute.KeyValue{attribute.String("k", s)}}}}
		if out := jsonSpan(nil, tid, &sp); !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("%q: span %s", s, out)
		}
	})
}

// The client posts what it is given, as one body, and a refusal is an
// error naming the status and the collector's message, never a header.
func TestJSONClientPost(t *testing.T) {
	var got []byte
	var hdr http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		hdr = r.Header
		if r.Header.Get("X-Fail") == "1" {
			http.Error(w, "bad body", http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	c := &jsonClient{url: srv.URL, timeout: 5 * time.Second, hc: srv.Client(), headers: map[string]string{"x-key": secretText}}
	if err := c.post(context.Background(), []byte("[1,"), []byte("2"), []byte("]")); err != nil {
		t.Fatal(err)
	}
	if string(got) != "[1,2]" || hdr.Get("X-Key") != secretText || hdr.Get("Content-Type") != "application/json" {
		t.Errorf("body %q, headers %v", got, hdr)
	}
	c.headers["x-fail"] = "1"
	err := c.post(context.Background(), nil, []byte("{}"), nil)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "bad body") || strings.Contains(err.Error(), secretText) {
		t.Errorf("error %v", err)
	}
}

// The real OpenTelemetry Collector takes bench's http/json bodies and its
// file exporter writes the same spans, resource and scope as it does for
// the same spans sent as http/protobuf: spans of every shape, odd strings,
// NaN and ±Infinity, 64-bit integers and 100 KB strings included.
func TestOTLPJSONCollectorSameAsProtobuf(t *testing.T) {
	tid, spans := everySpan(t)
	spans = append(spans, oddSpans(tid)...)
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("bench"), attribute.String("odd", "\"\\\x01\u2028"))
	written := map[string][]any{}
	heads := map[string]map[string]any{}
	for _, protocol := range []string{"http/protobuf", "http/json"} {
		col := otelcoltest.Start(t)
		e := Export{On: true, Protocol: protocol, Endpoint: col.HTTPEndpoint(), Timeout: 10 * time.Second, getenv: func(string) string { return "" }}
		var o *otlpOut
		if protocol == "http/json" {
			o = startOTLP(nil, newJSONClient(e), res, tid, "v1", e.Timeout, func(err error) { t.Error(err) })
		} else {
			c := newClient(e)
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			o = startOTLP(c, nil, res, tid, "v1", e.Timeout, func(err error) { t.Error(err) })
		}
		o.emit(spans)
		o.shutdown()
		col.WaitSpans(t, len(spans), 30*time.Second)
		col.Stop()
		raw, err := os.ReadFile(col.OutputPath())
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
			h, s := splitBody(t, line)
			heads[protocol] = h
			written[protocol] = append(written[protocol], s...)
		}
	}
	got, want := written["http/json"], written["http/protobuf"]
	if len(got) != len(spans) || len(want) != len(spans) {
		t.Fatalf("the collector wrote %d spans from http/json, %d from http/protobuf, want %d", len(got), len(want), len(spans))
	}
	if !reflect.DeepEqual(heads["http/json"], heads["http/protobuf"]) {
		t.Errorf("resource and scope from http/json\n%v\nfrom http/protobuf\n%v", heads["http/json"], heads["http/protobuf"])
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(want[i])
			t.Errorf("span %d (%.40q) as the collector wrote it:\nfrom http/json     %.2000s\nfrom http/protobuf %.2000s", i, spans[i].name, g, w)
		}
	}
}
