package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// slowDecode is what the fast decoder must match: encoding/json into the
// detail's target.
func slowDecode(data []byte, detail Detail) (Record, error) {
	var rec Record
	err := json.Unmarshal(data, target(detail, &rec))
	return rec, err
}

// checkSame fails when the fast decoder accepts data but encoding/json
// rejects it or decodes another record.
func checkSame(t *testing.T, data []byte) (fastOK bool) {
	t.Helper()
	for detail := range nDetails {
		var fast Record
		fd := newFastDecoder()
		if !fd.decode(data, &fast, detail) {
			continue
		}
		fastOK = true
		slow, err := slowDecode(data, detail)
		if err != nil {
			t.Fatalf("detail %d: fast decoder accepted what encoding/json rejects (%v):\n%s", detail, err, data)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("detail %d: records differ for\n%s\nfast %+v\nslow %+v", detail, data, fast, slow)
		}
		// What a strict read checks beyond the record, the same both ways.
		if got, want := (keyProbe{Repetition: fd.rep, SchemaVersion: fd.schema}), probeKey(data); got.Repetition != want.Repetition || !bytes.Equal(got.SchemaVersion, want.SchemaVersion) {
			t.Fatalf("detail %d: key probe %+v, encoding/json's %+v, for\n%s", detail, got, want, data)
		}
	}
	return fastOK
}

// filled returns a value of type t with every field set, recursively, so a
// field added to Record later is covered without editing this test.
func filled(t reflect.Type, seed int) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d <&> é \"q\"", seed))
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(seed + 1))
	case reflect.Float64:
		v.SetFloat(float64(seed) + 0.25)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(filled(t.Elem(), seed).Addr())
	case reflect.Slice:
		if t == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(fmt.Sprintf(`{"k":[%d,"x"]}`, seed)))
			break
		}
		v.Set(reflect.Append(reflect.MakeSlice(t, 0, 2), filled(t.Elem(), seed), filled(t.Elem(), seed+1)))
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(reflect.ValueOf("k"), reflect.ValueOf(any(1.5)))
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				v.Field(i).Set(filled(t.Field(i).Type, seed*7+i))
			}
		}
	case reflect.Interface:
		v.Set(reflect.ValueOf("any"))
	default:
		panic("filled: add " + t.Kind().String())
	}
	return v
}

func encodeLine(t *testing.T, r *Record) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Every field of a record as the writer writes it comes back through the
// fast decoder as encoding/json decodes it, and the fast decoder takes the
// line (no fallback) when it is the writer's.
func TestFastDecodeEveryField(t *testing.T) {
	rec := filled(reflect.TypeFor[Record](), 1).Interface().(Record)
	rec.RecordType = RecordType
	line := encodeLine(t, &rec)
	if !checkSame(t, line) {
		t.Errorf("fast decoder refused a line the writer wrote:\n%s", line)
	}
	// Zero and null values: pointers null, slices null or empty.
	var zero Record
	zero.ToolCalls, zero.Timeline = []string{}, []TimelineEvent{}
	if !checkSame(t, encodeLine(t, &zero)) {
		t.Error("fast decoder refused the zero record")
	}
}

// Every hot decoder names a field Record has, so none is dead.
func TestHotFieldsExist(t *testing.T) {
	names := map[string]bool{}
	for _, f := range recordFields {
		names[f.name] = true
	}
	for n := range hotFields {
		if !names[n] {
			t.Errorf("hot decoder for %q, which Record has no field for", n)
		}
	}
	// Each detail's target skips exactly the fields the fast decoder does.
	for detail := range nDetails {
		for n := range skipped[detail] {
			if !names[n] {
				t.Errorf("detail %d skips %q, which is not in Record", detail, n)
			}
		}
		bt := reflect.TypeOf(target(detail, &Record{})).Elem()
		if bt == reflect.TypeFor[Record]() {
			if len(skipped[detail]) != 0 {
				t.Errorf("detail %d: the fast decoder skips %d fields, encoding/json none", detail, len(skipped[detail]))
			}
			continue
		}
		for i := 1; i < bt.NumField(); i++ {
			if name, _, _ := strings.Cut(bt.Field(i).Tag.Get("json"), ","); !skipped[detail][name] {
				t.Errorf("%s skips %q, the fast decoder does not", bt.Name(), name)
			}
		}
		if bt.NumField()-1 != len(skipped[detail]) {
			t.Errorf("%s skips %d fields, the fast decoder %d", bt.Name(), bt.NumField()-1, len(skipped[detail]))
		}
	}
}

// The lines the fast decoder must hand to encoding/json, and some it may
// take; either way the result must be encoding/json's.
var fastSeeds = []string{
	goodA, goodB,
	`{}`, ` { } `, `null`, `[]`, `"x"`, `{"record_type":"result"} x`, `{"record_type":"result",}`,
	`{"provider":"a","provider":"b"}`,          // repeated key
	`{"model":"m","provider":"p"}`,             // out of order
	`{"Provider":"p","MODEL":"m"}`,             // other case
	`{"prov\u0069der":"p"}`,                    // escaped key
	`{"provider":"p\u00e9\"\\\/\b\f\n\r\t"}`,   // escapes
	`{"provider":"\ud800"}`,                    // lone surrogate
	"{\"provider\":\"caf\xc3\xa9\"}",           // UTF-8
	"{\"provider\":\"bad\xff\"}",               // invalid UTF-8
	"{\"provider\":\"tab\there\"}",             // raw control character
	`{"provider":"\x"}`, `{"provider":"\u12"}`, // bad escapes
	`{"repetition":1.0}`, `{"repetition":1e2}`, `{"repetition":-0}`, `{"repetition":01}`,
	`{"repetition":9223372036854775807}`, `{"repetition":9223372036854775808}`, `{"e2e_ms":-9223372036854775808}`,
	`{"tokens_per_s":1e400}`, `{"tokens_per_s":-1.5E-3}`, `{"tokens_per_s":1.}`, `{"tokens_per_s":.5}`, `{"tokens_per_s":+1}`,
	`{"success":null,"repetition":null,"provider":null,"ttft_ms":null}`,
	`{"success":"true"}`, `{"success":1}`, `{"ttft_ms":"5"}`, `{"thinking_level":5}`,
	`{"tool_calls":null}`, `{"tool_calls":[]}`, `{"tool_calls":[null,"a"]}`, `{"tool_calls":["a",1]}`, `{"tool_calls":["a",]}`,
	`{"timeline":[{"event":"end","at_ms":1.5,"Event":"x"}]}`, `{"timeline":[null,{}]}`, `{"timeline":[{"event":"a","event":"b","at_ms":null}]}`,
	`{"timeline":[{"wait_ms":1e400}]}`, `{"timeline":[{"zz":[1,{"a":null}]}]}`,
	`{"parsed_output":null}`, `{"parsed_output": {"a" : [1, 2]} }`, `{"provider_metrics":{"a":1},"tool_call_details":[{"name":"x","arguments":{}}]}`,
	`{"unknown":{"deep":[[[[1]]]]},"record_type":"result"}`, `{"unknown":[tru]}`, `{"unknown":nul}`,
	`{"turn_details":[{"start_ms":1,"calls":[{"name":"a","arguments":{"x":1},"rule":-1}]}]}`,
	`{"raw_output":"` + strings.Repeat("x", 100) + `\"` + strings.Repeat("y", 100) + `"}`,
	`{"unknown":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
	`{"tool_call_details":null}`, `{"tool_call_details":[]}`, `{"tool_call_details":[null,{}]}`,
	`{"tool_call_details":[{"name":"a","arguments":null,"source":"text","match":"m","id":"i","zz":[1]}]}`,
	`{"tool_call_details":[{"arguments": {"a" : 1} ,"arguments":"x"}]}`, `{"tool_call_details":[{"Name":"a"}]}`,
	`{"tool_call_details":[{"name":1}]}`, `{"tool_call_details":{}}`, `{"tool_call_details":[{"arguments":}]}`,
	`{"record_type":"result","schema_version":2}`, `{"schema_version":null,"repetition":0}`, `{"Schema_Version":2}`,
	`{"schema_version":1,"schema_version":"x"}`, `{"repetition":null}`,
	// The nested values: nulls, repeated and folded keys, wrong types.
	`{"judge":null}`, `{"judge":{}}`, `{"judge":{"verdict":"pass","score":0.5,"samples":[{"verdict":"pass","score":null},null]}}`,
	`{"judge":{"samples":[{"score":1}],"samples":[{"verdict":"fail"}]}}`, `{"judge":{"Verdict":"x"}}`, `{"judge":{"verdict":"a","verdict":"b"}}`,
	`{"judge":{"score":"1"}}`, `{"judge":{"samples":{}}}`, `{"judge":[]}`, `{"judge":{"zz":{"verdict":1},"spec":"s"}}`,
	`{"check_errors":[{"type":"judge_error","check":"llm_judge","index":2,"message":"m\n"}]}`, `{"check_errors":[{"index":1.5}]}`,
	`{"check_errors":[{"MESSAGE":"m"}]}`, `{"check_errors":[null]}`, `{"check_errors":null}`,
	`{"itl_ms":{"n":3,"p50":1.5,"p95":2,"p99":2,"max":3e0,"hist":[1001,2,1005,1]}}`, `{"itl_ms":{"hist":[1,null,2]}}`, `{"itl_ms":{"hist":[1.5]}}`,
	`{"itl_ms":{"hist":[9223372036854775808]}}`, `{"itl_ms":{"n":1,"n":2}}`, `{"itl_ms":{"Hist":[]}}`, `{"itl_ms":null}`,
	`{"turn_details":[{"text":"a\u00e9\ud83d\ude00","ttft_ms":null,"calls":[{"name":"t","arguments":{"x":[1]},"result":"r","rule":-1,"schema_valid":false}]}]}`,
	`{"turn_details":[{"calls":[{"rule":1},{"rule":2}]},{"calls":null}]}`, `{"turn_details":[{"calls":[{"Rule":1}]}]}`,
	`{"turn_details":[{"text":"a","text":"b"}]}`, `{"turn_details":[{"calls":[{"is_error":1}]}]}`,
	`{"cost_usd":1e308,"cost_source":"pricing","cold_start":true,"started_at_us":1,"stage":"c=4","stage_level":4,"sent_at_ms":-0.5}`,
	`{"cost_usd":"1"}`, `{"stage_level":1e999}`, `{"started_at_us":1.5}`,
	// Escapes the fast decoder unquotes itself.
	`{"raw_output":"line\nline\t\"q\" \\ \/ \b\f\r"}`, `{"raw_output":"\ud83d\ude00 \ud83d \ude00 \ud83dx \ud83d\u0041 \udc00\ud800"}`,
	"{\"raw_output\":\"\\n\xff\xfe caf\xc3\xa9 \xe2\x82 \xed\xa0\x80\\u0000\"}", `{"raw_output":"\u2028\u2029\uFFFD\uabcd"}`,
}

func TestFastDecodeMatchesEncodingJSON(t *testing.T) {
	for _, s := range fastSeeds {
		checkSame(t, []byte(s))
	}
	// The writer's own lines must take the fast path.
	for _, s := range []string{goodA, goodB} {
		var r Record
		if !newFastDecoder().decode([]byte(s), &r, Full) {
			t.Errorf("fell back on %s", s)
		}
	}
}

// FuzzFastDecode: whatever the line, when the fast decoder takes it the
// record is the one encoding/json decodes, and encoding/json takes it too.
func FuzzFastDecode(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	rec := filled(reflect.TypeFor[Record](), 3).Interface().(Record)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(&rec)
	f.Add(bytes.TrimSpace(b.Bytes()))
	f.Fuzz(func(t *testing.T, data []byte) { checkSame(t, data) })
}

// nextSpecial finds the first quote, backslash or control byte (and, when
// asked, byte of 0x80 and above) at every offset of a word and of the
// tail, past bytes next to them in value and past earlier specials'
// borrows.
func TestNextSpecial(t *testing.T) {
	plain := []byte{0x7f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x5c ^ 0x80, 'a', 0x01 ^ 0x20, '~'}
	for n := range 41 {
		for i := range n {
			for _, c := range []byte{'"', '\\', 0x00, 0x1f, 0x09, 0x80, 0xff} {
				s := make([]byte, n)
				for k := range s {
					s[k] = plain[k%len(plain)]
					if s[k] >= 0x80 {
						s[k] = 'x'
					}
				}
				s[i] = c
				if i+1 < n {
					s[i+1] = '"' // a second special after the first
				}
				high := c >= 0x80
				if got := nextSpecial(s, 0, high); got != i {
					t.Fatalf("%#x at %d of %q (high %v): found at %d", c, i, s, high, got)
				}
				if c >= 0x80 && i+1 < n {
					if got := nextSpecial(s, 0, false); got != i+1 {
						t.Fatalf("%#x at %d of %q, high bytes not asked for: found at %d", c, i, s, got)
					}
				}
			}
		}
		s := bytes.Repeat(plain, 5)[:n]
		if got := nextSpecial(s, 0, false); got != n {
			t.Errorf("false find at %d in %q", got, s)
		}
	}
}

// realisticLine is a cell as the runner records it today: a timeline, a
// tool call, provider metrics and a 900-byte answer.
func realisticLine(tb testing.TB) []byte {
	ttft, tps, out, in := int64(87), 41.5, 212, 40
	raw := strings.Repeat("The free command shows memory; run `free -h`. ", 20)
	r := &Record{RecordType: RecordType, RunID: "20270101_000000", Provider: "ollama_openai", ProviderType: "ollama_openai",
		Model: "qwen3:4b", PromptID: "P9", PromptName: "tool_memory", AvailabilityStatus: "ok",
		StartedAtMS: 1800000000000, EndedAtMS: 1800000002345, E2EMS: 2345, TTFTMS: &ttft, TTFOMS: &ttft, Success: true,
		ObjectivePass: new(true), InputTokens: &in, OutputTokens: &out, TokensPerS: &tps, RawOutput: raw, RawOutputBytes: len(raw),
		ToolCalls: []string{"free"}, ToolCallCount: 1, ToolUseSuccess: new(true), ExpectedTools: []string{"free"}, Chunks: 212,
		FinishReason: "stop", ParsedOutput: json.RawMessage("null"),
		ToolCallDetails: []ToolCall{{Name: "free", Arguments: json.RawMessage(`{"unit":"MB"}`), Source: SourceText, Match: "free -h"}},
		ProviderMetrics: map[string]any{"eval_count": 212, "eval_duration_ns": 5_100_000_000},
		Timeline: []TimelineEvent{{Event: EventRequestStart, AtMS: 0.012}, {Event: EventConnected, AtMS: 0.4, Detail: "reused"},
			{Event: EventRequestWritten, AtMS: 0.52}, {Event: EventFirstByte, AtMS: 86.1}, {Event: EventFirstText, AtMS: 87.2},
			{Event: EventToolCall, AtMS: 1200.5}, {Event: EventEnd, AtMS: 2345.01}},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		tb.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// BenchmarkDecodeLine compares the reader's decoding of one realistic line
// (fast path, then encoding/json as the fallback does it), both as the
// report reads lines (Aggregates), as compare does (Answers) and in full:
//
//	go test ./internal/record/results -run '^$' -bench DecodeLine -benchmem
func BenchmarkDecodeLine(b *testing.B) {
	line := realisticLine(b)
	for _, detail := range []Detail{Aggregates, Answers, Full} {
		b.Run(fmt.Sprintf("fast/detail=%d", detail), func(b *testing.B) {
			fd := newFastDecoder()
			b.SetBytes(int64(len(line)))
			var rec Record
			for b.Loop() {
				if err := decode(line, &rec, detail, fd, false); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("encoding_json/detail=%d", detail), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := slowDecode(line, detail); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestRealisticLineTakesTheFastPath(t *testing.T) {
	line := realisticLine(t)
	var r Record
	if !newFastDecoder().decode(line, &r, Aggregates) || !checkSame(t, line) {
		t.Fatalf("fell back on %s", line)
	}
}
