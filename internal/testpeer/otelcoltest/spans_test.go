package otelcoltest

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
)

// testdata/collector.jsonl is what the pinned collector's file exporter
// wrote for a small tree the Go SDK sent it (regenerate with
// TestSDKExportsExactTree and OTELCOLTEST_KEEP=path, see the test): the
// real format, not one written from the spec by hand.
func TestParseCollectorOutput(t *testing.T) {
	b, err := os.ReadFile("testdata/collector.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	spans, err := ParseSpans(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4", len(spans))
	}
	byName := map[string]Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	root, cell, req := byName["skill.execute"], byName["cell"], byName["http.request"]
	if root.ParentSpanID != "" || len(root.TraceID) != 32 || len(root.SpanID) != 16 {
		t.Errorf("root ids: %+v", root)
	}
	if byName["suite"].ParentSpanID != root.SpanID || cell.ParentSpanID != byName["suite"].SpanID || req.ParentSpanID != cell.SpanID {
		t.Errorf("parents do not chain root → suite → cell → http.request")
	}
	// 2026-11-22T10:00:00.123456789Z and 1s+17ns after it.
	if root.StartUnixNano != 1795341600123456789 || root.EndUnixNano != 1795341601123456806 {
		t.Errorf("root stamps %d..%d", root.StartUnixNano, root.EndUnixNano)
	}
	wantCell := map[string]any{
		"bench.ttft_ms":                  12.5,
		"bench.valid":                    false,
		"gen_ai.response.finish_reasons": []any{"stop", "length"},
		"bench.ints":                     []any{int64(-1), int64(1 << 62)},
		"bench.floats":                   []any{0.25, -3.0},
		"bench.bools":                    []any{true, false},
		"bench.bytes":                    []byte{0, 1, 0xff},
		"bench.map":                      map[string]any{"k": "v", "n": int64(7)},
	}
	if !reflect.DeepEqual(cell.Attributes, wantCell) {
		t.Errorf("cell attributes\n got %#v\nwant %#v", cell.Attributes, wantCell)
	}
	if cell.StatusCode != StatusError || cell.StatusMessage != "validator failed: want OK" || byName["suite"].StatusCode != StatusOK {
		t.Errorf("statuses: cell %s %q, suite %s", cell.StatusCode, cell.StatusMessage, byName["suite"].StatusCode)
	}
	if req.Kind != KindClient || root.Kind != KindInternal {
		t.Errorf("kinds: request %s, root %s", req.Kind, root.Kind)
	}
	if len(req.Events) != 2 || req.Events[0].Name != "first_byte" || req.Events[0].Attributes["bench.attempt"] != int64(1) ||
		req.Events[1].TimeUnixNano != 1795341600123456789+41_000_009 {
		t.Errorf("events: %+v", req.Events)
	}
	if root.Resource["service.name"] != "bench-otelcoltest" || root.ScopeName != "bench/otelcoltest" || root.ScopeVersion != "0.0.1-test" {
		t.Errorf("resource %v, scope %q %q", root.Resource, root.ScopeName, root.ScopeVersion)
	}
}

const (
	tid = "0af7651916cd43dd8448eb211c80319c"
	sid = "b7ad6b7169203331"
)

func line(span string) string {
	return `{"resourceSpans":[{"resource":{},"scopeSpans":[{"scope":{"name":"s"},"spans":[` + span + `]}]}]}` + "\n"
}

func TestParseSpansForms(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []Span
	}{
		{"empty file", "", nil},
		{"blank lines", "\n\n", nil},
		{"unfinished last line is left out", line(`{"traceId":"`+tid+`","spanId":"`+sid+`","name":"a"}`) + `{"resourceSpans":[{"scopeSp`,
			[]Span{{TraceID: tid, SpanID: sid, Name: "a", Kind: KindUnspecified, StatusCode: StatusUnset, ScopeName: "s"}}},
		{"uppercase hex, numbers as numbers, every AnyValue", line(`{"traceId":"0AF7651916CD43DD8448EB211C80319C","spanId":"` + sid +
			`","parentSpanId":"` + sid + `","name":"b","kind":3,"startTimeUnixNano":5,"endTimeUnixNano":"9",` +
			`"status":{"code":2,"message":"m"},"attributes":[` +
			`{"key":"s","value":{"stringValue":""}},{"key":"i","value":{"intValue":-3}},{"key":"is","value":{"intValue":"9223372036854775807"}},` +
			`{"key":"d","value":{"doubleValue":1e300}},{"key":"nan","value":{"doubleValue":"NaN"}},{"key":"inf","value":{"doubleValue":"-Infinity"}},` +
			`{"key":"b","value":{"boolValue":true}},{"key":"y","value":{"bytesValue":"AAH/"}},{"key":"e","value":{}},` +
			`{"key":"a","value":{"arrayValue":{}}},{"key":"m","value":{"kvlistValue":{"values":[{"key":"x","value":{"arrayValue":{"values":[{"intValue":"1"}]}}}]}}}],` +
			`"events":[{"timeUnixNano":"7","name":"ev"}],"links":[{"traceId":"` + tid + `","spanId":"` + sid + `","attributes":[{"key":"l","value":{"boolValue":false}}]}]}`),
			[]Span{{TraceID: tid, SpanID: sid, ParentSpanID: sid, Name: "b", Kind: KindClient, StartUnixNano: 5, EndUnixNano: 9,
				StatusCode: StatusError, StatusMessage: "m", ScopeName: "s",
				Attributes: map[string]any{"s": "", "i": int64(-3), "is": int64(math.MaxInt64), "d": 1e300, "nan": math.NaN(),
					"inf": math.Inf(-1), "b": true, "y": []byte{0, 1, 0xff}, "e": nil, "a": []any{},
					"m": map[string]any{"x": []any{int64(1)}}},
				Events: []Event{{Name: "ev", TimeUnixNano: 7}},
				Links:  []Link{{TraceID: tid, SpanID: sid, Attributes: map[string]any{"l": false}}},
			}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSpans([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			// NaN is not DeepEqual to itself: compare it apart.
			for i := range got {
				if f, ok := got[i].Attributes["nan"].(float64); ok && math.IsNaN(f) {
					delete(got[i].Attributes, "nan")
					delete(tc.want[i].Attributes, "nan")
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestParseSpansErrors(t *testing.T) {
	ok := `{"traceId":"` + tid + `","spanId":"` + sid + `"`
	for _, tc := range []struct{ name, in, want string }{
		{"not json", "{\n", "line 1: not an OTLP/JSON trace request"},
		{"second line", line(ok+`}`) + "[]\n", "line 2: not an OTLP/JSON"},
		{"short trace id", line(`{"traceId":"0af7","spanId":"` + sid + `"}`), `line 1: resourceSpans[0].scopeSpans[0].spans[0].traceId: "0af7" is not 16 bytes of hex`},
		{"missing span id", line(`{"traceId":"` + tid + `"}`), "spans[0].spanId"},
		{"base64 span id", line(`{"traceId":"` + tid + `","spanId":"t61rcWkgMzE="}`), "spanId"},
		{"bad parent", line(ok + `,"parentSpanId":"zz"}`), "parentSpanId"},
		{"kind out of range", line(ok + `,"kind":6}`), `kind: 6 is not one of 0..5`},
		{"kind as name", line(ok + `,"kind":"SPAN_KIND_CLIENT"}`), `kind: "SPAN_KIND_CLIENT" is not one of`},
		{"status out of range", line(ok + `,"status":{"code":3}}`), "status.code"},
		{"negative time", line(ok + `,"startTimeUnixNano":"-1"}`), "startTimeUnixNano"},
		{"time past int64", line(ok + `,"endTimeUnixNano":"18446744073709551615"}`), "endTimeUnixNano"},
		{"fractional int", line(ok + `,"attributes":[{"key":"n","value":{"intValue":"1.5"}}]}`), "attributes[0] (n): intValue"},
		{"bad double", line(ok + `,"attributes":[{"key":"d","value":{"doubleValue":"x"}}]}`), "(d): doubleValue"},
		{"bad bytes", line(ok + `,"attributes":[{"key":"y","value":{"bytesValue":"!"}}]}`), "(y): bytesValue is not base64"},
		{"bad nested", line(ok + `,"attributes":[{"key":"m","value":{"kvlistValue":{"values":[{"key":"k","value":{"intValue":"x"}}]}}}]}`), "(m)[0] (k): intValue"},
		{"bad event time", line(ok + `,"events":[{"timeUnixNano":"x"}]}`), `events[0].timeUnixNano: "x" is not a nanosecond timestamp`},
		{"bad link", line(ok + `,"links":[{"traceId":"` + tid + `","spanId":""}]}`), "links[0].spanId"},
		{"bad resource", `{"resourceSpans":[{"resource":{"attributes":[{"key":"k","value":{"intValue":true}}]}}]}` + "\n", "resourceSpans[0].resource.attributes[0] (k)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpans([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// FuzzParseSpans: no input panics, and whatever parses has well-formed ids
// and kinds, so a test comparing them never trips over garbage.
func FuzzParseSpans(f *testing.F) {
	if b, err := os.ReadFile("testdata/collector.jsonl"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(line(`{"traceId":"` + tid + `","spanId":"` + sid + `","kind":2,"attributes":[{"key":"a","value":{"arrayValue":{"values":[{"kvlistValue":{}}]}}}]}`)))
	f.Add([]byte("{\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		spans, err := ParseSpans(b)
		if err != nil {
			return
		}
		for _, s := range spans {
			if len(s.TraceID) != 32 || len(s.SpanID) != 16 || (s.ParentSpanID != "" && len(s.ParentSpanID) != 16) {
				t.Fatalf("bad ids in %+v", s)
			}
			if s.Kind == "" || s.StatusCode == "" {
				t.Fatalf("empty kind or status in %+v", s)
			}
		}
	})
}
